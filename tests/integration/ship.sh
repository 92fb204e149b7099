#!/bin/sh
# Shipping the audit log to a real rsyslog (imtcp, over TLS with the
# ossl driver and a client certificate, and over plain TCP; imrelp, over
# TLS and plain TCP): every line arrives, in order, as in the local log,
# across a collector stopped in the middle of traffic and across a
# restart of pinhole.  Over RELP every line arrives once; over syslog
# once, or again only where pinhole sends it again (after a reset or a
# TLS close).  A collector whose certificate does not verify gets nothing
# and the spool keeps the lines; a full spool is counted and said.  On
# /metrics (promtool's lint passes), the delivered count is what rsyslog
# wrote, and the dropped count of a full spool what stderr says.
# As root and as nobody.
. "$top_srcdir/tests/integration/lib.sh"
need rsyslogd python3 openssl curl promtool
ls /usr/lib/*/rsyslog/lmnsd_ossl.so >/dev/null 2>&1 ||
    skip "rsyslog-openssl is needed"
ls /usr/lib/*/rsyslog/imrelp.so >/dev/null 2>&1 ||
    skip "rsyslog-relp is needed"
cp "$PINHOLE" "$T/pinhole"
echo 'allow nothing.test' >"$T/policy"
chmod 644 "$T/policy"

# Certificates: a CA, the collector's (127.0.0.1), another collector's
# (a name only), a client's, and a CA that signed none of them.
cat >"$T/certs.sh" <<'EOF'
set -e
cd "$1"
EC="-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1"
openssl req -x509 $EC -keyout ca.key -out ca.pem -subj /CN=ship-ca
openssl req -x509 $EC -keyout bad.key -out badca.pem -subj /CN=other-ca
for n in coll:IP:127.0.0.1 other:DNS:other.test client:DNS:pinhole.test; do
	f=${n%%:*}
	printf 'subjectAltName=%s\n' "${n#*:}" >$f.ext
	openssl req $EC -keyout $f.key -out $f.csr -subj /CN=$f
	openssl x509 -req -in $f.csr -CA ca.pem -CAkey ca.key \
	    -CAcreateserial -out $f.pem -days 1 -extfile $f.ext
done
chmod 644 *.pem *.key
EOF
sh "$T/certs.sh" "$T" >/dev/null 2>&1 || fail "cannot make certificates"

# Requests through the gateway, each refused and logged: load.py PORT N
# GAP (seconds between requests; at most 60 s in all).
cat >"$T/load.py" <<'EOF'
import socket, sys, time
port, n, gap = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
end = time.time() + 60
for i in range(n):
    if time.time() > end:
        break
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.sendall(b"GET http://d%d.test/ HTTP/1.1\r\nHost: d%d.test\r\n"
              b"Connection: close\r\n\r\n" % (i, i))
    while s.recv(65536):
        pass
    s.close()
    time.sleep(gap)
EOF

# Compare what the collector wrote with the local log: check.py LOCAL
# OUT DUPS_OK.  Every line once, in order, byte for byte; with DUPS_OK
# (lines were sent again) a line may come again, but after removing
# repeats it is the same: none missing.
cat >"$T/check.py" <<'EOF'
import json, sys
local = open(sys.argv[1]).read().splitlines()
out = open(sys.argv[2]).read().splitlines()
if sys.argv[3] == "1":
    seen, kept = set(), []
    for l in out:
        if l not in seen:
            seen.add(l)
            kept.append(l)
    out = kept
seqs = [json.loads(l)["seq"] for l in out]
if out != local:
    missing = sorted(set(json.loads(l)["seq"] for l in local) - set(seqs))
    print("local %d lines, collector %d; missing seq %s; dup %d; ordered %s"
          % (len(local), len(out), missing[:10], len(seqs) - len(set(seqs)),
             seqs == sorted(seqs)))
    sys.exit(1)
print(len(out))
EOF

# rsyslog on 127.0.0.1:$RP writing the messages' text to $D/out.log:
# rsyslog_conf tls|tcp CERT.
rsyslog_conf() {
	if [ "$1" = tls ]; then
		cat <<EOF
global(workDirectory="$D/work" maxMessageSize="256k"
    DefaultNetstreamDriverCAFile="$T/ca.pem"
    DefaultNetstreamDriverCertFile="$T/$2.pem"
    DefaultNetstreamDriverKeyFile="$T/$2.key")
module(load="imtcp" StreamDriver.Name="ossl" StreamDriver.Mode="1"
    StreamDriver.AuthMode="x509/certvalid")
EOF
	else
		echo "global(workDirectory=\"$D/work\" maxMessageSize=\"256k\")"
		echo 'module(load="imtcp")'
	fi
	cat <<EOF
input(type="imtcp" port="$RP" address="127.0.0.1")
template(name="text" type="string" string="%msg%\n")
action(type="omfile" file="$D/out.log" template="text")
EOF
}

