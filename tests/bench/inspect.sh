#!/bin/sh
# Benchmark TLS inspection: pinhole's (an allow rule with constraints)
# against a direct connection, squid with ssl_bump and mitmproxy, on one
# TLS origin on loopback, and print one table.  Run by hand as root (see
# README.md), never by make check:
#
#	tests/bench/inspect.sh BUILD_DIR
#
# It installs nothing: a server whose program is missing is skipped and
# the table says so.  Every key and certificate is made here with openssl
# into a temp dir; every server runs from a config written there, on
# random 127.0.0.1 ports; the machine's /etc/hosts and services are left
# alone.  Every process the script starts is stopped when it exits.
#
# Knobs (environment): BENCH_SECS (time limit per load case, 10, at most
# 30), BENCH_CONNS (new connections per case, at most; 20000), BENCH_CONC
# (concurrent new connections, 16), BENCH_REQUESTS (keep-alive requests
# per case, at most; 200000), BENCH_KEEP (keep-alive connections, 16),
# BENCH_IDLE (idle inspected connections, 500), BENCH_SERVERS (columns,
# in order), BENCH_PINHOLE (the pinhole program; BUILD_DIR/pinhole),
# BENCH_REPEAT (rounds; the best rate, the least CPU and
# memory kept; 1), BENCH_MITM_CA (ecdsa: mitmproxy gets a P-256 CA like
# the others; own: it makes its own, RSA 2048), BENCH_PERF (a directory:
# perf record -g each proxy during the new-connection case;
# BENCH_PERF_CALLGRAPH=dwarf unwinds libraries built without frame
# pointers), BENCH_KEEP_TMP
# (set: keep the temp dir and print its path); TMPDIR holds everything.
set -u
PATH=$PATH:/usr/sbin:/sbin

usage() {
	echo "usage: $0 BUILD_DIR" >&2
	exit 2
}
[ $# -eq 1 ] || usage
BUILD=$(cd "$1" && pwd) || usage
TLSLOAD=$BUILD/tests/bench/tlsload
TLSORIGIN=$BUILD/tests/bench/tlsorigin
PINHOLE=${BENCH_PINHOLE:-$BUILD/pinhole}
for p in "$TLSLOAD" "$TLSORIGIN"; do
	[ -x "$p" ] || { echo "$0: $p missing: run 'make bench-programs' in $BUILD" >&2; exit 1; }
done
command -v openssl >/dev/null || { echo "$0: openssl missing" >&2; exit 1; }

SECS=${BENCH_SECS:-10}
[ "$SECS" -gt 30 ] 2>/dev/null && SECS=30
CONNS=${BENCH_CONNS:-20000}
CONC=${BENCH_CONC:-16}
REQUESTS=${BENCH_REQUESTS:-200000}
KEEP=${BENCH_KEEP:-16}
IDLE=${BENCH_IDLE:-500}
SERVERS=${BENCH_SERVERS:-direct pinhole squid mitmproxy}
REPEAT=${BENCH_REPEAT:-1}
MITM_CA=${BENCH_MITM_CA:-ecdsa}
PERF=${BENCH_PERF:-}
HZ=$(getconf CLK_TCK)
HOST=bench.test
CERTGEN=/usr/lib/squid/security_file_certgen

T=$(mktemp -d "${TMPDIR:-/tmp}/pinhole-inspect.XXXXXX") || exit 1
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
	if [ -n "${BENCH_KEEP_TMP:-}" ]; then
		echo "bench: kept $T" >&2
	else
		rm -rf "$T"
	fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

say() {
	echo "bench: $*" >&2
}

# Run a command in the background; its pid is in $BGPID.
bg() {
	"$@" &
	BGPID=$!
	PIDS="$PIDS $BGPID"
}

# Print a port on 127.0.0.1 that nothing uses (proto: t or u).
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

# Print VmRSS summed over process tree $1, in KiB.
rss_kib() {
	sum=0
	for p in $(tree_pids "$1"); do
		v=$(awk '$1 == "VmRSS:" { print $2 }' "/proc/$p/status" 2>/dev/null)
		sum=$((sum + ${v:-0}))
	done
	echo "$sum"
}

# Print the CPU time process tree $1 has used, in microseconds: per
# process the larger of its live threads' schedstat run time and
# utime+stime+cutime+cstime (which holds reaped children: squid's
# helpers that ended, mitmproxy's threads that ended).
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

# Print $1 / $2 in format $3; "-" when either is unknown or $2 is 0.
div() {
	awk -v a="$1" -v b="$2" -v f="$3" 'BEGIN {
		if (a !~ /^[0-9.]+$/ || b !~ /^[0-9.]+$/ || b + 0 <= 0)
			print "-"
		else
			printf f "\n", a / b
	}'
}

