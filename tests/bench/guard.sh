#!/bin/sh
# The performance regression guard, run by `make check`: what pinhole's
# proxy costs per unit, against tests/bench/baseline, which is kept in
# the tree.  It fails when one figure grows past its margin and says
# which and by how much.
#
# Instructions per CONNECT setup, per forward request, per DNS query and
# per inspected request (without and with a secret) are counted by
# callgrind through tests/bench/instructions.sh, one client at a time
# (BENCH_IR_CONC=1: every unit is one wake-up of the proxy, so the
# counts do not depend on the machine's load or its scheduler), with
# N and 2N units so start-up drops out; DNS queries at 100 a second,
# under the audit log's limit of DNS lines, so every one is written,
# and with a log budget no client reaches (--log-budget 1000000,1G), so
# every allowed line is written too, its accounting counted: how many
# lines a budget sums up depends on time.  Bytes per idle tunnel are the
# proxy's VmRSS with IDLE tunnels open (loadgen idle-tunnels) less its
# VmRSS before, over IDLE; bytes per idle inspected connection the same
# with IDLE_TLS connections through a proxy that inspects them, one
# request on each (tlsload idle).  Counts, never times: a CI machine is
# noisy.
#
# The figures are those of a build without sanitizers (valgrind cannot
# run ASan's, and ASan's allocator is not the one measured): in a build
# configured with --enable-sanitizers (or --enable-fuzzing) the guard
# first builds tests/bench/pinhole-plain, the same sources and CFLAGS
# without them.  Instruction counts also depend on the compiler, CFLAGS
# and the libraries' versions, which the baseline records on its
# `toolchain` line; where they differ the guard still compares (a
# library's security update moves a count by far less than a margin)
# and says so, with how to make a baseline for this toolchain.
#
# To change the baseline on purpose (a change that costs more for a
# reason, or saves), run in a build directory
#
#	GUARD_UPDATE=1 make check TESTS=tests/bench/guard.sh
#
# and commit tests/bench/baseline with the change, the reason in the
# commit message.
#
# Needs valgrind, dnsperf, dnsmasq and openssl (quickstart's test
# packages); skipped, saying which is missing, without them.  Traffic
# stays on 127.0.0.1; every process started is stopped.
set -u
PATH=$PATH:/usr/sbin:/sbin
: "${top_srcdir:?}" "${top_builddir:?}" "${PINHOLE:?}"
BASE=$top_srcdir/tests/bench/baseline
BENCH=$top_srcdir/tests/bench
# Units per case (N; each case also runs 2N), tunnels held.
SETUPS=200
REQUESTS=1000
QUERIES=300
INSPECTED=100
IDLE=1000
IDLE_TLS=500

skip() {
	echo "SKIP: $*"
	exit 77
}

for p in valgrind dnsperf dnsmasq openssl python3; do
	command -v $p >/dev/null ||
	    skip "$p missing (./quickstart test installs it)"
done

# The program measured: the build's own without sanitizers, else the
# plain one made for this.
PROG=$PINHOLE
if [ -n "${PINHOLE_SANITIZED:-}" ]; then
	echo "the build has sanitizers: making tests/bench/pinhole-plain"
	${MAKE:-make} -s -j"$(nproc)" -C "$top_builddir" tests/bench/pinhole-plain ||
	    { echo "FAIL: could not build tests/bench/pinhole-plain"; exit 1; }
	PROG=$top_builddir/tests/bench/pinhole-plain
fi

# What the counts depend on, in one line.
toolchain() {
	printf '%s; CFLAGS %s; %s; libevent %s; libcares %s; openssl %s' \
	    "$(${PINHOLE_CC:-cc} --version 2>/dev/null | head -1)" \
	    "${PINHOLE_CFLAGS:-}" "$(ldd --version 2>/dev/null | head -1)" \
	    "$(pkg-config --modversion libevent 2>/dev/null)" \
	    "$(pkg-config --modversion libcares 2>/dev/null)" \
	    "$(pkg-config --modversion openssl 2>/dev/null)"
}
TC=$(toolchain)

# The baseline's figure for key $1 (empty when it has none).
base() {
	awk -v k="$1" '$1 == k { print $2 }' "$BASE" 2>/dev/null
}

if [ -z "${GUARD_UPDATE:-}" ]; then
	[ -r "$BASE" ] ||
	    skip "no baseline; make one: GUARD_UPDATE=1 make check TESTS=tests/bench/guard.sh"
	btc=$(sed -n 's/^toolchain //p' "$BASE")
	[ "$btc" = "$TC" ] ||
	    echo "note: the baseline is for another toolchain:
  baseline: $btc
  this:     $TC
a figure past its margin may be the toolchain's; a baseline for this one:
  GUARD_UPDATE=1 make check TESTS=tests/bench/guard.sh"
fi

T=$(mktemp -d "${TMPDIR:-/tmp}/pinhole-guard.XXXXXX") || exit 1
PIDS=
trap 'for p in $PIDS; do kill $p 2>/dev/null; done; rm -rf "$T"' EXIT INT TERM