# rsyslog's imrelp on 127.0.0.1:$RP writing to $D/out.log: relp_conf
# tls|tcp; over TLS it asks for the client's certificate.
relp_conf() {
	echo "global(workDirectory=\"$D/work\" maxMessageSize=\"256k\")"
	echo 'module(load="imrelp" tls.tlslib="openssl")'
	if [ "$1" = tls ]; then
		cat <<EOF
input(type="imrelp" port="$RP" address="127.0.0.1" maxDataSize="256k"
    tls="on" tls.caCert="$T/ca.pem" tls.myCert="$T/coll.pem"
    tls.myPrivKey="$T/coll.key" tls.authMode="certvalid")
EOF
	else
		echo "input(type=\"imrelp\" port=\"$RP\" address=\"127.0.0.1\" maxDataSize=\"256k\")"
	fi
	cat <<EOF
template(name="text" type="string" string="%msg%\n")
action(type="omfile" file="$D/out.log" template="text")
EOF
}

# Start (or start again) rsyslog with the configuration in $D/rs.conf.
rs_start() {
	as_user rsyslogd -n -f "$D/rs.conf" -i "$D/rs.pid" 2>>"$D/rs.err" &
	RSPID=$!
	PIDS="$PIDS $RSPID"
	wait_port "$RP" || fail "rsyslog does not listen"
}

rs_stop() {
	kill "$RSPID" 2>/dev/null
	wait "$RSPID" 2>/dev/null
}

as_user() {
	if [ "$MODE" = nobody ]; then
		set -- setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"
	fi
	exec env HOME="$D" XDG_RUNTIME_DIR="$D/xdg" "$@"
}

# The gateway on 127.0.0.1:$GP, its log $D/local.log, shipped to the
# destinations and with the options given; its stderr to $D/gw.err.
gw_start() {
	GP=$(free_port)
	as_user "$T/pinhole" proxy --listen "127.0.0.1:$GP" -v \
	    --policy "$T/policy" --log "$D/local.log" \
	    --log-spool "$D/spool" "$@" 2>>"$D/gw.err" &
	GWPID=$!
	PIDS="$PIDS $GWPID"
	wait_port "$GP" || fail "the gateway does not listen"
}

# Stop the gateway: it exits 0 (with sanitizers, also having leaked
# nothing), and said no runtime error.
gw_stop() {
	kill "$GWPID" 2>/dev/null
	wait "$GWPID" 2>/dev/null
	rc=$?
	[ "$rc" -eq 0 ] || fail "$MODE: the gateway exited $rc: $(tail -3 "$D/gw.err")"
	if grep -q "runtime error\|Sanitizer" "$D/gw.err"; then
		fail "$MODE: $(grep -m1 "runtime error\|Sanitizer" "$D/gw.err")"
	fi
}

