#!/bin/sh
# The audit log on a full disk (a 64 KiB tmpfs), as root and as nobody:
# by default (--log-fail=closed) pinhole proxy refuses new connections
# while the log cannot be written (503 with Pinhole-Error, DNS SERVFAIL)
# and lets an open tunnel go on; once there is room again, traffic
# resumes, the log holds a "loss" line, `pinhole log verify` reports it
# (exit 3) and stderr said so.  With --log-fail=open traffic goes on and
# the loss is still recorded.  Stopping while the disk is still full says
# on stderr what was lost.  --metrics counts the failed writes, and the
# lines lost as the loss line does.  In pinhole run, a captured connection is
# closed and a name not answered while full.  No line is ever left half
# written.  `pinhole log verify` of a running session is intact; of one
# stopped while the disk was full, it names the missing stop line (exit
# 3), and a new gateway on the full disk refuses to start.
. "$top_srcdir/tests/integration/lib.sh"
here="$top_srcdir/tests/integration"

need root curl dig dnsmasq getent python3 unshare nsenter setpriv
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY no_proxy NO_PROXY ALL_PROXY

export ASAN_OPTIONS=detect_leaks=0
cp "$PINHOLE" "$T/pinhole" && chmod 755 "$T/pinhole"
mkdir -m 1777 "$T/w"
DNSP=$(free_port)
bg dnsmasq -k -u root -p "$DNSP" --listen-address=127.0.0.1 \
    --bind-interfaces --no-resolv --no-hosts --pid-file= \
    --address=/origin.test/127.0.0.1
O=$(free_port)
bg python3 "$here/origin.py" "$O"
wait_port "$O" || { finish; exit 1; }

# A mount namespace of the test's own, held open by a process: the
# small disks are mounted there, and whatever touches them runs there.
bg unshare -m sleep 600
NS=$!
ns() {
	nsenter -t "$NS" -m -- "$@"
}
i=0
while [ "$(readlink /proc/$NS/ns/mnt)" = "$(readlink /proc/self/ns/mnt)" ] &&
    [ $i -lt 100 ]; do
	sleep 0.05; i=$((i + 1))
done

# A CONNECT tunnel through the proxy: one request at once, another once
# the file $3 exists (at most 30 s later).
cat >"$T/tunnel.py" <<'PY'
import os, socket, sys, time
p, o, go = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
s = socket.create_connection(("127.0.0.1", p), 5)
s.settimeout(10)
s.sendall(b"CONNECT 127.0.0.1:%d HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n" % (o, o))
f = s.makefile("rb")
def head():
    status = f.readline().split()[1].decode()
    n = 0
    while True:
        line = f.readline()
        if line in (b"\r\n", b""):
            break
        if line.lower().startswith(b"content-length:"):
            n = int(line.split(b":")[1])
    return status, n
def get():
    s.sendall(b"GET / HTTP/1.1\r\nHost: origin.test\r\n\r\n")
    status, n = head()
    f.read(n)
    return status
print("connect", head()[0], flush=True)
print("first", get(), flush=True)
end = time.time() + 30
while not os.path.exists(go) and time.time() < end:
    time.sleep(0.05)
print("second", get(), flush=True)
PY

# The status of one request through the proxy (headers in $T/resp).
get() {
	curl -s -D "$T/resp" -o "$T/body" -w '%{http_code}' --max-time 10 \
	    -x "http://127.0.0.1:$P" "http://127.0.0.1:$O/"
}

# The rcode of one DNS question to the gateway.
rcode() {
	dig +tries=1 +time=3 -p "$DP" @127.0.0.1 dns.test A 2>&1 |
	    sed -n 's/.*status: \([A-Z]*\),.*/\1/p'
}

# The proxy's metrics on port $M count failed writes, and the lines lost
# as the loss lines of $LOG do.
metrics_lost() {
	curl -s --max-time 5 "http://127.0.0.1:$M/metrics" >"$T/metrics$n"
	errs=$(awk '$1 == "pinhole_audit_write_errors_total" { print $2 }' \
	    "$T/metrics$n")
	lost=$(awk '$1 == "pinhole_audit_lost_lines_total" { print $2 }' \
	    "$T/metrics$n")
	logged=$(ns cat "$LOG" | sed -n 's/.*"event":"loss".*"lost":\([0-9]*\).*/\1/p' |
	    awk '{ n += $1 } END { print n + 0 }')
	[ "${errs:-0}" -ge 1 ] && [ "$logged" -ge 1 ] && [ "$lost" = "$logged" ] &&
	    ok "$what: metrics: $errs failed writes, $lost lines lost, as logged" ||
	    fail "$what: metrics: $errs failed writes, $lost lost, $logged logged"
}

