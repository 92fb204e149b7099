#!/usr/bin/env python3
"""A decider for pinhole --decider that asks in a chat channel.

usage: decider-chat.py LISTEN WEBHOOK_URL
  LISTEN: 127.0.0.1:PORT (pinhole --decider http://127.0.0.1:PORT/decide)
  environment: DECIDER_TOKEN, a secret the answers must carry;
    DECIDER_TLS_CERT and DECIDER_TLS_KEY: serve HTTPS with them (pinhole
    --decider https://NAME:PORT/decide); DECIDER_CLIENT_CA: then take
    questions only from a client certificate this CA signed (pinhole
    --decider-cert; the answers still come with the token)

Each question is posted to the channel's incoming webhook as
{"text": "..."}; the person answers through the channel's slash command
or button, which POSTs to http://127.0.0.1:PORT/answer with the header
"Authorization: Bearer $DECIDER_TOKEN" and a JSON body:
  {"request": "r3f2a8e61b07c94d5", "decision": "allow", "scope": "session",
   "approver": "alice@example"}
  {"request": "r3f2a8e61b07c94d5", "decision": "deny", "note": "use the mirror",
   "approver": "alice@example"}
(by hand: curl -H "Authorization: Bearer $DECIDER_TOKEN" -d '{...}'
http://127.0.0.1:PORT/answer).  A question not answered a second before
pinhole stops waiting is left to the person at the terminal ("ask").
"""
import hmac
import http.server
import json
import os
import ssl
import sys
import threading
import urllib.request

KEYS = {"decision", "scope", "ttl", "note", "approver"}
waiting = {}            # request id -> [threading.Event, answer]
lock = threading.Lock()


def post_to_channel(q):
    what = "%s:%s" % (q.get("host"), q.get("port"))
    if q.get("method"):
        what += " (%s %s)" % (q["method"], q.get("path", ""))
    text = ("pinhole request %s: %s asks for %s; refused: %s; reason: %s"
            % (q.get("request"), q.get("cmd", "a sandbox"), what,
               q.get("refused", "-"), q.get("reason", "none given")))
    req = urllib.request.Request(
        sys.argv[2], data=json.dumps({"text": text}).encode(),
        headers={"Content-Type": "application/json"})
    urllib.request.urlopen(req, timeout=5).close()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def reply(self, status, obj):
        body = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def read_json(self):
        n = int(self.headers.get("Content-Length", "0"))
        obj = json.loads(self.rfile.read(min(n, 65536)))
        if not isinstance(obj, dict):
            raise ValueError("not an object")
        return obj

    def do_POST(self):
        try:
            obj = self.read_json()
        except ValueError as e:
            return self.reply(400, {"error": str(e)})
        if self.path == "/decide":
            return self.decide(obj)
        if self.path == "/answer":
            return self.answer(obj)
        return self.reply(404, {"error": "no such path"})

    def decide(self, q):
        if self.server.client_ca and not self.connection.getpeercert():
            return self.reply(403, {"error": "a client certificate, please"})
        rid = str(q.get("request", ""))
        slot = [threading.Event(), None]
        with lock:
            waiting[rid] = slot
        try:
            post_to_channel(q)
            slot[0].wait(max(int(q.get("timeout", 30)) - 1, 1))
        except OSError as e:
            sys.stderr.write("decider-chat: webhook: %s\n" % e)
        with lock:
            waiting.pop(rid, None)
        self.reply(200, slot[1] or {"decision": "ask"})

    def answer(self, obj):
        token = os.environ.get("DECIDER_TOKEN", "")
        given = self.headers.get("Authorization", "")
        if not token or not hmac.compare_digest(given, "Bearer " + token):
            return self.reply(403, {"error": "bad token"})
        rid = str(obj.pop("request", ""))
        with lock:
            slot = waiting.get(rid)
        if slot is None:
            return self.reply(404, {"error": "no question " + rid})
        slot[1] = {k: v for k, v in obj.items() if k in KEYS}
        slot[0].set()
        return self.reply(200, {"ok": True})


class Server(http.server.ThreadingHTTPServer):
    """Each connection's TLS handshake in its own thread, not accept's."""
    ctx = None
    client_ca = False

    def finish_request(self, request, client_address):
        if self.ctx is not None:
            try:
                request = self.ctx.wrap_socket(request, server_side=True)
            except (ssl.SSLError, OSError) as e:
                sys.stderr.write("decider-chat: TLS: %s\n" % e)
                return
        try:
            super().finish_request(request, client_address)
        finally:
            if self.ctx is not None:
                request.close()


def tls_context():
    cert, key = os.environ.get("DECIDER_TLS_CERT"), os.environ.get(
        "DECIDER_TLS_KEY")
    if not cert:
        return None
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    if os.environ.get("DECIDER_CLIENT_CA"):
        ctx.verify_mode = ssl.CERT_OPTIONAL
        ctx.load_verify_locations(os.environ["DECIDER_CLIENT_CA"])
    return ctx


def main():
    if len(sys.argv) != 3 or not os.environ.get("DECIDER_TOKEN"):
        sys.exit(__doc__)
    addr, _, port = sys.argv[1].rpartition(":")
    srv = Server((addr, int(port)), Handler)
    srv.ctx = tls_context()
    srv.client_ca = bool(os.environ.get("DECIDER_CLIENT_CA"))
    srv.serve_forever()


if __name__ == "__main__":
    main()
