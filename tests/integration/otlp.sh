#!/bin/sh
# The audit log shipped to an OpenTelemetry collector over OTLP/HTTP:
# pinhole proxy --log otlp+http://127.0.0.1:PORT against the test's
# receiver (otlp-receiver.py, which checks each request against a JSON
# Schema of ExportLogsServiceRequest), with known traffic; every line of
# the local log must arrive exactly once, in order, with the attributes
# docs/audit-log.md gives (otlp-check.py).  Then a collector that fails
# on purpose (a closed connection, 503 with Retry-After, 429, 400; the
# records refused and taken as /metrics counts them), one away for a few
# seconds, across a restart of the gateway, and one over TLS.
. "$top_srcdir/tests/integration/lib.sh"
here="$top_srcdir/tests/integration"

need curl python3 dnsmasq python3:jsonschema
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY no_proxy NO_PROXY ALL_PROXY

VERSION=$("$PINHOLE" version | sed 's/^pinhole //')
start_origin
echo "allow origin.test:$HP" >"$T/policy"
chmod 644 "$T/policy"

# Start the receiver on port $1 with the options after it, writing
# $T/rec-$1.jsonl and $T/rlog-$1; wait for it.
receiver() {
	port=$1; shift
	bg python3 "$here/otlp-receiver.py" "$port" "$T/rec-$port.jsonl" \
	    "$T/rlog-$port" "$@"
	RECV=$!
	wait_port "$port"
}

# Start the proxy as $MODE's user, shipping to ${2:-127.0.0.1}:$1 with the
# local log $W/audit.log and the spool in $W/spool, its metrics on $MP.
gateway() {
	P=$(free_port)
	MP=$(free_port)
	set -- "$PINHOLE" proxy --listen "127.0.0.1:$P" --policy "$T/policy" \
	    --resolver "127.0.0.1:$DNSP" --log "$W/audit.log" \
	    --log "otlp+http://${2:-127.0.0.1}:$1" --log-spool "$W/spool" -v \
	    --metrics "127.0.0.1:$MP"
	if [ "$MODE" = nobody ]; then
		set -- setpriv --reuid=nobody --regid=nogroup --clear-groups \
		    -- "$@"
	fi
	env XDG_RUNTIME_DIR="$W/xdg" HOME="$W" "$@" 2>>"$W/err" &
	GW=$!
	PIDS="$PIDS $GW"
	wait_port "$P"
}

# Stop the proxy, as a service manager would: it exits 0 (with
# sanitizers, also having leaked nothing), and said no runtime error.
stop() {
	kill -TERM "$GW" 2>/dev/null
	wait "$GW" 2>/dev/null
	rc=$?
	[ "$rc" -eq 0 ] || fail "$MODE: the gateway exited $rc: $(tail -3 "$W/err")"
	if grep -q "runtime error\|Sanitizer" "$W/err"; then
		fail "$MODE: $(grep -m1 "runtime error\|Sanitizer" "$W/err")"
	fi
}

# Known traffic: $1 allowed requests, then $2 denied ones.
traffic() {
	i=0
	while [ $i -lt "$1" ]; do
		curl -s -o /dev/null --max-time 10 -x "http://127.0.0.1:$P" \
		    "http://origin.test:$HP/hello.txt?n=$i"
		i=$((i + 1))
	done
	i=0
	while [ $i -lt "$2" ]; do
		curl -s -o /dev/null --max-time 10 -x "http://127.0.0.1:$P" \
		    "http://denied$i.test/"
		i=$((i + 1))
	done
}

# Wait (at most 30 s) until the receiver on $1 has $2 records.
wait_records() {
	python3 -c '
import os, sys, time
end = time.time() + 30
while time.time() < end:
    if os.path.exists(sys.argv[1]) and \
            sum(1 for _ in open(sys.argv[1])) >= int(sys.argv[2]):
        sys.exit(0)
    time.sleep(0.1)
sys.exit(1)' "$T/rec-$1.jsonl" "$2"
}

# The series of family pinhole_audit_ship_$2 for destination $1, from a
# scrape of the gateway's metrics into $W/metrics.
series() {
	curl -sf --noproxy '*' --max-time 5 "http://127.0.0.1:$MP/metrics" \
	    >"$W/metrics"
	awk -v s="pinhole_audit_ship_$2{destination=\"$1\"}" \
	    '$1 == s { print $2; n++ } END { if (!n) print "none" }' \
	    "$W/metrics"
}

