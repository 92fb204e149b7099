#!/bin/sh
# Instructions pinhole's proxy spends per CONNECT setup and per forward
# request, counted by callgrind, for one build or two side by side.  CPU
# time on a shared machine varies by a fifth from run to run; instruction
# counts do not, so this is how to tell whether a change costs anything.
# Run by hand (see README.md):
#
#	tests/bench/instructions.sh BUILD_DIR [OTHER_BUILD_DIR]
#
# Each case runs twice, with N and 2N units (BENCH_IR_SETUPS, 3000;
# BENCH_IR_REQUESTS, 20000), so the fixed cost of start-up and exit
# drops out: per unit = (Ir(2N) - Ir(N)) / N.  BENCH_IR_OPTS and
# BENCH_IR_OPTS_OTHER add gateway options to BUILD_DIR's and
# OTHER_BUILD_DIR's runs (--log-budget 1000000,1G, to count the budget's
# accounting with every line still written).  Traffic stays on
# 127.0.0.1; every process started is stopped.
set -u
usage() {
	echo "usage: $0 BUILD_DIR [OTHER_BUILD_DIR]" >&2
	exit 2
}
[ $# -ge 1 ] && [ $# -le 2 ] || usage
command -v valgrind >/dev/null || { echo "$0: valgrind missing" >&2; exit 1; }
A=$(cd "$1" && pwd) || usage
B=
[ $# -eq 2 ] && { B=$(cd "$2" && pwd) || usage; }
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

# A free TCP port on 127.0.0.1.
free_port() {
	python3 "$(dirname "$0")/../free-port.py"
}

# Wait until something listens on 127.0.0.1:$1 (30 s at most).
wait_port() {
	i=0
	until python3 -c "import socket; socket.create_connection(('127.0.0.1', $1), 1)" 2>/dev/null; do
		i=$((i + 1))
		[ $i -lt 60 ] || return 1
		sleep 0.5
	done
}

OPORT=$(free_port)
"$ORIGIN" -p "$OPORT" -t 3600 >/dev/null 2>&1 &
PIDS="$PIDS $!"
wait_port "$OPORT" || { echo "$0: origin did not start" >&2; exit 1; }

# Instructions of one proxy run under callgrind: build, mode, units,
# options.
count() {
	d=$(mktemp -d "$T/run.XXXXXX")
	port=$(free_port)
	XDG_RUNTIME_DIR=$d HOME=$d valgrind --tool=callgrind \
	    --callgrind-out-file="$d/cg.out" "$1/pinhole" proxy \
	    --listen "127.0.0.1:$port" --allow "127.0.0.1:$OPORT" \
	    --allow 'allow-private 127.0.0.0/8' --log "$d/audit.log" $4 \
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
	one=$(count "$1" "$2" "$3" "$4")
	two=$(count "$1" "$2" $(($3 * 2)) "$4")
	echo $(((two - one) / $3))
}

printf '%-34s %12s %12s %8s\n' "instructions per unit" "build" \
    "${B:+other}" "${B:+ratio}"
for c in "CONNECT setup:connect-rate:$SETUPS" \
    "forward request:forward-rps:$REQUESTS"; do
	name=${c%%:*} rest=${c#*:}
	mode=${rest%%:*} n=${rest#*:}
	a=$(per_unit "$A" "$mode" "$n" "${BENCH_IR_OPTS:-}")
	if [ -n "$B" ]; then
		b=$(per_unit "$B" "$mode" "$n" "${BENCH_IR_OPTS_OTHER:-}")
		printf '%-34s %12s %12s %8s\n' "$name" "$a" "$b" \
		    "$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f", a / b }')"
	else
		printf '%-34s %12s\n' "$name" "$a"
	fi
done
echo "build: $A${B:+
other: $B}"
