"""A decider over TLS for tests/integration/decider-tls.sh: it verifies
its clients against a CA of its own (CERT_REQUIRED), keeps connections
open (HTTP/1.1), answers by the first label of the host asked about, and
appends one line a question to a file: the client certificate's CN, the
connection's client port, how many questions were out at once, the
question.

usage: decider-tls.py PORTFILE CERT KEY CLIENTCA QUESTIONS
"""
import http.server
import json
import os
import socketserver
import ssl
import sys
import threading
import time

ANSWERS = {
    "allow": {"decision": "allow", "scope": "once", "approver": "tls-ops"},
    "deny": {"decision": "deny", "note": "not from this fleet",
             "approver": "tls-ops"},
    "ask": {"decision": "ask"},
    "slow": {"decision": "allow", "scope": "once", "approver": "tls-ops"},
}
lock = threading.Lock()
out = {"now": 0}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(min(n, 65536))
        q = json.loads(raw)
        label = q["host"].split(".")[0].rstrip("0123456789")
        with lock:
            out["now"] += 1
            now = out["now"]
        if label == "slow":
            time.sleep(1)
        cert = self.connection.getpeercert() or {}
        cn = dict(x[0] for x in cert.get("subject", ())).get("commonName")
        with lock:
            out["now"] -= 1
            with open(sys.argv[5], "a") as f:
                f.write("%s %d %d %s\n" % (cn, self.client_address[1], now,
                                           raw.decode()))
        body = json.dumps(ANSWERS.get(label, {"decision": "deny"})).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(sys.argv[2], sys.argv[3])
ctx.verify_mode = ssl.CERT_REQUIRED
ctx.load_verify_locations(sys.argv[4])
srv = Server(("127.0.0.1", 0), Handler)
srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write("%d\n" % srv.server_address[1])
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
srv.serve_forever()
