#!/bin/sh
# Benchmark pinhole's proxy against a direct connection, a bare TCP relay
# (haproxy in TCP mode), squid and tinyproxy on loopback, and print one
# table.  Run by hand (see README.md):
#
#	tests/bench/run.sh BUILD_DIR
#
# It installs nothing: a server whose program is missing is skipped and the
# table says so.  Every server runs from a config written to a temp dir, on
# random 127.0.0.1 ports; system services are left alone.  Every process the
# script starts is stopped when it exits.
#
# Knobs (environment): BENCH_BYTES (bytes per throughput case, 1 GiB),
# BENCH_SECS (seconds per rate case, 5), BENCH_SETUPS (CONNECT setups per
# server, 20000), BENCH_REQUESTS (forward requests per server, 200000),
# BENCH_IDLE (idle tunnels, 2000), BENCH_SERVERS (which columns, in order;
# pinhole2 is BENCH_PINHOLE2, another build's pinhole), BENCH_TINYPROXY_LOGLEVEL
# (Connect), BENCH_REPEAT (runs per case, the best kept; 1); TMPDIR holds the
# configs and logs.  BENCH_CLIENTS (50) sets the clients of the setup and
# request cases; BENCH_RESULTS, a directory, receives the raw results
# (res/, lines) for tests/bench/report.py.  BENCH_CPUS ("0 1") pins
# loadgen, the origin and dnsmasq to the first CPU and every server to the
# second (taskset); "none" leaves them where the scheduler puts them.
set -u
PATH=$PATH:/usr/sbin:/sbin

usage() {
	echo "usage: $0 BUILD_DIR" >&2
	exit 2
}
[ $# -eq 1 ] || usage
BUILD=$(cd "$1" && pwd) || usage
LOADGEN=$BUILD/tests/bench/loadgen
ORIGIN=$BUILD/tests/bench/origin
PINHOLE=$BUILD/pinhole
PINHOLE2=${BENCH_PINHOLE2:-}
for p in "$LOADGEN" "$ORIGIN"; do
	[ -x "$p" ] || { echo "$0: $p missing: run 'make bench' in $BUILD" >&2; exit 1; }
done

BYTES=${BENCH_BYTES:-1073741824}
SECS=${BENCH_SECS:-5}
SETUPS=${BENCH_SETUPS:-20000}
REQUESTS=${BENCH_REQUESTS:-200000}
IDLE=${BENCH_IDLE:-2000}
SERVERS=${BENCH_SERVERS:-direct pinhole relay squid tinyproxy}
REPEAT=${BENCH_REPEAT:-1}
CLIENTS=${BENCH_CLIENTS:-50}
RESULTS=${BENCH_RESULTS:-}
CPUS=${BENCH_CPUS:-0 1}
# squid needs two descriptors per tunnel.
SQUID_FDS=16384
[ $((IDLE * 2 + 1000)) -gt $SQUID_FDS ] && SQUID_FDS=$((IDLE * 2 + 1000))
# tinyproxy logs each request at level Connect (and fsyncs every line).
TINYPROXY_LOGLEVEL=${BENCH_TINYPROXY_LOGLEVEL:-Connect}
BULK_SECS=30		# at most, per throughput case
HZ=$(getconf CLK_TCK)
HOST=bench.test

T=$(mktemp -d "${TMPDIR:-/tmp}/pinhole-bench.XXXXXX") || exit 1
chmod 755 "$T"
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
	PIDS=$(echo "$PIDS" | tr ' ' '\n' | grep -vx "$1" | tr '\n' ' ')
}

