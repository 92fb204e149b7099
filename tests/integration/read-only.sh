#!/bin/sh
# read-only stays read-only.  A real WebSocket (python's, against an
# origin that records every request and frame it gets): refused on a
# read-only host, whichever way it comes (CONNECT, captured, ws:// in
# absolute form through the proxy), and the origin never sees it; let
# through, its frames echoed, where the rule says websocket; on a host
# allowed without constraints, tunnelled as before.  A GET carrying
# X-HTTP-Method-Override: DELETE is refused on a read-only host where
# the same GET passes.  As root and as nobody, standalone and attached
# to a session.
. "$top_srcdir/tests/integration/lib.sh"

PY=/usr/bin/python3
need root dnsmasq curl openssl $PY
export ASAN_OPTIONS=detect_leaks=0
cp "$PINHOLE" "$T/pinhole" && chmod 755 "$T/pinhole"
cp "$top_srcdir/tests/integration/websocket.py" "$T/websocket.py" &&
    chmod 644 "$T/websocket.py"
mkdir -m 1777 "$T/w"

# Names: every *.test is 127.0.0.1.  Two origins: TLS, and clear.
DNSP=$(free_port)
bg dnsmasq -k -u root -p "$DNSP" --listen-address=127.0.0.1 \
    --bind-interfaces --no-resolv --no-hosts --pid-file= \
    --address=/test/127.0.0.1
