#!/bin/sh
# Benchmark pinhole's DNS server (pinhole proxy --dns-listen) against
# dnsmasq answering the same names locally, with dnsperf on loopback, and
# print one table.  Run by hand (see README.md), never by `make check`:
#
#	tests/bench/dns.sh BUILD_DIR
#
# Cases: allowed names (n1.bench.test ... A: pinhole answers from its fake
# address map, dnsmasq from --address) and denied names (n1.denied.test
# ... A: NXDOMAIN from both).  The one dnsmasq is also pinhole's
# --resolver, so no query leaves the machine.  Only 127.0.0.1 is used, on
# free ports; every process the script starts is stopped when it exits.
#
# Knobs (environment): BENCH_SECS (seconds per dnsperf run, 5),
# BENCH_CLIENTS (dnsperf -c, 4), BENCH_OUTSTANDING (dnsperf -q, 100),
# BENCH_NAMES (names per list, 1000), BENCH_REPEAT (runs per case, the
# median kept; 3), BENCH_DNS_LOG (1: pinhole writes its audit log to a
# file, as a deployment would; 0: no log), BENCH_PINHOLE2 (another build's
# pinhole, a third column), BENCH_SERVER_CPU and BENCH_LOAD_CPU (the CPU
# each server and dnsperf are pinned to; 1 and 0 on two CPUs or more,
# "" for none), BENCH_PERF (a directory: perf record -g each pinhole's
# runs); TMPDIR holds the lists and logs.
set -u
PATH=$PATH:/usr/sbin:/sbin

