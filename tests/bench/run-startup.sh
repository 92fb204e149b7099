#!/bin/sh
# pinhole run by hand: start-up cost, and throughput and connection rate
# from inside the sandbox beside pinhole proxy on loopback.  Run as root
# from the build dir (an optimised build, not the sanitizer one):
#
#	PINHOLE=./pinhole sh tests/bench/run-startup.sh [N]
#
# On a shared, loaded machine, run it under chrt -f 10 (as root) to see
# the cost itself rather than the wait for a CPU.
#
# Prints one line per case.  Only 127.0.0.1 and the sandbox are used.
set -u
PINHOLE=${PINHOLE:-./pinhole}
N=${1:-50}
PY=/usr/bin/python3
T=$(mktemp -d /tmp/pinhole-bench.XXXXXX)
chmod 755 "$T"
PIDS=
trap 'for p in $PIDS; do kill $p 2>/dev/null; done; rm -rf "$T"' EXIT
trap 'exit 1' INT TERM
cp "$PINHOLE" "$T/pinhole" && chmod 755 "$T/pinhole"
PINHOLE=$T/pinhole
export ASAN_OPTIONS=detect_leaks=0

# Start-up: true, bwrap --unshare-net true and pinhole run -- true, run
# in turn N times each (so that the load of a shared machine falls on
# all three alike); the median and 90th percentile wall time of each, and
# what pinhole adds to true and to bwrap, in ms.
startup() {
	who=$1; shift
	$PY - "$N" "$who" "$@" <<'PYEOF'
import os, subprocess, sys, time
n = int(sys.argv[1]); who = sys.argv[2]; pre = sys.argv[3:]
cases = [("true", ["true"]),
    ("bwrap --unshare-net true", ["bwrap", "--dev-bind", "/", "/",
        "--unshare-net", "true"]),
    ("pinhole run -- true", [os.environ["PINHOLE"],
        "run", "--", "true"])]
t = {d: [] for d, _ in cases}
for d, c in cases:
    subprocess.run(pre + c, check=True)		# warm the caches
for _ in range(n):
    for d, c in cases:
        a = time.perf_counter()
        subprocess.run(pre + c, check=True)
        t[d].append((time.perf_counter() - a) * 1000)
med = {}
for d, _ in cases:
    v = sorted(t[d]); med[d] = v[n // 2]
    print("%s: %-25s median %6.1f ms, p90 %6.1f ms (%d runs)" %
        (who, d, v[n // 2], v[n * 9 // 10], n))
p = med["pinhole run -- true"]
print("%s: pinhole adds %.1f ms to true, %.1f ms to bwrap" %
    (who, p - med["true"], p - med["bwrap --unshare-net true"]))
PYEOF
}

NOBODY="setpriv --reuid=nobody --regid=nogroup --clear-groups"
echo "== start-up"
export PINHOLE
startup "root  "
startup "nobody" $NOBODY

# An origin on loopback: /big is 256 MiB, anything else a few bytes.
PORT=$($PY "$(dirname "$0")/../free-port.py")
$PY - "$PORT" <<'PYEOF' &
import http.server, socketserver, sys
BIG = 256 << 20
CHUNK = b"x" * (1 << 20)
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a): pass
    def do_GET(self):
        n = BIG if self.path == "/big" else 2
        self.send_response(200)
        self.send_header("Content-Length", str(n))
        self.end_headers()
        if n == 2:
            self.wfile.write(b"ok")
            return
        for _ in range(n // len(CHUNK)):
            self.wfile.write(CHUNK)
class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    request_queue_size = 256
S(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
PYEOF
PIDS="$PIDS $!"
PP=$($PY "$(dirname "$0")/../free-port.py")
"$PINHOLE" proxy --listen "127.0.0.1:$PP" --allow "127.0.0.1:$PORT" \
    --allow "allow-private 127.0.0.0/8" 2>/dev/null &
PIDS="$PIDS $!"
for p in $PORT $PP; do
	$PY -c "import socket, time
for _ in range(100):
    try:
        socket.create_connection(('127.0.0.1', $p), 0.2); break
    except OSError:
        time.sleep(0.1)"
done

# Throughput: 256 MiB through CONNECT with curl; connection rate: 300
# sequential CONNECT + GET + close from one python client.
cat >"$T/load.sh" <<EOF
curl -s --noproxy '' -o /dev/null -w 'throughput: %{speed_download}\n' \
    --proxytunnel http://127.0.0.1:$PORT/big
$PY - $PORT <<'PYEOF'
import os, socket, sys, time, urllib.parse
p = urllib.parse.urlsplit(os.environ["HTTP_PROXY"])
target = "127.0.0.1:%s" % sys.argv[1]
n = 300
a = time.perf_counter()
for _ in range(n):
    s = socket.create_connection((p.hostname, p.port))
    s.sendall(b"CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (target.encode(), target.encode()))
    buf = b""
    while b"\r\n\r\n" not in buf:
        buf += s.recv(4096)
    assert b" 200" in buf.split(b"\r\n")[0], buf
    s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    while s.recv(4096):
        pass
    s.close()
print("connections: %.0f /s" % (n / (time.perf_counter() - a)))
PYEOF
EOF
fmt() {
	awk -v d="$1" '/throughput/ { printf "%s throughput %.0f MB/s\n", d, $2 / 1e6; next }
	    { print d, $0 }'
}
echo "== through the gateway"
curl -s -o /dev/null -w 'throughput: %{speed_download}\n' \
    "http://127.0.0.1:$PORT/big" | fmt "direct, no proxy:       "
env HTTP_PROXY="http://127.0.0.1:$PP" http_proxy="http://127.0.0.1:$PP" sh "$T/load.sh" | fmt "pinhole proxy, loopback:"
"$PINHOLE" run --allow "127.0.0.1:$PORT" --allow "allow-private 127.0.0.0/8" \
    -- sh "$T/load.sh" | fmt "pinhole run, veth:      "