# A fresh working directory $W for $MODE's user.
workdir() {
	W="$T/w-$MODE-$1"
	mkdir -p "$W/xdg"
	chmod 700 "$W/xdg"
	[ "$MODE" = nobody ] && chown -R nobody "$W"
	return 0
}

# Check the receiver on $1 against the local log, after its first $2
# lines; $3 says what is checked.
check() {
	if grep -q INVALID "$T/rlog-$1"; then
		fail "$MODE: $3: a request not valid: $(grep INVALID \
		    "$T/rlog-$1" | head -1)"
	elif python3 "$here/otlp-check.py" "$W/audit.log" "$T/rec-$1.jsonl" \
	    "$VERSION" --skip "$2" >"$T/check" 2>&1; then
		ok "$MODE: $3: $(cat "$T/check")"
	else
		fail "$MODE: $3: $(tail -3 "$T/check")"
	fi
}

for MODE in root nobody; do
	# Everything arrives, schema-valid and in batches; the spool empties.
	workdir plain
	R=$(free_port)
	receiver "$R"
	gateway "$R"
	traffic 20 5
	stop
	check "$R" 0 "every line, once, in order"
	n=$(wc -l <"$W/audit.log")
	reqs=$(grep -c '^OK' "$T/rlog-$R")
	if [ "$n" -ge 26 ] && [ "$reqs" -lt "$n" ]; then
		ok "$MODE: $n lines in $reqs requests"
	else
		fail "$MODE: $n lines in $reqs requests"
	fi
	if [ ! -s "$W/spool/otlp+http_127.0.0.1_$R.spool" ]; then
		ok "$MODE: the spool is empty once delivered"
	else
		fail "$MODE: the spool still holds lines"
	fi
	kill "$RECV"

	# The collector away, the gateway restarted while it is: what waits
	# in the spool is sent once it is back.  The first gateway tries at
	# its stop for --log-ship-wait; the second has found the collector
	# away (it says so) before it comes.
	workdir away
	R=$(free_port)
	gateway "$R"
	traffic 5 5
	stop
	mv "$W/err" "$W/err.first"
	gateway "$R"
	traffic 5 0
	wait_line "$W/err" "127.0.0.1:$R: Connection refused; lines wait" ||
	    fail "$MODE: away: the gateway did not find the collector away"
	receiver "$R"
	traffic 5 5
	n=$(wc -l <"$W/audit.log")
	wait_records "$R" "$n" || fail "$MODE: away: not all records came"
	stop
	check "$R" 0 "collector away, gateway restarted: nothing lost"
	if loggrep "$W/err" "127.0.0.1:$R: Connection refused; lines wait"; then
		ok "$MODE: the failure was said"
	else
		fail "$MODE: the failure was not said: $(head -3 "$W/err")"
	fi
	if loggrep "$W/err" "delivering again"; then
		ok "$MODE: the recovery was said"
	else
		fail "$MODE: the recovery was not said"
	fi
	kill "$RECV"
done
MODE=root

# Retried: a connection closed unanswered, then 503 twice with
# Retry-After: the same records arrive once.
workdir retry
R=$(free_port)
receiver "$R" --close 1 --fail 2 --fail-status 503 --retry-after 1
gateway "$R"
traffic 10 5
n=$(wc -l <"$W/audit.log")
wait_records "$R" "$n" || fail "retry: not all records came"
stop
check "$R" 0 "after a closed connection and two 503s"
if [ "$(grep -c '^CLOSE\|^FAIL' "$T/rlog-$R")" -eq 3 ]; then
	ok "the failures were met"
else
	fail "failures: $(cat "$T/rlog-$R")"
fi
if loggrep "$W/err" "answered 503; lines wait in the spool, sending again in 1000 ms"; then
	ok "Retry-After was honoured"
else
	fail "Retry-After: $(grep 503 "$W/err" | head -2)"
fi
kill "$RECV"

# A 429, from a collector named: its addresses are tried in turn (::1,
# where nothing listens, may come before 127.0.0.1).
workdir retry429
R=$(free_port)
receiver "$R" --fail 1 --fail-status 429
gateway "$R" localhost
traffic 3 0
n=$(wc -l <"$W/audit.log")
wait_records "$R" "$n" || fail "429: not all records came"
stop
check "$R" 0 "after a 429"
kill "$RECV"

