#!/bin/sh
# The audit log's lines are written once per pass of the event loop.
# The gateway is killed (SIGKILL) under load, as root and as nobody,
# with each --log-fsync policy: every answer a client had read in full,
# allowed or refused, must have its line in the file; the file's chain
# verifies, the session the kill ended named as having no stop line (or
# the file ends in one line cut short by the interrupted write, which the
# next start closes with a "resume" line), and the chain carries on
# after a restart.
. "$top_srcdir/tests/integration/lib.sh"
here="$top_srcdir/tests/integration"

need python3
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY

O=$(free_port)
bg python3 "$here/origin.py" "$O" 2>/dev/null
wait_port "$O"

# Clients through proxy port $1, half to the origin (allowed), half to
# a host the policy refuses, keep-alive, each request's path unique;
# every answer read whole is appended to $2 (its path and status).  At
# most $3 requests per client and 30 seconds; a client stops at the
# first error (the gateway was killed).
cat >"$T/load.py" <<EOF
import http.client, sys, threading, time
port, out, n = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
done, lock = [], threading.Lock()
end = time.time() + 30
def client(k):
    host = "127.0.0.1:$O" if k % 2 == 0 else "refused.test:$O"
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    for i in range(n):
        if time.time() > end:
            return
        path = "/crash/%d-%d" % (k, i)
        try:
            c.request("GET", "http://%s%s" % (host, path))
            r = c.getresponse()
            r.read()
        except (OSError, http.client.HTTPException):
            return
        with lock:
            done.append("%s %d" % (path, r.status))
        if r.will_close:
            c.close()
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
ts = [threading.Thread(target=client, args=(k,)) for k in range(8)]
for t in ts:
    t.start()
for t in ts:
    t.join()
with open(out, "w") as f:
    f.write("".join(s + "\n" for s in done))
EOF

# Check that every path in answers file $1 is in a whole line of log $2
# with its status; print how many answers there were.
cat >"$T/check.py" <<'EOF'
import json, sys
seen = {}
with open(sys.argv[2], "rb") as f:
    for raw in f:
        try:
            e = json.loads(raw)
        except ValueError:
            continue
        if e.get("path", "").startswith("/crash/"):
            seen[e["path"]] = e.get("status")
n = missing = 0
for line in open(sys.argv[1]):
    path, status = line.split()
    n += 1
    if seen.get(path) != int(status):
        missing += 1
        if missing <= 5:
            print("no line for %s (status %s)" % (path, status),
                file=sys.stderr)
print(n)
sys.exit(1 if missing else 0)
EOF

# Wait (at most 20 s) until log $1 has at least $2 lines.
wait_lines() {
	i=0
	while [ "$(wc -l <"$1" 2>/dev/null || echo 0)" -lt "$2" ] &&
	    [ $i -lt 200 ]; do
		sleep 0.1
		i=$((i + 1))
	done
}

# Start the gateway as $MODE on log $1 with --log-fsync $2; pid in $GW,
# port in $P.  With no log budget: every allowed line is written on its
# own, as the load here is far past the default one.
start_gw() {
	P=$(free_port)
	set -- "$PINHOLE" proxy --listen "127.0.0.1:$P" --allow "127.0.0.1:$O" \
	    --allow "allow-private 127.0.0.0/8" --log "$1" --log-fsync "$2" \
	    --log-budget 0
	if [ "$MODE" = nobody ]; then
		set -- env XDG_RUNTIME_DIR="$T/xdg-nobody" HOME="$T/home-nobody" \
		    setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"
	fi
	"$@" 2>>"$T/err-$MODE" &
	GW=$!
	PIDS="$PIDS $GW"
	wait_port "$P"
}

# Kill the gateway under load with --log-fsync $1, then check the log.
crash() {
	fs=$1
	log="$T/log/crash-$MODE-$fs.log"
	start_gw "$log" "$fs" || return
	python3 "$T/load.py" "$P" "$T/answers" 3000 &
	LOAD=$!
	wait_lines "$log" 400
	kill -KILL "$GW"
	wait "$GW" 2>/dev/null
	wait "$LOAD"
	if n=$(python3 "$T/check.py" "$T/answers" "$log" 2>"$T/missing"); then
		[ "$n" -ge 100 ] && ok "$MODE $fs: all $n answers read have their line" ||
		    fail "$MODE $fs: only $n answers before the kill"
	else
		fail "$MODE $fs: answers without a line: $(cat "$T/missing")"
	fi
	last=$(wc -l <"$log")
	"$PINHOLE" log verify "$log" >"$T/verify" 2>&1
	rv=$?
	# The chain is whole, and the session the kill ended is named: it
	# has no stop line, and its gateway does not run.
	if [ $rv -eq 3 ] && [ "$(grep -c '^INCOMPLETE' "$T/verify")" = 1 ] &&
	    grep -q "^INCOMPLETE: session .*: no stop line: its gateway (pid $GW) is not running" "$T/verify"; then
		ok "$MODE $fs: the killed gateway's log verifies, its missing stop named (exit 3)"
	elif grep -q "^NOT INTACT: $log:$((last + 1)): cut short" "$T/verify" &&
	    [ "$(grep -c '^NOT INTACT' "$T/verify")" = 1 ]; then
		ok "$MODE $fs: the log verifies but for a last line cut short"
	else
		fail "$MODE $fs: verify: $(head -3 "$T/verify")"
	fi
	# The chain carries on after a restart.
	start_gw "$log" "$fs" || return
	python3 "$T/load.py" "$P" "$T/answers2" 5
	kill "$GW"
	wait "$GW" 2>/dev/null
	if [ $rv -eq 3 ]; then
		"$PINHOLE" log verify "$log" >"$T/verify" 2>&1
		[ $? -eq 3 ] && grep -q '^chain intact otherwise' "$T/verify" &&
		    [ "$(grep -c '^INCOMPLETE' "$T/verify")" = 1 ] &&
		    ok "$MODE $fs: the restarted log verifies, the killed session named" ||
		    fail "$MODE $fs: restarted: $(cat "$T/verify")"
	else
		expect "$MODE $fs: the restart closed the cut line" \
		    grep -q '"event":"resume"' "$log"
	fi
	expect "$MODE $fs: the restarted gateway logged its answers" \
	    python3 "$T/check.py" "$T/answers2" "$log"
}

for MODE in ${CRASH_MODES:-root nobody}; do
	for fs in ${CRASH_FSYNC:-never batch always}; do
		crash "$fs"
	done
done

expect_fail "--log-fsync takes never, batch or always" \
    "$PINHOLE" proxy --listen 127.0.0.1:1 --log-fsync sometimes

finish
