#!/usr/bin/env python3
"""A hostile client of a session's attach socket (docs/control-protocol.md).
"leak PATH PID N": N times, hand a connected TCP socket as the proxy
listener (the session must refuse it); print the session's descriptor
count before and after: "fds A B", and what differs when they do.  "idle PATH N": hold N connections
open without a word; print "held N"; then wait for stdin to close."""
import array, json, os, socket, sys, time


def connect(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(5)
    for _ in range(100):
        try:
            s.connect(path)
            return s
        except BlockingIOError:
            time.sleep(0.02)
    sys.exit("cannot connect")


def leak(path, pid, count):
    def table():
        d = "/proc/%d/fd" % pid
        t = {}
        for fd in os.listdir(d):
            try:
                t[fd] = os.readlink(os.path.join(d, fd))
            except OSError:
                pass
        return t

    def fds():
        return len(table())
    # What the session opens as it starts has settled first.
    start = table()
    end = time.time() + 5
    while time.time() < end:
        time.sleep(0.2)
        now = table()
        if now == start:
            break
        start = now
    before = len(start)
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(count)
    for _ in range(count):
        s = connect(path)
        s.send(json.dumps({"op": "attach", "cmd": "hostile"}).encode())
        s.recv(16384)
        c = socket.create_connection(srv.getsockname())
        p, _ = srv.accept()
        body = json.dumps({"op": "listeners", "pid": os.getpid(),
                           "fds": "proxy"}).encode()
        s.sendmsg([body], [(socket.SOL_SOCKET, socket.SCM_RIGHTS,
                            array.array("i", [c.fileno()]))])
        s.recv(16384)
        for x in (c, p, s):
            x.close()
    end = time.time() + 5
    while fds() != before and time.time() < end:
        time.sleep(0.05)
    after = table()
    print("fds", before, len(after), " ".join(
        "%s:%s->%s" % (fd, start.get(fd, "-"), after.get(fd, "-"))
        for fd in sorted(set(start) | set(after), key=int)
        if start.get(fd) != after.get(fd)))


def idle(path, count):
    held = [connect(path) for _ in range(count)]
    print("held", len(held), flush=True)
    sys.stdin.read()


if sys.argv[1] == "leak":
    leak(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
else:
    idle(sys.argv[2], int(sys.argv[3]))
