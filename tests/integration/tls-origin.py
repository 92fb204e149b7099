#!/usr/bin/env python3
"""A TLS origin for the inspection tests: HTTP/1.1 with keep-alive.
Usage: tls-origin.py PORT CERT KEY ROOT LOG
  /git/REPO.git/...   git http-backend (smart HTTP) for ROOT/repos
  /echo               the request line and headers, as text
  /reflect            what a careless origin reflects: Origin in
                      Access-Control-Allow-Origin, every request header in
                      an X-Echo-NAME header and in a JSON body, with the
                      request's body and the token of Authorization (or
                      X-Api-Key) in base64, URL-safe base64 after one byte,
                      and percent-encoded; ?gzip: the body gzipped;
                      ?chunked: sent in chunks of 7 bytes
  /npm/NAME           an npm packument for ROOT/npm/NAME.tgz
  anything else       a file under ROOT/www, or "hello from HOST PATH"
Every request line is appended to LOG with the Host it named, so a test
can tell what reached the origin, and after it the SHA-256 of the
Authorization and X-Api-Key headers that came with it (so a test can tell
a secret's value reached the origin without any file holding it)."""
import base64
import gzip
import hashlib
import http.server
import json
import os
import ssl
import subprocess
import sys
import urllib.parse

port, cert, key, root, logpath = sys.argv[1:6]


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def log_message(self, *args):
        pass

    def record(self):
        with open(logpath, "a") as f:
            f.write("%s %s %s\n" % (self.headers.get("Host", "-"),
                                    self.command, self.path))
            for h in ("Authorization", "X-Api-Key"):
                if h in self.headers:
                    f.write("%s-sha256 %s\n" % (h, hashlib.sha256(
                        self.headers[h].encode()).hexdigest()))

    def body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def reply(self, data, status=200, ctype="text/plain"):
        if isinstance(data, str):
            data = data.encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def reflect(self, query):
        q = urllib.parse.parse_qs(query, keep_blank_values=True)
        got = self.body()
        auth = self.headers.get("Authorization", "")
        tok = (auth.split(" ", 1) + [""])[1] or self.headers.get(
            "X-Api-Key", "")
        raw = tok.encode()
        doc = {"headers": dict(self.headers.items()),
               "body": got.decode(errors="replace"),
               "b64": base64.b64encode(raw).decode(),
               "b64url": base64.urlsafe_b64encode(
                   b"x" + raw).decode().rstrip("="),
               "pct": urllib.parse.quote(tok, safe="")}
        data = json.dumps(doc).encode()
        self.send_response(200)
        if "Origin" in self.headers:
            self.send_header("Access-Control-Allow-Origin",
                             self.headers["Origin"])
        for k, v in self.headers.items():
            self.send_header("X-Echo-" + k, v)
        self.send_header("X-Token-B64", doc["b64"])
        self.send_header("Content-Type", "application/json")
        if "gzip" in q:
            data = gzip.compress(data)
            self.send_header("Content-Encoding", "gzip")
        if "chunked" in q:
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for i in range(0, len(data), 7):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data[i:i + 7]),
                                                      data[i:i + 7]))
            self.wfile.write(b"0\r\n\r\n")
            return
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def git(self, path, query):
        # One CGI call of git http-backend; its body may be chunked.
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            data = b""
            while True:
                n = int(self.rfile.readline().split(b";")[0], 16)
                if n == 0:
                    self.rfile.readline()
                    break
                data += self.rfile.read(n)
                self.rfile.readline()
        else:
            data = self.body()
        env = dict(os.environ, GIT_PROJECT_ROOT=root + "/repos",
                   GIT_HTTP_EXPORT_ALL="1", PATH_INFO=path[len("/git"):],
                   QUERY_STRING=query, REQUEST_METHOD=self.command,
                   CONTENT_TYPE=self.headers.get("Content-Type", ""),
                   CONTENT_LENGTH=str(len(data)), REMOTE_USER="test",
                   GIT_CONFIG_COUNT="2",
                   GIT_CONFIG_KEY_0="safe.directory", GIT_CONFIG_VALUE_0="*",
                   GIT_CONFIG_KEY_1="http.receivepack",
                   GIT_CONFIG_VALUE_1="true")
        enc = self.headers.get("Content-Encoding")
        if enc:
            env["HTTP_CONTENT_ENCODING"] = enc
        gp = self.headers.get("Git-Protocol")
        if gp:
            env["GIT_PROTOCOL"] = gp
        out = subprocess.run(["git", "http-backend"], input=data, env=env,
                             stdout=subprocess.PIPE).stdout
        head, _, rest = out.partition(b"\r\n\r\n")
        status, headers = 200, []
        for line in head.split(b"\r\n"):
            k, _, v = line.decode().partition(":")
            if k.lower() == "status":
                status = int(v.split()[0])
            elif k:
                headers.append((k, v.strip()))
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(rest)))
        self.end_headers()
        self.wfile.write(rest)

    def handle_any(self):
        self.record()
        u = urllib.parse.urlsplit(self.path)
        if u.path.startswith("/git/"):
            return self.git(u.path, u.query)
        if u.path == "/reflect":
            return self.reflect(u.query)
        self.body()
        if u.path == "/echo" or u.path.endswith("/echo"):
            text = "%s %s\n%s" % (self.command, self.path, self.headers)
            return self.reply(text)
        if u.path.startswith("/npm/") and not u.path.endswith(".tgz"):
            name = u.path[len("/npm/"):]
            host = self.headers.get("Host")
            tgz = "https://%s/npm/%s.tgz" % (host, name)
            doc = {"name": name, "dist-tags": {"latest": "1.0.0"},
                   "versions": {"1.0.0": {
                       "name": name, "version": "1.0.0",
                       "dist": {"tarball": tgz}}}}
            return self.reply(json.dumps(doc), ctype="application/json")
        f = os.path.normpath(root + "/www/" + u.path)
        if u.path.startswith("/npm/"):
            f = root + "/npm/" + os.path.basename(u.path)
        if f.startswith(root) and os.path.isfile(f):
            with open(f, "rb") as fh:
                return self.reply(fh.read(), ctype="application/octet-stream")
        if f.startswith(root) and os.path.isfile(f + "/index.html"):
            with open(f + "/index.html", "rb") as fh:
                return self.reply(fh.read(), ctype="text/html")
        self.reply("hello from %s %s\n" % (self.headers.get("Host"), u.path))

    do_GET = do_HEAD = do_POST = do_PUT = do_DELETE = do_OPTIONS = handle_any


ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(cert, key)
srv = http.server.ThreadingHTTPServer(("127.0.0.1", int(port)), Handler)
srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
srv.serve_forever()
