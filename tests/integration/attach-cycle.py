#!/usr/bin/env python3
"""Attach to a session and detach again, COUNT times, as pinhole run
--session does (the attach protocol, docs/control-protocol.md), with
listeners of our own on loopback; every LIMIT seconds at most.  Then
print the session's descriptor count and resident memory before and
after: "fds A B rss A B" (kB)."""
import array, json, os, socket, sys, time

path, pid, count, limit = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])


def links():
    """What each of the session's descriptors is."""
    out = {}
    for fd in os.listdir("/proc/%d/fd" % pid):
        try:
            out[fd] = os.readlink("/proc/%d/fd/%s" % (pid, fd))
        except OSError:
            pass
    return out


def fds():
    return len(os.listdir("/proc/%d/fd" % pid))


def rss():
    for line in open("/proc/%d/status" % pid):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def recv(s):
    msg = json.loads(s.recv(16384))
    if msg["op"] == "error":
        sys.exit("session: " + msg["error"])
    return msg


def cycle(i):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(10)
    s.connect(path)
    s.send(json.dumps({"op": "attach", "cmd": "cycle %d" % i}).encode())
    if recv(s)["op"] != "config":
        sys.exit("no config")
    tcp = socket.socket()
    tcp.bind(("127.0.0.1", 0))
    tcp.listen(1)
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    dtcp = socket.socket()
    dtcp.bind(("127.0.0.1", 0))
    dtcp.listen(1)
    socks = [tcp, udp, dtcp]
    body = json.dumps({"op": "listeners", "pid": os.getpid(),
                       "fds": "proxy dns dns"}).encode()
    s.sendmsg([body], [(socket.SOL_SOCKET, socket.SCM_RIGHTS,
                        array.array("i", [x.fileno() for x in socks]))])
    for x in socks:
        x.close()
    if recv(s)["op"] != "ok":
        sys.exit("no ok")
    s.send(json.dumps({"op": "exit", "status": 0}).encode())
    s.close()


def settle(want):
    """Wait (at most 10 s) until the session holds want descriptors."""
    end = time.time() + 10
    while fds() != want and time.time() < end:
        time.sleep(0.05)


# A warm-up first, so that what the session opens once, on first use, is
# open before the count: a leak is what grows with the cycles.
for i in range(100):
    cycle(i)
time.sleep(0.2)
fd0, rss0, before = fds(), rss(), links()
start = time.time()
for i in range(1, count + 1):
    cycle(i)
    if time.time() - start > limit:
        sys.exit("only %d cycles in %.0f s" % (i, limit))
settle(fd0)
after = links()
print("fds %d %d rss %d %d" % (fd0, len(after), rss0, rss()))
for fd in sorted(set(before) | set(after), key=int):
    if before.get(fd) != after.get(fd):
        print("fd %s: %s -> %s" % (fd, before.get(fd), after.get(fd)))
