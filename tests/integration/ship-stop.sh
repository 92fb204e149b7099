#!/bin/sh
# Every line of a short `pinhole run` reaches the collector before pinhole
# exits: to an OpenTelemetry receiver (otlp+http), to rsyslog over TLS
# (imtcp with the ossl driver) and to rsyslog over RELP (imrelp).  Each
# with the collector up from the start (the run ends well within one
# OTLP batch interval), and with the collector coming up late: only once
# the command has ended and the gateway has found nobody listening.  The
# run exits with its command's status, the spool is empty, and nothing
# is said to be left.  A collector that never comes is waited for
# --log-ship-wait seconds, then what is left is said: how many lines,
# their seq, and the spool they wait in.  `session stop` returns once
# the session's lines are shipped.  As root and as nobody.
. "$top_srcdir/tests/integration/lib.sh"
here="$top_srcdir/tests/integration"

need root rsyslogd python3 openssl curl dnsmasq
ls /usr/lib/*/rsyslog/lmnsd_ossl.so >/dev/null 2>&1 ||
    skip "rsyslog-openssl is needed"
ls /usr/lib/*/rsyslog/imrelp.so >/dev/null 2>&1 ||
    skip "rsyslog-relp is needed"
# The receiver runs as nobody too: the system's python, with jsonschema.
PY=/usr/bin/python3
need $PY:jsonschema
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY no_proxy NO_PROXY ALL_PROXY
export ASAN_OPTIONS=detect_leaks=0
cp "$PINHOLE" "$T/pinhole" && chmod 755 "$T/pinhole"
cp "$here/otlp-receiver.py" "$here/otlp-logs.schema.json" "$T" &&
    chmod 644 "$T/otlp-receiver.py" "$T/otlp-logs.schema.json"
mkdir -m 1777 "$T/w"
start_origin

# The collector's certificate (127.0.0.1), signed by a CA of the test's.
EC="-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1"
(cd "$T" &&
    openssl req -x509 $EC -keyout ca.key -out ca.pem -subj /CN=ship-ca &&
    printf 'subjectAltName=IP:127.0.0.1\n' >coll.ext &&
    openssl req $EC -keyout coll.key -out coll.csr -subj /CN=coll &&
    openssl x509 -req -in coll.csr -CA ca.pem -CAkey ca.key \
	-CAcreateserial -out coll.pem -days 1 -extfile coll.ext &&
    chmod 644 ca.pem coll.pem coll.key) >/dev/null 2>&1 ||
    fail "cannot make certificates"

# The command: a few requests through the gateway (each refused and
# logged), then $1/done.
cat >"$T/cmd.sh" <<'EOF'
for i in 1 2 3; do
	curl -s -o /dev/null --max-time 10 "http://denied$i.test/"
done
: >"$1/done"
EOF
chmod 644 "$T/cmd.sh"

# The configuration of rsyslog on 127.0.0.1:$RP for $1 (tls or relp),
# writing each message's text to $D/out.log.
rs_conf() {
	echo "global(workDirectory=\"$D/work\" maxMessageSize=\"256k\""
	if [ "$1" = tls ]; then
		cat <<EOF
    DefaultNetstreamDriverCAFile="$T/ca.pem"
    DefaultNetstreamDriverCertFile="$T/coll.pem"
    DefaultNetstreamDriverKeyFile="$T/coll.key")
module(load="imtcp" StreamDriver.Name="ossl" StreamDriver.Mode="1"
    StreamDriver.AuthMode="anon")
input(type="imtcp" port="$RP" address="127.0.0.1")
EOF
	else
		cat <<EOF
)
module(load="imrelp")
input(type="imrelp" port="$RP" address="127.0.0.1" maxDataSize="256k")
EOF
	fi
	cat <<EOF
template(name="text" type="string" string="%msg%\n")
action(type="omfile" file="$D/out.log" template="text")
EOF
}

# Start the collector for $KIND on $RP, as $MODE's user; wait for it.
collector() {
	if [ "$KIND" = otlp ]; then
		set -- $PY "$T/otlp-receiver.py" "$RP" "$D/rec.jsonl" \
		    "$D/rlog"
	else
		rs_conf "$KIND" >"$D/rs.conf"
		set -- rsyslogd -n -f "$D/rs.conf" -i "$D/rs.pid"
	fi
	[ "$MODE" = nobody ] &&
	    set -- setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"
	"$@" >>"$D/coll.err" 2>&1 &
	COLL=$!
	PIDS="$PIDS $COLL"
	wait_port "$RP"
}

# The lines the collector has, one a line, as the local log has them.
received() {
	if [ "$KIND" = otlp ]; then
		python3 -c '
import json, sys
for l in open(sys.argv[1]):
    print(json.loads(l)["record"]["body"]["stringValue"])' "$D/rec.jsonl" \
		    2>/dev/null
	else
		cat "$D/out.log" 2>/dev/null
	fi
}

