#!/bin/sh
# Instructions pinhole's proxy spends per CONNECT setup and per forward
# request, counted by callgrind, for one build or two side by side, or
# (--upstream, as root) one build dialing the origin and going through
# a squid on loopback as its upstream proxy.  CPU
# time on a shared machine varies by a fifth from run to run; instruction
# counts do not, so this is how to tell whether a change costs anything.
# Run by hand (see README.md):
#
#	tests/bench/instructions.sh BUILD_DIR [OTHER_BUILD_DIR]
#	tests/bench/instructions.sh --upstream BUILD_DIR
#
# Each case runs twice, with N and 2N units (BENCH_IR_SETUPS, 3000;
# BENCH_IR_REQUESTS, 20000), so the fixed cost of start-up and exit
# drops out: per unit = (Ir(2N) - Ir(N)) / N.  Traffic stays on
# 127.0.0.1; every process started is stopped.
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
LOADGEN=$A/tests/bench/loadgen
ORIGIN=$A/tests/bench/origin
for p in "$LOADGEN" "$ORIGIN" "$A/pinhole" ${B:+"$B/pinhole"}; do
	[ -x "$p" ] || { echo "$0: $p missing: run 'make bench-programs'" >&2; exit 1; }
done
SETUPS=${BENCH_IR_SETUPS:-3000}
REQUESTS=${BENCH_IR_REQUESTS:-20000}
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

# Instructions of one proxy run under callgrind: build, mode, units,
# and more options of pinhole's.
count() {
	d=$(mktemp -d "$T/run.XXXXXX")
	port=$(free_port)
	XDG_RUNTIME_DIR=$d HOME=$d valgrind --tool=callgrind \
	    --callgrind-out-file="$d/cg.out" "$1/pinhole" proxy \
	    --listen "127.0.0.1:$port" --allow "127.0.0.1:$OPORT" \
	    --allow 'allow-private 127.0.0.0/8' --log "$d/audit.log" ${4:-} \
	    >/dev/null 2>"$d/valgrind.err" &
	vpid=$!
	wait_port "$port" || { echo "$0: pinhole did not start" >&2; exit 1; }
	timeout 600 "$LOADGEN" "$2" -o "$OPORT" -x "127.0.0.1:$port" \
	    -H 127.0.0.1 -c 10 -n "$3" -t 600 >"$d/loadgen.out" 2>&1
	grep -q 'errors=0' "$d/loadgen.out" ||
	    echo "$0: $1: $2: $(cat "$d/loadgen.out")" >&2
	kill -INT $vpid
	wait $vpid 2>/dev/null
	awk '/^summary:/ { print $2 }' "$d/cg.out"
}

# Instructions per unit for a build: (Ir(2N) - Ir(N)) / N.
per_unit() {
	one=$(count "$1" "$2" "$3" "${4:-}")
	two=$(count "$1" "$2" $(($3 * 2)) "${4:-}")
	echo $(((two - one) / $3))
}

COLB=other
[ -n "$UP" ] && COLB="upstream"
printf '%-34s %12s %12s %8s\n' "instructions per unit" "build" \
    "${B:+$COLB}" "${B:+ratio}"
for c in "CONNECT setup:connect-rate:$SETUPS" \
    "forward request:forward-rps:$REQUESTS"; do
	name=${c%%:*} rest=${c#*:}
	mode=${rest%%:*} n=${rest#*:}
	a=$(per_unit "$A" "$mode" "$n")
	if [ -n "$B" ]; then
		b=$(per_unit "$B" "$mode" "$n" "$UPOPT")
		printf '%-34s %12s %12s %8s\n' "$name" "$a" "$b" \
		    "$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f", a / b }')"
	else
		printf '%-34s %12s\n' "$name" "$a"
	fi
done
echo "build: $A${B:+
$COLB: $B${UP:+ through squid (--upstream)}}"