usage() {
	echo "usage: $0 BUILD_DIR" >&2
	exit 2
}
[ $# -eq 1 ] || usage
BUILD=$(cd "$1" && pwd) || usage
PINHOLE=$BUILD/pinhole
[ -x "$PINHOLE" ] || { echo "$0: $PINHOLE missing: run 'make' in $BUILD" >&2; exit 1; }
for p in dnsperf dnsmasq ss; do
	command -v $p >/dev/null ||
	    { echo "$0: $p missing (apt-get install dnsperf dnsmasq-base iproute2)" >&2; exit 1; }
done

SECS=${BENCH_SECS:-5}
CLIENTS=${BENCH_CLIENTS:-4}
OUTSTANDING=${BENCH_OUTSTANDING:-100}
NAMES=${BENCH_NAMES:-1000}
REPEAT=${BENCH_REPEAT:-3}
LOG=${BENCH_DNS_LOG:-1}
PINHOLE2=${BENCH_PINHOLE2:-}
PERFDIR=${BENCH_PERF:-}
if [ "$(nproc)" -ge 2 ]; then
	SCPU=${BENCH_SERVER_CPU-1}
	LCPU=${BENCH_LOAD_CPU-0}
else
	SCPU=${BENCH_SERVER_CPU-}
	LCPU=${BENCH_LOAD_CPU-}
fi
if [ -n "$PINHOLE2" ]; then
	[ -x "$PINHOLE2" ] || { echo "$0: $PINHOLE2 missing" >&2; exit 1; }
	PINHOLE2=$(cd "$(dirname "$PINHOLE2")" && pwd)/$(basename "$PINHOLE2")
fi
# The words that pin a command to those CPUs (taskset), or none.
SPIN=
LPIN=
[ -n "$SCPU" ] && SPIN="taskset -c $SCPU"
[ -n "$LCPU" ] && LPIN="taskset -c $LCPU"
[ -z "$PERFDIR" ] || command -v perf >/dev/null ||
    { echo "$0: perf missing (apt-get install linux-perf)" >&2; exit 1; }

T=$(mktemp -d "${TMPDIR:-/tmp}/pinhole-dnsbench.XXXXXX") || exit 1
mkdir "$T/res"
PIDS=

# Stop one process we started: TERM, then KILL after 5 s.
stop_pid() {
	kill "$1" 2>/dev/null || return 0
	i=0
	while kill -0 "$1" 2>/dev/null && [ $i -lt 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	kill -9 "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}

cleanup() {
	for p in $PIDS; do stop_pid "$p"; done
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

say() {
	echo "dnsbench: $*" >&2
}

# Print a port on 127.0.0.1 free for both UDP and TCP, below the usual
# ephemeral range; $1 is added to the first guess so that calls differ.
free_port() {
	i=0
	while [ $i -lt 100 ]; do
		p=$(( (($$ + $1 + i * 7919) % 10000) + 20000 ))
		[ -z "$(ss -Hnua "sport = :$p")$(ss -Hnta "sport = :$p")" ] &&
		    { echo "$p"; return 0; }
		i=$((i + 1))
	done
	say "no free port"
	return 1
}

# Print the CPU time process $1's threads have run, in microseconds
# (schedstat, ns), or nothing when it is gone.
cpu_us() {
	cat /proc/"$1"/task/*/schedstat 2>/dev/null |
	    awk '{ ns += $1 } END { if (NR > 0) printf "%.0f\n", ns / 1000 }'
}

# Wait (5 s at most) until process $1 listens on UDP port $2.
wait_port() {
	i=0
	while [ $i -lt 50 ]; do
		kill -0 "$1" 2>/dev/null || return 1
		[ -n "$(ss -Hnlu "sport = :$2")" ] && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

# The query lists.
i=1
while [ $i -le "$NAMES" ]; do
	echo "n$i.bench.test A" >&3
	echo "n$i.denied.test A" >&4
	i=$((i + 1))
done 3>"$T/allowed.txt" 4>"$T/denied.txt"

# dnsmasq: bench.test names are 127.0.0.1, denied.test names NXDOMAIN
# (an --address with no address), nothing forwarded, no query log.
DPORT=$(free_port 0) || exit 1
$SPIN dnsmasq -k -C /dev/null -p "$DPORT" --listen-address=127.0.0.1 \
    --bind-interfaces --no-resolv --no-hosts --pid-file= \
    --cache-size=10000 --address=/bench.test/127.0.0.1 \
    --address=/denied.test/ 2>"$T/dnsmasq.err" &
DPID=$!
PIDS="$PIDS $DPID"
wait_port "$DPID" "$DPORT" || { say "dnsmasq did not start:"; cat "$T/dnsmasq.err" >&2; exit 1; }

# pinhole: the HTTP side on one port, DNS on another, *.bench.test
# allowed.  Start program $2 as server $1; its port goes in ${1}_PORT,
# its process in ${1}_PID.
start_pinhole() {
	hp=$(free_port "$3") || exit 1
	dp=$(free_port "$(($3 + 1))") || exit 1
	set -- "$1" "$2" --listen 127.0.0.1:$hp --dns-listen 127.0.0.1:$dp \
	    --allow '*.bench.test' --resolver 127.0.0.1:$DPORT
	[ "$LOG" = 1 ] && set -- "$@" --log "$T/audit-$1.log"
	name=$1
	prog=$2
	shift 2
	$SPIN "$prog" proxy "$@" 2>"$T/$name.err" &
	pid=$!
	PIDS="$PIDS $pid"
	wait_port "$pid" "$dp" ||
	    { say "$name did not start:"; cat "$T/$name.err" >&2; exit 1; }
	eval "${name}_PORT=$dp ${name}_PID=$pid"
}
start_pinhole pinhole "$PINHOLE" 1
SERVERS="pinhole dnsmasq"
dnsmasq_PORT=$DPORT
dnsmasq_PID=$DPID
if [ -n "$PINHOLE2" ]; then
	start_pinhole pinhole2 "$PINHOLE2" 3
	SERVERS="pinhole pinhole2 dnsmasq"
fi

# Run dnsperf once against server $1 for case $2 (list $3, wanted rcode
# $4); append "qps latency cpu_us_per_query flag" to $T/res/$1-$2.
run_case() {
	port=$(eval echo "\$${1}_PORT")
	pid=$(eval echo "\$${1}_PID")
	perf=
	if [ -n "$PERFDIR" ] && [ "$1" != dnsmasq ]; then
		mkdir -p "$PERFDIR"
		perf record -q -g -p "$pid" -o "$PERFDIR/$1-$2.data" \
		    >/dev/null 2>&1 &
		perf=$!
		sleep 1
	fi
	c0=$(cpu_us "$pid")
	out=$(timeout $((SECS + 30)) $LPIN dnsperf -s 127.0.0.1 \
	    -p "$port" -d "$3" -l "$SECS" -c "$CLIENTS" -q "$OUTSTANDING" 2>&1)
	c1=$(cpu_us "$pid")
	if [ -n "$perf" ]; then
		kill -INT "$perf" 2>/dev/null
		wait "$perf" 2>/dev/null
	fi
	qps=$(echo "$out" | sed -n 's/^ *Queries per second: *//p')
	lat=$(echo "$out" | sed -n 's/^ *Average Latency (s): *\([0-9.]*\).*/\1/p')
	lost=$(echo "$out" | sed -n 's/^ *Queries lost: *\([0-9]*\).*/\1/p')
	done_=$(echo "$out" | sed -n 's/^ *Queries completed: *\([0-9]*\).*/\1/p')
	codes=$(echo "$out" | sed -n 's/^ *Response codes: *//p')
	[ -n "$qps" ] && [ -n "$lat" ] || { qps=0; lat=0; }
	cpq=$(awk -v a="${c0:-}" -v b="${c1:-}" -v n="${done_:-0}" 'BEGIN {
		if (a == "" || b == "" || n + 0 <= 0) print 0
		else printf "%.3f\n", (b - a) / n }')
	echo "dnsbench: $1 $2: $qps qps, $lat s, $cpq us/query," \
	    "lost ${lost:-?}, $codes" >&2
	flag=
	case "$codes" in
	"$4 "*"(100.00%)") ;;
	*) flag='!' ;;
	esac
	[ "${lost:-1}" = 0 ] || flag='!'
	echo "$qps $lat $cpq $flag" >>"$T/res/$1-$2"
}

# The servers and cases take turns, so a busy moment of a shared machine
# falls on all.
r=0
while [ $r -lt "$REPEAT" ]; do
	for s in $SERVERS; do
		run_case "$s" allowed "$T/allowed.txt" NOERROR
	done
	for s in $SERVERS; do
		run_case "$s" denied "$T/denied.txt" NXDOMAIN
	done
	r=$((r + 1))
done
for s in $SERVERS; do
	pid=$(eval echo "\$${s}_PID")
	kill -0 "$pid" 2>/dev/null || { say "$s exited:"; cat "$T/$s.err" >&2; }
done

KIND=optimised
grep -q '^SAN_CFLAGS = .*-fsanitize' "$BUILD/Makefile" 2>/dev/null && KIND=sanitizer
echo
echo "pinhole DNS vs dnsmasq: dnsperf -l $SECS -c $CLIENTS -q $OUTSTANDING," \
    "$NAMES names, median of $REPEAT"
echo "$(nproc) CPUs, $(uname -sr), load $(cut -d' ' -f1-3 /proc/loadavg)," \
    "$KIND build, pinhole log $( [ "$LOG" = 1 ] && echo file || echo off)," \
    "servers on CPU ${SCPU:-any}, dnsperf on CPU ${LCPU:-any}"
echo "pinhole: $PINHOLE${PINHOLE2:+; pinhole2: $PINHOLE2}"
echo
awk -v dir="$T/res" -v servers="$SERVERS" '
# The median of field f over the runs of server s in case c; flag in fl.
function median(s, c, f,	file, line, a, v, n, i, j, t) {
	file = dir "/" s "-" c
	n = 0
	while ((getline line < file) > 0) {
		split(line, a, " ")
		v[++n] = a[f] + 0
		if (a[4] != "")
			fl[s, c] = "!"
	}
	close(file)
	for (i = 2; i <= n; i++)
		for (j = i; j > 1 && v[j - 1] > v[j]; j--) {
			t = v[j]; v[j] = v[j - 1]; v[j - 1] = t
		}
	if (n == 0)
		return (0)
	return (n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2)
}
function row(label, c, f, scale, fmt,	i, x, d) {
	printf "%-17s", label
	d = median("dnsmasq", c, f) * scale
	for (i = 1; i <= ns; i++) {
		x = median(sv[i], c, f) * scale
		printf(fmt "%1s", x, fl[sv[i], c])
		val[sv[i], c, f] = x
	}
	for (i = 1; i <= ns; i++)
		if (sv[i] != "dnsmasq")
			printf(" %13.2fx", (d > 0) ? val[sv[i], c, f] / d : 0)
	if (f == 1)
		printf(" %7s", (val["pinhole", c, f] >= 1.5 * d) ? "PASS" : "MISS")
	printf "\n"
}
BEGIN {
	ns = split(servers, sv, " ")
	printf "%-17s", "case"
	for (i = 1; i <= ns; i++)
		printf " %12s ", sv[i]
	for (i = 1; i <= ns; i++)
		if (sv[i] != "dnsmasq")
			printf " %14s", sv[i] "/dnsmasq"
	printf " %7s\n", "target"
	n = split("allowed denied", cs, " ")
	for (k = 1; k <= n; k++) {
		row(cs[k] " qps", cs[k], 1, 1, " %12.0f")
		row(cs[k] " CPU us/q", cs[k], 3, 1, " %12.2f")
		row(cs[k] " lat ms", cs[k], 2, 1000, " %12.3f")
	}
	print ""
	print "target: pinhole qps >= 1.5 x dnsmasq qps (allowed and denied);" \
	    " ! = lost queries or an unexpected rcode in some run"
}'
