#!/usr/bin/env python3
"""Capture real TLS ClientHellos from local clients, on loopback only.

Regenerates the binary test vectors next to this script (hello-*.bin).
Each client connects to a one-shot server on 127.0.0.1 that saves the
bytes it receives before the client waits for an answer, then closes.
Run by hand when a vector needs refreshing; the tests only read files.
"""
import os
import socket
import ssl
import subprocess
import sys
import threading

HERE = os.path.dirname(os.path.abspath(__file__))


def serve_once(sock, out):
    """Accept one connection and keep what arrives in the first second."""
    sock.settimeout(10)
    conn, _ = sock.accept()
    conn.settimeout(1)
    data = b""
    try:
        while len(data) < 65536:
            chunk = conn.recv(65536)
            if not chunk:
                break
            data += chunk
    except socket.timeout:
        pass
    conn.close()
    out.append(data)


def capture(name, client):
    """Run client(port) against a one-shot server; save to hello-NAME.bin."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(1)
    port = sock.getsockname()[1]
    out = []
    t = threading.Thread(target=serve_once, args=(sock, out))
    t.start()
    try:
        client(port)
    except (OSError, subprocess.SubprocessError):
        pass
    t.join(15)
    sock.close()
    with open(os.path.join(HERE, "hello-%s.bin" % name), "wb") as f:
        f.write(out[0])
    print("%s: %d bytes" % (name, len(out[0])))


def openssl(*args):
    def run(port):
        subprocess.run(["openssl", "s_client", "-connect",
                        "127.0.0.1:%d" % port] + list(args),
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=10)
    return run


def curl(*args):
    def run(port):
        subprocess.run(["curl", "-sk", "--max-time", "3"] +
                       [a.replace("PORT", str(port)) for a in args],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       timeout=10)
    return run


def python_ssl(port):
    ctx = ssl.create_default_context()
    with socket.create_connection(("127.0.0.1", port), timeout=3) as s:
        try:
            ctx.wrap_socket(s, server_hostname="origin.test")
        except (OSError, ssl.SSLError):
            pass


def main():
    capture("openssl-tls13", openssl("-servername", "origin.test"))
    capture("openssl-tls12", openssl("-tls1_2", "-servername", "origin.test"))
    capture("openssl-nosni", openssl("-noservername"))
    capture("openssl-upper", openssl("-servername", "Origin.TEST."))
    capture("openssl-iplit", openssl("-servername", "127.0.0.1"))
    capture("curl", curl("--resolve", "origin.test:PORT:127.0.0.1",
                         "https://origin.test:PORT/"))
    capture("curl-iplit", curl("https://127.0.0.1:PORT/"))
    capture("python", python_ssl)


if __name__ == "__main__":
    sys.exit(main())