cleanup() {
	for p in $PIDS; do stop_pid "$p"; done
	[ -n "$RESULTS" ] && cp -r "$T/res" "$T/lines" "$RESULTS/" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

say() {
	echo "bench: $*" >&2
}

# Set LOADPIN and SERVERPIN, the taskset prefixes of the load side and of
# the servers, and PLACEMENT, the sentence that says where each runs.
pinning() {
	LOADPIN= SERVERPIN=
	PLACEMENT="unpinned (BENCH_CPUS=none)"
	[ "$CPUS" = none ] && return
	# shellcheck disable=SC2086
	set -- $CPUS
	if [ $# -ne 2 ] || ! command -v taskset >/dev/null ||
	    ! taskset -c "$1" true 2>/dev/null ||
	    ! taskset -c "$2" true 2>/dev/null; then
		PLACEMENT="unpinned (cannot pin to CPUs $CPUS here)"
		return
	fi
	LOADPIN="taskset -c $1" SERVERPIN="taskset -c $2"
	PLACEMENT="loadgen, origin and dnsmasq on CPU $1, every server on CPU $2 (taskset)"
}

# Run a command in the background; its pid is in $BGPID.
bg() {
	"$@" &
	BGPID=$!
	PIDS="$PIDS $BGPID"
}

# Print a TCP port on 127.0.0.1 that nothing uses (proto: t or u).
free_port() {
	i=0
	while [ $i -lt 100 ]; do
		p=$(shuf -i 20000-32000 -n 1)
		[ -z "$(ss -Hn"$1"a "sport = :$p")" ] && { echo "$p"; return 0; }
		i=$((i + 1))
	done
	return 1
}

# Wait until process $1 listens on 127.0.0.1:$2 (proto $3: t or u), 30 s.
wait_port() {
	i=0
	while [ $i -lt 300 ]; do
		kill -0 "$1" 2>/dev/null || return 1
		[ -n "$(ss -Hnl"$3" "sport = :$2")" ] && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

# Print the pids of process $1 and all its descendants.
tree_pids() {
	ps -e -o pid=,ppid= | awk -v root="$1" '
		{ parent[$1] = $2 }
		END {
			for (p in parent) {
				q = p
				for (n = 0; n < 64 && q != "" && q != root; n++)
					q = parent[q]
				if (q == root) print p
			}
		}'
}

# Print field $2 (VmRSS, VmHWM) summed over process tree $1, in KiB.
mem_kib() {
	sum=0
	for p in $(tree_pids "$1"); do
		v=$(awk -v f="$2:" '$1 == f { print $2 }' "/proc/$p/status" 2>/dev/null)
		sum=$((sum + ${v:-0}))
	done
	echo "$sum"
}

# Print the CPU time process tree $1 has used, in microseconds.  Per
# process, the larger of two lower bounds: its live threads' run time from
# schedstat (ns), and utime+stime+cutime+cstime from stat (clock ticks),
# which also holds threads that have ended (tinyproxy runs one per
# connection) and children it has reaped.
cpu_us() {
	sum=0
	for p in $(tree_pids "$1"); do
		v=$(cat "/proc/$p/stat" /proc/"$p"/task/*/schedstat 2>/dev/null |
		    awk -v hz="$HZ" '
			/\) / { sub(/^.*\) /, ""); tick = $12 + $13 + $14 + $15; next }
			{ ns += $1 }
			END {
				c = tick * 1000000 / hz
				if (ns / 1000 > c)
					c = ns / 1000
				printf "%.0f\n", c
			}')
		sum=$((sum + ${v:-0}))
	done
	echo "$sum"
}

# Print CPU microseconds $1 per $2 units over $3, in format $4; "-" when
# either is unknown.
per_unit() {
	awk -v c="$1" -v n="$2" -v d="$3" -v f="$4" 'BEGIN {
		if (c !~ /^[0-9]+$/ || n + 0 <= 0)
			print "-"
		else
			printf f "\n", c / (n / d)
	}'
}

# Record a result: res SERVER METRIC VALUE.
res() {
	echo "$3" >"$T/res/$1.$2"
}

# Print a key's value from a loadgen result line.
field() {
	echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"
}

# Start the origin; its port is in $OPORT.
start_origin() {
	bg $LOADPIN "$ORIGIN" -t 3600 >"$T/origin.out"
	i=0
	while [ $i -lt 50 ] && ! grep -q '^port ' "$T/origin.out"; do
		sleep 0.1
		i=$((i + 1))
	done
	OPORT=$(sed -n 's/^port //p' "$T/origin.out")
	OPID=$BGPID
	[ -n "$OPORT" ] || { say "origin did not start"; exit 1; }
}

# Write the hosts file that maps bench.test to loopback.
write_hosts() {
	printf '127.0.0.1\tlocalhost\n127.0.0.1\t%s\n' "$HOST" >"$T/hosts"
	chmod 644 "$T/hosts"
}

# Tell why pinhole program $1 cannot run here, or nothing if it can.
why_not_pinhole() {
	[ -x "$1" ] || { echo "no $1"; return; }
	"$1" help proxy >/dev/null 2>&1 ||
	    { echo "$1 has no proxy command"; return; }
	command -v dnsmasq >/dev/null ||
	    echo "dnsmasq missing (apt-get install dnsmasq-base)"
}

# Tell why a server cannot run here, or nothing if it can.
why_not() {
	case $1 in
	direct) ;;
	pinhole) why_not_pinhole "$PINHOLE" ;;
	pinhole2)
		[ -n "$PINHOLE2" ] || { echo "BENCH_PINHOLE2 not set"; return; }
		why_not_pinhole "$PINHOLE2" ;;
	relay)
		command -v haproxy >/dev/null ||
		    echo "haproxy missing (apt-get install haproxy)" ;;
	squid)
		command -v squid >/dev/null ||
		    echo "squid missing (apt-get install squid)" ;;
	tinyproxy)
		command -v tinyproxy >/dev/null ||
		    { echo "tinyproxy missing (apt-get install tinyproxy)"; return; }
		command -v unshare >/dev/null ||
		    echo "unshare missing (util-linux)" ;;
	esac
}

# Start dnsmasq answering bench.test with 127.0.0.1; port in $DNSPORT.
start_dnsmasq() {
	DNSPORT=$(free_port u)
	bg $LOADPIN dnsmasq -k -C /dev/null -p "$DNSPORT" --listen-address=127.0.0.1 \
	    --bind-interfaces --no-resolv --no-hosts --local-ttl=300 \
	    --pid-file="$T/dnsmasq.pid" --address=/$HOST/127.0.0.1 \
	    2>"$T/dnsmasq.err"
	wait_port "$BGPID" "$DNSPORT" u || { say "dnsmasq did not start"; return 1; }
}

# Start pinhole program $1's proxy on $2, its files in $T/$3, its metrics
# on $MPORT; pid in $SPID.
run_pinhole() {
	[ -n "${DNSPORT:-}" ] || start_dnsmasq || return 1
	mkdir -p "$T/$3"
	MPORT=$(free_port t) || return 1
	bg $SERVERPIN "$1" proxy --listen "127.0.0.1:$2" \
	    --allow "$HOST:$OPORT" --allow "allow-private 127.0.0.0/8" \
	    --log "$T/$3/audit.log" --resolver "127.0.0.1:$DNSPORT" \
	    --max-clients $((IDLE + 100)) --grace 1 \
	    --metrics "127.0.0.1:$MPORT" \
	    >>"$T/$3/stdout" 2>>"$T/$3/stderr"
	SPID=$BGPID
}

# Start this build's pinhole proxy on $1; its pid in $SPID.
start_pinhole() {
	run_pinhole "$PINHOLE" "$1" pinhole
}

# Start BENCH_PINHOLE2's proxy on $1; its pid in $SPID.
start_pinhole2() {
	run_pinhole "$PINHOLE2" "$1" pinhole2
}

# Write the relay's config for port $1 into $T/relay: haproxy in TCP mode,
# one thread like pinhole, no log, every connection to the origin.
relay_conf() {
	mkdir -p "$T/relay"
	cat >"$T/relay/haproxy.cfg" <<EOF
global
	maxconn $((IDLE + 100))
	nbthread 1
defaults
	mode tcp
	timeout connect 10s
	timeout client 600s
	timeout server 600s
frontend relay
	bind 127.0.0.1:$1
	default_backend origin
backend origin
	server origin 127.0.0.1:$OPORT
EOF
}

# Start the relay on $1; its pid in $SPID.
start_relay() {
	relay_conf "$1"
	bg $SERVERPIN haproxy -db -f "$T/relay/haproxy.cfg" \
	    >>"$T/relay/stderr" 2>&1
	SPID=$BGPID
}

# Write squid's config for port $1 into $T/squid.
squid_conf() {
	mkdir -p "$T/squid"
	cat >"$T/squid/squid.conf" <<EOF
http_port 127.0.0.1:$1
acl ok dstdomain .$HOST
acl okport port $OPORT
http_access allow ok okport
http_access deny all
cache deny all
access_log stdio:$T/squid/access.log
cache_log $T/squid/cache.log
pid_filename $T/squid/squid.pid
coredump_dir $T/squid
hosts_file $T/hosts
dns_nameservers 127.0.0.1
pinger_enable off
max_filedescriptors $SQUID_FDS
logfile_rotate 0
shutdown_lifetime 1 seconds
cache_effective_user proxy
EOF
	chown -R proxy "$T/squid" 2>/dev/null
}

# Start squid on $1; its pid in $SPID.
start_squid() {
	squid_conf "$1"
	bg $SERVERPIN squid -N -f "$T/squid/squid.conf" >>"$T/squid/stderr" 2>&1
	SPID=$BGPID
}

# Write tinyproxy's config for port $1 into $T/tinyproxy.
tinyproxy_conf() {
	mkdir -p "$T/tinyproxy"
	printf '^%s$\n' "$(echo "$HOST" | sed 's/\./\\./g')" \
	    >"$T/tinyproxy/filter"
	cat >"$T/tinyproxy/tinyproxy.conf" <<EOF
User nobody
Group nogroup
Port $1
Listen 127.0.0.1
Timeout 600
LogFile "$T/tinyproxy/tinyproxy.log"
LogLevel $TINYPROXY_LOGLEVEL
MaxClients $((IDLE + 100))
Filter "$T/tinyproxy/filter"
FilterURLs Off
FilterDefaultDeny Yes
ConnectPort $OPORT
EOF
	chmod -R a+rX "$T/tinyproxy"
	chown -R nobody "$T/tinyproxy" 2>/dev/null
}

# Start tinyproxy on $1, seeing $T/hosts as /etc/hosts; pid in $SPID.
start_tinyproxy() {
	tinyproxy_conf "$1"
	bg $SERVERPIN unshare -m sh -c 'mount --bind "$1" /etc/hosts && exec tinyproxy -d -c "$2"' \
	    sh "$T/hosts" "$T/tinyproxy/tinyproxy.conf" \
	    >>"$T/tinyproxy/stderr" 2>&1
	SPID=$BGPID
}

# Start server $1 on a fresh port; sets $SPID and $PROXY.  Fails if it
# does not listen within 30 s.
start_server() {
	port=$(free_port t) || return 1
	"start_$1" "$port" || return 1
	PROXY=127.0.0.1:$port
	wait_port "$SPID" "$port" t || { say "$1 did not start"; stop_pid "$SPID"; return 1; }
}

# Print the CPU microseconds server $SPID has used; nothing for direct.
server_cpu() {
	if [ -n "$SPID" ]; then cpu_us "$SPID"; fi
}

# Print loadgen's option that sends it through server $1: -r for the
# relay (no CONNECT, origin-form requests), -x for a proxy.
via() {
	case $1 in
	relay) echo -r ;;
	*) echo -x ;;
	esac
}

# Run loadgen for server $1 (proxy $2 or empty) $REPEAT times and keep
# in $line the run with the largest value of key $3; $flag marks errors.
# The server's CPU microseconds in that run are in $scpu ("" for direct),
# loadgen's and the origin's together in $ecpu.
run_lg() {
	srv=$1 px=$2 key=$3
	shift 3
	if [ -n "$px" ]; then set -- "$@" "$(via "$srv")" "$px"; fi
	line= best=-1 r=0 scpu= ecpu=
	while [ $r -lt "$REPEAT" ]; do
		s0=$(server_cpu) o0=$(cpu_us "$OPID")
		one=$(timeout 60 $LOADPIN "$LOADGEN" "$@" -o "$OPORT" \
		    2>>"$T/loadgen.err")
		s1=$(server_cpu) o1=$(cpu_us "$OPID")
		s=${s0:+$((s1 - s0))} l=$(field "$one" cpu_us)
		e=${l:+$((l + o1 - o0))}
		echo "$srv: $one server_cpu_us=${s:--} origin_cpu_us=$((o1 - o0))" >>"$T/lines"
		v=$(field "$one" "$key")
		if [ -n "$v" ] && awk -v a="$v" -v b="$best" 'BEGIN { exit !(a > b) }'; then
			line=$one best=$v scpu=$s ecpu=$e
		fi
		r=$((r + 1))
	done
	flag=
	[ "$(field "$line" errors)" = 0 ] || flag="!"
	[ "$(field "$line" complete)" != 0 ] || flag="!"
	[ -n "$line" ] || flag="!"
}

# Record metric $2's CPU per unit for server $1: $3 units over $4, in
# format $5 ($scpu and $ecpu from run_lg).
res_cpu() {
	res "$1" "$2cpu" "$(per_unit "$scpu" "$3" "$4" "$5")$flag"
	res "$1" "$2eo" "$(per_unit "$ecpu" "$3" "$4" "$5")$flag"
}

# Measure CONNECT setups with $3 clients for server $1; record them as
# metric $4.
measure_setups() {
	run_lg "$1" "$2" rate connect-rate -c "$3" -n "$SETUPS" -t "$SECS"
	res "$1" "$4" "$(field "$line" rate)$flag"
	res "$1" "${4}50" "$(field "$line" p50_ms)"
	res "$1" "${4}99" "$(field "$line" p99_ms)"
	res "$1" "${4}us" "$(awk -v ms="$(field "$line" p50_ms)" \
	    'BEGIN { if (ms != "") printf "%.0f\n", ms * 1000; else print "-" }')"
	res_cpu "$1" "$4" "$(field "$line" "done")" 1 %.1f
}

# Record pinhole's resolver cache lookups so far, from its metrics: hits,
# misses and hits/(hits+misses); "-" where the counters are absent.
measure_cache() {
	curl -s -m 5 "http://127.0.0.1:$MPORT/metrics" >"$T/metrics" 2>/dev/null
	for r in hit miss; do
		awk -v r="$r" '$1 == "pinhole_resolver_cache_lookups_total{result=\"" r "\"}" {
			print $2; f = 1 } END { if (!f) print "-" }' "$T/metrics" \
		    >"$T/res/$1.cache$r"
	done
	awk 'NR == 1 { h = $1 } NR == 2 { m = $1 }
	    END { if (h ~ /^[0-9]+$/ && m ~ /^[0-9]+$/ && h + m > 0)
		printf "%.4f\n", h / (h + m); else print "-" }' \
	    "$T/res/$1.cachehit" "$T/res/$1.cachemiss" >"$T/res/$1.cache"
}

# Measure throughput, setup rate and request rate for server $1.
measure_load() {
	srv=$1 px=$2
	for n in 1 16; do
		run_lg "$srv" "$px" MiBps tunnel-bulk -c "$n" -b "$BYTES" \
		    -t "$BULK_SECS"
		res "$srv" "bulk$n" "$(field "$line" MiBps)$flag"
		res_cpu "$srv" "bulk$n" "$(field "$line" bytes)" 1048576 %.0f
	done
	measure_setups "$srv" "$px" 1 one
	if [ "$CLIENTS" -eq 1 ]; then
		for m in "" 50 99 us cpu eo; do
			cp "$T/res/$srv.one$m" "$T/res/$srv.rate$m"
		done
	else
		measure_setups "$srv" "$px" "$CLIENTS" rate
	fi
	case $srv in pinhole*) measure_cache "$srv" ;; esac
	run_lg "$srv" "$px" rate forward-rps -c "$CLIENTS" -n "$REQUESTS" -t "$SECS"
	res "$srv" rps "$(field "$line" rate)$flag"
	res "$srv" rps50 "$(field "$line" p50_ms)"
	res "$srv" rps99 "$(field "$line" p99_ms)"
	res_cpu "$srv" rps "$(field "$line" "done")" 1 %.1f
}

# Open $IDLE tunnels through server $1 and record the memory it holds.
measure_idle() {
	srv=$1 px=$2
	res "$srv" rss0 "$(($(mem_kib "$SPID" VmRSS) / 1024))"
	res "$srv" rss0kib "$(mem_kib "$SPID" VmRSS)"
	bg $LOADPIN "$LOADGEN" idle-tunnels -n "$IDLE" -c 100 -t 60 -w 120 \
	    "$(via "$srv")" "$px" -o "$OPORT" >"$T/idle.out" 2>>"$T/loadgen.err"
	lg=$BGPID
	i=0
	while [ $i -lt 700 ] && [ ! -s "$T/idle.out" ] && kill -0 "$lg" 2>/dev/null; do
		sleep 0.1
		i=$((i + 1))
	done
	sleep 1
	line=$(cat "$T/idle.out")
	echo "$srv: $line" >>"$T/lines"
	open=$(field "$line" open)
	flag=
	[ "${open:-0}" = "$IDLE" ] || flag="!(${open:-0} open)"
	res "$srv" rss "$(($(mem_kib "$SPID" VmRSS) / 1024))$flag"
	rss1=$(mem_kib "$SPID" VmRSS)
	res "$srv" rsskib "$rss1$flag"
	res "$srv" tunnelb "$(((rss1 - $(cat "$T/res/$srv.rss0kib")) * 1024 / IDLE))$flag"
	stop_pid "$lg"
}

# Run every measurement against server $1.
bench_server() {
	srv=$1
	if [ "$srv" = direct ]; then
		SPID=
		measure_load direct ""
		return
	fi
	start_server "$srv" || { res "$srv" skip "did not start"; return; }
	measure_load "$srv" "$PROXY"
	hwm=$(mem_kib "$SPID" VmHWM)
	stop_pid "$SPID"
	# A fresh instance, so the idle figure is not the load's leftovers.
	start_server "$srv" || { res "$srv" skip "did not restart"; return; }
	measure_idle "$srv" "$PROXY"
	hwm2=$(mem_kib "$SPID" VmHWM)
	[ "$hwm2" -gt "$hwm" ] && hwm=$hwm2
	res "$srv" hwm "$((hwm / 1024))"
	stop_pid "$SPID"
}

pinning
echo "$PLACEMENT" >"$T/res/placement"
start_origin
write_hosts
for srv in $SERVERS; do
	why=$(why_not "$srv")
	if [ -n "$why" ]; then
		say "skipping $srv: $why"
		res "$srv" skip "$why"
		continue
	fi
	say "measuring $srv"
	bench_server "$srv"
done
[ -s "$T/lines" ] && sed 's/^/bench: /' "$T/lines" >&2
[ -s "$T/loadgen.err" ] && tail -20 "$T/loadgen.err" | sed 's/^/bench: loadgen: /' >&2

# Print which pinhole programs the columns ran and whether with sanitizers.
builds() {
	sep=
	for srv in $SERVERS; do
		case $srv in
		pinhole) p=$PINHOLE ;;
		pinhole2) p=$PINHOLE2 ;;
		*) continue ;;
		esac
		[ -n "$p" ] || continue
		asan=no
		[ -x "$p" ] && grep -q -a __asan_init "$p" && asan=yes
		printf '%s%s: %s, sanitizers: %s' "$sep" "$srv" "$p" "$asan"
		sep="; "
	done
}

ENV="$(nproc) CPUs, $(uname -sr), load $(cut -d' ' -f1-3 /proc/loadavg)"
ENV="$ENV; best of $REPEAT; logs on $(findmnt -n -o FSTYPE -T "$T")"
TABLE=$(dirname "$0")/table.awk
awk -v dir="$T/res" -v servers="$SERVERS" -v env="$ENV" \
    -v builds="$(builds)" -v bytes="$BYTES" -v idle="$IDLE" \
    -v clients="$CLIENTS" -v placement="$PLACEMENT" -f "$TABLE"
