#!/bin/sh
# Through an upstream proxy: a real squid on loopback, with Basic
# authentication (basic_ncsa_auth) and an allowlist of its own, is the
# only way to the origins, and pinhole's own resolver knows no name.
# Standalone `pinhole run` (the policy's upstream lines), a session and
# `pinhole proxy` (the options): plain HTTP (absolute form), CONNECT,
# SOCKS5, captured HTTP and a captured protocol that speaks first,
# inspected TLS; squid's access log shows each, with the user; what the
# policy denies never reaches squid, nor a private address literal;
# squid's own refusal, wrong credentials and squid down are each a 502
# saying which, with an audit line naming the upstream; the credentials
# are not readable in the sandbox, nor in the log, stderr or the command
# line; `pinhole doctor` checks the upstream.  As root and as nobody.
. "$top_srcdir/tests/integration/lib.sh"

NCSA=/usr/lib/squid/basic_ncsa_auth
PY=/usr/bin/python3
need root squid curl openssl setpriv "$NCSA" $PY
id proxy >/dev/null 2>&1 || skip "needs the user proxy (package squid)"
export ASAN_OPTIONS=detect_leaks=0
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY no_proxy NO_PROXY ALL_PROXY
cp "$PINHOLE" "$T/pinhole" && chmod 755 "$T/pinhole"
mkdir -m 1777 "$T/w"
PW=s3cret-upstream-pw
B64=$(printf 'alice:%s' "$PW" | base64)
DEAD=$(free_port)	# nothing listens here: pinhole resolves no name

# The origins: HTTP, TLS (a test CA), and one that speaks first.
mkdir "$T/www"
for f in fwd tun cap web socks sess px; do
	echo "hello from origin" >"$T/www/$f.txt"
done
chmod -R a+rX "$T/www"
HP=$(free_port)
bg $PY -m http.server "$HP" --bind 127.0.0.1 --directory "$T/www"
# Port 80 on a loopback address of its own: a captured connection there
# is read as HTTP, request by request.
LO=127.0.$(($$ % 200 + 20)).$(($$ % 250 + 2))
bg $PY -m http.server 80 --bind "$LO" --directory "$T/www"
make_certs tls.test
TP=$(free_port)
bg openssl s_server -quiet -accept "127.0.0.1:$TP" -cert "$T/leaf.pem" \
    -key "$T/leaf.key" -www
EP=$(free_port)
start_banner "$EP"

# squid: Basic users from a file, its own allowlist, names from a hosts
# file of its own (the names pinhole never resolves).
Q=$T/squid
mkdir "$Q"
printf 'alice:%s\n' "$(openssl passwd -1 "$PW")" >"$Q/passwd"
printf '127.0.0.1 localhost\n127.0.0.1 origin.test tls.test echo.test squidno.test\n%s web.test\n' \
    "$LO" >"$Q/hosts"
SQP=$(free_port)
cat >"$Q/squid.conf" <<EOF
http_port 127.0.0.1:$SQP
auth_param basic program $NCSA $Q/passwd
auth_param basic realm pinhole-test
acl authed proxy_auth REQUIRED
acl ok dstdomain origin.test tls.test echo.test web.test
http_access deny !authed
http_access allow ok
http_access deny all
cache deny all
access_log stdio:$Q/access.log
cache_log $Q/cache.log
pid_filename $Q/squid.pid
coredump_dir $Q
hosts_file $Q/hosts
dns_nameservers 127.0.0.1
pinger_enable off
logfile_rotate 0
shutdown_lifetime 1 seconds
cache_effective_user proxy
EOF
chown -R proxy "$Q"
bg squid -N -f "$Q/squid.conf"
$PY - "$LO" <<'EOF' || fail "nothing listens on $LO port 80"
import socket, sys, time
end = time.time() + 10
while time.time() < end:
    try:
        socket.create_connection((sys.argv[1], 80), 0.2).close()
        sys.exit(0)
    except OSError:
        time.sleep(0.05)
sys.exit(1)
EOF
wait_port "$HP" && wait_port "$TP" && wait_port "$EP" && wait_port "$SQP" ||
    { cat "$Q/cache.log" >&2; finish; exit 1; }
UP=http://127.0.0.1:$SQP