# Wait (at most 10 s) until the collector has written every line of the
# local log: rsyslog writes its file a moment after it took the lines.
# Nothing sends them after pinhole exits, so they are there or never.
wait_all() {
	i=0
	until received | cmp -s - "$D/log/local.log" || [ $i -ge 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	received | cmp -s - "$D/log/local.log"
}

# pinhole run as $MODE shipping to $KIND's destination on $RP, with the
# options given; in the background, its stderr in $D/err.
run() {
	case $KIND in
	otlp) DEST="otlp+http://127.0.0.1:$RP" ;;
	tls) DEST="syslog+tls://127.0.0.1:$RP" ;;
	relp) DEST="syslog+relp://127.0.0.1:$RP" ;;
	esac
	set -- env HOME="$D/home" "$T/pinhole" run --allow nothing.test \
	    --resolver "127.0.0.1:$DNSP" --log "$D/log/local.log" \
	    --log "$DEST" --log-spool "$D/log/spool" --log-tls-ca "$T/ca.pem" \
	    "$@" -- sh "$T/cmd.sh" "$D/home"
	if [ "$MODE" = nobody ]; then
		set -- env XDG_RUNTIME_DIR="$T/xdg-nobody" setpriv \
		    --reuid=nobody --regid=nogroup --clear-groups -- "$@"
	fi
	"$@" >"$D/out" 2>"$D/err" &
	RUN=$!
	PIDS="$PIDS $RUN"
}

# A fresh directory $D for one case, owned by $MODE's user: the
# collector's work/, the sandbox's home/, and log/ for the local log and
# the spool (read-only in the sandbox).
fresh() {
	D="$T/w/$MODE-$KIND-$1"
	mkdir -p "$D/work" "$D/home" "$D/log"
	[ "$MODE" = nobody ] && chown -R nobody "$D"
	RP=$(free_port)
}

# The run ended well, and the collector had every line when it did.
check() {
	wait "$RUN"
	rc=$?
	what="$MODE: $KIND: $1"
	[ "$rc" -eq 0 ] || fail "$what: the run exited $rc: $(tail -3 "$D/err")"
	if grep -q "runtime error\|Sanitizer" "$D/err"; then
		fail "$what: $(grep -m1 "runtime error\|Sanitizer" "$D/err")"
	fi
	n=$(wc -l <"$D/log/local.log")
	if [ "$n" -ge 5 ] && wait_all; then
		ok "$what: all $n lines reached the collector"
	else
		fail "$what: the collector has $(received | wc -l) of $n lines: $(grep shipping "$D/err" | tail -2)"
	fi
	if ! grep -q 'not delivered' "$D/err" &&
	    [ ! -s "$D/log/spool/"*.spool ]; then
		ok "$what: nothing is left in the spool"
	else
		fail "$what: left: $(grep 'not delivered' "$D/err")"
	fi
	kill "$COLL" 2>/dev/null
	wait "$COLL" 2>/dev/null
}

for MODE in root nobody; do
	for KIND in otlp tls relp; do
		# Up from the start.
		fresh early
		collector
		run
		check "collector up from the start"

		# Up late: once the command has ended and the gateway found
		# nobody listening.
		fresh late
		run
		wait_file "$D/home/done" || fail "$MODE: $KIND: the command did not run"
		i=0
		until grep -q 'Connection refused' "$D/err" || [ $i -ge 100 ]; do
			sleep 0.1
			i=$((i + 1))
		done
		grep -q 'Connection refused' "$D/err" ||
		    fail "$MODE: $KIND: the gateway did not try: $(cat "$D/err")"
		collector
		check "collector up late"
	done

	# Nobody ever listens: after --log-ship-wait, what is left is said.
	KIND=relp
	fresh never
	run --log-ship-wait 1
	wait "$RUN"
	rc=$?
	n=$(wc -l <"$D/log/local.log")
	if [ "$rc" -eq 0 ] && grep -q "syslog+relp://127.0.0.1:$RP: not delivered: $n line(s), seq 1 to $n, [0-9]* bytes: Connection refused; they wait in $D/log/spool/syslog+relp_127.0.0.1_$RP.spool" "$D/err"; then
		ok "$MODE: a collector that never came: what is left is said"
	else
		fail "$MODE: never: exit $rc: $(grep shipping "$D/err" | tail -2)"
	fi

	# A session: `session stop` returns only once the session has
	# ended, its last lines shipped (a machine stopped right after
	# loses none), here to a collector that comes up after the stop.
	KIND=otlp
	fresh session
	mkdir -m 700 "$D/xdg"
	[ "$MODE" = nobody ] && chown nobody "$D/xdg"
	set -- env HOME="$D/home" XDG_RUNTIME_DIR="$D/xdg" "$T/pinhole"
	[ "$MODE" = nobody ] &&
	    set -- setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"
	"$@" session start ship --resolver "127.0.0.1:$DNSP" \
	    --log "$D/log/local.log" --log "otlp+http://127.0.0.1:$RP" \
	    --log-spool "$D/log/spool" --log-ship-wait 60 >/dev/null \
	    2>"$D/err" || fail "$MODE: session: start: $(cat "$D/err")"
	("$@" session stop ship 2>"$D/stop.err"; echo $? >"$D/stopped") &
	PIDS="$PIDS $!"
	wait_line "$D/log/local.log" '"event":"stop"' ||
	    fail "$MODE: session: no stop line"
	# The session now waits for the collector: stop must not return.
	i=0
	while [ ! -e "$D/stopped" ] && [ $i -lt 20 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	[ ! -e "$D/stopped" ] &&
	    ok "$MODE: session: stop waits while the last lines are shipped" ||
	    fail "$MODE: session: stop returned with its lines unshipped"
	collector
	wait_file "$D/stopped"
	if [ "$(cat "$D/stopped")" = 0 ] &&
	    received | cmp -s - "$D/log/local.log" &&
	    [ ! -s "$D/log/spool/"*.spool ]; then
		ok "$MODE: session: once stop returns, the collector has every line"
	else
		fail "$MODE: session: stop: $(cat "$D/stopped" "$D/stop.err"); the collector has $(received | wc -l) of $(wc -l <"$D/log/local.log") lines"
	fi
	kill "$COLL" 2>/dev/null
	wait "$COLL" 2>/dev/null
done

finish
