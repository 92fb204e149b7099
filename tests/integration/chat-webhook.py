"""A chat channel's incoming webhook for the chat decider's tests
(contrib/decider/decider-chat.py): it keeps each message, and its person
answers through the decider's /answer, allowing chatok.* for the session
and denying anything else.  With CAFILE, /answer is HTTPS, verified
against it (the name aside: the tests use an address).

usage: chat-webhook.py OUT ANSWER_URL TOKEN [CAFILE]
"""
import http.server, json, re, ssl, sys, threading, urllib.request
out, answer_url, token = sys.argv[1], sys.argv[2], sys.argv[3]
ctx = None
if len(sys.argv) > 4:
    ctx = ssl.create_default_context(cafile=sys.argv[4])
    ctx.check_hostname = False
class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_POST(self):
        text = json.loads(self.rfile.read(int(self.headers["Content-Length"])))["text"]
        with open(out, "a") as f: f.write(text + "\n")
        self.send_response(200); self.send_header("Content-Length", "0"); self.end_headers()
        rid, host = re.search(r"request (r[0-9a-f]+): .* asks for ([^:]+):", text).groups()
        a = ({"decision": "allow", "scope": "session", "approver": "alice@example"}
             if host.startswith("chatok.") else
             {"decision": "deny", "note": "not in chat", "approver": "alice@example"})
        a["request"] = rid
        def send():
            req = urllib.request.Request(answer_url, data=json.dumps(a).encode(),
                headers={"Authorization": "Bearer " + token})
            urllib.request.urlopen(req, timeout=5, context=ctx).close()
        threading.Timer(0.2, send).start()
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
open(out + ".port", "w").write(str(s.server_address[1]))
s.serve_forever()