# squid's access log has a line for $1 (method and URL) by alice.
squid_saw() {
	grep -q " $1 alice " "$Q/access.log"
}
squid_never() {
	! grep -q "$1" "$Q/access.log"
}
check() {
	if [ "$2" = "$3" ]; then ok "$MODE: $1"; else fail "$MODE: $1: got '$2', want '$3'"; fi
}
# The status and Pinhole-Error of a refusal through proxy port $1 (of
# the CONNECT with -p); the page goes to $W/body.
status() {
	port=$1; shift
	st=$(curl -s -m 10 -o "$W/body" -D "$W/head" -x "127.0.0.1:$port" \
	    -w '%{http_code} %{http_connect}' "$@")
	[ "${st% *}" = 000 ] && st=${st#* } || st=${st% *}
	echo "$st $(sed -n 's/^Pinhole-Error: \([a-z-]*\).*/\1/p' "$W/head" | head -1)"
}

# The checks run inside the sandbox: one "ok:" or "FAIL:" line each.
cat >"$T/checks.sh" <<'CHECKS'
works() {
	desc=$1 want=$2; shift 2
	if out=$("$@" 2>&1) && printf '%s\n' "$out" | grep -q -- "$want"; then
		echo "ok: $WHERE: $desc"
	else
		echo "FAIL: $WHERE: $desc: $(printf '%s\n' "$out" | tail -3)"
	fi
}
# The status and Pinhole-Error of a refusal (of the CONNECT with -p).
refused() {
	desc=$1 want=$2; shift 2
	h=$(mktemp)
	st=$(curl -s -m 10 -o /dev/null -D "$h" -w '%{http_code} %{http_connect}' "$@")
	[ "${st% *}" = 000 ] && st=${st#* } || st=${st% *}
	out="$st $(sed -n 's/^Pinhole-Error: \([a-z-]*\).*/\1/p' "$h" | head -1)"
	rm -f "$h"
	if [ "$out" = "$want" ]; then
		echo "ok: $WHERE: $desc"
	else
		echo "FAIL: $WHERE: $desc: got '$out', want '$want'"
	fi
}
O=http://origin.test:$HP
works "plain HTTP, through the proxy" "hello from origin" curl -sSf -m 10 "$O/fwd.txt"
works "CONNECT, through the proxy" "hello from origin" curl -sSf -m 10 -p "$O/tun.txt"
works "captured plain HTTP" "hello from origin" \
    curl -sSf -m 10 --noproxy '*' "$O/cap.txt"
works "captured plain HTTP on port 80, read as requests" "hello from origin" \
    curl -sSf -m 10 --noproxy '*' "http://web.test/web.txt"
works "a captured protocol that speaks first" "220 banner first.*echo" $PY -c '
import socket, sys
s = socket.create_connection(("echo.test", int(sys.argv[1])), 10)
s.settimeout(10)
b = s.recv(100)
s.sendall(b"echo\r\n")
print((b + s.recv(100)).decode().replace("\r\n", " "))' "$EP"
works "inspected TLS: a read" "s_server" curl -sSf -m 10 "https://tls.test:$TP/"
refused "inspected TLS: a write is pinhole's to refuse" "403 constraint" \
    -X POST -d x "https://tls.test:$TP/"
refused "a host the policy denies" "403 denied-by-policy" "http://other.test:$HP/"
refused "a private address literal" "403 private-address" -p "http://10.1.2.3/"
refused "a host squid refuses" "502 upstream-denied" -p "http://squidno.test:$HP/"
refused "... forwarded too" "502 upstream-denied" "http://squidno.test:$HP/x"
out=$(cat "$AUTH" 2>&1)
case $out in
*alice:*) echo "FAIL: $WHERE: the credentials are readable: $out" ;;
*) echo "ok: $WHERE: the credentials are not readable in the sandbox" ;;
esac
CHECKS
chmod 644 "$T/checks.sh"

# The checks' lines, counted.
count() {
	cat "$1"
	n=$(grep -c '^ok: ' "$1")
	NPASS=$((NPASS + n))
	NFAIL=$((NFAIL + $(grep -c '^FAIL: ' "$1")))
	[ "$n" -ge 12 ] || fail "$MODE: $2: the checks did not all run"
}

# The audit log $1 says what went through squid and what it refused.
audited() {
	loggrep "$1" "\"event\":\"connect\",\"verdict\":\"allow\".*\"host\":\"origin.test\".*\"detail\":\"upstream 127.0.0.1:$SQP\"" &&
	    ok "$MODE: $2: a tunnel's line names the upstream" ||
	    fail "$MODE: $2: no line naming the upstream: $(grep origin.test "$1" | head -2)"
	loggrep "$1" "\"reason\":\"upstream-denied\".*\"host\":\"squidno.test\".*\"status\":502,\"detail\":\"the upstream proxy 127.0.0.1:$SQP refused it \(403 Forbidden\)\"" &&
	    ok "$MODE: $2: squid's refusal is audited, naming it" ||
	    fail "$MODE: $2: squid's refusal: $(grep squidno "$1" | head -2)"
	! grep -q "$PW\|$B64" "$1" "$3" &&
	    ok "$MODE: $2: neither the password nor the header in the log or stderr" ||
	    fail "$MODE: $2: the credentials leaked"
}

