#!/bin/sh
# pinhole proxy --socks with real clients: curl resolving through the
# proxy (--socks5-hostname) and itself (--socks5, an IPv4 literal),
# RFC 1929 credentials, and raw SOCKS5 bytes for what curl cannot send
# (BIND, UDP ASSOCIATE, IPv6, unknown address types, bad greetings):
# the reply codes, the audit lines (via socks), the private-address
# guard, the handshake timeout, and ask mode, a held SOCKS5 connection
# let through by `pinhole approve`.  All traffic stays on 127.0.0.1.
. "$top_srcdir/tests/integration/lib.sh"
here="$top_srcdir/tests/integration"

need curl python3 dnsmasq
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY no_proxy NO_PROXY ALL_PROXY

start_origin --address=/ten.test/10.0.0.1 || { finish; exit 1; }
P=$(free_port)
SP=$(free_port)
CP=$(free_port)		# nothing listens here
LOG="$T/audit.log"
ERR="$T/proxy.err"
cat >"$T/policy" <<EOF
allow origin.test:$HP
allow 127.0.0.1:$HP
allow-private 127.0.0.0/8
allow ten.test:$HP
allow nowhere.invalid:$HP
allow [::1]:$CP
allow-private ::1/128
deny  fixed.test
EOF

# Start the proxy with a SOCKS5 listener (more options in "$@").
proxy() {
	"$PINHOLE" proxy --listen "127.0.0.1:$P" --socks "127.0.0.1:$SP" \
	    --policy "$T/policy" --log "$LOG" --resolver "127.0.0.1:$DNSP" \
	    --handshake-timeout 2 --grace 1 -v "$@" 2>>"$ERR" &
	PROXY=$!
	PIDS="$PIDS $PROXY"
	wait_port "$SP" || { cat "$ERR" >&2; finish; exit 1; }
}

# Stop the proxy and wait for it.
stop() {
	kill -TERM "$PROXY"
	wait "$PROXY" || fail "the proxy exited with $?"
}

# Check what socksraw.py prints (the replies in hex, then eof or open)
# for some messages: description, expected, messages.
expect_raw() {
	desc=$1 want=$2
	shift 2
	got=$(python3 "$here/socksraw.py" "$SP" "$@" 2>&1)
	[ "$got" = "$want" ] && ok "$desc" || fail "$desc: got '$got', want '$want'"
}

# Fetch through the SOCKS5 listener: curl's proxy option, then the URL.
get() {
	curl -sS -m 10 -o "$T/body" "$@" 2>"$T/curl.err"
}

proxy
S="127.0.0.1:$SP"
U="http://origin.test:$HP/hello.txt"
HELLO=0500		# no authentication chosen
FAIL0=0001000000000000	# ATYP IPv4, BND 0.0.0.0:0

get --socks5-hostname "$S" "$U" && grep -q "hello from origin" "$T/body" &&
    ok "curl --socks5-hostname: the proxy resolves and tunnels" ||
    fail "--socks5-hostname: $(cat "$T/curl.err")"
loggrep "$LOG" '"event":"connect","verdict":"allow".*"host":"origin.test".*"via":"socks"' &&
    ok "audit: connect allow via socks" || fail "no allow line via socks"
loggrep "$LOG" '"event":"close".*"host":"origin.test".*"via":"socks".*"bytes_down":[1-9]' &&
    ok "audit: the tunnel's close line counts its bytes" || fail "no close line"
get --socks5 "$S" "http://127.0.0.1:$HP/hello.txt" &&
    grep -q "hello from origin" "$T/body" &&
    ok "curl --socks5: an IPv4 address from the client" ||
    fail "--socks5: $(cat "$T/curl.err")"
get --proxy "socks5h://someone:s3cret@$S" "$U" &&
    grep -q "hello from origin" "$T/body" &&
    ok "RFC 1929: any username and password are taken" ||
    fail "socks5h with credentials: $(cat "$T/curl.err")"
grep -q s3cret "$LOG" "$ERR" && fail "the password reached a log" ||
    ok "the password is not logged"

# Refusals: curl fails, the reply code says why, the log says more.
get --socks5-hostname "$S" "http://denied.test:$HP/" &&
    fail "a host the policy does not allow went through" ||
    ok "curl: a denied host fails"
loggrep "$LOG" "\"verdict\":\"deny\",\"reason\":\"denied-by-policy\".*\"host\":\"denied.test\".*\"via\":\"socks\",\"ask\":\"pinhole request denied.test:$HP\"" &&
    ok "audit: deny via socks, with the command to ask" ||
    fail "no deny line with ask: $(grep denied.test "$LOG")"
