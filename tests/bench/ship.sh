#!/bin/sh
# Audit lines shipped over TLS to a real rsyslog, per second, with the
# collector stopped for 2 s in the middle of the traffic: loadgen sends
# BENCH_REQUESTS (100000) keep-alive requests through the proxy, each
# one audit line; the figure is the lines of the local log over the time
# until the collector has every one of them, and whether any is missing
# or repeated.  Then the same with the collector up throughout, and the
# rate at which a backlog left in the spool drains once it comes back.
# Each for syslog over TLS (imtcp, ossl) and RELP over TLS (imrelp),
# side by side.
# By hand, never by make check:
#   PINHOLE=build/pinhole BUILD=build sh tests/bench/ship.sh
# All on 127.0.0.1; every process started here is stopped at exit.
set -u
: "${PINHOLE:?PINHOLE must name the built program}"
BUILD=${BUILD:-$(dirname "$PINHOLE")}
N=${BENCH_REQUESTS:-100000}
T=$(mktemp -d /tmp/pinhole-bench.XXXXXX)
PIDS=
trap 'for p in $PIDS; do kill $p 2>/dev/null; done; wait; rm -rf "$T"' EXIT
for c in rsyslogd openssl python3 curl; do
	command -v $c >/dev/null || { echo "ship.sh: $c is needed" >&2; exit 1; }
done

port() {
	python3 "$(dirname "$0")/../free-port.py"
}
wait_for() {	# command..., at most 120 s
	i=0
	until "$@" 2>/dev/null; do
		[ $i -lt 1200 ] || return 1
		sleep 0.1
		i=$((i + 1))
	done
}
now() { date +%s.%N; }
lines() { wc -l <"$1" 2>/dev/null || echo 0; }
has_all() { [ "$(lines "$T/out.log")" -ge "$(lines "$T/local.log")" ]; }

cd "$T" || exit 1
EC="-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1"
{
	openssl req -x509 $EC -keyout ca.key -out ca.pem -subj /CN=bench-ca
	printf 'subjectAltName=IP:127.0.0.1\n' >coll.ext
	openssl req $EC -keyout coll.key -out coll.csr -subj /CN=coll
	openssl x509 -req -in coll.csr -CA ca.pem -CAkey ca.key \
	    -CAcreateserial -out coll.pem -days 1 -extfile coll.ext
	openssl req $EC -keyout client.key -out client.csr -subj /CN=client
	openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key \
	    -CAcreateserial -out client.pem -days 1
} >/dev/null 2>&1 || { echo "ship.sh: cannot make certificates" >&2; exit 1; }
RP=$(port)
mkdir work
# The collector's configuration for the transport $1: syslog+tls, or
# syslog+relp+tls.
rs_conf() {
	if [ "$1" = syslog+tls ]; then
		cat <<CONF
global(workDirectory="$T/work" maxMessageSize="256k"
    DefaultNetstreamDriverCAFile="$T/ca.pem"
    DefaultNetstreamDriverCertFile="$T/coll.pem"
    DefaultNetstreamDriverKeyFile="$T/coll.key")
module(load="imtcp" StreamDriver.Name="ossl" StreamDriver.Mode="1"
    StreamDriver.AuthMode="anon")
input(type="imtcp" port="$RP" address="127.0.0.1")
CONF
	else
		cat <<CONF
global(workDirectory="$T/work" maxMessageSize="256k")
module(load="imrelp" tls.tlslib="openssl")
input(type="imrelp" port="$RP" address="127.0.0.1" maxDataSize="256k"
    tls="on" tls.caCert="$T/ca.pem" tls.myCert="$T/coll.pem"
    tls.myPrivKey="$T/coll.key" tls.authMode="certvalid")
CONF
	fi
	cat <<CONF
template(name="text" type="string" string="%msg%\n")
action(type="omfile" file="$T/out.log" template="text")
CONF
}
RS=
rs_start() {
	rsyslogd -n -f "$T/rs.conf" -i "$T/rs.pid" 2>>"$T/rs.err" &
	RS=$!
	PIDS="$PIDS $RS"
	wait_for python3 -c "import socket; socket.create_connection(('127.0.0.1', $RP)).close()"
}
rs_stop() { kill "$RS"; wait "$RS" 2>/dev/null; }

