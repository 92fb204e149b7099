#!/bin/sh
# Instructions pinhole's proxy spends per CONNECT setup, per forward
# request and per inspected request (TLS ended at the gateway, a
# keep-alive request to a host whose rule checks requests; without and
# with a secret for that host, whose placeholder each request carries in
# Authorization and whose value every response is scrubbed of), counted
# by callgrind, for one build or two side by side, or (--upstream, as
# root) one build dialing the origin and going through a squid on
# loopback as its upstream proxy.  CPU time on a shared
# machine varies by a fifth from run to run; instruction counts do not,
# so this is how to tell whether a change costs anything.  Run by hand
# (see README.md):
#
#	tests/bench/instructions.sh BUILD_DIR [OTHER_BUILD_DIR]
#	tests/bench/instructions.sh --upstream BUILD_DIR
#
# Each case runs twice, with N and 2N units (BENCH_IR_SETUPS, 3000;
# BENCH_IR_REQUESTS, 20000; BENCH_IR_DNS, 2000 queries for distinct
# allowed names, which pinhole's DNS server resolves through a dnsmasq;
# BENCH_IR_INSPECTED, 2000, over 4 kept-alive connections, the origin's
# body BENCH_IR_BODY bytes, 100), so the fixed cost of start-up, exit
# and the TLS handshakes drops out: per unit = (Ir(2N) - Ir(N)) / N.
# BENCH_IR_CONC sets the clients at once (10 for loadgen, 4 for
# tlsload, 10 queries outstanding); with 1 every unit is one wake-up of
# the proxy, so the counts no longer depend on how the scheduler
# batches events (tests/bench/guard.sh runs it so).  BENCH_IR_DNS_QPS
# caps dnsperf's rate (none): under DNS_LOG_RATE (200) a second every
# query's audit line is written, above it how many are depends on time.
# BENCH_IR_BYNAME=1: CONNECT and forward name bench.test, which pinhole
# resolves through the dnsmasq (--resolver), instead of 127.0.0.1.
# BENCH_IR_ONLY: an extended regular expression; only the rows whose
# names match it are counted.  BENCH_PINHOLE is
# the first build's program (BUILD_DIR/pinhole).  The DNS case needs
# dnsperf and dnsmasq, the inspected cases openssl and dnsmasq
# (bench.test on a port of its own); each is left out without them, and
# with --upstream.  BENCH_IR_OPTS and BENCH_IR_OPTS_OTHER add gateway
# options to BUILD_DIR's and OTHER_BUILD_DIR's CONNECT, forward and
# inspected runs (--log-budget 1000000,1G, to count the log budget's
# accounting with every line still written).
# Traffic stays on 127.0.0.1; every process started is stopped.
set -u
usage() {
	echo "usage: $0 BUILD_DIR [OTHER_BUILD_DIR] | --upstream BUILD_DIR" >&2
	exit 2
}
UP=
[ "${1:-}" = --upstream ] && { UP=yes; shift; [ $# -eq 1 ] || usage; }
[ $# -ge 1 ] && [ $# -le 2 ] || usage
command -v valgrind >/dev/null || { echo "$0: valgrind missing" >&2; exit 1; }
A=$(cd "$1" && pwd) || usage
B=
[ $# -eq 2 ] && { B=$(cd "$2" && pwd) || usage; }
[ -n "$UP" ] && B=$A
PA=${BENCH_PINHOLE:-$A/pinhole}
LOADGEN=$A/tests/bench/loadgen
ORIGIN=$A/tests/bench/origin
TLSLOAD=$A/tests/bench/tlsload
TLSORIGIN=$A/tests/bench/tlsorigin
for p in "$LOADGEN" "$ORIGIN" "$TLSLOAD" "$TLSORIGIN" "$PA" \
    ${B:+"$B/pinhole"}; do
	[ -x "$p" ] || { echo "$0: $p missing: run 'make bench-programs'" >&2; exit 1; }
done
SETUPS=${BENCH_IR_SETUPS:-3000}
REQUESTS=${BENCH_IR_REQUESTS:-20000}
INSPECTED=${BENCH_IR_INSPECTED:-2000}
BODY=${BENCH_IR_BODY:-100}
QUERIES=${BENCH_IR_DNS:-2000}
CONC=${BENCH_IR_CONC:-10}
QPS=${BENCH_IR_DNS_QPS:-}
BYNAME=${BENCH_IR_BYNAME:-}
ONLY=${BENCH_IR_ONLY:-.}
TCONC=${BENCH_IR_CONC:-4}
PLACEHOLDER=PINHOLE-SECRET-BENCH_TOKEN-MASKED
T=$(mktemp -d "${TMPDIR:-/tmp}/pinhole-ir.XXXXXX") || exit 1
PIDS=
trap 'for p in $PIDS; do kill $p 2>/dev/null; done; rm -rf "$T"' EXIT INT TERM

# free_port, wait_port.
. "$(dirname "$0")/ports.sh"

OPORT=$(free_port)
"$ORIGIN" -p "$OPORT" -t 3600 >/dev/null 2>&1 &
PIDS="$PIDS $!"
wait_port "$OPORT" || { echo "$0: origin did not start" >&2; exit 1; }

# --upstream: a squid that lets the origin through, for the second column.
UPOPT=
if [ -n "$UP" ]; then
	command -v squid >/dev/null || { echo "$0: squid missing" >&2; exit 1; }
	SQP=$(free_port)
	mkdir "$T/squid" && chmod 755 "$T"
	cat >"$T/squid/squid.conf" <<EOF
http_port 127.0.0.1:$SQP
acl ok dst 127.0.0.1/32
http_access allow ok
http_access deny all
cache deny all
access_log none
cache_log $T/squid/cache.log
pid_filename $T/squid/squid.pid
coredump_dir $T/squid
pinger_enable off
shutdown_lifetime 1 seconds
cache_effective_user proxy
EOF
	chown -R proxy "$T/squid"
	squid -N -f "$T/squid/squid.conf" >/dev/null 2>&1 &
	PIDS="$PIDS $!"
	wait_port "$SQP" || { echo "$0: squid did not start" >&2; exit 1; }
	UPOPT="--upstream http://127.0.0.1:$SQP"
fi

# Start a build's pinhole proxy under callgrind, on $port, logging in
# $d (both made here), with the proxy options that follow; its pid in
# $vpid.
start_proxy() {
	b=$1; shift
	prog=$b/pinhole
	[ "$b" = "$A" ] && prog=$PA
	d=$(mktemp -d "$T/run.XXXXXX")
	port=$(free_port)
	mkdir -m 700 "$d/run"
	XDG_RUNTIME_DIR=$d/run HOME=$d valgrind --tool=callgrind \
	    --log-file="$d/valgrind.err" --callgrind-out-file="$d/cg.out" \
	    "$prog" proxy --listen "127.0.0.1:$port" \
	    --log "$d/audit.log" "$@" >/dev/null 2>"$d/stderr" &
	vpid=$!
	wait_port "$port" || { echo "$0: pinhole did not start" >&2; exit 1; }
}

# Stop the proxy and print the instructions it ran.
stop_proxy() {
	kill -INT $vpid
	wait $vpid 2>/dev/null
	awk '/^summary:/ { print $2 }' "$d/cg.out"
}

# Instructions of one proxy run under callgrind: build, mode, units,
# and more options of pinhole's.
count() {
	host=127.0.0.1
	[ -n "$BYNAME" ] && host=bench.test
	# shellcheck disable=SC2086
	start_proxy "$1" --allow "$host:$OPORT" \
	    --allow 'allow-private 127.0.0.0/8' \
	    ${BYNAME:+--resolver 127.0.0.1:$DNSPORT} ${4:-}
	timeout 600 "$LOADGEN" "$2" -o "$OPORT" -x "127.0.0.1:$port" \
	    -H "$host" -c "$CONC" -n "$3" -t 600 >"$d/loadgen.out" 2>&1
	grep -q 'errors=0' "$d/loadgen.out" ||
	    echo "$0: $1: $2: $(cat "$d/loadgen.out")" >&2
	stop_proxy
}

# A dnsmasq on $DNSPORT that answers bench.test and every name under
# it with 127.0.0.1, started once.  Returns 1 without dnsmasq.
dns_setup() {
	[ -n "${DNSPORT:-}" ] && return 0
	command -v dnsmasq >/dev/null || return 1
	DNSPORT=$(free_port)
	dnsmasq -k -C /dev/null -p "$DNSPORT" --listen-address=127.0.0.1 \
	    --bind-interfaces --no-resolv --no-hosts --pid-file= \
	    --address=/bench.test/127.0.0.1 2>/dev/null &
	PIDS="$PIDS $!"
	wait_port "$DNSPORT"
}

# Instructions of one proxy run under callgrind answering DNS queries
# for n1.bench.test ... (build, queries), one dnsperf pass over them.
count_dns() {
	[ -s "$T/names-$2" ] ||
	    awk -v n="$2" 'BEGIN { for (i = 1; i <= n; i++) print "n" i ".bench.test A" }' \
	    >"$T/names-$2"
	dport=$(free_port)
	start_proxy "$1" --dns-listen "127.0.0.1:$dport" \
	    --allow '*.bench.test' --resolver "127.0.0.1:$DNSPORT"
	timeout 600 dnsperf -s 127.0.0.1 -p "$dport" -d "$T/names-$2" -n 1 \
	    -c 1 -q "$CONC" ${QPS:+-Q "$QPS"} -t 30 >"$d/dnsperf.out" 2>&1
	grep -q "Queries completed: *$2 " "$d/dnsperf.out" ||
	    echo "$0: dns: $(grep -i 'queries' "$d/dnsperf.out")" >&2
	stop_proxy
}

# The inspected cases' peers: a test CA, which pinhole trusts for the
# origin, a TLS origin for bench.test ($TPORT), the dnsmasq that names
# it ($DNSPORT), and a policy for each case.  Returns 1 when one of
# them cannot be had.
tls_setup() {
	command -v openssl >/dev/null && dns_setup && bench_certs "$T" ||
	    return 1
	TPORT=$(free_port)
	"$TLSORIGIN" -C "$T/leaf.pem" -K "$T/leaf.key" -p "$TPORT" -b "$BODY" \
	    -t 3600 >/dev/null 2>&1 &
	PIDS="$PIDS $!"
	printf 'allow bench.test:* read-only\nallow-private 127.0.0.0/8\n' \
	    >"$T/policy-plain"
	cp "$T/policy-plain" "$T/policy-secret"
	printf 'secret BENCH_TOKEN for bench.test\n' >>"$T/policy-secret"
	# The secret's value, in pinhole's environment only.
	BENCH_TOKEN=ghp_R2x9Kq7LmZ4tWbN8vYc3PdF6sHj1Ua5Eo0Ti
	SSL_CERT_FILE=$T/ca.pem
	export BENCH_TOKEN SSL_CERT_FILE
	wait_port "$TPORT"
}

# Instructions of one inspecting proxy run under callgrind: build,
# "secret" or "plain", requests, and more options of pinhole's.
count_tls() {
	# shellcheck disable=SC2086
	start_proxy "$1" --policy "$T/policy-$2" \
	    --resolver "127.0.0.1:$DNSPORT" ${4:-}
	ca=$(sed -n 's/^pinhole: CA certificate: //p' "$d/stderr")
	set -- "$2" keepalive -o "$TPORT" -A "$ca" -x "127.0.0.1:$port" \
	    -H bench.test -c "$TCONC" -n "$3" -t 600
	[ "$1" = secret ] && set -- "$@" -h "Authorization: Bearer $PLACEHOLDER"
	shift
	timeout 600 "$TLSLOAD" "$@" >"$d/tlsload.out" 2>&1
	grep -q 'errors=0' "$d/tlsload.out" ||
	    echo "$0: inspected: $(cat "$d/tlsload.out")" >&2
	stop_proxy
}

# Instructions per unit for a build: (Ir(2N) - Ir(N)) / N.
per_unit() {
	case $2 in
	dns)
		one=$(count_dns "$1" "$3")
		two=$(count_dns "$1" $(($3 * 2)))
		;;
	inspected-*)
		one=$(count_tls "$1" "${2#inspected-}" "$3" "${4:-}")
		two=$(count_tls "$1" "${2#inspected-}" $(($3 * 2)) "${4:-}")
		;;
	*)
		one=$(count "$1" "$2" "$3" "${4:-}")
		two=$(count "$1" "$2" $(($3 * 2)) "${4:-}")
		;;
	esac
	echo $(((two - one) / $3))
}

COLB=other
[ -n "$UP" ] && COLB=upstream
printf '%-34s %12s %12s %8s\n' "instructions per unit" "build" \
    "${B:+$COLB}" "${B:+ratio}"
CASES="CONNECT setup:connect-rate:$SETUPS
forward request:forward-rps:$REQUESTS"
if [ -z "$UP" ] && command -v dnsperf >/dev/null && dns_setup; then
	CASES="$CASES
DNS query:dns:$QUERIES"
elif [ -z "$UP" ]; then
	echo "$0: no dnsperf or dnsmasq: the DNS case is left out" >&2
fi
if [ -z "$UP" ] && tls_setup; then
	CASES="$CASES
inspected request:inspected-plain:$INSPECTED
inspected request, secret:inspected-secret:$INSPECTED"
elif [ -z "$UP" ]; then
	echo "$0: no openssl or dnsmasq: the inspected cases are left out" >&2
fi
if [ -n "$BYNAME" ] && ! dns_setup; then
	echo "$0: BENCH_IR_BYNAME needs dnsmasq" >&2
	exit 1
fi
echo "$CASES" | grep -E "^[^:]*($ONLY)" | while IFS= read -r c; do
	name=${c%%:*} rest=${c#*:}
	mode=${rest%%:*} n=${rest#*:}
	a=$(per_unit "$A" "$mode" "$n" "${BENCH_IR_OPTS:-}")
	if [ -n "$B" ]; then
		b=$(per_unit "$B" "$mode" "$n" \
		    "$UPOPT${BENCH_IR_OPTS_OTHER:+ $BENCH_IR_OPTS_OTHER}")
		printf '%-34s %12s %12s %8s\n' "$name" "$a" "$b" \
		    "$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f", a / b }')"
	else
		printf '%-34s %12s\n' "$name" "$a"
	fi
done
echo "build: $PA${B:+
$COLB: $B${UP:+ through squid (--upstream)}}"