# Print a key's value from a key=value line.
field() {
	echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"
}

# Keep a result: res SERVER METRIC VALUE.
res() {
	echo "$3" >"$T/res/$1.$2"
}

# Keep a result unless a kept one is better: resk SERVER METRIC VALUE
# max|min.  "!" after a value marks errors; an unmarked one wins.
resk() {
	f=$T/res/$1.$2
	if [ -s "$f" ]; then
		old=$(cat "$f")
		awk -v o="$old" -v n="$3" -v how="$4" 'BEGIN {
			eo = o ~ /!/; en = n ~ /!/
			sub(/!.*/, "", o); sub(/!.*/, "", n)
			if (n !~ /^[0-9.]+$/) exit 1
			if (o !~ /^[0-9.]+$/ || (eo && !en)) exit 0
			if (en && !eo) exit 1
			exit !(how == "max" ? n + 0 > o + 0 : n + 0 < o + 0)
		}' || return 0
	fi
	echo "$3" >"$f"
}

# Make the keys and certificates: the test CA and the origin's leaf for
# bench.test (what the origin and the proxies' upstream side trust), and
# one CA per proxy for squid and mitmproxy; all ECDSA P-256, like
# pinhole's own CA and leaves.
make_pki() {
	d=$T/pki
	mkdir -p "$d"
	ec="-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes"
	for ca in test squid mitm; do
		# shellcheck disable=SC2086
		openssl req -x509 -new $ec -keyout "$d/$ca-ca.key" \
		    -out "$d/$ca-ca.pem" -days 2 -subj "/O=pinhole bench/CN=$ca CA" \
		    -addext "basicConstraints=critical,CA:TRUE" \
		    -addext "keyUsage=critical,keyCertSign,cRLSign" \
		    2>>"$T/openssl.err" || return 1
	done
	# shellcheck disable=SC2086
	openssl req -new $ec -keyout "$d/origin.key" -out "$d/origin.csr" \
	    -subj "/CN=$HOST" 2>>"$T/openssl.err" || return 1
	printf 'subjectAltName=DNS:%s\nbasicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n' \
	    "$HOST" >"$d/origin.ext"
	openssl x509 -req -in "$d/origin.csr" -CA "$d/test-ca.pem" \
	    -CAkey "$d/test-ca.key" -CAcreateserial -days 2 \
	    -extfile "$d/origin.ext" -out "$d/origin.pem" \
	    2>>"$T/openssl.err" || return 1
	chmod -R a+rX "$d"
	TESTCA=$d/test-ca.pem
}

# Start the TLS origin; its port in $OPORT, its pid in $OPID.
start_origin() {
	bg "$TLSORIGIN" -C "$T/pki/origin.pem" -K "$T/pki/origin.key" \
	    -t 3600 >"$T/origin.out"
	OPID=$BGPID
	i=0
	while [ $i -lt 50 ] && ! grep -q '^port ' "$T/origin.out"; do
		sleep 0.1
		i=$((i + 1))
	done
	OPORT=$(sed -n 's/^port //p' "$T/origin.out")
	[ -n "$OPORT" ] || { say "origin did not start"; exit 1; }
}

