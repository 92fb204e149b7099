#!/bin/sh
# A session named by a harness's session id, a 36-character UUID, keeps
# its whole name everywhere the name travels: its control socket, the
# approve command a held connection prints, `approve SESSION/ID`,
# `pending --session`, the request and grant lines of the log and `log
# --session`.  So does a name as long as a name may be (64 bytes), whose
# sockets' paths are longer than a unix socket address holds, and whose
# session CA names it.  As root and as nobody, each with its own runtime
# directory.
. "$top_srcdir/tests/integration/lib.sh"

need python3
UUID=50b3b6dd-2673-4c68-96f5-efb9b059071d
LONG=$(printf '%064d' 7 | tr 0 s)

# Wait (at most 20 s) for an open request of session $1 in $W/pending.
wait_request() {
	i=0
	while [ $i -lt 200 ]; do
		as_mode "$PINHOLE" pending --json --session "$1" \
		    >"$W/pending" 2>&1
		grep -q '"id":"r' "$W/pending" && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

for MODE in root nobody; do
	W="$T/w/$MODE"
	mkdir -p "$W/xdg" "$W/log"
	chmod 700 "$W/xdg"
	[ "$MODE" = nobody ] && chown -R nobody "$W"
	for S in "$UUID" "$LONG"; do
		as_mode "$PINHOLE" session start "$S" --resolver 127.0.0.1:9 \
		    --log "$W/log/audit.log" >/dev/null 2>"$W/start" ||
		    { fail "$MODE: session start $S: $(cat "$W/start")"; continue; }
		[ ! -s "$W/start" ] &&
		    ok "$MODE: session start $S says nothing on stderr" ||
		    fail "$MODE: session start $S: $(cat "$W/start")"
		[ -S "$W/xdg/pinhole/$S.sock" ] &&
		    ok "$MODE: the control socket bears the whole name" ||
		    fail "$MODE: sockets: $(ls "$W/xdg/pinhole")"
		bg_mode timeout 60 "$PINHOLE" run --session "$S" -- \
		    "$PINHOLE" request a.test:80 --reason why --wait=30 \
		    >"$W/agent" 2>&1
		wait_request "$S" ||
		    { fail "$MODE: no request: $(cat "$W/pending")"; continue; }
		id=$(sed -n 's/.*"id":"\(r[0-9a-f]*\)".*/\1/p' "$W/pending")
		grep -q "\"session\":\"$S\"" "$W/pending" &&
		    ok "$MODE: pending --session $S names it whole" ||
		    fail "$MODE: pending: $(cat "$W/pending")"
		as_mode "$PINHOLE" approve "$S/$id" --session >"$W/approve" 2>&1
		grep -q "^approved $id: a.test:80 for this session ($S), until it stops$" \
		    "$W/approve" &&
		    ok "$MODE: approve $S/$id --session" ||
		    fail "$MODE: approve: $(cat "$W/approve")"
		as_mode "$PINHOLE" pending --all --json --session-id "$S" |
		    grep "\"id\":\"$id\"" | grep -q '"scope":"session"' &&
		    ok "$MODE: pending --session-id shows the grant" ||
		    fail "$MODE: pending --all: $(as_mode "$PINHOLE" pending --all --json --session-id "$S")"
		as_mode "$PINHOLE" session stop "$S" || fail "$MODE: stop $S"
		as_mode "$PINHOLE" log --json --session "$S" "$W/log/audit.log" \
		    >"$W/lines" 2>&1
		grep '"event":"request"' "$W/lines" | grep -q "\"request_id\":\"$id\"" &&
		    grep '"event":"grant"' "$W/lines" | grep -q "\"request_id\":\"$id\"" &&
		    ok "$MODE: log --session $S has the request and the grant" ||
		    fail "$MODE: log: $(cat "$W/lines")"
	done
done
finish