# Refused (400): not sent again, counted and said; what follows arrives.
workdir refuse
R=$(free_port)
receiver "$R" --refuse 1
gateway "$R"
# The first batch (the start line) is refused before the traffic.
wait_line "$T/rlog-$R" '^REFUSE' || fail "refuse: no batch was refused"
traffic 5 5
# /metrics: the records refused and those taken are the lines of the log
# (waited for, at most 10 s); the stop line comes after.
DEST="otlp+http://127.0.0.1:$R"
n=$(wc -l <"$W/audit.log")
i=0
while [ $i -lt 100 ]; do
	took=$(series "$DEST" delivered_total)
	refused=$(series "$DEST" refused_total)
	[ "$took" != none ] && [ "$refused" != none ] &&
	    [ $((took + refused)) -eq "$n" ] && break
	sleep 0.1
	i=$((i + 1))
done
pending=$(series "$DEST" pending_bytes)
stop
lost=$(sed -n 's/.*answered 400: \([0-9]*\) record(s) not sent again.*/\1/p' \
    "$W/err" | head -1)
if [ -n "$lost" ] && [ "$lost" -gt 0 ]; then
	ok "a 400 is said: $lost record(s) not sent again"
	check "$R" "$lost" "the records after the refused batch"
else
	fail "400 not said: $(cat "$W/err")"
fi
if [ "$refused" = "${lost:-}" ] && [ "$took" != none ] &&
    [ $((took + refused)) -eq "$n" ] && [ "$pending" = 0 ]; then
	ok "/metrics: $refused refused and $took taken of $n lines, none pending"
else
	fail "/metrics: refused $refused, taken $took, pending $pending; $n lines, $lost said"
fi
if [ "$(grep -c '^REFUSE' "$T/rlog-$R")" -eq 1 ]; then
	ok "the refused batch was not sent again"
else
	fail "refused: $(cat "$T/rlog-$R")"
fi
kill "$RECV"

# Over TLS, the collector's address checked against its certificate; a
# collector the CA did not sign gets nothing, and the reason is said.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
    -days 1 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 \
    -keyout "$T/coll.key" -out "$T/coll.pem" 2>/dev/null &&
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
    -days 1 -subj /CN=other -keyout "$T/other.key" -out "$T/other.pem" \
    2>/dev/null || fail "cannot make the test certificates"
chmod 644 "$T"/*.pem
workdir tls
R=$(free_port)
receiver "$R" --tls "$T/coll.pem" "$T/coll.key"
P=$(free_port)
env XDG_RUNTIME_DIR="$W/xdg" HOME="$W" "$PINHOLE" proxy -v \
    --listen "127.0.0.1:$P" --policy "$T/policy" \
    --resolver "127.0.0.1:$DNSP" --log "$W/audit.log" \
    --log "otlp+https://127.0.0.1:$R" --log-spool "$W/spool" \
    --log-tls-ca "$T/coll.pem" 2>>"$W/err" &
GW=$!
PIDS="$PIDS $GW"
wait_port "$P"
traffic 3 2
n=$(wc -l <"$W/audit.log")
wait_records "$R" "$n" || fail "tls: not all records came"
stop
check "$R" 0 "over TLS"
workdir tlsbad
n=$(wc -l <"$T/rec-$R.jsonl")
P=$(free_port)
env XDG_RUNTIME_DIR="$W/xdg" HOME="$W" "$PINHOLE" proxy -v \
    --listen "127.0.0.1:$P" --policy "$T/policy" \
    --resolver "127.0.0.1:$DNSP" --log "$W/audit.log" \
    --log "otlp+https://127.0.0.1:$R" --log-spool "$W/spool" \
    --log-tls-ca "$T/other.pem" 2>>"$W/err" &
GW=$!
PIDS="$PIDS $GW"
wait_port "$P"
traffic 1 0
wait_line "$W/err" "TLS: the collector's certificate"
stop
if loggrep "$W/err" "TLS: the collector's certificate"; then
	ok "a collector the CA did not sign is refused, and said"
else
	fail "bad CA: $(grep -m2 shipping "$W/err")"
fi
[ "$(wc -l <"$T/rec-$R.jsonl")" -eq "$n" ] &&
    ok "and it got nothing" || fail "a collector not trusted got records"
kill "$RECV"

# A bad destination is refused at start, saying how to write one.
expect_fail "a destination without a port is refused" \
    "$PINHOLE" proxy --listen "127.0.0.1:$(free_port)" --policy "$T/policy" \
    --log "$T/x.log" --log otlp+http://127.0.0.1 --log-spool "$T/sp"
if grep -q "give otlp+http://HOST:PORT" "$T/out"; then
	ok "and says how to write it"
else
	fail "said: $(cat "$T/out")"
fi

finish
