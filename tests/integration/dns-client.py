#!/usr/bin/env python3
"""DNS checks that dig cannot make: floods of denied names over UDP and
TCP, malformed messages, several queries on one TCP connection.

usage: dns-client.py PORT CHECK [ARGS]
  flood N SUFFIX FILE N random names under SUFFIX, half UDP, half TCP,
                      written to FILE;
                      each must get NXDOMAIN (or REFUSED)
  malformed           FORMERR / NOTIMP / silence as the protocol says
  pipeline ALLOWED    10 queries on one TCP connection, all answered
Prints "ok" and exits 0, or says what went wrong and exits 1.
"""
import random
import socket
import string
import struct
import sys

ADDR = "127.0.0.1"


def query(name, qtype=1, qid=None, flags=0x0100):
    qid = random.randrange(65536) if qid is None else qid
    wire = b"".join(bytes([len(l)]) + l.encode() for l in name.split(".") if l)
    return qid, struct.pack(">HHHHHH", qid, flags, 1, 0, 0, 0) + wire + b"\0" + struct.pack(">HH", qtype, 1)


def udp(msg, timeout=2.0):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(timeout)
    s.sendto(msg, (ADDR, PORT))
    try:
        return s.recv(65535)
    except socket.timeout:
        return None
    finally:
        s.close()


def tcp_exchange(sock, msg):
    sock.sendall(struct.pack(">H", len(msg)) + msg)
    pfx = sock.recv(2, socket.MSG_WAITALL)
    if len(pfx) < 2:
        return None
    return sock.recv(struct.unpack(">H", pfx)[0], socket.MSG_WAITALL)


def rcode(resp):
    return struct.unpack(">H", resp[2:4])[0] & 0xf


def die(why):
    print("FAIL:", why)
    sys.exit(1)


def randname(suffix):
    n = random.randrange(8, 40)
    return "".join(random.choice(string.ascii_lowercase + string.digits) for _ in range(n)) + "." + suffix


def flood(n, suffix, outfile):
    n = int(n)
    names = [randname(suffix) for _ in range(n)]
    for name in names[: n // 2]:
        qid, msg = query(name, random.choice([1, 28, 15, 16, 33, 65, 257]))
        resp = udp(msg)
        if resp is None or struct.unpack(">H", resp[:2])[0] != qid or rcode(resp) not in (3, 5):
            die("udp %s: %r" % (name, resp))
    s = socket.create_connection((ADDR, PORT), 5)
    s.settimeout(5)
    for name in names[n // 2:]:
        qid, msg = query(name, random.choice([1, 15, 16]))
        resp = tcp_exchange(s, msg)
        if resp is None or struct.unpack(">H", resp[:2])[0] != qid or rcode(resp) not in (3, 5):
            die("tcp %s: %r" % (name, resp))
    s.close()
    with open(outfile, "w") as f:
        f.write("\n".join(names) + "\n")


def malformed():
    qid, good = query("x.test")
    cases = [
        ("short header", good[:11], None),
        ("qdcount 0", struct.pack(">HHHHHH", 7, 0x100, 0, 0, 0, 0), 1),
        ("qdcount 2", struct.pack(">HHHHHH", 7, 0x100, 2, 0, 0, 0) + good[12:] * 2, 1),
        ("truncated question", good[:-3], 1),
        ("pointer loop", struct.pack(">HHHHHH", 7, 0x100, 1, 0, 0, 0) + b"\x01a\xc0\x0c\x00\x01\x00\x01", 1),
        ("opcode STATUS", good[:2] + b"\x11\x00" + good[4:], 4),
        ("a response", good[:2] + b"\x81\x80" + good[4:], None),
    ]
    for what, msg, want in cases:
        resp = udp(msg, 0.5)
        if want is None:
            if resp is not None:
                die("%s: answered %r" % (what, resp))
        elif resp is None or rcode(resp) != want:
            die("%s: got %r, want rcode %d" % (what, resp, want))
    # The server still answers after all that.
    if udp(good) is None:
        die("silent after malformed input")


def pipeline(allowed):
    s = socket.create_connection((ADDR, PORT), 5)
    s.settimeout(5)
    msgs = [query(allowed, 1) for _ in range(10)]
    s.sendall(b"".join(struct.pack(">H", len(m)) + m for _, m in msgs))
    seen = set()
    for _ in msgs:
        pfx = s.recv(2, socket.MSG_WAITALL)
        resp = s.recv(struct.unpack(">H", pfx)[0], socket.MSG_WAITALL)
        seen.add(struct.unpack(">H", resp[:2])[0])
    if seen != {qid for qid, _ in msgs}:
        die("pipelined answers do not match the queries")
    s.close()


PORT = int(sys.argv[1])
{"flood": flood, "malformed": malformed, "pipeline": pipeline}[sys.argv[2]](*sys.argv[3:])
print("ok")