# Print the origin's counts now (handshakes= resumed= failed= requests=).
origin_counts() {
	n=$(grep -c '^handshakes=' "$T/origin.out")
	kill -USR1 "$OPID"
	i=0
	while [ $i -lt 50 ] &&
	    [ "$(grep -c '^handshakes=' "$T/origin.out")" -le "$n" ]; do
		sleep 0.05
		i=$((i + 1))
	done
	grep '^handshakes=' "$T/origin.out" | tail -1
}

# Write the hosts file that maps bench.test to loopback.
write_hosts() {
	printf '127.0.0.1\tlocalhost\n127.0.0.1\t%s\n' "$HOST" >"$T/hosts"
	chmod 644 "$T/hosts"
}

# Tell why a server cannot run here, or nothing if it can.
why_not() {
	case $1 in
	direct) ;;
	pinhole)
		[ -x "$PINHOLE" ] || { echo "no $PINHOLE"; return; }
		command -v dnsmasq >/dev/null ||
		    echo "dnsmasq missing (apt-get install dnsmasq-base)" ;;
	squid)
		command -v squid >/dev/null ||
		    { echo "squid missing (apt-get install squid-openssl)"; return; }
		squid -v | grep -q -- '--with-openssl' ||
		    { echo "this squid has no TLS (apt-get install squid-openssl)"; return; }
		[ -x "$CERTGEN" ] || echo "no $CERTGEN" ;;
	mitmproxy)
		command -v mitmdump >/dev/null ||
		    { echo "mitmdump missing (apt-get install mitmproxy)"; return; }
		command -v unshare >/dev/null ||
		    echo "unshare missing (util-linux)" ;;
	*) echo "unknown server" ;;
	esac
}

# Start dnsmasq answering bench.test with 127.0.0.1; port in $DNSPORT.
start_dnsmasq() {
	DNSPORT=$(free_port u)
	bg dnsmasq -k -C /dev/null -p "$DNSPORT" --listen-address=127.0.0.1 \
	    --bind-interfaces --no-resolv --no-hosts --local-ttl=300 \
	    --pid-file="$T/dnsmasq.pid" --address=/$HOST/127.0.0.1 \
	    2>"$T/dnsmasq.err"
	wait_port "$BGPID" "$DNSPORT" u || { say "dnsmasq did not start"; return 1; }
}

# Start pinhole's proxy on $1, inspecting bench.test (read-only); pid in
# $SPID, the CA its clients must trust in $CAFILE.
start_pinhole() {
	[ -n "${DNSPORT:-}" ] || start_dnsmasq || return 1
	d=$T/pinhole
	mkdir -p "$d/run"
	chmod 700 "$d/run"
	printf 'allow %s:* read-only\nallow-private 127.0.0.0/8\n' "$HOST" \
	    >"$d/policy"
	: >"$d/stderr"
	bg env XDG_RUNTIME_DIR="$d/run" SSL_CERT_FILE="$TESTCA" \
	    "$PINHOLE" proxy --listen "127.0.0.1:$1" --policy "$d/policy" \
	    --log "$d/audit.log" --resolver "127.0.0.1:$DNSPORT" \
	    --max-clients $((IDLE + CONC + KEEP + 100)) --grace 1 \
	    >>"$d/stdout" 2>>"$d/stderr"
	SPID=$BGPID
	i=0
	while [ $i -lt 100 ] &&
	    ! grep -q '^pinhole: CA certificate: ' "$d/stderr"; do
		sleep 0.1
		i=$((i + 1))
	done
	CAFILE=$(sed -n 's/^pinhole: CA certificate: //p' "$d/stderr" | tail -1)
	[ -n "$CAFILE" ] && [ -s "$CAFILE" ] ||
	    { say "pinhole printed no CA certificate"; return 1; }
}

