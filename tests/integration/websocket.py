#!/usr/bin/env python3
"""The two ends of a WebSocket (RFC 6455) for read-only.sh.

  websocket.py serve PORT CERT KEY LOG
      An origin on 127.0.0.1:PORT, over TLS (CERT and KEY) or in clear
      (CERT -).  It appends to LOG a line for every request it receives
      ("HOST METHOD TARGET upgrade=PROTO" and its method override
      headers) and for every frame ("HOST ws-frame TEXT"); it answers an
      Upgrade: websocket with 101 and the Sec-WebSocket-Accept computed
      from the key, then echoes each frame; anything else gets 200.

  websocket.py client URL HOW [CAFILE]
      Asks wss:// or ws:// URL for a WebSocket, HOW being "connect"
      (through $https_proxy with CONNECT), "direct" (no proxy: a
      captured connection) or "forward" (ws:// in absolute form through
      $http_proxy).  Prints "status CODE pinhole-error LABEL", and after
      a 101 sends one text frame and prints "echo TEXT" with what came
      back.  Exits 0 only when the echo came back.
"""
import base64
import hashlib
import http.server
import os
import socket
import ssl
import struct
import sys
import urllib.parse

GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


def accept_key(key):
    return base64.b64encode(hashlib.sha1((key + GUID).encode()).digest()
                            ).decode()


def read_exact(f, n):
    data = b""
    while len(data) < n:
        chunk = f.read(n - len(data))
        if not chunk:
            raise EOFError
        data += chunk
    return data


def masked(data, key):
    return bytes(c ^ key[i % 4] for i, c in enumerate(data))


def read_frame(f):
    b0, b1 = read_exact(f, 2)
    n = b1 & 0x7f
    if n == 126:
        n = struct.unpack("!H", read_exact(f, 2))[0]
    elif n == 127:
        n = struct.unpack("!Q", read_exact(f, 8))[0]
    key = read_exact(f, 4) if b1 & 0x80 else None
    data = read_exact(f, n)
    return b0 & 0x0f, masked(data, key) if key else data


def frame(opcode, data, mask):
    """One final frame; a client's is masked, a server's never."""
    n = len(data)
    bit = 0x80 if mask else 0
    head = bytes([0x80 | opcode])
    if n < 126:
        head += bytes([bit | n])
    elif n < 65536:
        head += bytes([bit | 126]) + struct.pack("!H", n)
    else:
        head += bytes([bit | 127]) + struct.pack("!Q", n)
    if not mask:
        return head + data
    key = os.urandom(4)
    return head + key + masked(data, key)


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def record(self, what):
        with open(self.server.logpath, "a") as f:
            f.write("%s %s\n" % (self.headers.get("Host", "-"), what))

    def handle_any(self):
        over = ["%s: %s" % (k, v) for k, v in self.headers.items()
                if "method" in k.lower()]
        self.record(" ".join([self.command, self.path, "upgrade=%s" %
                              self.headers.get("Upgrade", "-")] + over))
        n = int(self.headers.get("Content-Length") or 0)
        if n:
            self.rfile.read(n)
        if self.headers.get("Upgrade", "").lower() == "websocket":
            return self.websocket()
        body = ("hello %s %s\n" % (self.command, self.path)).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def websocket(self):
        self.send_response(101, "Switching Protocols")
        self.send_header("Connection", "Upgrade")
        self.send_header("Upgrade", "websocket")
        self.send_header("Sec-WebSocket-Accept",
                         accept_key(self.headers.get("Sec-WebSocket-Key",
                                                     "")))
        self.end_headers()
        self.close_connection = True
        while True:
            try:
                op, data = read_frame(self.rfile)
            except (EOFError, OSError, ValueError):
                return
            if op == 8:
                self.wfile.write(frame(8, data[:2], False))
                return
            self.record("ws-frame %s" % data.decode(errors="replace"))
            self.wfile.write(frame(op, data, False))

    do_GET = do_HEAD = do_POST = do_PUT = do_DELETE = handle_any
    do_OPTIONS = do_PATCH = handle_any


def serve(port, cert, key, logpath):
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", int(port)), Handler)
    srv.daemon_threads = True
    srv.logpath = logpath
    if cert != "-":
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(cert, key)
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    srv.serve_forever()


def read_head(f):
    status = f.readline().decode(errors="replace").split(" ", 2)
    headers = {}
    while True:
        line = f.readline().decode(errors="replace").strip()
        if not line:
            break
        k, _, v = line.partition(":")
        headers[k.strip().lower()] = v.strip()
    return int(status[1]), headers


def client(url, how, cafile=None):
    u = urllib.parse.urlsplit(url)
    host, port = u.hostname, u.port
    proxy = urllib.parse.urlsplit(os.environ.get(
        "https_proxy" if u.scheme == "wss" else "http_proxy", ""))
    if how == "direct":
        s = socket.create_connection((host, port), 10)
    else:
        s = socket.create_connection((proxy.hostname, proxy.port), 10)
    s.settimeout(10)
    if how == "connect":
        s.sendall(("CONNECT %s:%d HTTP/1.1\r\nHost: %s:%d\r\n\r\n" %
                   (host, port, host, port)).encode())
        f = s.makefile("rb")
        code, _ = read_head(f)
        if code != 200:
            print("CONNECT answered", code)
            return 1
        f.close()
    if u.scheme == "wss":
        ctx = ssl.create_default_context(cafile=cafile)
        s = ctx.wrap_socket(s, server_hostname=host)
    target = u.path or "/"
    if how == "forward":
        target = "http://%s:%d%s" % (host, port, target)
    key = base64.b64encode(os.urandom(16)).decode()
    s.sendall(("GET %s HTTP/1.1\r\nHost: %s:%d\r\nConnection: Upgrade\r\n"
               "Upgrade: websocket\r\nSec-WebSocket-Key: %s\r\n"
               "Sec-WebSocket-Version: 13\r\n\r\n" %
               (target, host, port, key)).encode())
    f = s.makefile("rb")
    code, headers = read_head(f)
    print("status", code, "pinhole-error", headers.get("pinhole-error", "-"))
    if code != 101:
        n = int(headers.get("content-length") or 0)
        print(f.read(n).decode(errors="replace") if n else "")
        return 1
    if headers.get("sec-websocket-accept") != accept_key(key):
        print("a bad Sec-WebSocket-Accept")
        return 1
    text = "hello-ws %s" % u.path
    s.sendall(frame(1, text.encode(), True))
    op, data = read_frame(f)
    print("echo", data.decode(errors="replace"))
    s.sendall(frame(8, struct.pack("!H", 1000), True))
    return 0 if op == 1 and data.decode() == text else 1


if __name__ == "__main__":
    if sys.argv[1] == "serve":
        serve(*sys.argv[2:6])
    else:
        sys.exit(client(*sys.argv[2:5]))
