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
# best kept; 1), BENCH_DNS_LOG (1: pinhole writes its audit log to a file,
# as a deployment would; 0: no log); TMPDIR holds the lists and logs.
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
REPEAT=${BENCH_REPEAT:-1}
LOG=${BENCH_DNS_LOG:-1}

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
dnsmasq -k -C /dev/null -p "$DPORT" --listen-address=127.0.0.1 \
    --bind-interfaces --no-resolv --no-hosts --pid-file= \
    --cache-size=10000 --address=/bench.test/127.0.0.1 \
    --address=/denied.test/ 2>"$T/dnsmasq.err" &
DPID=$!
PIDS="$PIDS $DPID"
wait_port "$DPID" "$DPORT" || { say "dnsmasq did not start:"; cat "$T/dnsmasq.err" >&2; exit 1; }

# pinhole: the HTTP side on one port, DNS on another, *.bench.test allowed.
PPORT=$(free_port 1) || exit 1
HPORT=$(free_port 2) || exit 1
set -- --listen 127.0.0.1:$HPORT --dns-listen 127.0.0.1:$PPORT \
    --allow '*.bench.test' --resolver 127.0.0.1:$DPORT
[ "$LOG" = 1 ] && set -- "$@" --log "$T/audit.log"
"$PINHOLE" proxy "$@" 2>"$T/pinhole.err" &
PPID_=$!
PIDS="$PIDS $PPID_"
wait_port "$PPID_" "$PPORT" || { say "pinhole did not start:"; cat "$T/pinhole.err" >&2; exit 1; }

# Run dnsperf once for case $1 (server port $2, list $3, wanted rcode $4);
# keep the result with the highest qps in $T/res/$1 as "qps latency flag".
run_case() {
	out=$(timeout $((SECS + 30)) dnsperf -s 127.0.0.1 -p "$2" -d "$3" \
	    -l "$SECS" -c "$CLIENTS" -q "$OUTSTANDING" 2>&1)
	qps=$(echo "$out" | sed -n 's/^ *Queries per second: *//p')
	lat=$(echo "$out" | sed -n 's/^ *Average Latency (s): *\([0-9.]*\).*/\1/p')
	lost=$(echo "$out" | sed -n 's/^ *Queries lost: *\([0-9]*\).*/\1/p')
	codes=$(echo "$out" | sed -n 's/^ *Response codes: *//p')
	echo "dnsbench: $1: ${qps:-?} qps, ${lat:-?} s, lost ${lost:-?}, $codes" >&2
	[ -n "$qps" ] && [ -n "$lat" ] || { qps=0; lat=0; }
	flag=
	case "$codes" in
	"$4 "*"(100.00%)") ;;
	*) flag='!' ;;
	esac
	[ "${lost:-1}" = 0 ] || flag='!'
	if [ -s "$T/res/$1" ]; then
		best=$(cut -d' ' -f1 "$T/res/$1")
		awk -v a="$qps" -v b="$best" 'BEGIN { exit !(a > b) }' || return 0
	fi
	echo "$qps $lat $flag" >"$T/res/$1"
}

# The cases take turns, so a busy moment of a shared machine falls on all.
r=0
while [ $r -lt "$REPEAT" ]; do
	run_case pinhole-allowed "$PPORT" "$T/allowed.txt" NOERROR
	run_case dnsmasq-allowed "$DPORT" "$T/allowed.txt" NOERROR
	run_case pinhole-denied "$PPORT" "$T/denied.txt" NXDOMAIN
	run_case dnsmasq-denied "$DPORT" "$T/denied.txt" NXDOMAIN
	r=$((r + 1))
done
kill -0 "$PPID_" 2>/dev/null || { say "pinhole exited:"; cat "$T/pinhole.err" >&2; }

KIND=optimised
grep -q '^SAN_CFLAGS = .*-fsanitize' "$BUILD/Makefile" 2>/dev/null && KIND=sanitizer
echo
echo "pinhole DNS vs dnsmasq: dnsperf -l $SECS -c $CLIENTS -q $OUTSTANDING," \
    "$NAMES names, best of $REPEAT"
echo "$(nproc) CPUs, $(uname -sr), load $(cut -d' ' -f1-3 /proc/loadavg)," \
    "$KIND build, pinhole log $( [ "$LOG" = 1 ] && echo file || echo off)"
echo
awk -v dir="$T/res" '
function get(name, f,	line, a) {
	line = ""
	if ((getline line < (dir "/" name)) > 0)
		close(dir "/" name)
	split(line, a, " ")
	f[1] = a[1] + 0; f[2] = a[2] * 1000; f[3] = a[3]
}
BEGIN {
	printf "%-10s %16s %16s %16s %10s\n", "case", "pinhole", "dnsmasq",
	    "pinhole/dnsmasq", "target"
	n = split("allowed denied", cs, " ")
	for (i = 1; i <= n; i++) {
		get("pinhole-" cs[i], p); get("dnsmasq-" cs[i], d)
		qr = d[1] > 0 ? p[1] / d[1] : 0
		lr = d[2] > 0 ? p[2] / d[2] : 0
		printf "%-10s %15.0f%1s %15.0f%1s %15.2fx %10s\n",
		    cs[i] " qps", p[1], p[3], d[1], d[3], qr,
		    (qr >= 1 ? "PASS" : "MISS")
		printf "%-10s %14.3fms %14.3fms %15.2fx %10s\n",
		    cs[i] " lat", p[2], d[2], lr, ""
	}
	print ""
	print "target: pinhole qps >= dnsmasq qps (allowed and denied);" \
	    " ! = lost queries or an unexpected rcode"
}'