# Write squid's config for port $1 into $T/squid: bump every CONNECT to
# bench.test, allow only reads there, verify upstream against the test CA.
squid_conf() {
	d=$T/squid
	mkdir -p "$d"
	cat "$T/pki/squid-ca.pem" "$T/pki/squid-ca.key" >"$d/ca.pem"
	cat >"$d/squid.conf" <<EOF
http_port 127.0.0.1:$1 ssl-bump generate-host-certificates=on dynamic_cert_mem_cache_size=4MB tls-cert=$d/ca.pem
sslcrtd_program $CERTGEN -s $d/ssl_db -M 4MB
sslcrtd_children 5 startup=1 idle=1
tls_outgoing_options cafile=$TESTCA
acl step1 at_step SslBump1
ssl_bump peek step1
ssl_bump bump all
acl ok dstdomain .$HOST
acl CONNECT method CONNECT
acl reads method GET HEAD OPTIONS
http_access allow CONNECT ok
http_access allow ok reads
http_access deny all
cache deny all
access_log stdio:$d/access.log
cache_log $d/cache.log
pid_filename $d/squid.pid
coredump_dir $d
hosts_file $T/hosts
dns_nameservers 127.0.0.1
pinger_enable off
workers 1
max_filedescriptors 16384
logfile_rotate 0
shutdown_lifetime 1 seconds
cache_effective_user proxy
EOF
	rm -rf "$d/ssl_db"
	"$CERTGEN" -c -s "$d/ssl_db" -M 4MB >"$d/certgen.out" 2>&1 ||
	    { say "security_file_certgen -c failed"; return 1; }
	chown -R proxy "$d" 2>/dev/null
}

# Start squid on $1; its pid in $SPID, its CA in $CAFILE.
start_squid() {
	squid_conf "$1" || return 1
	bg squid -N -f "$T/squid/squid.conf" >>"$T/squid/stderr" 2>&1
	SPID=$BGPID
	CAFILE=$T/pki/squid-ca.pem
}

# Start mitmdump on $1, seeing $T/hosts as /etc/hosts in a mount
# namespace of its own; pid in $SPID, its CA in $CAFILE.
start_mitmproxy() {
	d=$T/mitmproxy
	rm -rf "$d"
	mkdir -p "$d/conf"
	if [ "$MITM_CA" = ecdsa ]; then
		cat "$T/pki/mitm-ca.key" "$T/pki/mitm-ca.pem" \
		    >"$d/conf/mitmproxy-ca.pem"
		cp "$T/pki/mitm-ca.pem" "$d/conf/mitmproxy-ca-cert.pem"
	fi
	bg unshare -m sh -c 'mount --bind "$1" /etc/hosts && shift && exec "$@"' \
	    sh "$T/hosts" mitmdump --listen-host 127.0.0.1 -p "$1" -q \
	    --set confdir="$d/conf" --set ssl_verify_upstream_trusted_ca="$TESTCA" \
	    --set stream_large_bodies=1 \
	    >>"$d/stderr" 2>&1
	SPID=$BGPID
	CAFILE=$d/conf/mitmproxy-ca-cert.pem
}

# Start server $1 on a fresh port; sets $SPID, $PROXY and $CAFILE.
start_server() {
	port=$(free_port t) || return 1
	"start_$1" "$port" || { [ -n "${SPID:-}" ] && stop_pid "$SPID"; return 1; }
	PROXY=127.0.0.1:$port
	wait_port "$SPID" "$port" t || { say "$1 did not start"; stop_pid "$SPID"; return 1; }
	[ -s "$CAFILE" ] || { say "$1 has no CA file $CAFILE"; stop_pid "$SPID"; return 1; }
}

