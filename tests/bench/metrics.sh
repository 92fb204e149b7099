#!/bin/sh
# The cost of a scrape of --metrics: curl's time_total, median of 20,
# with no tunnel open and with BENCH_IDLE (10000) idle tunnels held
# through the proxy by loadgen.  By hand, never by make check:
#   PINHOLE=build/pinhole BUILD=build sh tests/bench/metrics.sh
# All on 127.0.0.1; every process started here is stopped at exit.
set -u
: "${PINHOLE:?PINHOLE must name the built program}"
BUILD=${BUILD:-$(dirname "$PINHOLE")}
IDLE=${BENCH_IDLE:-10000}
T=$(mktemp -d /tmp/pinhole-bench.XXXXXX)
PIDS=
trap 'for p in $PIDS; do kill $p 2>/dev/null; done; wait; rm -rf "$T"' EXIT
# The proxy holds two descriptors a tunnel.
ulimit -n $((IDLE * 2 + 1000)) 2>/dev/null || ulimit -n "$(ulimit -Hn)"
[ "$(ulimit -n)" -ge $((IDLE * 2 + 100)) ] ||
    { echo "ulimit -n $(ulimit -n) is too low for $IDLE tunnels" >&2; exit 1; }

port() {
	python3 "$(dirname "$0")/../free-port.py"
}
wait_for() {	# command..., at most 180 s
	i=0
	until "$@"; do
		[ $i -lt 1800 ] || return 1
		sleep 0.1
		i=$((i + 1))
	done
}
value() {
	curl -s --max-time 5 "http://127.0.0.1:$M/metrics" |
	    awk -v s="$1" '$1 == s { print $2 }'
}
# Median of 20 scrapes' time_total, in ms.
median() {
	for i in $(seq 20); do
		curl -s -o /dev/null -w '%{time_total}\n' --max-time 5 \
		    "http://127.0.0.1:$M/metrics"
	done | sort -n | awk '{ t[NR] = $1 } END {
	    printf "%.3f", (t[10] + t[11]) / 2 * 1000 }'
}

"$BUILD/tests/bench/origin" -t 900 >"$T/origin.out" &
PIDS="$PIDS $!"
wait_for grep -q '^port ' "$T/origin.out"
OPORT=$(sed -n 's/^port //p' "$T/origin.out")
P=$(port) M=$(port)
"$PINHOLE" proxy --listen "127.0.0.1:$P" --metrics "127.0.0.1:$M" \
    --allow "127.0.0.1:$OPORT" --allow "allow-private 127.0.0.0/8" \
    --log "$T/audit.log" --max-clients $((IDLE + 100)) --grace 1 \
    2>"$T/pinhole.err" &
PIDS="$PIDS $!"
wait_for curl -sf -o /dev/null "http://127.0.0.1:$M/metrics"
echo "scrape, 0 tunnels: median $(median) ms of 20"
"$BUILD/tests/bench/loadgen" idle-tunnels -n "$IDLE" -c 100 -t 300 -w 300 \
    -x "127.0.0.1:$P" -H 127.0.0.1 -o "$OPORT" >"$T/idle.out" 2>"$T/loadgen.err" &
PIDS="$PIDS $!"
all_open() {
	[ "$(value pinhole_tunnels)" = "$IDLE" ]
}
wait_for all_open ||
    { echo "only $(value pinhole_tunnels) tunnels open" >&2; exit 1; }
echo "scrape, $(value pinhole_tunnels) tunnels: median $(median) ms of 20"
echo "scrape size: $(curl -s "http://127.0.0.1:$M/metrics" | wc -c) bytes"
