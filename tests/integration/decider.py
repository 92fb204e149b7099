"""A decider for tests/integration/decider.sh, on loopback TCP and a unix
socket at once.  It answers by the first label of the host asked about,
and appends every question it gets, as received, to a file.

usage: decider.py PORTFILE SOCKET QUESTIONS
"""
import http.server
import json
import os
import socket
import socketserver
import sys
import threading
import time

ANSWERS = {
    "once": {"decision": "allow", "scope": "once",
             "approver": "alice@example"},
    "session": {"decision": "allow", "scope": "session", "approver": "bob"},
    "always": {"decision": "allow", "scope": "always", "ttl": 3600,
               "approver": "carol"},
    "note": {"decision": "deny", "note": "use the mirror at pkg.test",
             "approver": "dave"},
    "ask": {"decision": "ask"},
    "unix": {"decision": "allow", "scope": "once", "approver": "erin"},
    "ttl": {"decision": "allow", "scope": "session", "ttl": 2,
            "approver": "frank"},
}
lock = threading.Lock()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def answer(self, status, body):
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(min(n, 65536))
        with lock, open(sys.argv[3], "ab") as f:
            f.write(self.path.encode() + b" " + raw + b"\n")
        q = json.loads(raw)
        label = q["host"].split(".")[0]
        if label == "slow":
            time.sleep(q["timeout"] + 2)
            self.answer(200, b'{"decision":"allow"}')
        elif label == "malformed":
            self.answer(200, b'{"decision":"allow",')
        elif label == "error":
            self.answer(500, b'{"decision":"allow"}')
        elif label == "huge":
            self.answer(200, b'{"decision":"allow","note":"'
                        + b"x" * 100000 + b'"}')
        elif label == "extra":
            self.answer(200, b'{"decision":"allow","admin":true}')
        else:
            self.answer(200, json.dumps(ANSWERS.get(
                label, {"decision": "deny"})).encode())


class TCP(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


class Unix(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True

    def get_request(self):
        conn, _ = self.socket.accept()
        return conn, ("unix", 0)


tcp = TCP(("127.0.0.1", 0), Handler)
if os.path.exists(sys.argv[2]):
    os.unlink(sys.argv[2])
unix = Unix(sys.argv[2], Handler)
os.chmod(sys.argv[2], 0o666)
threading.Thread(target=unix.serve_forever, daemon=True).start()
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write("%d\n" % tcp.server_address[1])
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
tcp.serve_forever()
