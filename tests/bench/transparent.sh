#!/bin/sh
# Transparent capture beside CONNECT, both from inside pinhole run: tunnel
# throughput (1 and 16 tunnels) and connection setups per second, with the
# benchmark's loadgen and origin.  By hand, as root, from a build without
# sanitizers:
#
#	tests/bench/transparent.sh BUILDDIR
#
# The CONNECT case goes through the sandbox's HTTP_PROXY; the transparent
# case connects to bench.test's fake address.  Only 127.0.0.1 and the
# sandbox are used.  Knobs: BENCH_BYTES, BENCH_SECS, BENCH_REPEAT.
set -u
BUILD=${1:?usage: transparent.sh BUILDDIR}
BYTES=${BENCH_BYTES:-1073741824}
SECS=${BENCH_SECS:-5}
REPEAT=${BENCH_REPEAT:-3}
PY=/usr/bin/python3
[ "$(id -u)" = 0 ] || { echo "transparent.sh: run as root" >&2; exit 2; }
for p in pinhole tests/bench/loadgen tests/bench/origin; do
	[ -x "$BUILD/$p" ] || { echo "transparent.sh: no $BUILD/$p (make bench)" >&2; exit 2; }
done
command -v dnsmasq >/dev/null || { echo "transparent.sh: needs dnsmasq" >&2; exit 2; }
T=$(mktemp -d /tmp/pinhole-bench.XXXXXX)
chmod 755 "$T"
PIDS=
trap 'for p in $PIDS; do kill $p 2>/dev/null; done; rm -rf "$T"' EXIT
trap 'exit 1' INT TERM
cp "$BUILD/pinhole" "$BUILD/tests/bench/loadgen" "$T/"
free_port() {
	$PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
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

# In the sandbox: each case REPEAT times, CONNECT and transparent in turn.
cat >"$T/cases.sh" <<EOF
FAKE=\$(getent hosts bench.test | cut -d' ' -f1)
GW=\${HTTP_PROXY#http://}
echo "sandbox: bench.test is \$FAKE, the proxy \$GW"
r=0
while [ \$r -lt $REPEAT ]; do
	for how in "connect -x \$GW" "transparent -d \$FAKE"; do
		set -- \$how
		name=\$1; shift
		for n in 1 16; do
			echo "\$name \$($T/loadgen tunnel-bulk -c \$n -b $BYTES -t 30 -o $OPORT "\$@")"
		done
		echo "\$name \$($T/loadgen connect-rate -c 50 -n 100000 -t $SECS -o $OPORT "\$@")"
	done
	r=\$((r + 1))
done
EOF
"$T/pinhole" run --policy "$T/policy" --resolver "127.0.0.1:$DNSP" \
    --log "$T/audit.log" --max-clients 1024 -- sh "$T/cases.sh" | tee "$T/lines"

# The best of the runs for each case, and transparent / CONNECT.
awk '
function val(k,   i) {
	for (i = 1; i <= NF; i++)
		if (index($i, k "=") == 1)
			return substr($i, length(k) + 2)
	return ""
}
$2 == "tunnel-bulk" { k = $1 " bulk" val("conns"); v = val("MiBps") }
$2 == "connect-rate" { k = $1 " rate"; v = val("rate") }
$2 == "tunnel-bulk" || $2 == "connect-rate" {
	if (val("errors") != 0) err[k] = "!"
	if (!(k in best) || v + 0 > best[k]) best[k] = v + 0
}
END {
	printf "%-26s %12s %12s %8s\n", "", "CONNECT", "transparent", "ratio"
	split("bulk1 bulk16 rate", ks, " ")
	split("tunnel MiB/s, 1 tunnel|tunnel MiB/s, 16 tunnels|setups/s", ds, "|")
	for (i = 1; i <= 3; i++) {
		c = best["connect " ks[i]]
		t = best["transparent " ks[i]]
		printf "%-26s %11.1f%1s %11.1f%1s %8.2f\n", ds[i], c,
		    err["connect " ks[i]], t, err["transparent " ks[i]],
		    c > 0 ? t / c : 0
	}
}' "$T/lines"
grep -c '"via":"transparent"' "$T/audit.log" | sed 's/^/audit lines for transparent connections: /'