# free_port, wait_port.
. "$BENCH/ports.sh"

# Instructions per unit.
echo "counting instructions (callgrind), one client at a time"
t0=$(date +%s)
BENCH_PINHOLE=$PROG BENCH_IR_CONC=1 BENCH_IR_SETUPS=$SETUPS \
    BENCH_IR_REQUESTS=$REQUESTS BENCH_IR_DNS=$QUERIES BENCH_IR_DNS_QPS=100 \
    BENCH_IR_INSPECTED=$INSPECTED BENCH_IR_OPTS="--log-budget 1000000,1G" \
    sh "$BENCH/instructions.sh" "$top_builddir" >"$T/ir" 2>"$T/ir.err"
rc=$?
cat "$T/ir" "$T/ir.err"
[ $rc -eq 0 ] && [ ! -s "$T/ir.err" ] ||
    { echo "FAIL: instructions.sh failed (exit $rc)"; exit 1; }
echo "($(($(date +%s) - t0)) s)"

# The count on row $1 of instructions.sh's table.
ir() {
	awk -v r="$1" 'index($0, r) == 1 {
		rest = substr($0, length(r) + 1)
		if (rest ~ /^ +[0-9]+ *$/) { print rest + 0; exit }
	}' "$T/ir"
}

# Wait until the load generator $LG, holding connections, says how many
# it opened in file $1 (two minutes at most), or ends.
wait_held() {
	i=0
	while [ $i -lt 1200 ] && [ ! -s "$1" ] && kill -0 $LG 2>/dev/null; do
		sleep 0.1
		i=$((i + 1))
	done
}

# Bytes per idle tunnel.
echo "holding $IDLE idle tunnels"
OPORT=$(free_port)
"$top_builddir/tests/bench/origin" -p "$OPORT" -t 600 >/dev/null 2>&1 &
PIDS="$PIDS $!"
wait_port "$OPORT" || { echo "FAIL: origin did not start"; exit 1; }
PPORT=$(free_port)
mkdir -m 700 "$T/run"
XDG_RUNTIME_DIR=$T/run HOME=$T "$PROG" proxy --listen "127.0.0.1:$PPORT" \
    --allow "127.0.0.1:$OPORT" --allow 'allow-private 127.0.0.0/8' \
    --max-clients $((IDLE + 100)) --log "$T/audit.log" \
    >/dev/null 2>"$T/proxy.err" &
PPID_=$!
PIDS="$PIDS $PPID_"
wait_port "$PPORT" || { echo "FAIL: pinhole did not start"; exit 1; }
rss() {
	awk '$1 == "VmRSS:" { print $2 }' "/proc/$PPID_/status"
}
r0=$(rss)
"$top_builddir/tests/bench/loadgen" idle-tunnels -n "$IDLE" -c 100 -t 60 \
    -H 127.0.0.1 \
    -w 120 -x "127.0.0.1:$PPORT" -o "$OPORT" >"$T/idle.out" 2>&1 &
LG=$!
PIDS="$PIDS $LG"
wait_held "$T/idle.out"
grep -q "open=$IDLE " "$T/idle.out" ||
    { echo "FAIL: idle tunnels: $(cat "$T/idle.out")"; exit 1; }
r1=$(rss)
kill $LG 2>/dev/null
TUNNEL=$(((r1 - r0) * 1024 / IDLE))
echo "VmRSS ${r0} KiB, with $IDLE idle tunnels ${r1} KiB: $TUNNEL bytes a tunnel"
kill $LG $PPID_ 2>/dev/null

# Bytes per idle inspected connection: a proxy that inspects bench.test
# (named by a dnsmasq) in front of a TLS origin whose certificate a test
# CA signed; a few connections first make and cache the leaf, then
# IDLE_TLS are opened, one request on each, and held (tlsload idle).
echo "holding $IDLE_TLS idle inspected connections"
bench_certs "$T" ||
    { echo "FAIL: openssl could not make the test keys"; exit 1; }
TPORT=$(free_port)
"$top_builddir/tests/bench/tlsorigin" -C "$T/leaf.pem" -K "$T/leaf.key" \
    -p "$TPORT" -t 600 >/dev/null 2>&1 &
PIDS="$PIDS $!"
DPORT=$(free_port)
dnsmasq -k -C /dev/null -p "$DPORT" --listen-address=127.0.0.1 \
    --bind-interfaces --no-resolv --no-hosts --pid-file= \
    --address=/bench.test/127.0.0.1 2>/dev/null &
PIDS="$PIDS $!"
wait_port "$TPORT" && wait_port "$DPORT" ||
    { echo "FAIL: the TLS origin or dnsmasq did not start"; exit 1; }
printf 'allow bench.test:* read-only\nallow-private 127.0.0.0/8\n' \
    >"$T/policy"