# One run: as MODE, with --log-fail=$1; $2 = free: make room again
# before stopping, full: stop while the disk is still full.
n=0
full_run() {
	fail=$1 room=$2 n=$((n + 1))
	what="$MODE, --log-fail=$fail, stop $room"
	D="$T/disk$n" LOG="$T/disk$n/audit.log" ERR="$T/err$n"
	mkdir "$D"
	ns mount -t tmpfs -o size=64k,mode=0755 none "$D" ||
	    { fail "$what: cannot mount a tmpfs"; return; }
	[ "$MODE" = root ] || ns chown nobody "$D"
	P=$(free_port) DP=$(free_port) R=$(free_port) M=$(free_port)
	set -- "$T/pinhole" proxy --listen "127.0.0.1:$P" --metrics "127.0.0.1:$M" \
	    --dns-listen "127.0.0.1:$DP" --resolver "127.0.0.1:$R" \
	    --allow "127.0.0.1:$O" --allow 'allow-private 127.0.0.1/32' \
	    --allow dns.test --log "$LOG" \
	    --log-fail="$fail" --grace 1
	if [ "$MODE" = nobody ]; then
		set -- env XDG_RUNTIME_DIR="$T/xdg-nobody" \
		    HOME="$T/home-nobody" setpriv --reuid=nobody \
		    --regid=nogroup --clear-groups -- "$@"
	fi
	nsenter -t "$NS" -m -- "$@" 2>"$ERR" &
	GW=$!
	PIDS="$PIDS $GW"
	wait_port "$P" || { cat "$ERR" >&2; return; }
	# The gateway's own pid (under nsenter, setpriv and env, which exec).
	GWPID=$(pgrep -P "$GW" -x pinhole || echo "$GW")
	[ "$(get)" = 200 ] && [ "$(rcode)" = NOERROR ] ||
	    fail "$what: no traffic before the disk is full"
	# A session with no stop line yet, whose gateway runs, is no gap.
	ns "$T/pinhole" log verify "$LOG" >"$T/verify$n" 2>&1
	rv=$?
	[ $rv -eq 0 ] && grep -q "^note: session .* (gateway pid $GWPID) has no stop line yet: it is running" "$T/verify$n" &&
	    ok "$what: verify while it runs: intact, the session running" ||
	    fail "$what: verify while it runs: exit $rv: $(cat "$T/verify$n")"
	python3 "$T/tunnel.py" "$P" "$O" "$T/go$n" >"$T/tunnel$n" 2>&1 &
	TUN=$!
	wait_line "$T/tunnel$n" '^first 200' ||
	    fail "$what: tunnel: $(cat "$T/tunnel$n")"

	ns dd if=/dev/zero of="$D/fill" bs=4k 2>/dev/null
	# The last page of the log may still hold a few lines.
	k=0
	while [ $k -lt 60 ] && [ "$(get)" = 200 ]; do k=$((k + 1)); done
	if [ "$fail" = closed ]; then
		[ $k -lt 60 ] && grep -q ' 503 ' "$T/resp" &&
		    grep -qi '^Pinhole-Error: audit-log-unwritable' "$T/resp" &&
		    grep -q 'audit log cannot be written' "$T/body" &&
		    ok "$what: full: a new connection gets 503" ||
		    fail "$what: full: $k requests went through: $(cat "$T/resp")"
		[ "$(get)" = 503 ] && ok "$what: full: and the next one" ||
		    fail "$what: full: the next one went through"
		[ "$(rcode)" = SERVFAIL ] && ok "$what: full: DNS SERVFAIL" ||
		    fail "$what: full: DNS $(rcode)"
		grep -q 'lines are being lost; new connections are refused' \
		    "$ERR" && ok "$what: full: said on stderr" ||
		    fail "$what: full: stderr: $(cat "$ERR")"
	else
		[ $k -eq 60 ] && [ "$(rcode)" = NOERROR ] &&
		    grep -q 'lines are being lost$' "$ERR" &&
		    ok "$what: full: traffic goes on, the loss said on stderr" ||
		    fail "$what: full: $k requests, stderr: $(cat "$ERR")"
	fi
	: >"$T/go$n"
	wait "$TUN"
	grep -q '^second 200' "$T/tunnel$n" &&
	    ok "$what: full: the open tunnel goes on" ||
	    fail "$what: full: tunnel: $(cat "$T/tunnel$n")"

	if [ "$room" = free ]; then
		ns rm "$D/fill"
		[ "$(get)" = 200 ] && [ "$(rcode)" = NOERROR ] &&
		    ok "$what: room again: traffic resumes" ||
		    fail "$what: room again: $(cat "$T/resp")"
		metrics_lost
	fi
	kill "$GW"
	wait "$GW"
	ns cat "$LOG" >"$T/log$n"
	ns "$T/pinhole" log verify "$LOG" >"$T/verify$n" 2>&1
	rv=$?
	if [ "$room" = free ]; then
		[ $rv -eq 3 ] && grep -q '^LINES LOST: 1 loss record' \
		    "$T/verify$n" && grep -q '^chain intact otherwise' \
		    "$T/verify$n" &&
		    ok "$what: verify reports the loss, exit 3" ||
		    fail "$what: verify: exit $rv: $(cat "$T/verify$n")"
		loggrep "$T/log$n" '"event":"loss","reason":"No space left on device.*"lost":[1-9]' &&
		    loggrep "$T/log$n" '"event":"stop"' &&
		    ok "$what: the log records the loss" ||
		    fail "$what: no loss line: $(tail -3 "$T/log$n")"
		grep -q 'writing again; [1-9][0-9]* line(s)' "$ERR" &&
		    ok "$what: stderr says it writes again" ||
		    fail "$what: stderr: $(cat "$ERR")"
	else
		! loggrep "$T/log$n" '"event":"stop"' &&
		    grep -q 'closed while it cannot be written: [1-9][0-9]* line(s).*the last ones (the stop line) included, and the log has no record of it (No space left on device' "$ERR" &&
		    ok "$what: stopped while full: the loss is said on stderr" ||
		    fail "$what: stopped full: stderr: $(cat "$ERR")"
		# verify names the missing end: no stop line, and the
		# gateway that wrote the session is gone.
		[ $rv -eq 3 ] && grep -q "^INCOMPLETE: session .*: no stop line: its gateway (pid $GWPID) is not running: it was killed, or could not write its log" "$T/verify$n" &&
		    ! grep -q '^intact' "$T/verify$n" &&
		    ok "$what: stopped while full: verify names the missing end, exit 3" ||
		    fail "$what: stopped full: verify: exit $rv: $(cat "$T/verify$n")"
		# A new gateway on the full disk refuses to start, as one
		# whose log cannot be opened does: run 125, proxy 1.
		set -- "$T/pinhole" run --allow "127.0.0.1:$O" --log "$LOG" \
		    -- sh -c "echo ran >&2"
		[ "$MODE" = nobody ] && set -- env XDG_RUNTIME_DIR="$T/xdg-nobody" \
		    HOME="$T/home-nobody" setpriv --reuid=nobody --regid=nogroup \
		    --clear-groups -- "$@"
		nsenter -t "$NS" -m -- "$@" >"$T/next$n" 2>&1
		rv=$?
		[ $rv -eq 125 ] && ! grep -q '^ran' "$T/next$n" &&
		    grep -q "audit log: $LOG: No space left on device: it cannot be written" "$T/next$n" &&
		    ok "$what: a next run refuses to start (125), and says why" ||
		    fail "$what: next run: exit $rv: $(cat "$T/next$n")"
		set -- "$T/pinhole" proxy --listen "127.0.0.1:$(free_port)" \
		    --allow "127.0.0.1:$O" --log "$LOG"
		[ "$MODE" = nobody ] && set -- setpriv --reuid=nobody \
		    --regid=nogroup --clear-groups -- "$@"
		nsenter -t "$NS" -m -- "$@" >"$T/next$n" 2>&1
		rv=$?
		[ $rv -eq 1 ] &&
		    grep -q "audit log: $LOG: No space left on device: it cannot be written" "$T/next$n" &&
		    ok "$what: a next proxy refuses to start, and says why" ||
		    fail "$what: next proxy: exit $rv: $(cat "$T/next$n")"
	fi
	ns umount "$D"
}

