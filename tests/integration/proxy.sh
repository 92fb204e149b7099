#!/bin/sh
# pinhole proxy with real clients (curl, wget, python urllib) against
# local origins (HTTP and TLS), names from a local dnsmasq: policy
# verdicts, the private-address guard, bad input, reload, the audit log,
# and a clean stop.  All traffic stays on 127.0.0.1.
. "$top_srcdir/tests/integration/lib.sh"
here="$top_srcdir/tests/integration"

need curl wget python3 openssl dnsmasq
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY no_proxy NO_PROXY ALL_PROXY

P=$(free_port)
O=$(free_port)
S=$(free_port)
B=$(free_port)
D=$(free_port)
LOG="$T/audit.log"
ERR="$T/proxy.err"

# Names for the tests, answered by dnsmasq.
bg dnsmasq -k -p "$D" --listen-address=127.0.0.1 --bind-interfaces \
    --no-resolv --no-hosts --conf-file=/dev/null --pid-file="$T/dnsmasq.pid" \
    --address=/origin.test/127.0.0.1 --address=/wild.test/127.0.0.1 \
    --address=/ports.test/127.0.0.1 --address=/denied.test/127.0.0.1 \
    --address=/ten.test/10.0.0.1 --address=/meta.test/169.254.169.254 \
    --address=/ali.test/100.100.100.200 --address=/v6lo.test/::1 \
    --address=/mapped.test/::ffff:127.0.0.1 \
    --address=/nat64.test/64:ff9b::a9fe:a9fe \
    --host-record=two.test,127.0.0.2 --host-record=two.test,127.0.0.1 \
    2>"$T/dnsmasq.err"

# The origins: HTTP/1.1 with keep-alive, and TLS.
bg python3 "$here/origin.py" "$O"
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=origin.test \
    -addext subjectAltName=DNS:origin.test -keyout "$T/key.pem" \
    -out "$T/cert.pem" >/dev/null 2>&1 || fail "cannot make a test certificate"
bg openssl s_server -accept "127.0.0.1:$S" -cert "$T/cert.pem" \
    -key "$T/key.pem" -www -quiet

write_policy() {
	cat >"$T/policy" <<EOF
# test policy
allow origin.test:$O,$S,$B
allow *.wild.test:$O
allow ports.test:1-1000
deny  denied.test
allow denied.test:$O
allow 127.0.0.1:$O
allow ten.test:$O
allow meta.test:$O
allow ali.test:$O
allow v6lo.test:$O
allow mapped.test:$O
allow nat64.test:$O
allow two.test:$O
EOF
	[ -z "${1:-}" ] || echo "$1" >>"$T/policy"
}
write_policy

"$PINHOLE" proxy --listen "127.0.0.1:$P" --policy "$T/policy" \
    --log "$LOG" --resolver "127.0.0.1:$D" --handshake-timeout 2 \
    --grace 3 -v 2>"$ERR" &
PROXY=$!
PIDS="$PIDS $PROXY"
wait_port "$O"
wait_port "$S"
wait_port "$P" || { cat "$ERR" >&2; finish; exit 1; }

X="http://127.0.0.1:$P"
i=0
while ! grep -q "^pinhole proxy: answer" "$ERR" && [ $i -lt 50 ]; do
	sleep 0.1; i=$((i + 1))
done
grep -q "^pinhole proxy: session [0-9a-z-]* serves on 127\.0\.0\.1:$P$" "$ERR" &&
    grep -q "^pinhole proxy: point clients at it: HTTPS_PROXY=$X HTTP_PROXY=$X$" "$ERR" &&
    grep -q "^pinhole proxy: answer what they ask for with \`pinhole pending\` or \`pinhole watch\`" "$ERR" &&
    ok "proxy says where it serves, how clients use it, how to answer" ||
    fail "proxy says: $(cat "$ERR")"

# Send raw bytes; print the statuses and Pinhole-Error labels.
raw() {
	python3 "$here/rawhttp.py" "$P" send "$1"
}

# Queue a raw check: description, what raw() should print, bytes.
expect_raw() {
	printf '%s|%s|%s\n' "$1" "$2" "$3" >>"$T/batch"
}

