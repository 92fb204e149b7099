#!/bin/sh
# Transparent capture beside CONNECT, both from inside pinhole run: tunnel
# throughput (1 and 16 tunnels) and connection setups per second, with the
# benchmark's loadgen and origin.  By hand, as root, from a build without
# sanitizers:
#
#	tests/bench/transparent.sh BUILDDIR
#
# The CONNECT case goes through the sandbox's HTTP_PROXY; the transparent
# case connects to bench.test's fake address.  Each case runs in a fresh
# sandbox, and the gateway's own CPU time is sampled from /proc: on a busy
# machine that is the steadier figure.  Only 127.0.0.1 and the sandbox are
# used.  Knobs: BENCH_BYTES, BENCH_SECS, BENCH_REPEAT.
set -u
BUILD=${1:?usage: transparent.sh BUILDDIR}
BYTES=${BENCH_BYTES:-1073741824}
SECS=${BENCH_SECS:-5}
REPEAT=${BENCH_REPEAT:-3}
PY=/usr/bin/python3
[ "$(id -u)" = 0 ] || { echo "transparent.sh: run as root" >&2; exit 2; }
for p in pinhole tests/bench/loadgen tests/bench/origin; do
	[ -x "$BUILD/$p" ] || { echo "transparent.sh: no $BUILD/$p (make bench-programs)" >&2; exit 2; }
done
command -v dnsmasq >/dev/null || { echo "transparent.sh: needs dnsmasq" >&2; exit 2; }
T=$(mktemp -d /tmp/pinhole-bench.XXXXXX)
chmod 755 "$T"
PIDS=
trap 'for p in $PIDS; do kill $p 2>/dev/null; done; rm -rf "$T"' EXIT
trap 'exit 1' INT TERM
cp "$BUILD/pinhole" "$BUILD/tests/bench/loadgen" "$T/"
free_port() {
	$PY "$(dirname "$0")/../free-port.py"
}

"$BUILD/tests/bench/origin" >"$T/origin.out" &
PIDS="$PIDS $!"
i=0
while [ $i -lt 50 ] && ! grep -q '^port' "$T/origin.out"; do sleep 0.1; i=$((i + 1)); done
OPORT=$(sed -n 's/^port //p' "$T/origin.out")
[ -n "$OPORT" ] || { echo "transparent.sh: origin did not start" >&2; exit 1; }
DNSP=$(free_port)
dnsmasq -k -u root -p "$DNSP" --listen-address=127.0.0.1 --bind-interfaces \
    --no-resolv --no-hosts --pid-file= --address=/bench.test/127.0.0.1 \
    --local-ttl=300 2>/dev/null &
PIDS="$PIDS $!"
sleep 0.5
printf 'allow-private 127.0.0.0/8\nallow bench.test:%s\n' "$OPORT" >"$T/policy"

HZ=$(getconf CLK_TCK)

# Run one case in a fresh sandbox: $1 is connect or transparent, the rest
# loadgen's arguments.  Prints loadgen's line with the CPU the gateway
# (the pinhole process) spent, sampled from /proc while it runs.
run_case() {
	how=$1; shift
	cat >"$T/case.sh" <<EOF
FAKE=\$(getent hosts bench.test | cut -d' ' -f1)
GW=\${HTTP_PROXY#http://}
if [ $how = connect ]; then A="-x \$GW"; else A="-d \$FAKE"; fi
$T/loadgen $* -o $OPORT \$A
sleep 0.3
EOF
	"$T/pinhole" run --policy "$T/policy" --resolver "127.0.0.1:$DNSP" \
	    --log "$T/audit.log" --max-clients 1024 -- sh "$T/case.sh" \
	    >"$T/case.out" &
	pid=$! first= last=
	while kill -0 $pid 2>/dev/null; do
		t=$(awk '{ print $14 + $15 }' /proc/$pid/stat 2>/dev/null)
		[ -n "$t" ] && { [ -n "$first" ] || first=$t; last=$t; }
		sleep 0.05
	done
	wait $pid
	echo "$how $(cat "$T/case.out") cpu_ms=$(( (${last:-0} - ${first:-0}) * 1000 / HZ ))"
}

# Each case REPEAT times, CONNECT and transparent in turn.
r=0
while [ $r -lt "$REPEAT" ]; do
	for how in connect transparent; do
		for n in 1 16; do
			run_case $how tunnel-bulk -c $n -b "$BYTES" -t 30
		done
		run_case $how connect-rate -c 50 -n 100000 -t "$SECS"
	done
	r=$((r + 1))
done | tee "$T/lines"

# The best of the runs for each case, and transparent / CONNECT.
awk '
function val(k,   i) {
	for (i = 1; i <= NF; i++)
		if (index($i, k "=") == 1)
			return substr($i, length(k) + 2)
	return ""
}
$2 == "tunnel-bulk" {
	k = $1 " bulk" val("conns"); v = val("MiBps")
	u = val("cpu_ms") / (val("bytes") / 1073741824)	# ms per GiB
}
$2 == "connect-rate" {
	k = $1 " rate"; v = val("rate")
	u = val("done") > 0 ? val("cpu_ms") * 1000 / val("done") : 0	# us each
}
$2 == "tunnel-bulk" || $2 == "connect-rate" {
	if (val("errors") != 0) err[k] = "!"
	if (!(k in best) || v + 0 > best[k]) best[k] = v + 0
	if (!(k in cpu) || u < cpu[k]) cpu[k] = u
}
END {
	printf "%-26s %12s %12s %8s\n", "", "CONNECT", "transparent", "ratio"
	split("bulk1 bulk16 rate bulk1 bulk16 rate", ks, " ")
	split("tunnel MiB/s, 1 tunnel|tunnel MiB/s, 16 tunnels|setups/s|" \
	    "gateway CPU ms/GiB, 1|gateway CPU ms/GiB, 16|gateway CPU us/setup",
	    ds, "|")
	for (i = 1; i <= 6; i++) {
		if (i == 4)
			for (k in cpu)
				best[k] = cpu[k]
		c = best["connect " ks[i]]
		t = best["transparent " ks[i]]
		printf "%-26s %11.1f%1s %11.1f%1s %8.2f\n", ds[i], c,
		    err["connect " ks[i]], t, err["transparent " ks[i]],
		    (c > 0 ? t / c : 0)
	}
}' "$T/lines"
echo "(throughput and rate: best of $REPEAT runs, higher is better; gateway"
echo " CPU: least of $REPEAT, lower is better; load: $(cut -d' ' -f1-3 /proc/loadavg))"
grep -c '"via":"transparent"' "$T/audit.log" | sed 's/^/audit lines for transparent connections: /'
