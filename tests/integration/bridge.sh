#!/bin/sh
# contrib/approval-bridge/bridge.py against a real session: requests filed
# with `pinhole request` from a sandbox attached by `pinhole run
# --session`, answered by scripted lines on the bridge's stdin (allow for
# the session, deny with a note the agent reads, allow once).  As root
# and as nobody, each with its own runtime directory.  The session is
# named as a harness names its sessions, by a whole UUID.
. "$top_srcdir/tests/integration/lib.sh"

need python3
BRIDGE=$top_srcdir/contrib/approval-bridge/bridge.py
S=8c0e0d6e-35b1-4a3c-9f2e-0d1c5a7b9e21

for MODE in root nobody; do
	W="$T/w/$MODE"
	mkdir -p "$W/xdg"
	chmod 700 "$W/xdg"
	[ "$MODE" = nobody ] && chown -R nobody "$W"
	as_mode "$PINHOLE" session start "$S" >/dev/null ||
	    { fail "$MODE: session start"; continue; }
	printf 's\nd not today\no\n' >"$T/answers"
	bg_mode env PINHOLE="$PINHOLE" sh -c \
	    'exec timeout 60 python3 "$0" "$3" <"$1" >"$2"' \
	    "$BRIDGE" "$T/answers" "$W/bridge" "$S"
	as_mode timeout 60 "$PINHOLE" run --session "$S" -- sh -c '
	    for h in a.test b.test c.test; do
		"$0" request "$h:80" --reason "for $h" --wait=20 2>&1
		echo "status $?"
	    done' "$PINHOLE" >"$T/out" 2>&1
	sed -n 's/^status //p' "$T/out" | tr '\n' ' ' >"$T/st"
	[ "$(cat "$T/st")" = "0 1 0 " ] &&
	    ok "$MODE: session, deny, once: the requests end 0 1 0" ||
	    fail "$MODE: statuses '$(cat "$T/st")': $(cat "$T/out")"
	grep -q "not today" "$T/out" &&
	    ok "$MODE: the agent reads the deny note" ||
	    fail "$MODE: no note in $(cat "$T/out")"
	grep -q "^request r[0-9a-f]*: a.test:80 (for a.test)" "$W/bridge" &&
	    ok "$MODE: the bridge shows host, port and reason" ||
	    fail "$MODE: bridge said $(cat "$W/bridge")"
	as_mode "$PINHOLE" pending --all --json --session-id "$S" >"$T/all"
	grep '"host":"a.test"' "$T/all" | grep -q '"scope":"session"' &&
	    ok "$MODE: allowed for the session" ||
	    fail "$MODE: a.test: $(cat "$T/all")"
	as_mode "$PINHOLE" session stop "$S" || fail "$MODE: stop $S"
done
finish