PPORT=$(free_port)
XDG_RUNTIME_DIR=$T/run HOME=$T SSL_CERT_FILE=$T/ca.pem "$PROG" proxy \
    --listen "127.0.0.1:$PPORT" --policy "$T/policy" \
    --resolver "127.0.0.1:$DPORT" --max-clients $((IDLE_TLS + 100)) \
    --log "$T/audit-tls.log" >/dev/null 2>"$T/proxy-tls.err" &
PPID_=$!
PIDS="$PIDS $PPID_"
wait_port "$PPORT" || { echo "FAIL: pinhole did not start"; exit 1; }
CA=$(sed -n 's/^pinhole: CA certificate: //p' "$T/proxy-tls.err")
"$top_builddir/tests/bench/tlsload" conn-rate -c 2 -n 8 -t 60 -A "$CA" \
    -o "$TPORT" -x "127.0.0.1:$PPORT" >"$T/warm.out" 2>&1 ||
    { echo "FAIL: inspected connections: $(cat "$T/warm.out")"; exit 1; }
r0=$(rss)
"$top_builddir/tests/bench/tlsload" idle -n "$IDLE_TLS" -c 50 -t 120 \
    -w 120 -A "$CA" -o "$TPORT" -x "127.0.0.1:$PPORT" >"$T/idle-tls.out" \
    2>&1 &
LG=$!
PIDS="$PIDS $LG"
wait_held "$T/idle-tls.out"
grep -q "open=$IDLE_TLS .*errors=0" "$T/idle-tls.out" ||
    { echo "FAIL: idle inspected connections: $(cat "$T/idle-tls.out")"; exit 1; }
r1=$(rss)
kill $LG 2>/dev/null
INSPECTED_IDLE=$(((r1 - r0) * 1024 / IDLE_TLS))
echo "VmRSS ${r0} KiB, with $IDLE_TLS idle inspected connections ${r1} KiB: $INSPECTED_IDLE bytes a connection"

# key, row of instructions.sh (or a figure), margin %, what it is.
FIGURES="connect	$(ir 'CONNECT setup')	3	instructions per CONNECT setup
forward	$(ir 'forward request')	3	instructions per forward request
dns	$(ir 'DNS query')	5	instructions per DNS query
inspected	$(ir 'inspected request')	3	instructions per inspected request
inspected-secret	$(ir 'inspected request, secret')	3	instructions per inspected request with a secret
idle-tunnel	$TUNNEL	10	bytes of RSS per idle tunnel
idle-inspected	$INSPECTED_IDLE	10	bytes of RSS per idle inspected connection"

if [ -n "${GUARD_UPDATE:-}" ]; then
	{
		echo "# What pinhole's proxy costs per unit, which tests/bench/guard.sh"
		echo "# (make check) holds it to: a figure may grow by its margin (%)."
		echo "# Made by GUARD_UPDATE=1 make check TESTS=tests/bench/guard.sh;"
		echo "# the commit that changes it says why."
		echo "# key figure margin"
		echo "toolchain $TC"
		echo "$FIGURES" | while IFS='	' read -r k v m what; do
			[ -n "$v" ] ||
			    { echo "FAIL: no figure for $what" >&2; exit 1; }
			echo "$k $v $m"
		done
	} >"$T/baseline" || exit 1
	cp "$T/baseline" "$BASE" || exit 1
	echo "wrote $BASE:"
	cat "$BASE"
	exit 0
fi

status=0
printf '%-48s %10s %10s %8s\n' "" baseline now change
echo "$FIGURES" >"$T/figures"
while IFS='	' read -r k v m what; do
	b=$(base "$k")
	bm=$(awk -v k="$k" '$1 == k { print $3 }' "$BASE")
	[ -n "$bm" ] && m=$bm
	if [ -z "$v" ] || [ -z "$b" ]; then
		echo "FAIL: $what: no figure (now '${v}', baseline '${b}')"
		status=1
		continue
	fi
	pct=$(awk -v a="$v" -v b="$b" 'BEGIN { printf "%+.1f", (a - b) * 100 / b }')
	printf '%-48s %10s %10s %7s%%\n' "$what" "$b" "$v" "$pct"
	if awk -v p="$pct" -v m="$m" 'BEGIN { exit !(p > m) }'; then
		echo "FAIL: $what grew by $pct% ($b to $v), past its margin of $m%"
		status=1
	elif awk -v p="$pct" -v m="$m" 'BEGIN { exit !(-p > m) }'; then
		echo "note: $what fell by ${pct#-}% ($b to $v): update the baseline so the guard holds the gain"
	fi
done <"$T/figures"
if [ $status -ne 0 ]; then
	cat <<EOF
A figure grew past its margin.  If the growth is a regression, find it
(tests/bench/instructions.sh BUILD OLDBUILD puts two builds side by side;
valgrind --tool=callgrind shows where).  If it is meant, update the
baseline in the same commit and say why in its message:
	GUARD_UPDATE=1 make check TESTS=tests/bench/guard.sh
EOF
fi
exit $status
