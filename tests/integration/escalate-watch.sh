#!/bin/sh
# pinhole watch with two gateways, as root and as nobody: the prompt names
# the session of the request it shows, and a key answers exactly that
# request in that session, not the oldest open request of any session;
# r denies it with the reason typed, which the agent is told.
. "$top_srcdir/tests/integration/lib.sh"

PROBE="$top_builddir/tests/integration/escalate-probe"
need root "$PROBE" curl setpriv
export ASAN_OPTIONS=detect_leaks=0
cp "$PROBE" "$T/escalate-probe" && chmod 755 "$T/escalate-probe"
cp "$PINHOLE" "$T/pinhole" && chmod 755 "$T/pinhole"
mkdir -m 1777 "$T/w"

# Drive pinhole watch in a pty: press n until the prompt shows b.test of
# session bbbb0002, then r and a reason; q to quit.  The screen goes to
# argv[2].
cat >"$T/watch.py" <<'EOF'
import sys
sys.path.insert(0, sys.argv[3])
from ptydrive import Pty
p = Pty([sys.argv[1], "watch"])
p.pump(10, lambda o: o.count(b"watching session") >= 2 and
       b"a.test" in o and b"b.test" in o)
for _ in range(10):
    p.pump(0.3)
    if b"b.test:443 (session bbbb0002)" in p.prompt():
        p.key(b"r")
        p.pump(5, b"saying, for the agent")
        p.key(b"use the mirrorX\x7f\r")
        break
    p.key(b"n")
p.pump(5, b"(by uid")
p.quit()
open(sys.argv[2], "wb").write(p.out)
EOF
cp "$top_srcdir/tests/integration/ptydrive.py" "$T"
chmod 644 "$T/watch.py" "$T/ptydrive.py"

for MODE in root nobody; do
	W=$T/w/$MODE
	mkdir -p "$W/xdg"
	[ "$MODE" = nobody ] && chown -R nobody:nogroup "$W"
	chmod 700 "$W/xdg"
	pa=$(free_port)
	pb=$(free_port)
	bg_mode "$T/escalate-probe" "$pa" aaaa0001 "$W/audit-a.log"
	bg_mode "$T/escalate-probe" "$pb" bbbb0002 "$W/audit-b.log"
	wait_port "$pa" && wait_port "$pb" || { finish; exit 1; }
	# The older request is session A's; the one on screen last is B's.
	curl -s -d host=a.test "http://127.0.0.1:$pa/pinhole/request" >/dev/null
	sleep 0.2
	curl -s -d host=b.test "http://127.0.0.1:$pb/pinhole/request" >/dev/null

	as_mode timeout 30 python3 "$T/watch.py" "$T/pinhole" "$W/watch.out" \
	    "$T"
	tr '\r' '\n' <"$W/watch.out" >"$W/screen"
	grep -q "b.test:443 (session bbbb0002) \[2 open\]" "$W/screen" &&
	    ok "$MODE: the prompt names the session of its request" ||
	    fail "$MODE: prompt: $(cat -v "$W/screen" | tail -5)"
	grep -q "denied r[0-9a-f]*: b.test:443 (session bbbb0002); the agent is told: use the mirror (by uid [0-9]* via watch)" "$W/screen" &&
	    ok "$MODE: r denied the request shown, in its session, saying why" ||
	    fail "$MODE: watch: $(grep -a "denied\|saying" "$W/screen" | cat -v)"
	as_mode "$T/pinhole" pending --json >"$W/pending"
	grep -q '"id":"r[0-9a-f]*","host":"a.test".*"session":"aaaa0001"' "$W/pending" &&
	    ok "$MODE: session A's request is still pending" ||
	    fail "$MODE: pending: $(cat "$W/pending")"
	grep -q '"host":"b.test"' "$W/pending" &&
	    fail "$MODE: b.test is still pending" ||
	    ok "$MODE: b.test is no longer pending"
	loggrep "$W/audit-b.log" '"event":"deny","verdict":"deny","reason":"use the mirror".*"host":"b.test".*"by":"uid [0-9]+ via watch"' &&
	    ok "$MODE: session B's audit log has the denial" ||
	    fail "$MODE: audit B: $(cat "$W/audit-b.log")"
	loggrep "$W/audit-a.log" '"event":"deny"' &&
	    fail "$MODE: session A's request was answered" ||
	    ok "$MODE: session A's request was not answered"
done
finish
