#!/bin/sh
# The cost of going through an upstream proxy: loadgen through squid
# alone, through pinhole with squid as its upstream (--upstream), and
# through pinhole alone, side by side: CONNECT setups and forward
# requests a second, and each process's CPU per unit.  Run by hand, as
# root (squid drops to proxy), on a build without sanitizers (see
# README.md):
#
#	tests/bench/upstream.sh BUILD_DIR
#
# Knobs: BENCH_SECS (5), BENCH_SETUPS (20000), BENCH_REQUESTS (100000),
# BENCH_CLIENTS (50), BENCH_REPEAT (3 rounds, the columns taking turns;
# the median of each figure).  Traffic stays on 127.0.0.1; every
# process started is stopped.
set -u
PATH=$PATH:/usr/sbin:/sbin
[ $# -eq 1 ] || { echo "usage: $0 BUILD_DIR" >&2; exit 2; }
BUILD=$(cd "$1" && pwd) || exit 2
LOADGEN=$BUILD/tests/bench/loadgen
ORIGIN=$BUILD/tests/bench/origin
PINHOLE=$BUILD/pinhole
for p in "$LOADGEN" "$ORIGIN" "$PINHOLE"; do
	[ -x "$p" ] || { echo "$0: $p missing: make bench-programs" >&2; exit 1; }
done
command -v squid >/dev/null || { echo "$0: squid missing" >&2; exit 1; }
SECS=${BENCH_SECS:-5}
SETUPS=${BENCH_SETUPS:-20000}
REQUESTS=${BENCH_REQUESTS:-100000}
CLIENTS=${BENCH_CLIENTS:-50}
REPEAT=${BENCH_REPEAT:-3}
COLS="squid pinhole-squid pinhole"
T=$(mktemp -d "${TMPDIR:-/tmp}/pinhole-upbench.XXXXXX") || exit 1
chmod 755 "$T"
PIDS=
trap 'for p in $PIDS; do kill $p 2>/dev/null; done; sleep 1; rm -rf "$T"' EXIT
trap 'exit 1' INT TERM HUP PIPE

# free_port, wait_port.
. "$(dirname "$0")/ports.sh"

# Nanoseconds of CPU process $1's threads have used.
cpu_ns() {
	cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { printf "%.0f\n", s }'
}

# A field of a loadgen line.
field() {
	echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"
}

OPORT=$(free_port)
"$ORIGIN" -p "$OPORT" -t 3600 >/dev/null 2>&1 &
OPID=$!
PIDS="$PIDS $OPID"

# squid: an allowlist of the origin, no cache, a log of each request.
SQP=$(free_port)
mkdir "$T/squid"
cat >"$T/squid/squid.conf" <<EOF
http_port 127.0.0.1:$SQP
acl ok dst 127.0.0.1/32
acl okport port $OPORT
http_access allow ok okport
http_access deny all
cache deny all
access_log stdio:$T/squid/access.log
cache_log $T/squid/cache.log
pid_filename $T/squid/squid.pid
coredump_dir $T/squid
pinger_enable off
max_filedescriptors 16384
logfile_rotate 0
shutdown_lifetime 1 seconds
cache_effective_user proxy
EOF
chown -R proxy "$T/squid"
squid -N -f "$T/squid/squid.conf" >"$T/squid/stderr" 2>&1 &
SQPID=$!
PIDS="$PIDS $SQPID"

# pinhole, alone and with squid as its upstream.
start_pinhole() {
	name=$1
	shift
	port=$(free_port)
	mkdir -p "$T/$name"
	XDG_RUNTIME_DIR=$T/$name HOME=$T/$name "$PINHOLE" proxy \
	    --listen "127.0.0.1:$port" --allow "127.0.0.1:$OPORT" \
	    --allow 'allow-private 127.0.0.0/8' --log "$T/$name/audit.log" \
	    --resolver 127.0.0.1:9 --max-clients 1000 "$@" \
	    >"$T/$name/stderr" 2>&1 &
	echo "$! $port"
}
set -- $(start_pinhole direct)
PH_PID=$1 PH_PORT=$2
set -- $(start_pinhole up --upstream "http://127.0.0.1:$SQP")
PU_PID=$1 PU_PORT=$2
PIDS="$PIDS $PH_PID $PU_PID"	# started in the subshells above
for p in "origin:$OPORT" "squid:$SQP" "pinhole:$PH_PORT" \
    "pinhole-squid:$PU_PORT"; do
	wait_port "${p#*:}" || { echo "$0: ${p%:*} did not start" >&2;
	    cat "$T"/squid/cache.log "$T"/*/stderr >&2; exit 1; }
done

# One run of loadgen mode $2 for column $1: its line, with the CPU each
# process used, in $T/runs/COLUMN.MODE (one line a run).
run() {
	col=$1 mode=$2 n=$3
	case $col in
	squid) px=$SQP pp= ;;
	pinhole-squid) px=$PU_PORT pp=$PU_PID ;;
	pinhole) px=$PH_PORT pp=$PH_PID ;;
	esac
	p0=0 p1=-1000000000000
	[ -n "$pp" ] && p0=$(cpu_ns "$pp")
	s0=$(cpu_ns "$SQPID") o0=$(cpu_ns "$OPID")
	line=$(timeout 120 "$LOADGEN" "$mode" -o "$OPORT" -H 127.0.0.1 \
	    -x "127.0.0.1:$px" -c "$CLIENTS" -n "$n" -t "$SECS" 2>>"$T/lg.err")
	[ -n "$pp" ] && p1=$(cpu_ns "$pp")
	s1=$(cpu_ns "$SQPID") o1=$(cpu_ns "$OPID")
	done=$(field "$line" done)
	echo "$col $mode: $line" >&2
	[ "$col" = pinhole ] && s1=-1000000000000 s0=0
	# A process the column does not use is "-".
	awk -v d="${done:-0}" -v r="$(field "$line" rate)" \
	    -v p50="$(field "$line" p50_ms)" -v e="$(field "$line" errors)" \
	    -v ph=$((p1 - p0)) -v sq=$((s1 - s0)) \
	    -v eo="$(( $(field "$line" cpu_us) * 1000 + o1 - o0 ))" '
	function us(ns) { return ns < 0 ? "-" : sprintf("%.1f", ns / d / 1000) }
	BEGIN {
		if (d <= 0) { print "- - - - - - -"; exit }
		both = (ph < 0 ? 0 : ph) + (sq < 0 ? 0 : sq)
		printf "%s %s %s %s %s %s %s\n", r, p50, us(ph), us(sq),
		    us(both), us(eo), e
	}' >>"$T/runs/$col.$mode"
}

mkdir "$T/runs"
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
r=0
while [ $r -lt "$REPEAT" ]; do
	for col in $COLS; do
		run "$col" connect-rate "$SETUPS"
		run "$col" forward-rps "$REQUESTS"
	done
	r=$((r + 1))
done
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)

# The median of field $3 of column $1's runs of mode $2.
median() {
	awk -v f="$3" '{ print $f }' "$T/runs/$1.$2" | sort -n |
	    awk '{ v[NR] = $1 } END { print NR ? v[int((NR + 1) / 2)] : "-" }'
}

asan=no
grep -q -a __asan_init "$PINHOLE" && asan=yes
echo "$(nproc) CPUs, $(uname -sr); load average $LOAD0 before, $LOAD1 after;"
echo "median of $REPEAT rounds; $CLIENTS clients; pinhole $PINHOLE (sanitizers: $asan)"
printf '%-34s %12s %14s %12s\n' "" squid "pinhole->squid" pinhole
for m in "CONNECT setups:connect-rate" "forward requests:forward-rps"; do
	name=${m%%:*} mode=${m#*:}
	for row in "1:$name/s" "2:$name p50 ms" "3:pinhole CPU us each" \
	    "4:squid CPU us each" "5:pinhole+squid CPU us each" \
	    "6:loadgen+origin CPU us each" "7:loadgen errors"; do
		f=${row%%:*} label=${row#*:}
		printf '%-34s %12s %14s %12s\n' "$label" \
		    "$(median squid "$mode" "$f")" \
		    "$(median pinhole-squid "$mode" "$f")" \
		    "$(median pinhole "$mode" "$f")"
	done
done
