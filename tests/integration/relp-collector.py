"""A RELP collector that misbehaves on purpose, for ship.sh.

relp-collector.py PORT MODE: listens on 127.0.0.1:PORT, takes one
connection after another for at most 20 s, and answers as MODE says:
  refuse-open   500 to open
  no-syslog     200 to open, but without the syslog command
  wrong-txnr    200 to open, then answers a line with another number
  refuse-line   200 to open, then 500 to every line
  garbage       200 to open, then bytes that are not a frame
Each line it is sent is counted on stdout as "line TXNR".
"""
import socket, sys, time

port, mode = int(sys.argv[1]), sys.argv[2]
OPEN_OK = b"200 OK\nrelp_version=0\nrelp_software=test\ncommands=syslog"
OPEN_NO = b"200 OK\nrelp_version=0\nrelp_software=test\ncommands=eventlog"


def frames(conn):
    """Yield (txnr, command, data) of each frame the client sends."""
    buf = b""
    while True:
        data = conn.recv(65536)
        if not data:
            return
        buf += data
        while True:
            head = buf.split(b" ", 2)
            if len(head) < 3:
                break
            rest = head[2]
            n = 0
            while n < len(rest) and rest[n:n + 1].isdigit():
                n += 1
            if n == len(rest):
                break
            dlen = int(rest[:n])
            start = len(head[0]) + len(head[1]) + 2 + n + (1 if dlen else 0)
            if len(buf) < start + dlen + 1:
                break
            yield int(head[0]), head[1].decode(), buf[start:start + dlen]
            buf = buf[start + dlen + 1:]


def rsp(conn, txnr, data):
    conn.sendall(b"%d rsp %d %s\n" % (txnr, len(data), data))


srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", port))
srv.listen(8)
srv.settimeout(1)
print("ready", flush=True)
end = time.time() + 20
while time.time() < end:
    try:
        conn, _ = srv.accept()
    except socket.timeout:
        continue
    conn.settimeout(5)
    try:
        for txnr, cmd, data in frames(conn):
            if cmd == "open":
                if mode == "refuse-open":
                    rsp(conn, txnr, b"500 not today")
                else:
                    rsp(conn, txnr, OPEN_NO if mode == "no-syslog"
                        else OPEN_OK)
            elif cmd == "syslog":
                print("line %d" % txnr, flush=True)
                if mode == "wrong-txnr":
                    rsp(conn, txnr + 7, b"200 OK")
                elif mode == "refuse-line":
                    rsp(conn, txnr, b"500 no room")
                elif mode == "garbage":
                    conn.sendall(b"this is not RELP\n")
    except (OSError, ValueError):
        pass
    conn.close()
