#!/usr/bin/env python3
# Send raw bytes to the proxy and report what came back.
#   rawhttp.py PORT send 'BYTES' [QUIET]
#                                      print "STATUS[,STATUS...] [ERROR...]"
#   rawhttp.py PORT table ORIGINPORT   run the malformed-input table
#   rawhttp.py PORT batch FILE         run "DESC|WANT|BYTES" lines
# BYTES may use Python escapes (\r\n, \x00).  Reads until the proxy
# closes or is quiet for QUIET seconds (default 1).
import re
import socket
import sys
import time


def exchange(port, data, quiet=1.0, limit=5.0):
    s = socket.create_connection(("127.0.0.1", port), 2)
    try:
        s.sendall(data)
    except OSError:
        pass
    s.settimeout(quiet)
    out = b""
    end = time.time() + limit
    while time.time() < end:
        try:
            b = s.recv(65536)
        except socket.timeout:
            break
        except OSError:
            break
        if not b:
            break
        out += b
    s.close()
    statuses = [int(x) for x in re.findall(rb"HTTP/1\.[01] (\d{3}) ", out)]
    errors = [x.decode() for x in re.findall(rb"Pinhole-Error: ([a-z-]+)", out)]
    return statuses, errors


def table(port, o):
    origin = "origin.test:%d" % o
    get = "GET http://%s/ HTTP/1.1\r\nHost: origin.test\r\n" % origin
    post = "POST http://%s/post HTTP/1.1\r\nHost: origin.test\r\n" % origin
    cases = [
        ("garbage", b"hello there\r\n\r\n", [400]),
        ("binary garbage", bytes(range(1, 256)) + b"\r\n\r\n", [400]),
        ("NUL in a header", (get + "X: a\x00b\r\n\r\n").encode(), [400]),
        ("NUL in the target", ("GET http://%s/\x00 HTTP/1.1\r\n\r\n" % origin).encode(), [400]),
        ("huge header", (get + "X: " + "a" * 40000 + "\r\n\r\n").encode(), [431]),
        ("too many headers", (get + "".join("X-%d: 1\r\n" % i for i in range(300)) + "\r\n").encode(), [431]),
        ("header without colon", (get + "NoColon\r\n\r\n").encode(), [400]),
        ("space before colon", (get + "X : 1\r\n\r\n").encode(), [400]),
        ("obs-fold", (get + "X: 1\r\n  2\r\n\r\n").encode(), [400]),
        ("bare CR", (get + "X: 1\r2\r\n\r\n").encode(), [400]),
        ("CONNECT without port", b"CONNECT origin.test HTTP/1.1\r\n\r\n", [400]),
        ("CONNECT bad port", b"CONNECT origin.test:99999 HTTP/1.1\r\n\r\n", [400]),
        ("CONNECT port 0", b"CONNECT origin.test:0 HTTP/1.1\r\n\r\n", [400]),
        ("CONNECT letters port", b"CONNECT origin.test:https HTTP/1.1\r\n\r\n", [400]),
        ("absolute-form bad port", ("GET http://origin.test:8x/ HTTP/1.1\r\nHost: a\r\n\r\n").encode(), [400]),
        ("CL and TE", (post + "Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n").encode(), [400]),
        ("TE and CL", (post + "Transfer-Encoding: chunked\r\nContent-Length: 4\r\n\r\n0\r\n\r\n").encode(), [400]),
        ("conflicting CL", (post + "Content-Length: 4\r\nContent-Length: 5\r\n\r\nabcde").encode(), [400]),
        ("CL list", (post + "Content-Length: 4, 5\r\n\r\nabcde").encode(), [400]),
        ("negative CL", (post + "Content-Length: -4\r\n\r\n").encode(), [400]),
        ("unknown TE", (post + "Transfer-Encoding: gzip\r\n\r\n").encode(), [501]),
        ("TE in HTTP/1.0", ("POST http://%s/post HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" % origin).encode(), [400]),
        ("broken chunk size", (post + "Transfer-Encoding: chunked\r\n\r\nzz\r\n").encode(), [400]),
        ("userinfo", ("GET http://%s@evil.test/ HTTP/1.1\r\nHost: a\r\n\r\n" % origin).encode(), [400]),
        ("userinfo to allowed", ("GET http://evil.test@%s/ HTTP/1.1\r\nHost: a\r\n\r\n" % origin).encode(), [400]),
        ("fragment", ("GET http://%s/#x HTTP/1.1\r\nHost: a\r\n\r\n" % origin).encode(), [400]),
        ("ftp scheme", b"GET ftp://origin.test/ HTTP/1.1\r\nHost: a\r\n\r\n", [501]),
        ("HTTP/2 preface", b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", [505]),
        ("no Host in HTTP/1.1", ("GET http://%s/ HTTP/1.1\r\n\r\n" % origin).encode(), [400]),
        ("two Hosts", (get + "Host: b\r\n\r\n").encode(), [400]),
        ("bad host name", b"CONNECT bad_host!.test:443 HTTP/1.1\r\n\r\n", [400]),
        ("pipelined allowed, denied, allowed",
         (get + "\r\n" + "GET http://denied.test:%d/ HTTP/1.1\r\nHost: denied.test\r\n\r\n" % o
          + get + "Connection: close\r\n\r\n").encode(), [200, 403, 200]),
        ("pipelined after a bad one", (b"junk\r\n\r\n" + (get + "\r\n").encode()), [400]),
        ("denied with a body", ("POST http://denied.test:%d/ HTTP/1.1\r\nHost: d\r\nContent-Length: 5\r\n\r\nabcdeGET / HTTP/1.1\r\n\r\n" % o).encode(), [403]),
        ("POST chunked", (post + "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n5\r\nhello\r\n0\r\n\r\n").encode(), [200]),
    ]
    failed = 0
    for name, data, want in cases:
        got, errs = exchange(port, data)
        if got == want:
            print("ok: bad input: %s -> %s" % (name, got))
        else:
            print("FAIL: bad input: %s -> %s, want %s" % (name, got, want))
            failed += 1
    got, _ = exchange(port, (get + "Connection: close\r\n\r\n").encode())
    if got != [200]:
        print("FAIL: proxy does not serve after the bad input: %s" % got)
        failed += 1
    else:
        print("ok: proxy still serves after the bad input")
    return failed


def batch(port, path):
    """Lines "DESCRIPTION|WANT|BYTES"; WANT as `send` prints it."""
    failed = 0
    for line in open(path):
        if not line.strip():
            continue
        desc, want, data = line.rstrip("\n").split("|", 2)
        st, errs = exchange(port, data.encode().decode("unicode_escape").encode("latin-1"))
        got = (",".join(map(str, st)) or "none") + " " + " ".join(errs)
        if got.strip() == want.strip():
            print("ok: %s" % desc)
        else:
            print("FAIL: %s: got '%s', want '%s'" % (desc, got.strip(), want.strip()))
            failed += 1
    return failed


def main():
    port = int(sys.argv[1])
    if sys.argv[2] == "batch":
        return 1 if batch(port, sys.argv[3]) else 0
    if sys.argv[2] == "send":
        data = sys.argv[3].encode().decode("unicode_escape").encode("latin-1")
        quiet = float(sys.argv[4]) if len(sys.argv) > 4 else 1.0
        st, errs = exchange(port, data, quiet)
        print(",".join(map(str, st)) or "none", " ".join(errs))
        return 0
    return 1 if table(port, int(sys.argv[3])) else 0


sys.exit(main())
