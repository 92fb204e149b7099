#!/usr/bin/env python3
# A small HTTP/1.1 origin for the proxy tests: keep-alive, chunked and
# sized bodies, and an echo of the request head it received.
#   /echo          the request line and headers, as text
#   /upgrade       with "Upgrade: echo": 101, then echoes bytes back
#   /post          (POST) the length of the body received
#   /chunked?n=N   N bytes of 'x' in a chunked response
#   /size?n=N      N bytes of 'x' with Content-Length
#   anything else  "hello from origin"
import http.server
import sys
import urllib.parse


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def log_message(self, *args):
        pass

    def send_text(self, body, status=200):
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def query_n(self):
        q = urllib.parse.urlparse(self.path).query
        return min(int(urllib.parse.parse_qs(q).get("n", ["0"])[0]), 1 << 26)

    def do_GET(self):
        path = urllib.parse.urlparse(self.path).path
        if path == "/upgrade" and self.headers.get("Upgrade") == "echo":
            self.send_response(101)
            self.send_header("Upgrade", "echo")
            self.send_header("Connection", "Upgrade")
            self.end_headers()
            self.wfile.flush()
            while True:
                b = self.connection.recv(65536)
                if not b:
                    break
                self.connection.sendall(b)
            self.close_connection = True
        elif path == "/echo":
            self.send_text(self.requestline + "\n" + str(self.headers))
        elif path == "/chunked":
            n = self.query_n()
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            while n > 0:
                k = min(n, 65536)
                self.wfile.write(b"%x\r\n" % k + b"x" * k + b"\r\n")
                n -= k
            self.wfile.write(b"0\r\n\r\n")
        elif path == "/size":
            n = self.query_n()
            self.send_response(200)
            self.send_header("Content-Length", str(n))
            self.end_headers()
            while n > 0:
                k = min(n, 65536)
                self.wfile.write(b"x" * k)
                n -= k
        else:
            self.send_text("hello from origin\n")

    do_HEAD = do_GET

    def do_POST(self):
        n = 0
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            while True:
                try:
                    size = int(self.rfile.readline().split(b";")[0], 16)
                except ValueError:
                    self.close_connection = True
                    return
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    break
                n += len(self.rfile.read(size))
                self.rfile.readline()
        else:
            n = len(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        self.send_text("received %d bytes\n" % n)


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True


Server(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