"$BUILD/tests/bench/origin" -t 900 >origin.out &
PIDS="$PIDS $!"
wait_for grep -q '^port ' origin.out
OPORT=$(sed -n 's/^port //p' origin.out)

# The gateway on 127.0.0.1:$P, its log shipped to the collector.
gw_start() {
	P=$(port)
	"$PINHOLE" proxy --listen "127.0.0.1:$P" \
	    --allow "127.0.0.1:$OPORT" --allow "allow-private 127.0.0.0/8" \
	    --log "$T/local.log" --log "$DEST://127.0.0.1:$RP" \
	    --log-tls-ca "$T/ca.pem" --log-tls-cert "$T/client.pem" \
	    --log-tls-key "$T/client.key" --log-spool "$T/spool" 2>>gw.err &
	GW=$!
	PIDS="$PIDS $GW"
	wait_for python3 -c "import socket; socket.create_connection(('127.0.0.1', $P)).close()"
}

# One round: rm the logs, start the gateway, run the load, stop and
# start the collector after 1 s when $1 is "restart", wait for every
# line; print the figures.
round() {
	rm -rf local.log out.log spool
	rs_start
	gw_start
	t0=$(now)
	"$BUILD/tests/bench/loadgen" forward-rps -x "127.0.0.1:$P" \
	    -H 127.0.0.1 -o "$OPORT" -c 10 -n "$N" -t 60 >load.out 2>&1 &
	LG=$!
	if [ "$1" = restart ]; then
		sleep 1
		rs_stop
		sleep 2
		rs_start
	fi
	wait "$LG"
	t1=$(now)
	wait_for has_all
	t2=$(now)
	cpu=$(awk '{ print $14 + $15 }' /proc/$GW/stat)
	# The lines the collector was waited for; the stop line comes after.
	cp local.log local.snap
	kill "$GW"; wait "$GW" 2>/dev/null
	python3 - "$T/local.snap" "$T/out.log" "$1" "$t0" "$t1" "$t2" "$cpu" \
	    "$(getconf CLK_TCK)" "$DEST" <<'PY'
import json, sys
local = open(sys.argv[1]).read().splitlines()
out = open(sys.argv[2]).read().splitlines()
t0, t1, t2 = map(float, sys.argv[4:7])
cpu = int(sys.argv[7]) / int(sys.argv[8])
want = [json.loads(l)["seq"] for l in local]
got = [json.loads(l)["seq"] for l in out]
missing = sorted(set(want) - set(got))
dups = len(got) - len(set(got))
first = {}
for s in got:
    first.setdefault(s, len(first))
ordered = sorted(first, key=first.get) == sorted(first)
print("%-34s %8d lines %6.2f s made %6.2f s shipped %7.0f lines/s "
      "missing %d repeated %d in order %s; gateway CPU %.1f µs/line"
      % (sys.argv[9] + (" restarted:" if sys.argv[3] == "restart" else
         " up:"), len(local), t1 - t0, t2 - t0,
         len(local) / (t2 - t0), len(missing), dups,
         "yes" if ordered else "NO", cpu * 1e6 / max(len(local), 1)))
PY
	rs_stop
}

echo "pinhole $("$PINHOLE" --version 2>/dev/null | head -1), $(rsyslogd -v | head -1 | cut -d, -f1), $(nproc) CPUs"
for DEST in syslog+tls syslog+relp+tls; do
	rs_conf "$DEST" >rs.conf
	round up
	round restart

	# A backlog: lines made while the collector is away, then the time
	# the spool takes to drain once it is back.
	rm -rf local.log out.log spool
	gw_start
	"$BUILD/tests/bench/loadgen" forward-rps -x "127.0.0.1:$P" \
	    -H 127.0.0.1 -o "$OPORT" -c 10 -n "$N" -t 60 >load.out 2>&1
	n=$(lines local.log)
	t0=$(now)
	rs_start
	wait_for has_all
	t2=$(now)
	printf '%-34s %8d lines in %.2f s: %.0f lines/s\n' \
	    "$DEST backlog drained:" "$n" "$(echo "$t2 - $t0" | bc -l)" \
	    "$(echo "$n / ($t2 - $t0)" | bc -l)"
	kill "$GW"; wait "$GW" 2>/dev/null
	rs_stop
done