expect_raw "denied by policy: reply 0x02" "${HELLO}0502$FAIL0 eof" \
    050100 "connect,denied.test,$HP"
expect_raw "a deny rule: reply 0x02" "${HELLO}0502$FAIL0 eof" \
    050100 "connect,fixed.test,$HP"
expect_raw "a private address: reply 0x02" "${HELLO}0502$FAIL0 eof" \
    050100 "connect,ten.test,$HP"
loggrep "$LOG" '"reason":"private-address".*"host":"ten.test".*"addr":"10.0.0.1","via":"socks"' &&
    ok "audit: private-address via socks" || fail "no private-address line"
expect_raw "a name that does not resolve: reply 0x04" \
    "${HELLO}0504$FAIL0 eof" 050100 "connect,nowhere.invalid,$HP"
expect_raw "IPv6, connection refused: reply 0x05" "${HELLO}0505$FAIL0 eof" \
    050100 "connect,::1,$CP"
loggrep "$LOG" "\"reason\":\"connect-failed\".*\"host\":\"::1\",\"port\":$CP" &&
    ok "audit: connect-failed for the IPv6 request" || fail "no IPv6 line"
expect_raw "BIND: reply 0x07" "${HELLO}0507$FAIL0 eof" 050100 bind,0.0.0.0,0
expect_raw "UDP ASSOCIATE: reply 0x07" "${HELLO}0507$FAIL0 eof" \
    050100 udp,0.0.0.0,0
expect_raw "an unknown address type: reply 0x08" "${HELLO}0508$FAIL0 eof" \
    050100 05010009
expect_raw "an HTTP request on the SOCKS port: refused and closed" "05ff eof" \
    474554202f20485454502f312e310d0a0d0a
expect_raw "SOCKS4: refused and closed" "05ff eof" 040100507f00000100
expect_raw "no acceptable method: 0xFF and closed" "05ff eof" 050101
expect_raw "malformed credentials: failure and closed" "05020101 eof" \
    050102 0100
expect_raw "nothing sent: closed after the handshake timeout" " eof"

# Bytes sent with the request wait for the success reply, which names
# the gateway's end of the upstream connection, then go up the tunnel.
python3 - "$SP" "$HP" <<'EOF' && ok "early bytes go up after the success reply" || fail "early bytes"
import socket, struct, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), 5)
name = b"origin.test"
s.sendall(b"\x05\x01\x00\x05\x01\x00\x03" + bytes([len(name)]) + name +
          struct.pack(">H", int(sys.argv[2])) +
          b"GET /hello.txt HTTP/1.0\r\n\r\n")
got = b""
s.settimeout(5)
while True:
    b = s.recv(4096)
    if not b:
        break
    got += b
assert got[:2] == b"\x05\x00", got
assert got[2:8] == b"\x05\x00\x00\x01\x7f\x00", got
assert got[10:12] != b"\x00\x00", got
assert got[12:].startswith(b"HTTP/1.0 200"), got
assert b"hello from origin" in got, got
EOF
stop

# Ask mode: a SOCKS5 connection to a host not allowed is held until the
# person answers; approved once, it goes through.
proxy --ask=20
curl -sS -m 25 -o "$T/held.body" --socks5-hostname "$S" \
    "http://held.test:$HP/hello.txt" 2>"$T/held.err" &
CURL=$!
PIDS="$PIDS $CURL"
id=$(wait_pending held.test "$PINHOLE") &&
    ok "ask mode: the held SOCKS5 connection filed $id" ||
    fail "no request filed for held.test"
"$PINHOLE" approve --once "$id" >/dev/null 2>&1 || fail "approve $id"
wait "$CURL" && grep -q "hello from origin" "$T/held.body" &&
    ok "approved once: the held SOCKS5 connection goes through" ||
    fail "held then approved: $(cat "$T/held.err")"
loggrep "$LOG" "\"host\":\"held.test\".*\"via\":\"socks\",\"rule\":\"grant $id\"" &&
    ok "audit: the grant let the SOCKS5 connection through" ||
    fail "no grant line: $(grep held.test "$LOG")"
stop
if grep -q 'ERROR: \(Address\|Leak\)Sanitizer' "$ERR"; then
	fail "sanitizer: $(grep -A5 Sanitizer "$ERR")"
fi

finish