# Run the queued raw checks in one go (one python process).
run_raw() {
	python3 "$here/rawhttp.py" "$P" batch "$T/batch" >"$T/batch.out" 2>&1
	while IFS= read -r l; do
		case $l in
		ok:*) ok "${l#ok: }" ;;
		*) fail "${l#FAIL: }" ;;
		esac
	done <"$T/batch.out"
	: >"$T/batch"
}

# HTTP status of a forwarded request with curl.
code() {
	curl -s -o /dev/null -w '%{http_code}' -x "$X" "$@"
}

# The private-address guard: the policy allows these names, but they
# resolve to special-purpose addresses and no allow-private covers them.
for n in origin ten meta ali v6lo mapped nat64; do
	expect_raw "$n.test refused: private address" "403 private-address" \
	    "GET http://$n.test:$O/ HTTP/1.1\r\nHost: $n.test\r\nConnection: close\r\n\r\n"
	expect_raw "CONNECT $n.test refused: private address" \
	    "403 private-address" "CONNECT $n.test:$O HTTP/1.1\r\n\r\n"
done
for a in 127.0.0.1 2130706433 0x7f.1 127.1 0177.0.0.1 0x7f000001 \
    '[::ffff:127.0.0.1]'; do
	expect_raw "IPv4 spelling $a refused" "403 private-address" \
	    "CONNECT $a:$O HTTP/1.1\r\n\r\n"
done
expect_raw "unknown name denied by policy" "403 denied-by-policy" \
    "CONNECT nowhere.test:443 HTTP/1.1\r\n\r\n"
expect_raw "IP literal without an IP rule" "403 ip-literal" \
    "CONNECT 192.0.2.1:443 HTTP/1.1\r\n\r\n"
expect_raw "port outside the rule" "403 port" \
    "CONNECT ports.test:$O HTTP/1.1\r\n\r\n"
expect_raw "deny wins over allow" "403 denied-by-policy" \
    "CONNECT denied.test:$O HTTP/1.1\r\n\r\n"
run_raw
body=$(curl -s -x "$X" "http://nowhere.test/")
case $body in
*"nowhere.test:80"*"pinhole request nowhere.test:80"*) ok "403 body names host, port and the command" ;;
*) fail "403 body: $body" ;;
esac
loggrep "$LOG" '"host":"nowhere.test","port":80,.*"ask":"pinhole request nowhere.test:80"' &&
    ok "the log line names the command too" || fail "no ask in the log"
loggrep "$LOG" '"reason":"private-address".*"ask"' &&
    fail "a private-address refusal suggests asking" ||
    ok "a refusal no grant lifts names no command"

