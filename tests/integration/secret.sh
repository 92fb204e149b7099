#!/bin/sh
# A secret's value never comes back into the sandbox.  A TLS origin on
# loopback reflects what it is sent as careless origins do: Origin in
# Access-Control-Allow-Origin, every request header in a header of its
# answer and in a JSON body, the token in base64, URL-safe base64 and
# percent-encoded, chunked or gzipped on demand.  From inside pinhole run
# the value is seen nowhere, in no form (secret-leak.py), though the
# origin got it; a placeholder in a header the secret is not for is
# refused; the audit log names the secrets taken out, never a value,
# and does so line by line past a log budget (1 line and 1K a second)
# that a flood of requests at first has used up.  As root and as nobody,
# standalone and attached to a session.
. "$top_srcdir/tests/integration/lib.sh"

PY=/usr/bin/python3
need root dnsmasq curl openssl sha256sum $PY
export ASAN_OPTIONS=detect_leaks=0
cp "$PINHOLE" "$T/pinhole" && chmod 755 "$T/pinhole"
mkdir -m 1777 "$T/w"

DNSP=$(free_port)
bg dnsmasq -k -u root -p "$DNSP" --listen-address=127.0.0.1 \
    --bind-interfaces --no-resolv --no-hosts --pid-file= \
    --address=/test/127.0.0.1
