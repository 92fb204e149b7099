#!/usr/bin/env python3
"""A DNS upstream for tests: answers every question over UDP and TCP on
127.0.0.1:PORT and appends each query name to LOGFILE (one line each),
so a test can tell exactly which names reached it.

MX: "10 mail.NAME"; TXT: "upstream says hi" (names starting with "big."
get about 2000 bytes of TXT, truncated over UDP); A: 203.0.113.7, and
127.0.0.1 for names starting with "origin."; AAAA: 2001:db8::7; names
starting with "nx." get NXDOMAIN.

usage: dns-upstream.py PORT LOGFILE
"""
import socket
import struct
import sys
import threading


def parse_question(msg):
    off = 12
    labels = []
    while True:
        n = msg[off]
        off += 1
        if n == 0:
            break
        labels.append(msg[off:off + n])
        off += n
    qtype, qclass = struct.unpack(">HH", msg[off:off + 4])
    return b".".join(labels).decode("ascii", "replace"), msg[12:off + 4], qtype


def rdata(name, qtype):
    if qtype == 1:
        if name.startswith("origin."):
            return [bytes([127, 0, 0, 1])]
        return [bytes([203, 0, 113, 7])]
    if qtype == 28:
        return [socket.inet_pton(socket.AF_INET6, "2001:db8::7")]
    if qtype == 15:
        wire = b"".join(bytes([len(l)]) + l.encode() for l in ("mail." + name).split("."))
        return [struct.pack(">H", 10) + wire + b"\0"]
    if qtype == 16:
        if name.startswith("big."):
            return [bytes([200]) + b"x" * 200 for _ in range(10)]
        return [b"\x10upstream says hi"]
    return []


def answer(msg, tcp):
    qid, flags = struct.unpack(">HH", msg[:4])
    name, question, qtype = parse_question(msg)
    with LOCK:
        with open(LOG, "a") as f:
            f.write(name.lower() + "\n")
    rcode = 3 if name.startswith("nx.") else 0
    rrs = [] if rcode else rdata(name, qtype)
    body = b"".join(b"\xc0\x0c" + struct.pack(">HHIH", qtype, 1, 60, len(r)) + r for r in rrs)
    head = struct.pack(">HHHHHH", qid, 0x8180 | (flags & 0x0100) | rcode, 1, len(rrs), 0, 0)
    out = head + question + body
    if not tcp and len(out) > 512:
        out = struct.pack(">HHHHHH", qid, 0x8380 | (flags & 0x0100), 1, 0, 0, 0) + question
    return out


def serve_udp(sock):
    while True:
        msg, peer = sock.recvfrom(65535)
        try:
            sock.sendto(answer(msg, False), peer)
        except Exception as e:  # a broken query: say nothing
            print("upstream:", e, file=sys.stderr)


def serve_tcp_conn(conn):
    with conn:
        conn.settimeout(10)
        while True:
            pfx = conn.recv(2, socket.MSG_WAITALL)
            if len(pfx) < 2:
                return
            msg = conn.recv(struct.unpack(">H", pfx)[0], socket.MSG_WAITALL)
            out = answer(msg, True)
            conn.sendall(struct.pack(">H", len(out)) + out)


def serve_tcp(sock):
    while True:
        conn, _ = sock.accept()
        threading.Thread(target=serve_tcp_conn, args=(conn,), daemon=True).start()


PORT = int(sys.argv[1])
LOG = sys.argv[2]
LOCK = threading.Lock()
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.bind(("127.0.0.1", PORT))
t = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
t.bind(("127.0.0.1", PORT))
t.listen(64)
threading.Thread(target=serve_tcp, args=(t,), daemon=True).start()
serve_udp(u)