# Reload with allow-private for loopback: the local origins open up.
write_policy "allow-private 127.0.0.0/8"
kill -HUP "$PROXY"
i=0
while [ $i -lt 50 ] && [ "$(code "http://origin.test:$O/")" != 200 ]; do
	sleep 0.1
	i=$((i + 1))
done
expect "SIGHUP reload takes effect" loggrep "$LOG" '"event":"reload"'

expect "curl: forward http" sh -c \
    "curl -sf -x '$X' http://origin.test:$O/ | grep -q 'hello from origin'"
expect "curl: https through CONNECT" sh -c \
    "curl -sf --cacert '$T/cert.pem' -x '$X' https://origin.test:$S/ | grep -q 's_server'"
expect "wget: forward http" sh -c \
    "http_proxy='$X' wget -q -O - http://origin.test:$O/ | grep -q 'hello from origin'"
expect "wget: https through CONNECT" sh -c \
    "https_proxy='$X' wget -q --ca-certificate='$T/cert.pem' -O - https://origin.test:$S/ | grep -q s_server"
# Not urllib.py: the script's directory comes first in sys.path, and a
# file of that name is what "import urllib.request" would find.
cat >"$T/client-urllib.py" <<EOF
import ssl, sys, urllib.request
h = urllib.request.ProxyHandler({"http": "$X", "https": "$X"})
ctx = ssl.create_default_context(cafile="$T/cert.pem")
o = urllib.request.build_opener(h, urllib.request.HTTPSHandler(context=ctx))
assert b"hello from origin" in o.open("http://origin.test:$O/", timeout=5).read()
assert b"s_server" in o.open("https://origin.test:$S/", timeout=5).read()
try:
    o.open("http://denied.test:$O/", timeout=5)
    sys.exit("denied.test was let through")
except urllib.error.HTTPError as e:
    assert e.code == 403 and e.headers["Pinhole-Error"] == "denied-by-policy"
EOF
expect "python urllib: http, https, and a 403" python3 "$T/client-urllib.py"

[ "$(code "http://sub.wild.test:$O/")" = 200 ] && ok "wildcard matches a subdomain" || fail "wildcard subdomain"
[ "$(code "http://a.b.wild.test:$O/")" = 200 ] && ok "wildcard matches at any depth" || fail "wildcard depth"
[ "$(code "http://wild.test:$O/")" = 403 ] && ok "wildcard does not match the apex" || fail "wildcard apex"
[ "$(code "http://denied.test:$O/")" = 403 ] && ok "deny still wins" || fail "deny wins"
[ "$(code "http://ten.test:$O/")" = 403 ] && ok "10.0.0.1 still refused" || fail "10.0.0.1 let through"
[ "$(code "http://nat64.test:$O/")" = 403 ] && ok "NAT64 still refused" || fail "NAT64 let through"
[ "$(code "http://v6lo.test:$O/")" = 403 ] && ok "::1 not covered by 127.0.0.0/8" || fail "::1 let through"
for a in 127.0.0.1 2130706433 0x7f.1 127.1 0177.0.0.1; do
	expect_raw "IPv4 spelling $a is one address with an IP rule" "200 " \
	    "GET http://$a:$O/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
done
run_raw
for i in 1 2 3; do
	[ "$(code "http://two.test:$O/")" = 200 ] || break
done
[ $i -eq 3 ] && ok "each address tried in turn (127.0.0.2 refuses)" || fail "two.test: $(code "http://two.test:$O/")"
loggrep "$LOG" '"host":"two.test","port":[0-9]*,"addr":"127.0.0.1"' &&
    ok "the address dialed is logged" || fail "no addr for two.test"
expect "curl: userinfo is not the host" sh -c \
    "curl -sf -x '$X' http://denied.test@origin.test:$O/ | grep -q 'hello from origin'"

# What the origin sees: hop-by-hop headers gone, Via added.
curl -s -x "$X" -H "Connection: X-Secret" -H "X-Secret: 1" \
    -H "Proxy-Authorization: Basic eDp5" -H "X-Kept: 1" \
    "http://origin.test:$O/echo" >"$T/echo"
if grep -qi '^x-kept: 1' "$T/echo" && grep -qi '^via: 1.1 pinhole' "$T/echo" &&
    ! grep -qi -e '^x-secret' -e '^proxy-' -e '^connection: x' "$T/echo"; then
	ok "hop-by-hop headers dropped, Via added"
else
	fail "headers upstream: $(cat "$T/echo")"
fi
curl -s -D "$T/resp" -o /dev/null -x "$X" "http://origin.test:$O/"
grep -qi '^via: 1.1 pinhole' "$T/resp" && ok "Via on the response" || fail "no Via on the response"

# An upgrade the policy allows becomes a tunnel.
got=$(python3 - "$P" "$O" <<'EOF'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), 3)
s.settimeout(3)
s.sendall(b"GET http://origin.test:%s/upgrade HTTP/1.1\r\nHost: origin.test\r\n"
          b"Connection: Upgrade\r\nUpgrade: echo\r\n\r\n" % sys.argv[2].encode())
head = b""
while b"\r\n\r\n" not in head:
    head += s.recv(1)
s.sendall(b"ping through the upgrade")
data = b""
while len(data) < 24:
    data += s.recv(100)
print(head.split(b"\r\n")[0].decode(), data.decode())
EOF
)
[ "$got" = "HTTP/1.1 101 Switching Protocols ping through the upgrade" ] &&
    ok "upgrade (101) becomes a tunnel" || fail "upgrade: $got"

# Bodies, streamed both ways.
n=$(curl -s -x "$X" "http://origin.test:$O/size?n=20000000" | wc -c)
[ "$n" -eq 20000000 ] && ok "20 MB sized download" || fail "sized download: $n bytes"
n=$(curl -s -x "$X" "http://origin.test:$O/chunked?n=5000000" | wc -c)
[ "$n" -eq 5000000 ] && ok "5 MB chunked download" || fail "chunked download: $n bytes"
head -c 5000000 /dev/zero >"$T/upload"
expect "5 MB upload with Content-Length" sh -c \
    "curl -s -x '$X' --data-binary @'$T/upload' http://origin.test:$O/post | grep -q 'received 5000000 bytes'"
expect "5 MB chunked upload" sh -c \
    "curl -s -x '$X' -H 'Transfer-Encoding: chunked' --data-binary @'$T/upload' http://origin.test:$O/post | grep -q 'received 5000000 bytes'"
n=$(curl -s --cacert "$T/cert.pem" -x "$X" "https://origin.test:$S/" | wc -c)
[ "$n" -gt 100 ] && ok "TLS through the tunnel" || fail "TLS tunnel: $n bytes"

# A bulk tunnel (spliced past its first bytes) both ways, each EOF
# passed on after the bytes before it, and every byte counted.
got=$(python3 - "$P" "$B" <<'EOF'
import hashlib, socket, sys, threading
p, b, n = int(sys.argv[1]), int(sys.argv[2]), 3 << 20
ls = socket.socket()
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("127.0.0.1", b))
ls.listen(1)
ls.settimeout(10)
def serve():
    c, _ = ls.accept()
    c.settimeout(10)
    h = hashlib.sha256()
    while True:
        d = c.recv(65536)
        if not d:
            break
        h.update(d)
    c.sendall(h.hexdigest().encode() + b"\n" + b"d" * n)
    c.close()
t = threading.Thread(target=serve)
t.start()
s = socket.create_connection(("127.0.0.1", p), 5)
s.settimeout(10)
s.sendall(b"CONNECT origin.test:%d HTTP/1.1\r\n\r\n" % b)
head = b""
while b"\r\n\r\n" not in head:
    head += s.recv(1)
data = bytes(range(256)) * (n // 256)
s.sendall(data)
s.shutdown(socket.SHUT_WR)
got = b""
while True:
    d = s.recv(1 << 20)
    if not d:
        break
    got += d
t.join()
want = hashlib.sha256(data).hexdigest().encode() + b"\n" + b"d" * n
print("ok" if got == want else "got %d bytes" % len(got))
EOF
)
[ "$got" = ok ] && ok "bulk tunnel both ways with half-close" ||
    fail "bulk tunnel: $got"
i=0
while [ $i -lt 30 ] && ! loggrep "$LOG" "\"reason\":\"eof\",.*\"port\":$B,"; do
	sleep 0.1
	i=$((i + 1))
done
loggrep "$LOG" "\"reason\":\"eof\",.*\"port\":$B,.*\"bytes_up\":3145728,\"bytes_down\":3145793," &&
    ok "bulk tunnel: every byte counted" ||
    fail "bulk tunnel: $(grep "\"port\":$B," "$LOG")"

# Keep-alive: two requests, one client connection, each logged.
: >"$T/before"
cp "$LOG" "$T/before"
curl -s -o /dev/null -o /dev/null -x "$X" "http://origin.test:$O/" "http://origin.test:$O/echo"
n=$(diff "$T/before" "$LOG" | grep '"event":"request"' | grep '"status":200' |
    sed 's/.*"client":"\([^"]*\)".*/\1/' | sort -u | wc -l)
[ "$n" -eq 1 ] && ok "keep-alive: two requests on one connection" || fail "keep-alive: $n client connections"

# Malformed input: the right status each, and the proxy goes on.
python3 "$here/rawhttp.py" "$P" table "$O" >"$T/table" 2>&1
grep '^ok:' "$T/table" | while read -r l; do echo "$l"; done
NPASS=$((NPASS + $(grep -c '^ok:' "$T/table")))
if grep -q '^FAIL' "$T/table"; then fail "$(grep '^FAIL' "$T/table")"; fi

# A slow client gets 408 after the handshake timeout.
got=$(python3 - "$P" <<'EOF'
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"GET http://origin.test/ HTTP/1.1\r\nHo")
s.settimeout(6)
t = time.time()
data = s.recv(100)
print(data.split(b"\r\n")[0].decode(), round(time.time() - t))
EOF
)
case $got in
"HTTP/1.1 408 "*) ok "slow head: $got s" ;;
*) fail "slow head: $got" ;;
esac

# A bad policy is refused on reload; the old one stays.
echo "frobnicate everything" >>"$T/policy"
kill -HUP "$PROXY"
sleep 0.5
[ "$(code "http://origin.test:$O/")" = 200 ] && ok "bad policy refused, old one kept" || fail "bad policy reload"
grep -q 'policy not reloaded' "$ERR" && ok "bad reload is reported" || fail "no report of the bad reload"

# SIGHUP reopens the log (logrotate renames it first).
mv "$LOG" "$LOG.1"
kill -HUP "$PROXY"
i=0
while [ $i -lt 50 ] && [ ! -e "$LOG" ]; do
	sleep 0.1
	i=$((i + 1))
done
code "http://origin.test:$O/" >/dev/null
loggrep "$LOG" '"event":"request".*"host":"origin.test"' &&
    ok "SIGHUP reopens the log" || fail "no new log after SIGHUP"

# Every log line is JSON with the documented fields.
python3 - "$LOG.1" "$LOG" >"$T/logcheck" 2>&1 <<'EOF'
import json, sys
need = {
    "start": [], "reload": ["verdict"], "stop": [],
    "connect": ["verdict", "client", "via", "status"],
    "request": ["client", "status"],
    "close": ["client", "host", "port", "addr", "via", "bytes_up", "bytes_down", "ms"],
}
seen = set()
lines = [l for f in sys.argv[1:] for l in open(f)]
for n, line in enumerate(lines, 1):
    e = json.loads(line)
    ev = e["event"]
    seen.add(ev)
    for f in need.get(ev, []):
        if f not in e:
            sys.exit("line %d: %s lacks %s" % (n, ev, f))
    if ev == "connect" and e["status"] != 400 and ("host" not in e or "port" not in e):
        sys.exit("line %d: connect lacks host or port" % n)
    if ev == "connect" and e["verdict"] == "allow" and e["status"] == 200:
        for f in ("addr", "rule"):
            if f not in e:
                sys.exit("line %d: allowed connect lacks %s" % (n, f))
    if e.get("verdict") == "deny" and ev in ("connect", "request") and "reason" not in e:
        sys.exit("line %d: deny without a reason" % n)
for ev in ("start", "reload", "connect", "request", "close"):
    if ev not in seen:
        sys.exit("no %s event" % ev)
print("checked %d lines" % n)
EOF
[ $? -eq 0 ] && ok "audit log: $(cat "$T/logcheck")" || fail "audit log: $(cat "$T/logcheck")"
loggrep "$LOG.1" '"event":"connect","verdict":"deny","reason":"private-address".*"host":"meta.test"' &&
    ok "blocked attempt logged" || fail "no line for a blocked attempt"

# SIGTERM with a tunnel open: stop accepting, exit 0 within the grace.
python3 - "$P" "$O" "$T/held" <<'EOF' &
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"CONNECT origin.test:%s HTTP/1.1\r\n\r\n" % sys.argv[2].encode())
if s.recv(100).startswith(b"HTTP/1.1 200"):
    open(sys.argv[3], "w").close()
time.sleep(8)
EOF
HOLDER=$!
PIDS="$PIDS $HOLDER"
i=0
while [ $i -lt 50 ] && [ ! -e "$T/held" ]; do
	sleep 0.1
	i=$((i + 1))
done
[ -e "$T/held" ] && ok "tunnel held open" || fail "could not open a tunnel to hold"
start=$(date +%s)
kill -TERM "$PROXY"
wait "$PROXY"
rv=$?
took=$(($(date +%s) - start))
[ $rv -eq 0 ] && ok "exit status 0 after SIGTERM" || fail "exit status $rv after SIGTERM"
[ $took -ge 2 ] && [ $took -le 5 ] && ok "stopped within the grace period (${took}s)" || fail "stop took ${took}s"
loggrep "$LOG" '"event":"stop"' && ok "stop logged" || fail "no stop line"
loggrep "$LOG" '"event":"close".*grace' && ok "tunnel closed at the end of the grace" || fail "no close line for the held tunnel"
if grep -q 'ERROR: \(Address\|Leak\)Sanitizer' "$ERR"; then fail "sanitizer: $(grep -A5 Sanitizer "$ERR")"; fi

finish