# Wait (at most 20 s) until the collector has as many lines as $1, each
# counted once (lines may come twice).
wait_lines() {
	i=0
	while [ $i -lt 200 ]; do
		[ "$(sort -u "$D/out.log" 2>/dev/null | wc -l)" -ge \
		    "$(wc -l <"$1")" ] && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

# Scrape the gateway's metrics at port $1 into $D/metrics, and lint them.
scrape() {
	curl -sf --noproxy '*' --max-time 5 "http://127.0.0.1:$1/metrics" \
	    >"$D/metrics" || return 1
	promtool check metrics <"$D/metrics" >"$D/lint" 2>&1 &&
	    [ ! -s "$D/lint" ] || fail "$MODE: promtool: $(cat "$D/lint")"
}

# The value of the series of family $1 for destination $2 in $D/metrics.
series() {
	awk -v s="$1{destination=\"$2\"}" '$1 == s { print $2; n++ }
	    END { if (!n) print "none" }' "$D/metrics"
}

# Compare, allowing repeats only once pinhole sent lines again (to this
# $D/out.log): the collector reset the connection, or closed a TLS
# connection (its TLS layer may have read and dropped lines to close;
# rsyslog's does).
compare() {
	grep -q 'reset by peer' "$D/gw.err" && DUPS=1
	grep -q 'syslog+tls://[^ ]*: the collector closed' "$D/gw.err" &&
	    DUPS=1
	if n=$(python3 "$T/check.py" "$D/local.log" "$D/out.log" $DUPS); then
		ok "$MODE: $1: $n lines arrived in order, as in the local log (repeats allowed: $DUPS)"
	else
		fail "$MODE: $1: $n"
	fi
}

run_mode() {
	MODE=$1
	DUPS=0
	D="$T/$MODE"
	mkdir -p "$D/work" "$D/xdg"
	chmod 700 "$D/xdg"
	[ "$MODE" = nobody ] && chown -R nobody "$D"
	TLS="--log-tls-ca $T/ca.pem --log-tls-cert $T/client.pem \
	    --log-tls-key $T/client.key"

	# TLS; the collector stopped for 3 s in the middle of traffic.
	RP=$(free_port)
	rsyslog_conf tls coll >"$D/rs.conf"
	rs_start
	gw_start --log "syslog+tls://127.0.0.1:$RP" $TLS
	python3 "$T/load.py" "$GP" 400 0.01 &
	LP=$!
	sleep 1
	rs_stop
	sleep 3
	rs_start
	wait "$LP"
	wait_lines "$D/local.log"
	gw_stop
	wait_lines "$D/local.log"
	compare "TLS, collector restarted"
	grep -q 'lines wait in the spool' "$D/gw.err" ||
	    fail "$MODE: the collector's absence was not said"
	loggrep "$D/gw.err" 'delivering again' ||
	    fail "$MODE: delivery did not resume"
	[ "$(grep -c '"event":"request"' "$D/local.log")" -eq 400 ] ||
	    fail "$MODE: not every request was logged"

	# Across a restart of pinhole: lines made while the collector is
	# away wait in the spool, and the next gateway sends them.
	rs_stop
	gw_start --log "syslog+tls://127.0.0.1:$RP" $TLS
	python3 "$T/load.py" "$GP" 30 0
	gw_stop
	[ -s "$D/spool/syslog+tls_127.0.0.1_$RP.spool" ] ||
	    fail "$MODE: nothing waits in the spool"
	rs_start
	gw_start --log "syslog+tls://127.0.0.1:$RP" $TLS
	wait_lines "$D/local.log"
	gw_stop
	compare "TLS, pinhole restarted while the collector was away"

	# A collector whose certificate the CA given did not sign, and one
	# with another name: refused, nothing reaches them, lines wait.
	: >"$D/gw.err"
	gw_start --log "syslog+tls://127.0.0.1:$RP" --log-tls-ca \
	    "$T/badca.pem" --log-tls-cert "$T/client.pem" \
	    --log-tls-key "$T/client.key"
	python3 "$T/load.py" "$GP" 5 0
	wait_line "$D/gw.err" "certificate: (unable to get local issuer|self-signed)"
	gw_stop
	loggrep "$D/gw.err" "certificate: (unable to get local issuer|self-signed)" ||
	    fail "$MODE: a collector not verified was not said: $(tail -2 "$D/gw.err")"
	rs_stop
	rsyslog_conf tls other >"$D/rs.conf"
	rs_start
	: >"$D/gw.err"
	gw_start --log "syslog+tls://127.0.0.1:$RP" $TLS
	wait_line "$D/gw.err" "certificate: IP address mismatch"
	gw_stop
	loggrep "$D/gw.err" "certificate: IP address mismatch" ||
	    fail "$MODE: a collector of another name was not said: $(tail -2 "$D/gw.err")"
	if [ "$(sort -u "$D/out.log" | wc -l)" -lt \
	    "$(wc -l <"$D/local.log")" ] &&
	    [ -s "$D/spool/syslog+tls_127.0.0.1_$RP.spool" ]; then
		ok "$MODE: collectors not verified get nothing; the spool keeps it"
	else
		fail "$MODE: a collector not verified got lines"
	fi
	# With the right collector again, what waited arrives.
	rs_stop
	rsyslog_conf tls coll >"$D/rs.conf"
	rs_start
	: >"$D/gw.err"
	gw_start --log "syslog+tls://127.0.0.1:$RP" $TLS
	wait_lines "$D/local.log"
	gw_stop
	compare "TLS, after refused collectors"
	rs_stop

	# RELP over TLS to a new collector, stopped twice in the middle of
	# traffic: every line once, in order.
	rm -f "$D/out.log"
	mv "$D/local.log" "$D/tls.log"
	: >"$D/gw.err"
	RP=$(free_port)
	relp_conf tls >"$D/rs.conf"
	rs_start
	gw_start --log "syslog+relp+tls://127.0.0.1:$RP" $TLS
	python3 "$T/load.py" "$GP" 600 0.005 &
	LP=$!
	sleep 1
	rs_stop
	sleep 2
	rs_start
	sleep 1
	rs_stop
	sleep 1
	rs_start
	wait "$LP"
	wait_lines "$D/local.log"
	: >"$D/rs.err"
	gw_stop
	wait_lines "$D/local.log"
	# The stopping gateway ended its session with close (TLS and all):
	# rsyslog saw no broken session.
	sleep 0.2
	if grep -q imrelp "$D/rs.err"; then
		fail "$MODE: RELP: the session did not end cleanly: $(head -2 "$D/rs.err")"
	else
		ok "$MODE: RELP: the stopping gateway closed its session cleanly"
	fi
	if n=$(python3 "$T/check.py" "$D/local.log" "$D/out.log" 0); then
		ok "$MODE: RELP over TLS, collector restarted twice: $n lines, each once, in order"
	else
		fail "$MODE: RELP over TLS, collector restarted twice: $n"
	fi
	loggrep "$D/gw.err" 'relp\+tls://[^ ]*: (the collector closed|Connection refused)' ||
	    fail "$MODE: RELP: the collector's absence was not said"
	loggrep "$D/gw.err" 'relp\+tls://[^ ]*: delivering again' ||
	    fail "$MODE: RELP: delivery did not resume"

	# RELP over TCP: lines made while the collector is away wait in the
	# spool, across a restart of pinhole; the next gateway sends them,
	# each once, and /metrics counts what rsyslog wrote.
	rs_stop
	rm -f "$D/out.log"
	mv "$D/local.log" "$D/relptls.log"
	RP=$(free_port)
	relp_conf tcp >"$D/rs.conf"
	DEST="syslog+relp://127.0.0.1:$RP"
	gw_start --log "$DEST"
	python3 "$T/load.py" "$GP" 30 0
	gw_stop
	[ -s "$D/spool/syslog+relp_127.0.0.1_$RP.spool" ] ||
	    fail "$MODE: RELP: nothing waits in the spool"
	rs_start
	MP=$(free_port)
	gw_start --log "$DEST" --metrics "127.0.0.1:$MP"
	python3 "$T/load.py" "$GP" 20 0
	wait_lines "$D/local.log"
	scrape "$MP" || fail "$MODE: no metrics"
	got=$(series pinhole_audit_ship_delivered_total "$DEST")
	[ "$got" = "$(wc -l <"$D/out.log")" ] ||
	    fail "$MODE: RELP: /metrics: delivered $got, rsyslog wrote $(wc -l <"$D/out.log")"
	gw_stop
	wait_lines "$D/local.log"
	rs_stop
	if n=$(python3 "$T/check.py" "$D/local.log" "$D/out.log" 0); then
		ok "$MODE: RELP, pinhole restarted while the collector was away: $n lines, each once; /metrics said $got"
	else
		fail "$MODE: RELP, pinhole restarted while the collector was away: $n"
	fi

	# RELP collectors that misbehave: each is said, the gateway stays up
	# and exits 0, and the spool keeps every line.
	for m in "refuse-open:refused the session: 500 not today" \
	    "no-syslog:does not take the syslog command" \
	    "wrong-txnr:an answer to no line sent" \
	    "refuse-line:refused a line: 500 no room" \
	    "garbage:RELP: no transaction number"; do
		HP=$(free_port)
		python3 "$top_srcdir/tests/integration/relp-collector.py" \
		    "$HP" "${m%%:*}" >"$D/hc.out" 2>&1 &
		HC=$!
		PIDS="$PIDS $HC"
		wait_port "$HP" || fail "$MODE: the RELP collector does not listen"
		: >"$D/gw.err"
		gw_start --log "syslog+relp://127.0.0.1:$HP"
		python3 "$T/load.py" "$GP" 3 0
		i=0
		until grep -qF "${m#*:}" "$D/gw.err" || [ $i -ge 50 ]; do
			sleep 0.1
			i=$((i + 1))
		done
		gw_stop
		kill "$HC" 2>/dev/null
		wait "$HC" 2>/dev/null
		if grep -qF "${m#*:}" "$D/gw.err" &&
		    [ "$(grep -c . "$D/spool/syslog+relp_127.0.0.1_$HP.spool")" -ge 4 ]; then
			ok "$MODE: RELP collector that does ${m%%:*}: said, and every line kept"
		else
			fail "$MODE: RELP collector that does ${m%%:*}: $(tail -2 "$D/gw.err")"
		fi
	done

	# Plain TCP to a new collector.
	rm -f "$D/out.log"
	DUPS=0
	RP=$(free_port)
	rsyslog_conf tcp >"$D/rs.conf"
	rs_start
	mv "$D/local.log" "$D/old.log"
	: >"$D/gw.err"
	MP=$(free_port)
	DEST="syslog+tcp://127.0.0.1:$RP"
	gw_start --log "$DEST" --metrics "127.0.0.1:$MP"
	python3 "$T/load.py" "$GP" 50 0
	wait_lines "$D/local.log"
	# A line counts as delivered a moment after TCP acknowledged it: wait
	# (at most 10 s) until the count is what rsyslog wrote.
	i=0
	while [ $i -lt 100 ]; do
		scrape "$MP" || fail "$MODE: no metrics"
		[ "$(series pinhole_audit_ship_delivered_total "$DEST")" = \
		    "$(wc -l <"$D/out.log")" ] && break
		sleep 0.1
		i=$((i + 1))
	done
	got=$(series pinhole_audit_ship_delivered_total "$DEST")
	if [ "$got" = "$(wc -l <"$D/out.log")" ] &&
	    [ "$got" = "$(wc -l <"$D/local.log")" ] &&
	    [ "$(series pinhole_audit_ship_pending_bytes "$DEST")" = 0 ] &&
	    [ "$(series pinhole_audit_ship_dropped_total "$DEST")" = 0 ] &&
	    [ "$(series pinhole_audit_ship_connects_total "$DEST")" = 1 ]; then
		ok "$MODE: /metrics: $got lines delivered, as rsyslog wrote"
	else
		fail "$MODE: /metrics: delivered $got, rsyslog wrote $(wc -l \
		    <"$D/out.log"): $(grep "$DEST" "$D/metrics" | tr '\n' ' ')"
	fi
	gw_stop
	rs_stop
	compare "TCP"

	# A spool of 4K, nobody listening: full, counted, said; the local
	# log has every line.
	NP=$(free_port)
	MP=$(free_port)
	DEST="syslog+tcp://127.0.0.1:$NP"
	gw_start --log "$DEST" --log-spool-max 4K --metrics "127.0.0.1:$MP"
	python3 "$T/load.py" "$GP" 50 0
	scrape "$MP" || fail "$MODE: no metrics"
	l1=$(wc -l <"$D/local.log")
	gw_stop
	loggrep "$D/gw.err" "127.0.0.1_$NP.spool is full" ||
	    fail "$MODE: a full spool was not said"
	n=$(sed -n "s/.*127.0.0.1:$NP: .* \([0-9][0-9]*\) line(s) not kept.*/\1/p" \
	    "$D/gw.err")
	if [ "${n:-0}" -gt 0 ] &&
	    [ "$(grep -c '"event":"request"' "$D/local.log")" -eq 100 ]; then
		ok "$MODE: a full spool counts $n lines not kept, all in the local log"
	else
		fail "$MODE: a full spool's count: '${n:-}'"
	fi
	# The scrape's count, and the lines written after it (the stop
	# line) that the spool did not keep, make what stderr said at close.
	got=$(series pinhole_audit_ship_dropped_total "$DEST")
	late=$(tail -n +$((l1 + 1)) "$D/local.log" |
	    grep -cvxF -f "$D/spool/syslog+tcp_127.0.0.1_$NP.spool")
	if [ "$got" != none ] && [ "$got" -gt 0 ] &&
	    [ $((got + late)) -eq "${n:-0}" ]; then
		ok "$MODE: /metrics: $got lines dropped, and $late after it, as stderr says ($n)"
	else
		fail "$MODE: /metrics: dropped $got, $late after it; stderr says ${n:-nothing}"
	fi
}

run_mode root
[ -n "${SHIP_ROOT_ONLY:-}" ] || run_mode nobody
finish