# Run tlsload for server $1 (mode and options after it) through $PROXY
# (none for direct); the line in $line, the server's CPU microseconds
# in $scpu, tlsload's and the origin's in $ecpu, the origin's new
# handshakes and resumed ones in $ohs and $ores; $flag marks errors.
run_tl() {
	srv=$1
	shift
	if [ "$srv" != direct ]; then set -- "$@" -x "$PROXY"; fi
	perfpid=
	if [ -n "$PERF" ] && [ "$srv" != direct ] && [ "$1" = conn-rate ]; then
		mkdir -p "$PERF"
		perf record -q --call-graph "${BENCH_PERF_CALLGRAPH:-fp}" -o "$PERF/$srv.data" -p "$(tree_pids "$SPID" | tr '\n' ',' | sed 's/,$//')" \
		    >/dev/null 2>>"$T/perf.err" &
		perfpid=$!
		sleep 0.5
	fi
	c0=$(origin_counts)
	s0=$([ "$srv" = direct ] || cpu_us "$SPID") o0=$(cpu_us "$OPID")
	line=$(timeout $((SECS + 60)) "$TLSLOAD" "$@" -A "$CAFILE" \
	    -o "$OPORT" -t "$SECS" 2>>"$T/tlsload.err")
	s1=$([ "$srv" = direct ] || cpu_us "$SPID") o1=$(cpu_us "$OPID")
	c1=$(origin_counts)
	if [ -n "$perfpid" ]; then
		kill -INT "$perfpid" 2>/dev/null
		wait "$perfpid" 2>/dev/null
	fi
	scpu=${s0:+$((s1 - s0))}
	l=$(field "$line" cpu_us)
	ecpu=${l:+$((l + o1 - o0))}
	ohs=$(($(field "$c1" handshakes) - $(field "$c0" handshakes)))
	ores=$(($(field "$c1" resumed) - $(field "$c0" resumed)))
	echo "$srv: $line server_cpu_us=${scpu:--} origin_cpu_us=$((o1 - o0)) origin_handshakes=$ohs origin_resumed=$ores" >>"$T/lines"
	flag=
	[ -n "$line" ] && [ "$(field "$line" errors)" = 0 ] || flag="!"
}

# Keep per-unit figures of the last run_tl for metric $2 of server $1:
# $3 units done.
keep_units() {
	resk "$1" "$2cpu" "$(div "$scpu" "$3" %.0f)$flag" min
	resk "$1" "$2eo" "$(div "$ecpu" "$3" %.0f)$flag" min
	resk "$1" "$2up" "$(div "$ohs" "$3" %.2f)" min
	resk "$1" "$2res" "$(awk -v r="$ores" -v h="$ohs" 'BEGIN {
		if (h > 0) printf "%.0f\n", 100 * r / h; else print "-" }')" max
}

# A few connections first, so the leaf is made (and cached) and the
# name resolved before anything is measured.
warm() {
	"$TLSLOAD" conn-rate -c 2 -n 8 -t 10 -A "$CAFILE" -o "$OPORT" \
	    ${1:+-x "$1"} >>"$T/warm.out" 2>>"$T/tlsload.err"
}

# The new-connection case for server $1.
case_rate() {
	srv=$1
	run_tl "$srv" conn-rate -c "$CONC" -n "$CONNS"
	n=$(field "$line" "done")
	resk "$srv" rate "$(field "$line" rate)$flag" max
	resk "$srv" rate50 "$(field "$line" p50_ms)" min
	resk "$srv" rate99 "$(field "$line" p99_ms)" min
	keep_units "$srv" rate "$n"
}

# The keep-alive case for server $1.
case_keep() {
	srv=$1
	run_tl "$srv" keepalive -c "$KEEP" -n "$REQUESTS"
	n=$(field "$line" "done")
	resk "$srv" rps "$(field "$line" rate)$flag" max
	resk "$srv" rps50 "$(field "$line" p50_ms)" min
	resk "$srv" rps99 "$(field "$line" p99_ms)" min
	keep_units "$srv" rps "$n"
}