for MODE in root nobody; do
	W=$T/w/$MODE
	mkdir -p "$W/cfg" "$W/log" && mkdir -m 700 "$W/xdg"
	printf 'alice:%s\n' "$PW" >"$W/cfg/up.auth"
	printf 'alice:not-the-password\n' >"$W/cfg/bad.auth"
	chmod 600 "$W/cfg/up.auth" "$W/cfg/bad.auth"
	cat >"$W/cfg/policy" <<EOF
allow origin.test:$HP
allow squidno.test:$HP
allow echo.test:$EP
allow web.test:80
allow tls.test:$TP read-only
allow 10.1.2.3:80
upstream $UP
upstream-auth up.auth
EOF
	[ "$MODE" = nobody ] && chown -R nobody:nogroup "$W"
	: >"$Q/access.log"

	# Standalone: the policy's upstream lines.
	as_mode env SSL_CERT_FILE="$T/ca.pem" "$T/pinhole" run \
	    --policy "$W/cfg/policy" --resolver "127.0.0.1:$DEAD" \
	    --log "$W/log/run.log" -- env WHERE=run PY=$PY HP=$HP TP=$TP EP=$EP \
	    AUTH="$W/cfg/up.auth" sh "$T/checks.sh" >"$W/run.out" 2>"$W/run.err"
	count "$W/run.out" run
	# CONNECT, and the captured connection (a port where its first
	# bytes are not awaited: a tunnel).
	squid_saw "GET http://origin.test:$HP/fwd.txt" &&
	    [ "$(grep -c "CONNECT origin.test:$HP alice" "$Q/access.log")" = 2 ] &&
	    squid_saw "CONNECT echo.test:$EP" &&
	    squid_saw "GET http://web.test/web.txt" &&
	    squid_saw "CONNECT tls.test:$TP" &&
	    ok "$MODE: run: squid saw each, with the user" ||
	    fail "$MODE: run: squid's log: $(cat "$Q/access.log")"
	squid_never other.test && squid_never 10.1.2.3 &&
	    ok "$MODE: run: what pinhole refused never reached squid" ||
	    fail "$MODE: run: squid saw: $(cat "$Q/access.log")"
	[ "$(grep -c "CONNECT tls.test:$TP" "$Q/access.log")" = 1 ] &&
	    ok "$MODE: run: the refused write opened no tunnel through squid" ||
	    fail "$MODE: run: squid's log: $(grep tls.test "$Q/access.log")"
	audited "$W/log/run.log" run "$W/run.err"

	# A session, with the upstream given as options.
	as_mode "$T/pinhole" session start up --policy "$W/cfg/policy" \
	    --upstream "$UP" --upstream-auth "$W/cfg/up.auth" \
	    --resolver "127.0.0.1:$DEAD" --log "$W/log/session.log" \
	    >/dev/null 2>"$W/session.err" || fail "$MODE: session start: $(cat "$W/session.err")"
	as_mode "$T/pinhole" run --session up -- sh -c "curl -sSf -m 10 \
	    http://origin.test:$HP/sess.txt; cat '$W/cfg/up.auth'" \
	    >"$W/sess.out" 2>&1
	grep -q "hello from origin" "$W/sess.out" &&
	    ! grep -q "alice:" "$W/sess.out" &&
	    squid_saw "GET http://origin.test:$HP/sess.txt" &&
	    ok "$MODE: session: through squid, the credentials unseen" ||
	    fail "$MODE: session: $(cat "$W/sess.out")"
	pid=$(sed -n 's/.*"pid":\([0-9]*\).*/\1/p' "$W/xdg/pinhole/session-up.json")
	[ -n "$pid" ] && ! tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q "$PW" &&
	    ok "$MODE: session: no credentials on its command line" ||
	    fail "$MODE: session: cmdline: $(tr '\0' ' ' <"/proc/$pid/cmdline")"
	as_mode "$T/pinhole" session stop up >/dev/null 2>&1

	# pinhole proxy: HTTP, CONNECT and SOCKS5 clients.
	P=$(free_port) S=$(free_port)
	bg_mode "$T/pinhole" proxy --listen "127.0.0.1:$P" --socks "127.0.0.1:$S" \
	    --allow "origin.test:$HP" --allow "squidno.test:$HP" \
	    --upstream "$UP" --upstream-auth "$W/cfg/up.auth" \
	    --resolver "127.0.0.1:$DEAD" --log "$W/log/proxy.log" 2>"$W/proxy.err"
	wait_port "$P"
	check "proxy: plain HTTP" "$(curl -sS -m 10 -x "127.0.0.1:$P" \
	    "http://origin.test:$HP/px.txt")" "hello from origin"
	check "proxy: CONNECT" "$(curl -sS -m 10 -p -x "127.0.0.1:$P" \
	    "http://origin.test:$HP/tun.txt")" "hello from origin"
	check "proxy: SOCKS5" "$(curl -sS -m 10 --socks5-hostname \
	    "127.0.0.1:$S" "http://origin.test:$HP/socks.txt")" "hello from origin"
	check "proxy: squid refuses" "$(status "$P" -p \
	    "http://squidno.test:$HP/")" "502 upstream-denied"
	squid_saw "GET http://origin.test:$HP/px.txt" &&
	    [ "$(grep -c "CONNECT origin.test:$HP alice" "$Q/access.log")" -ge 3 ] &&
	    ok "$MODE: proxy: squid saw each, SOCKS5 as CONNECT" ||
	    fail "$MODE: proxy: squid's log: $(cat "$Q/access.log")"
	audited "$W/log/proxy.log" proxy "$W/proxy.err"
	pid=${PIDS##* }
	! tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q "$PW" &&
	    ok "$MODE: proxy: no credentials on its command line" ||
	    fail "$MODE: proxy: its command line has them"

	# Wrong credentials, and squid down: each a 502 saying which.
	P2=$(free_port)
	bg_mode "$T/pinhole" proxy --listen "127.0.0.1:$P2" \
	    --allow "origin.test:$HP" --upstream "$UP" \
	    --upstream-auth "$W/cfg/bad.auth" --resolver "127.0.0.1:$DEAD" \
	    --log "$W/log/bad.log" 2>"$W/bad.err"
	P3=$(free_port)
	bg_mode "$T/pinhole" proxy --listen "127.0.0.1:$P3" \
	    --allow "origin.test:$HP" --upstream "http://127.0.0.1:$DEAD" \
	    --resolver "127.0.0.1:$DEAD" --log "$W/log/down.log" 2>"$W/down.err"
	wait_port "$P2" && wait_port "$P3"
	check "wrong credentials: CONNECT" "$(status "$P2" -p \
	    "http://origin.test:$HP/")" "502 upstream-auth"
	check "wrong credentials: plain HTTP" "$(status "$P2" \
	    "http://origin.test:$HP/")" "502 upstream-auth"
	grep -q "the upstream proxy 127.0.0.1:$SQP refused the credentials (407 " "$W/body" &&
	    ok "$MODE: wrong credentials: the page says the upstream refused them" ||
	    fail "$MODE: wrong credentials: $(cat "$W/body")"
	loggrep "$W/log/bad.log" "\"reason\":\"upstream-auth\".*\"detail\":\"the upstream proxy 127.0.0.1:$SQP refused the credentials" &&
	    ok "$MODE: wrong credentials: audited, naming the upstream" ||
	    fail "$MODE: wrong credentials: $(tail -2 "$W/log/bad.log")"
	check "squid down" "$(status "$P3" -p "http://origin.test:$HP/")" \
	    "502 upstream-unreachable"
	loggrep "$W/log/down.log" "\"reason\":\"upstream-unreachable\".*\"detail\":\"the upstream proxy 127.0.0.1:$DEAD cannot be reached" &&
	    ok "$MODE: squid down: audited, naming the upstream" ||
	    fail "$MODE: squid down: $(tail -2 "$W/log/down.log")"

	# doctor: the upstream, reached with the credentials, or not.
	as_mode "$T/pinhole" doctor --policy "$W/cfg/policy" --json \
	    --resolver "127.0.0.1:$DEAD" >"$W/doc.json" 2>&1
	$PY - "$W/doc.json" "origin.test:$HP" <<'EOF' &&
import json, sys
c = {x["name"]: x for x in json.load(open(sys.argv[1]))["checks"]}
u = c["upstream"]
assert u["verdict"] == "ok" and u["required"], u
assert "credentials accepted, a tunnel to " + sys.argv[2] in u["detail"], u
assert c["resolver"]["verdict"] == "warn", c["resolver"]
EOF
	    ok "$MODE: doctor: the upstream takes the credentials and opens a tunnel" ||
	    fail "$MODE: doctor: $(cat "$W/doc.json")"
	as_mode "$T/pinhole" doctor --allow "origin.test:$HP" --upstream "$UP" \
	    --upstream-auth "$W/cfg/bad.auth" >"$W/doc.txt" 2>&1
	[ $? = 1 ] && grep -q "^upstream  FAIL  the upstream proxy 127.0.0.1:$SQP refused the credentials" "$W/doc.txt" &&
	    ok "$MODE: doctor: wrong credentials fail, and it says so" ||
	    fail "$MODE: doctor: $(grep -A1 ^upstream "$W/doc.txt")"
done

finish