# The command in the sandbox: through the proxy and captured (by the
# fake address of origin.test) before, while and after the disk is full;
# the outside fills it when it finds $W/ready, makes room at $W/seen.
cat >"$T/inside.sh" <<'EOF'
W=$1 O=$2
# Wait (at most 30 s) for a file.
wait_for() {
	i=0
	while [ ! -e "$1" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done
}
proxied() {
	curl -s -o /dev/null -w '%{http_code}' --max-time 10 \
	    "http://origin.test:$O/"
}
captured() {
	curl -s -o /dev/null -w '%{http_code}' --max-time 10 --noproxy '*' \
	    "http://$A:$O/"
}
A=$(getent ahostsv4 origin.test | sed -n '1s/ .*//p')
echo "before $(proxied) $(captured)"
: >"$W/ready"
wait_for "$W/full"
k=0
while [ $k -lt 60 ] && [ "$(proxied)" = 200 ]; do k=$((k + 1)); done
echo "full $(proxied) $(captured)"
getent ahostsv4 origin.test >/dev/null && echo "full name: answered"
: >"$W/seen"
wait_for "$W/room"
echo "room $(proxied) $(captured)"
EOF
chmod 644 "$T/inside.sh"

# One run of pinhole run as MODE with the log on a small disk.
full_sandbox() {
	n=$((n + 1)) what="$MODE, pinhole run"
	D="$T/disk$n" LOG="$T/disk$n/audit.log" ERR="$T/err$n" W="$T/w/$n"
	mkdir "$D" "$W" && chmod 1777 "$W"
	ns mount -t tmpfs -o size=64k,mode=0755 none "$D" ||
	    { fail "$what: cannot mount a tmpfs"; return; }
	[ "$MODE" = root ] || ns chown nobody "$D"
	set -- env HOME="$W" "$T/pinhole" run --allow "origin.test:$O" \
	    --allow 'allow-private 127.0.0.1/32' \
	    --resolver "127.0.0.1:$DNSP" --log "$LOG" -- sh "$T/inside.sh" \
	    "$W" "$O"
	if [ "$MODE" = nobody ]; then
		set -- env XDG_RUNTIME_DIR="$T/xdg-nobody" setpriv \
		    --reuid=nobody --regid=nogroup --clear-groups -- "$@"
	fi
	nsenter -t "$NS" -m -- "$@" >"$T/out$n" 2>"$ERR" &
	RUN=$!
	PIDS="$PIDS $RUN"
	i=0
	while [ ! -e "$W/ready" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
	ns dd if=/dev/zero of="$D/fill" bs=4k 2>/dev/null
	: >"$W/full"
	i=0
	while [ ! -e "$W/seen" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
	ns rm -f "$D/fill"
	: >"$W/room"
	wait "$RUN"
	grep -qx 'before 200 200' "$T/out$n" &&
	    ok "$what: proxied and captured before" ||
	    fail "$what: before: $(cat "$T/out$n" "$ERR")"
	grep -qx 'full 503 000' "$T/out$n" && ! grep -q 'full name' "$T/out$n" &&
	    ok "$what: full: 503 through the proxy, captured closed, no name" ||
	    fail "$what: full: $(cat "$T/out$n")"
	grep -qx 'room 200 200' "$T/out$n" &&
	    ok "$what: room again: traffic resumes" ||
	    fail "$what: room: $(cat "$T/out$n")"
	ns "$T/pinhole" log verify "$LOG" >"$T/verify$n" 2>&1
	[ $? -eq 3 ] && grep -q 'writing again' "$ERR" &&
	    ok "$what: the loss is recorded and verify reports it" ||
	    fail "$what: verify: $(cat "$T/verify$n" "$ERR")"
	ns umount "$D"
}

for MODE in root nobody; do
	full_run closed free
	full_run open free
	full_run closed full
	full_sandbox
done

finish