# The idle case for server $1 (started fresh): RSS at start, after the
# warm-up, and with $IDLE inspected connections held.
case_idle() {
	srv=$1
	sleep 0.5
	resk "$srv" rss0 "$(div "$(rss_kib "$SPID")" 1024 %.1f)" min
	warm "$PROXY"
	sleep 0.5
	base=$(rss_kib "$SPID")
	bg "$TLSLOAD" idle -n "$IDLE" -c 50 -t 60 -w 120 -A "$CAFILE" \
	    -o "$OPORT" -x "$PROXY" >"$T/idle.out" 2>>"$T/tlsload.err"
	lg=$BGPID
	i=0
	while [ $i -lt 700 ] && [ ! -s "$T/idle.out" ] && kill -0 "$lg" 2>/dev/null; do
		sleep 0.1
		i=$((i + 1))
	done
	sleep 1
	line=$(cat "$T/idle.out")
	now=$(rss_kib "$SPID")
	echo "$srv: $line rss_before_kib=$base rss_idle_kib=$now" >>"$T/lines"
	open=$(field "$line" open)
	flag=
	[ "${open:-0}" = "$IDLE" ] || flag="!(${open:-0} open)"
	resk "$srv" idlekib "$(div $((now - base)) "${open:-0}" %.1f)$flag" min
	resk "$srv" rssidle "$(div "$now" 1024 %.1f)$flag" min
	stop_pid "$lg"
}

# Run case $1 against server $2, on a fresh instance of it.
bench_case() {
	cs=$1 srv=$2
	if [ "$srv" = direct ]; then
		[ "$cs" = idle ] && return
		CAFILE=$TESTCA SPID=
		warm ""
		"case_$cs" direct
		return
	fi
	start_server "$srv" || { res "$srv" skip "did not start"; return; }
	[ "$cs" = idle ] || warm "$PROXY"
	"case_$cs" "$srv"
	stop_pid "$SPID"
}

make_pki || { say "openssl could not make the test keys"; cat "$T/openssl.err" >&2; exit 1; }
start_origin
write_hosts
RUN=
for srv in $SERVERS; do
	why=$(why_not "$srv")
	if [ -n "$why" ]; then
		say "skipping $srv: $why"
		res "$srv" skip "$why"
		continue
	fi
	RUN="$RUN $srv"
done
r=0
while [ $r -lt "$REPEAT" ]; do
	for cs in rate keep idle; do
		for srv in $RUN; do
			[ -e "$T/res/$srv.skip" ] && continue
			say "round $((r + 1)): $cs, $srv"
			bench_case "$cs" "$srv"
		done
	done
	r=$((r + 1))
done
[ -s "$T/lines" ] && sed 's/^/bench: /' "$T/lines" >&2
[ -s "$T/tlsload.err" ] && sort "$T/tlsload.err" | uniq -c | sort -rn |
    head -10 | sed 's/^/bench: tlsload: /' >&2

asan=no
grep -q -a __asan_init "$PINHOLE" 2>/dev/null && asan=yes
ENV="$(nproc) CPUs, $(uname -sr), load $(cut -d' ' -f1-3 /proc/loadavg); best of $REPEAT"
awk -v dir="$T/res" -v servers="$SERVERS" -v env="$ENV" \
    -v build="pinhole: $PINHOLE, sanitizers: $asan" -v conns="$CONNS" \
    -v conc="$CONC" -v keep="$KEEP" -v idle="$IDLE" -v mitmca="$MITM_CA" '
