#!/usr/bin/env python3
# A SOCKS5 client of raw bytes: socksraw.py PORT MSG... sends each MSG
# to 127.0.0.1:PORT in turn, all at once, and prints what came back in
# hex, then "eof" when the server closed, or "open" after 3 s of quiet.
# MSG is hex bytes, or CMD,HOST,PORT for a request (CMD connect, bind,
# udp or a number; HOST an IPv4 or IPv6 address, else a name).
import ipaddress
import socket
import struct
import sys

CMDS = {"connect": 1, "bind": 2, "udp": 3}


def message(arg):
    if "," not in arg:
        return bytes.fromhex(arg)
    cmd, host, port = arg.split(",")
    cmd = CMDS[cmd] if cmd in CMDS else int(cmd)
    try:
        a = ipaddress.ip_address(host)
        addr = bytes([1 if a.version == 4 else 4]) + a.packed
    except ValueError:
        addr = bytes([3, len(host)]) + host.encode()
    return bytes([5, cmd, 0]) + addr + struct.pack(">H", int(port))


def main():
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), 5)
    s.sendall(b"".join(message(a) for a in sys.argv[2:]))
    s.settimeout(3)
    got = b""
    end = "open"
    try:
        while len(got) < 4096:
            b = s.recv(4096)
            if not b:
                end = "eof"
                break
            got += b
    except socket.timeout:
        pass
    except ConnectionResetError:
        end = "eof"
    print(got.hex(), end)


main()
