#!/usr/bin/env python3
"""The simplest decider for pinhole --decider: a list of rules in a file.

usage: decider-list.py RULES LISTEN
  LISTEN: an absolute path (a unix socket) or 127.0.0.1:PORT
  pinhole run --decider unix:/run/user/1000/decider.sock ...

RULES, read again for each question; the first line that matches wins:
  approver NAME                        who the answers are given as
  allow HOST[:PORT] [once|session|always] [ttl=SECONDS]
  deny  HOST[:PORT] [NOTE FOR THE AGENT...]
HOST may be a shell pattern (*.pythonhosted.org); no PORT: any port.
A question no line matches is left to the person ("ask").
"""
import fnmatch
import http.server
import json
import os
import socketserver
import sys


def decide(rules_path, q):
    approver = None
    with open(rules_path, encoding="utf-8") as f:
        lines = [ln.split("#", 1)[0].split() for ln in f]
    for words in lines:
        if len(words) >= 2 and words[0] == "approver":
            approver = words[1]
            continue
        if len(words) < 2 or words[0] not in ("allow", "deny"):
            continue
        host, _, port = words[1].partition(":")
        if not fnmatch.fnmatchcase(q.get("host", ""), host):
            continue
        if port and port != str(q.get("port")):
            continue
        if words[0] == "deny":
            a = {"decision": "deny"}
            if len(words) > 2:
                a["note"] = " ".join(words[2:])[:200]
        else:
            a = {"decision": "allow", "scope": "once"}
            for w in words[2:]:
                if w in ("once", "session", "always"):
                    a["scope"] = w
                elif w.startswith("ttl=") and w[4:].isdigit():
                    a["ttl"] = int(w[4:])
        if approver:
            a["approver"] = approver[:32]
        return a
    return {"decision": "ask"}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        sys.stderr.write("decider-list: " + (fmt % args) + "\n")

    def do_POST(self):
        try:
            n = int(self.headers.get("Content-Length", "0"))
            q = json.loads(self.rfile.read(min(n, 65536)))
            body = json.dumps(decide(sys.argv[1], q)).encode()
            status = 200
        except (OSError, ValueError) as e:
            body, status = str(e).encode(), 500
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)


class UnixServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True

    def get_request(self):
        return self.socket.accept()[0], ("unix", 0)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    where = sys.argv[2]
    if where.startswith("/"):
        if os.path.exists(where):
            os.unlink(where)
        server = UnixServer(where, Handler)
    else:
        addr, _, port = where.rpartition(":")
        server = http.server.ThreadingHTTPServer((addr, int(port)), Handler)
    server.serve_forever()


if __name__ == "__main__":
    main()