make_certs api.test
chmod 644 "$T"/*.key
mkdir -p "$T/origin/www" && chmod -R a+rX "$T/origin"
SP=$(free_port)
: >"$T/origin.log" && chmod 644 "$T/origin.log"
bg $PY "$top_srcdir/tests/integration/tls-origin.py" "$SP" "$T/leaf.pem" \
    "$T/leaf.key" "$T/origin" "$T/origin.log"
wait_port "$DNSP" && wait_port "$SP" || { finish; exit 1; }

# TOKEN goes in Authorization (the default), KEY in X-Api-Key alone.
cat >"$T/cfg/policy" <<EOF
allow-private 127.0.0.0/8
allow api.test:*
secret TOKEN for api.test
secret KEY for api.test header X-Api-Key
EOF
chmod 644 "$T/cfg/policy"
SECRET='s3cr3t/v@lue+that-must=stay~outside'
KEYVAL='k3y-0nly-f0r-the-x-api-key-header'

# Run inside the sandbox: each check keeps what the command printed in
# $D/NAME, for the leak check outside, and prints "ok:" or "FAIL:".
cat >"$T/checks.sh" <<'CHECKS'
A=https://api.test:$SP
D=$T/w/$RUN
check() {
	name=$1 want=$2; shift 2
	"$@" >"$D/$name" 2>&1
	if grep -q -- "$want" "$D/$name"; then
		echo "ok: $RUN: $name"
	else
		echo "FAIL: $RUN: $name: $(tail -3 "$D/$name")"
	fi
}
refused() {
	curl -sS -m 10 -w '%{http_code} %header{pinhole-error}\n' "$@"
}
check placeholder "^PINHOLE-SECRET-TOKEN-MASKED$" sh -c 'echo "$TOKEN"'
# Thirty requests on one connection: past the log budget, summed up.
check flood "^30$" sh -c 'u=; for i in $(seq 30); do u="$u $0/reflect?n=$i";
    done; curl -sS -m 30 -w "\n%{http_code}\n" $u | grep -cx 200' "$A"
# Reflected: each time the placeholder comes back, never the value.
check reflect "X-Echo-Authorization: Bearer PINHOLE-SECRET-TOKEN-MASKED" \
    curl -sS -i -m 10 -H "Authorization: Bearer $TOKEN" \
    -H "Origin: https://app.test" "$A/reflect"
check reflect-b64 '"b64": "PINHOLE-SECRET-TOKEN-MASKED' \
    curl -sS -m 10 -H "Authorization: Bearer $TOKEN" "$A/reflect"
check reflect-chunked '"pct": "PINHOLE-SECRET-TOKEN-MASKED"' \
    curl -sS -m 10 -H "Authorization: Bearer $TOKEN" "$A/reflect?chunked"
check reflect-basic "X-Echo-Authorization: Basic" \
    curl -sS -i -m 10 -u "me:$TOKEN" "$A/reflect"
check reflect-key "X-Echo-X-Api-Key: PINHOLE-SECRET-KEY-MASKED" \
    curl -sS -i -m 10 -H "X-Api-Key: $KEY" "$A/reflect"
check reflect-keepalive "PINHOLE-SECRET-TOKEN-MASKED.*PINHOLE-SECRET" \
    sh -c "curl -sS -m 10 -H 'Authorization: Bearer $TOKEN' \
    '$A/reflect' '$A/reflect?chunked' | tr -d '\n'"
# A placeholder in a header the secret is not for: refused, not sent.
check origin-header "^403 secret-exfiltration" refused -o /dev/null \
    -H "Origin: $TOKEN" "$A/reflect"
check other-header "^403 secret-exfiltration" refused -o /dev/null \
    -H "Authorization: Bearer $TOKEN" -H "X-Debug: $TOKEN" "$A/reflect"
check key-elsewhere "^403 secret-exfiltration" refused -o /dev/null \
    -H "Authorization: Bearer $KEY" "$A/reflect"
check refusal-says "may go only in the header X-Api-Key" \
    curl -sS -m 10 -H "Authorization: Bearer $KEY" "$A/reflect"
# A coded body cannot be read for the value: 502.
check gzip "^502 secret-unscannable" refused -o /dev/null \
    -H "Authorization: Bearer $TOKEN" "$A/reflect?gzip"
# A body is not looked at: its placeholder goes, and comes back, as is.
check body '"body": "PINHOLE-SECRET-TOKEN-MASKED"' \
    curl -sS -m 10 -d "$TOKEN" "$A/reflect"
CHECKS
chmod 644 "$T/checks.sh"

# The checks as $MODE's user, in a standalone run or attached to a
# session; the secrets' values are in pinhole's environment only.
run_checks() {
	set -- env MODE="$MODE" RUN="$RUN" T="$T" SP="$SP" sh "$T/checks.sh"
	if [ "$HOW" = session ]; then
		as_mode "$T/pinhole" run --session "sec-$MODE" -- "$@"
	else
		as_mode env TOKEN="$SECRET" KEY="$KEYVAL" \
		    SSL_CERT_FILE="$T/ca.pem" "$T/pinhole" run \
		    --policy "$T/cfg/policy" --resolver "127.0.0.1:$DNSP" \
		    --log "$L" --log-budget 1,1K -- "$@"
	fi
}

sha() {
	printf '%s' "$1" | sha256sum | cut -d' ' -f1
}

for MODE in root nobody; do
	W="$T/w/$MODE"
	mkdir -p "$W" && mkdir -m 700 "$W/xdg"
	[ "$MODE" = nobody ] && chown -R nobody "$W"
	for HOW in standalone session; do
		RUN=$MODE-$HOW
		L="$T/log/audit-$RUN.log"
		mkdir -m 1777 "$T/w/$RUN"
		if [ "$HOW" = session ]; then
			as_mode env TOKEN="$SECRET" KEY="$KEYVAL" \
			    SSL_CERT_FILE="$T/ca.pem" "$T/pinhole" session \
			    start "sec-$MODE" --policy "$T/cfg/policy" \
			    --listen "127.0.0.1:$(free_port)" \
			    --resolver "127.0.0.1:$DNSP" --log "$L" \
			    --log-budget 1,1K >/dev/null 2>"$T/err" ||
			    fail "$RUN: session start: $(cat "$T/err")"
		fi
		run_checks >"$T/out" 2>&1
		[ "$HOW" = session ] &&
		    as_mode "$T/pinhole" session stop "sec-$MODE" >/dev/null 2>&1
		cat "$T/out"
		n=$(grep -c '^ok: ' "$T/out")
		NPASS=$((NPASS + n))
		NFAIL=$((NFAIL + $(grep -c '^FAIL: ' "$T/out")))
		[ "$(grep -c '^ok: \|^FAIL: ' "$T/out")" -eq \
		    "$(grep -c '^check ' "$T/checks.sh")" ] ||
		    fail "$RUN: the checks did not all run: $(tail -3 "$T/out")"

		printf '%s\n%s\n' "$SECRET" "$KEYVAL" |
		    $PY "$top_srcdir/tests/integration/secret-leak.py" \
		    "$T/w/$RUN"/* >"$T/leaks" 2>&1 &&
		    ok "$RUN: the sandbox saw neither value, in no form" ||
		    fail "$RUN: leaked: $(head -5 "$T/leaks")"
		loggrep "$L" '"event":"request".*"status":200.*"secret_scrubbed":"TOKEN"' &&
		    loggrep "$L" '"secret_scrubbed":"KEY"' &&
		    ok "$RUN: the log names the secrets taken out" ||
		    fail "$RUN: no secret_scrubbed lines"
		loggrep "$L" '"reason":"secret-exfiltration".*"detail":"secret TOKEN in header Origin"' &&
		    loggrep "$L" '"reason":"secret-exfiltration".*"detail":"secret KEY in header Authorization"' &&
		    ok "$RUN: a placeholder in another header is logged by name" ||
		    fail "$RUN: no secret-exfiltration line for the Origin header"
		loggrep "$L" '"reason":"secret-unscannable".*"status":502' &&
		    ok "$RUN: the coded response is logged" ||
		    fail "$RUN: no secret-unscannable line"
		loggrep "$L" '"detail":"summed up: over the log budget' &&
		    ok "$RUN: the flood was summed up" ||
		    fail "$RUN: nothing was summed up"
		grep -qF -e "$SECRET" -e "$KEYVAL" "$L" &&
		    fail "$RUN: a value is in the log" ||
		    ok "$RUN: no value in the log"
	done
done

# The origin got the values (it keeps their hashes), and never a
# placeholder sent in a header the secret is not for.
grep -q "Authorization-sha256 $(sha "Bearer $SECRET")" "$T/origin.log" &&
    grep -q "X-Api-Key-sha256 $(sha "$KEYVAL")" "$T/origin.log" &&
    ok "the origin got both values" || fail "the origin never got the values"
grep -q "Authorization-sha256 $(sha "Bearer $KEYVAL")" "$T/origin.log" &&
    fail "KEY went in Authorization" ||
    ok "KEY never went in another header"
finish