# Read one result; "-" when there is none.
function get(srv, m,    f, v) {
	f = dir "/" srv "." m
	v = "-"
	if ((getline v < f) <= 0)
		v = "-"
	close(f)
	return v
}
# The number in a result, or "" when there is none.
function num(v) {
	sub(/!.*/, "", v)
	return v ~ /^[0-9.]+$/ ? v + 0 : ""
}
# pinhole over another server, or "-".
function ratio(m, other,    a, b) {
	if (!has["pinhole"] || !has[other])
		return "-"
	a = num(get("pinhole", m))
	b = num(get(other, m))
	if (a == "" || b == "" || b == 0)
		return "-"
	return sprintf("%.2f", a / b)
}
# Print a label padded to the metric column ("µ" counted as one).
function pad(s,    t, k) {
	t = s
	k = gsub(/µ/, "", t)
	printf "%-" (34 + k * (length("µ") - 1)) "s", s
}
# One target line: PASS, MISS or n/a.
function target(text, m, other, op, limit,    r, v, verdict) {
	r = ratio(m, other)
	v = get("pinhole", m) get(other, m)
	if (r == "-")
		verdict = "n/a"
	else if (v ~ /!/)
		verdict = "MISS (errors in the run)"
	else if ((op == ">=" && r + 0 >= limit) || (op == "<=" && r + 0 <= limit))
		verdict = "PASS"
	else
		verdict = "MISS"
	printf "%-52s %8s  %s\n", text, r, verdict
}
BEGIN {
	n = split(servers, srv, " ")
	for (i = 1; i <= n; i++)
		has[srv[i]] = 1
	nm = split("rate rate50 rate99 ratecpu rateeo rateup rateres " \
	    "rps rps50 rps99 rpscpu rpseo rpsup " \
	    "rss0 idlekib rssidle", metric, " ")
	label["rate"] = sprintf("new inspected conns/s, %d at once", conc)
	label["rate50"] = "  conn p50 ms"
	label["rate99"] = "  conn p99 ms"
	label["ratecpu"] = "  proxy CPU µs per new conn"
	label["rateeo"] = "  tlsload+origin µs per conn"
	label["rateup"] = "  origin handshakes per conn"
	label["rateres"] = "  of them resumed, %"
	label["rps"] = sprintf("inspected req/s, %d keep-alive", keep)
	label["rps50"] = "  request p50 ms"
	label["rps99"] = "  request p99 ms"
	label["rpscpu"] = "  proxy CPU µs per request"
	label["rpseo"] = "  tlsload+origin µs per req"
	label["rpsup"] = "  origin handshakes per req"
	label["rss0"] = "RSS at start, MiB"
	label["idlekib"] = sprintf("RSS per idle inspected conn, KiB")
	label["rssidle"] = sprintf("RSS with %d idle conns, MiB", idle)
	printf "TLS inspection benchmark on loopback (%s)\n", env
	printf "%s; mitmproxy CA: %s\n", build, mitmca
	printf "every client handshake is a full one, verified against the proxy'"'"'s CA; CPU and RSS summed over each server'"'"'s processes\n\n"
	printf "%-34s", "metric"
	for (i = 1; i <= n; i++)
		printf " %10s", srv[i]
	printf " | %9s %9s %9s\n", "ph/direct", "ph/squid", "ph/mitm"
	for (j = 1; j <= nm; j++) {
		m = metric[j]
		pad(label[m])
		for (i = 1; i <= n; i++)
			printf " %10s", get(srv[i], m)
		printf " | %9s %9s %9s\n", ratio(m, "direct"), ratio(m, "squid"),
		    ratio(m, "mitmproxy")
	}
	printf "\n"
	for (i = 1; i <= n; i++) {
		why = get(srv[i], "skip")
		if (why != "-")
			printf "%s not measured: %s\n", srv[i], why
	}
	printf "(\"!\" marks a run with errors; \"-\" a figure not measured.  proxy CPU: utime+stime\n"
	printf " of all the proxy'"'"'s processes (squid'"'"'s helpers too) over the connections or\n"
	printf " requests done; tlsload+origin: the two ends'"'"' CPU in the same run.  RSS per idle\n"
	printf " conn: the rise over a warmed-up fresh instance while %d connections, each\n", idle
	printf " past one request, are held, over their count)\n\n"
	printf "%-52s %8s  %s\n", "target (pinhole)", "ratio", "result"
	target("new inspected conns/s >= 3 x squid-bump", "rate", "squid", ">=", 3)
	target("proxy CPU per inspected request <= squid-bump", "rpscpu", "squid", "<=", 1)
	target("proxy CPU per new inspected conn <= squid-bump", "ratecpu", "squid", "<=", 1)
	target("new inspected conns/s >= 10 x mitmproxy", "rate", "mitmproxy", ">=", 10)
}'
