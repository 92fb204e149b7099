#!/usr/bin/env python3
"""Print a port free for both TCP and UDP on 127.0.0.1.

Chosen at random below the kernel's ephemeral range: a port the kernel
hands out itself (bind to 0) may be given again to any outgoing
connection of a test running alongside, before the program under test
binds it.  Below the range only another test's explicit choice can
collide, and it checks first as this one does.
"""
import random
import socket

try:
    with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
        low = int(f.read().split()[0])
except (OSError, ValueError, IndexError):
    low = 32768
low = max(low, 12000)

for _ in range(1000):
    port = random.randrange(10000, low)
    try:
        for kind in (socket.SOCK_STREAM, socket.SOCK_DGRAM):
            with socket.socket(socket.AF_INET, kind) as s:
                s.bind(("127.0.0.1", port))
    except OSError:
        continue
    print(port)
    break
else:
    raise SystemExit("free-port.py: no free port below %d" % low)