make_certs ro.test ws.test open.test
chmod 644 "$T"/*.key
SP=$(free_port)
PP=$(free_port)
O="$T/origin.log"
: >"$O" && chmod 666 "$O"
bg $PY "$T/websocket.py" serve "$SP" "$T/leaf.pem" "$T/leaf.key" "$O"
bg $PY "$T/websocket.py" serve "$PP" - - "$O"
wait_port "$DNSP" && wait_port "$SP" && wait_port "$PP" || { finish; exit 1; }

cat >"$T/cfg/policy" <<EOF
allow-private 127.0.0.0/8
allow ro.test:* read-only
allow ws.test:* read-only websocket path /live/**
allow open.test:*
EOF
chmod 644 "$T/cfg/policy"

# The checks run inside the sandbox: each prints one "ok:" or "FAIL:"
# line.  $K names the run, so that the origin's log tells runs apart.
cat >"$T/checks.sh" <<'CHECKS'
works() {
	desc=$1 want=$2; shift 2
	if out=$("$@" 2>&1) && printf '%s\n' "$out" | grep -q -- "$want"; then
		echo "ok: $K: $desc"
	else
		echo "FAIL: $K: $desc: $(printf '%s\n' "$out" | tail -4)"
	fi
}
# The output has $2, and the command failed.
refused() {
	desc=$1 want=$2; shift 2
	if ! out=$("$@" 2>&1) && printf '%s\n' "$out" | grep -q -- "$want"; then
		echo "ok: $K: $desc"
	else
		echo "FAIL: $K: $desc: $(printf '%s\n' "$out" | tail -4)"
	fi
}
WS="$PY $T/websocket.py client"
for how in connect direct; do
	refused "$how: a WebSocket to a read-only host is refused" \
	    "status 403 pinhole-error constraint" \
	    $WS "wss://ro.test:$SP/live/$K-$how" $how
	refused "$how: the refusal says why" "needs a rule that says websocket" \
	    $WS "wss://ro.test:$SP/live/$K-$how" $how
	works "$how: a WebSocket where the rule says websocket, echoed" \
	    "echo hello-ws /live/$K-$how" \
	    $WS "wss://ws.test:$SP/live/$K-$how" $how
	refused "$how: a WebSocket outside the rule's path is refused" \
	    "status 403 pinhole-error constraint" \
	    $WS "wss://ws.test:$SP/other/$K-$how" $how
done
refused "forward: a ws:// WebSocket to a read-only host is refused" \
    "status 403 pinhole-error constraint" \
    $WS "ws://ro.test:$PP/live/$K-forward" forward
works "forward: a ws:// WebSocket where the rule says websocket" \
    "echo hello-ws /live/$K-forward" \
    $WS "ws://ws.test:$PP/live/$K-forward" forward
# A host without constraints is tunnelled: the origin's own certificate.
works "a host without constraints: tunnelled as before" \
    "echo hello-ws /any/$K-open" \
    $WS "wss://open.test:$SP/any/$K-open" connect "$T/ca.pem"

# A method override is checked as the method is.
code() {
	curl -sS -m 10 -o /dev/null -w '%{http_code}' "$@"
}
works "GET with X-HTTP-Method-Override: DELETE is refused" "^403" \
    code -H 'X-HTTP-Method-Override: DELETE' "https://ro.test:$SP/x/$K"
works "the refusal names the override" \
    "X-HTTP-Method-Override: DELETE is not a read" \
    curl -sS -m 10 -H 'X-HTTP-Method-Override: DELETE' \
    "https://ro.test:$SP/x/$K"
works "the same GET without it passes" "^200" code "https://ro.test:$SP/x/$K"
works "in clear through the proxy, refused too" "^403" \
    code -H 'X-HTTP-Method: delete' "http://ro.test:$PP/x/$K"
works "an override naming a read passes" "^200" \
    code -H 'X-HTTP-Method-Override: HEAD' "http://ro.test:$PP/x/$K"
works "an override spelled with '_' is refused" "^403" \
    code -H 'X_HTTP_Method_Override: DELETE' "https://ro.test:$SP/x/$K"
# A body on a GET: a server that reads none would take it for a request.
works "a GET carrying a body is refused" "^403" \
    code -X GET --data-binary 'DELETE /x HTTP/1.1' "https://ro.test:$SP/x/$K"
works "the refusal says why" "carries a body" \
    curl -sS -m 10 -X GET --data-binary x "http://ro.test:$PP/x/$K"
CHECKS
chmod 644 "$T/checks.sh"

# Run the checks as $MODE ($W its home), standalone or in session $S.
run_checks() {
	set -- env MODE="$MODE" K="$K" T="$T" PY="$PY" SP="$SP" PP="$PP" \
	    sh "$T/checks.sh"
	if [ -n "$S" ]; then
		as_mode "$T/pinhole" run --session "$S" -- "$@"
	else
		as_mode env SSL_CERT_FILE="$T/ca.pem" "$T/pinhole" run \
		    --policy "$T/cfg/policy" --resolver "127.0.0.1:$DNSP" \
		    --log "$L" -- "$@"
	fi
}

for MODE in root nobody; do
	W="$T/w/$MODE"
	mkdir -p "$W/log" && mkdir -m 700 "$W/xdg"
	[ "$MODE" = nobody ] && chown -R nobody "$W"
	for S in "" "ro-$MODE"; do
		K=$MODE-standalone
		[ -n "$S" ] && K=$MODE-session
		L="$W/log/audit-$K.log"
		if [ -n "$S" ] && ! as_mode env SSL_CERT_FILE="$T/ca.pem" \
		    "$T/pinhole" session start "$S" --policy "$T/cfg/policy" \
		    --resolver "127.0.0.1:$DNSP" --log "$L" \
		    >/dev/null 2>"$T/err"; then
			fail "$K: session start: $(cat "$T/err")"
			continue
		fi
		run_checks >"$T/out" 2>&1
		cat "$T/out"
		n=$(grep -c '^ok: ' "$T/out")
		NPASS=$((NPASS + n))
		NFAIL=$((NFAIL + $(grep -c '^FAIL: ' "$T/out")))
		[ "$n" -ge 16 ] || fail "$K: the checks did not all run"
		if [ -n "$S" ]; then
			as_mode "$T/pinhole" session stop "$S" >/dev/null 2>&1 ||
			    fail "$K: session stop"
		fi

		# What the origin received, and what the log says.
		grep "ro.test.*/live/$K-" "$O" | grep -q upgrade=websocket &&
		    fail "$K: a refused upgrade reached the origin" ||
		    ok "$K: no refused upgrade reached the origin"
		grep -q "ws.test.*/other/$K-" "$O" &&
		    fail "$K: an upgrade outside the path reached the origin" ||
		    ok "$K: no upgrade outside the path reached the origin"
		for how in connect direct forward; do
			grep -q "^ws.test:[0-9]* ws-frame hello-ws /live/$K-$how$" \
			    "$O" && ok "$K: $how: the origin got the frame" ||
			    fail "$K: $how: no frame at the origin"
		done
		grep "/x/$K" "$O" | grep -qi 'method.*delete' &&
		    fail "$K: a method override reached the origin" ||
		    ok "$K: no refused method override reached the origin"
		grep -q "ro.test:$SP GET /x/$K upgrade=-$" "$O" &&
		    ok "$K: the GET without it reached the origin" ||
		    fail "$K: the plain GET never reached the origin"
		loggrep "$L" "\"verdict\":\"deny\",\"reason\":\"constraint\".*\"host\":\"ro.test\".*\"path\":\"/live/$K-connect\".*\"detail\":\"upgrade: a WebSocket to /live/$K-connect needs a rule that says websocket" &&
		    ok "$K: the refused upgrade is logged with why" ||
		    fail "$K: no refused upgrade line: $(grep ro.test "$L" | head -3)"
		loggrep "$L" "\"verdict\":\"allow\",\"reason\":\"upgrade\".*\"host\":\"ws.test\".*\"path\":\"/live/$K-direct\"" &&
		    ok "$K: the WebSocket is logged as an upgrade" ||
		    fail "$K: no upgrade line: $(grep ws.test "$L" | head -3)"
		loggrep "$L" "\"detail\":\"read-only: GET /x/$K with X-HTTP-Method-Override: DELETE is not a read\"" &&
		    ok "$K: the refused override is logged with why" ||
		    fail "$K: no override line: $(grep "/x/$K" "$L" | head -3)"
	done
done
finish
