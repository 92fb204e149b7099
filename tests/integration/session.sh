#!/bin/sh
# pinhole session: a detached gateway under a name, its record in the
# control directory, list, status, stop; a killed session seen as dead;
# --foreground; ask mode answered through the session's control socket.
# As root and as nobody (each with its own control directory).
. "$top_srcdir/tests/integration/lib.sh"

need curl
oport=$(free_port)
bg python3 -m http.server "$oport" --bind 127.0.0.1 --directory "$T" \
    >/dev/null 2>&1
wait_port "$oport" || { finish; exit 1; }
ORIGIN="http://127.0.0.1:$oport/"

# The gateway options every session here takes.
start() {
	as_mode "$PINHOLE" session start "$@" --resolver 127.0.0.1:9 \
	    --allow 'allow-private 127.0.0.0/8' --log "$W/audit.log"
}
get() {
	curl -s -o /dev/null -w '%{http_code}' -m "${3:-5}" \
	    -x "http://127.0.0.1:$1" "$2"
}
# The pid a session's record names.
record_pid() {
	sed -n 's/.*"pid":\([0-9]*\).*/\1/p' "$W/xdg/pinhole/session-$1.json"
}
# Wait (at most 5 s) until nothing listens on port $1.
port_closed() {
	python3 - "$1" <<'PY'
import socket, sys, time
end = time.time() + 5
while time.time() < end:
    try:
        socket.create_connection(("127.0.0.1", int(sys.argv[1])), 0.2).close()
        time.sleep(0.05)
    except OSError:
        sys.exit(0)
sys.exit(1)
PY
}
# Kill whatever session of $MODE is left.
stop_all() {
	for f in "$W"/xdg/pinhole/session-*.json; do
		[ -f "$f" ] || continue
		p=$(sed -n 's/.*"pid":\([0-9]*\).*/\1/p' "$f")
		[ -n "$p" ] && kill -9 "$p" 2>/dev/null
	done
}

# session start --help says what it listens on: no network port but
# where --listen says; the control directory's two sockets.
"$PINHOLE" session start --help >"$T/help"
grep -q "^  -l, --listen ADDR:PORT *serve as an HTTP proxy here too (none by default;" "$T/help" &&
    grep -q "listens on no$" "$T/help" && grep -q "NAME.attach" "$T/help" &&
    ! grep -q "default 127.0.0.1:3128" "$T/help" &&
    ok "session start --help states its listeners" ||
    fail "session start --help: $(cat "$T/help")"

for MODE in root nobody; do
	W="$T/w/$MODE"
	mkdir -p "$W" && mkdir -m 700 "$W/xdg"
	[ "$MODE" = nobody ] && chown -R nobody "$W"
	pport=$(free_port)
	sport=$(free_port)

	# Detached: the parent prints the name once the gateway serves.
	name=$(start s1 --listen "127.0.0.1:$pport" --socks "127.0.0.1:$sport" \
	    --allow "127.0.0.1:$oport" 2>"$T/err")
	[ $? = 0 ] && [ "$name" = s1 ] && ok "$MODE: start prints s1" ||
	    fail "$MODE: start: $name $(cat "$T/err")"
	as_mode "$PINHOLE" session list >"$T/list"
	head -1 "$T/list" | grep -q "^NAME  *PID  *SINCE (UTC)  *LISTENS ON  *IDLE  *COMMANDS$" &&
	    grep -q "^s1  *[0-9][0-9]*  *20[0-9-]*T[0-9:]*Z 127.0.0.1:$pport socks5://127.0.0.1:$sport  *[0-9]*s  *0 attached now, 0 in all, 0 open requests$" \
	    "$T/list" && ok "$MODE: list shows s1, under a head, in words" ||
	    fail "$MODE: list: $(cat "$T/list")"
	[ "$(get "$pport" "$ORIGIN")" = 200 ] &&
	    ok "$MODE: an allowed origin through the session" ||
	    fail "$MODE: allowed origin"
	[ "$(get "$pport" http://denied.test/)" = 403 ] &&
	    ok "$MODE: a denied host is 403" || fail "$MODE: denied host"
	loggrep "$W/audit.log" '"host":"denied.test"' &&
	    ok "$MODE: the denied host is logged" || fail "$MODE: not logged"
	as_mode "$PINHOLE" session status s1 --json >"$T/st"
	python3 -c 'import json,sys; o=json.load(open(sys.argv[1])); assert o["name"]=="s1" and o["requests"]==0 and o["control"].endswith("/s1.sock"), o' \
	    "$T/st" && ok "$MODE: status --json" ||
	    fail "$MODE: status: $(cat "$T/st")"
	as_mode "$PINHOLE" session status s1 | grep -q "^s1 .* 0 open requests$" &&
	    ok "$MODE: status" || fail "$MODE: status text"
	start s1 --listen "127.0.0.1:$(free_port)" 2>"$T/err" >/dev/null
	[ $? = 1 ] && grep -q "session s1 is already running" "$T/err" &&
	    ok "$MODE: starting s1 twice fails" ||
	    fail "$MODE: second start: $(cat "$T/err")"
	as_mode "$PINHOLE" session stop s1 &&
	    ok "$MODE: stop" || fail "$MODE: stop"
	[ -z "$(as_mode "$PINHOLE" session list 2>"$T/err")" ] &&
	    grep -q "^pinhole session list: no running session: start one with \`pinhole session start NAME\`$" "$T/err" &&
	    [ ! -e "$W/xdg/pinhole/session-s1.json" ] &&
	    ok "$MODE: stopped: not listed, no record" ||
	    fail "$MODE: after stop"
	port_closed "$pport" && ok "$MODE: stopped: the port is closed" ||
	    fail "$MODE: port open after stop"
	# --stop-idle: not while a command is attached (longer than the
	# idle time), then once nothing goes on, by itself.
	mkdir -p "$W/s2"
	[ "$MODE" = nobody ] && chown nobody "$W/s2"
	as_mode "$PINHOLE" session start s2 --stop-idle 2 --resolver 127.0.0.1:9 \
	    --log "$W/s2/audit.log" >/dev/null 2>"$T/err" ||
	    fail "$MODE: start s2: $(cat "$T/err")"
	as_mode "$PINHOLE" run --session s2 -- sh -c 'sleep 5; echo done' \
	    >"$T/out" 2>&1
	[ "$(cat "$T/out")" = done ] &&
	    ok "$MODE: --stop-idle 2: a command of 5 s runs to its end" ||
	    fail "$MODE: --stop-idle: $(cat "$T/out")"
	i=0
	while [ $i -lt 100 ]; do
		as_mode "$PINHOLE" session list --json >"$T/list"
		grep -q '"idle_s"' "$T/list" && break
		sleep 0.1
		i=$((i + 1))
	done
	grep -q '"name":"s2".*"idle_s":[0-9]*,"stop_idle":2' "$T/list" &&
	    ok "$MODE: list --json: s2 idle since its command ended" ||
	    fail "$MODE: list: $(cat "$T/list")"
	i=0
	while [ $i -lt 300 ] && [ -e "$W/xdg/pinhole/session-s2.json" ]; do
		sleep 0.1
		i=$((i + 1))
	done
	[ ! -e "$W/xdg/pinhole/session-s2.json" ] &&
	    loggrep "$W/s2/audit.log" '"event":"stop"' &&
	    ok "$MODE: s2 stops by itself once idle" ||
	    fail "$MODE: s2 still runs: $(as_mode "$PINHOLE" session list)"

	as_mode "$PINHOLE" session stop s1 2>"$T/err"
	[ $? = 1 ] && grep -q "no running session s1" "$T/err" &&
	    ok "$MODE: stop of a stopped session fails" ||
	    fail "$MODE: stop again"
	as_mode "$PINHOLE" session status s1 2>"$T/err"
	[ $? = 1 ] && grep -q "no running session s1" "$T/err" &&
	    ok "$MODE: status of a stopped session fails" ||
	    fail "$MODE: status of stopped"

	# Killed: seen as dead, and the name can be used again.
	start k --listen "127.0.0.1:$pport" >/dev/null
	kill -9 "$(record_pid k)"
	i=0
	while [ $i -lt 50 ] && as_mode "$PINHOLE" session list | grep -q "^k "; do
		sleep 0.1; i=$((i + 1))
	done
	[ $i -lt 50 ] && [ ! -e "$W/xdg/pinhole/session-k.json" ] &&
	    ok "$MODE: a killed session is not listed, its record gone" ||
	    fail "$MODE: killed session listed"
	port_closed "$pport"
	[ "$(start k --listen "127.0.0.1:$pport")" = k ] &&
	    ok "$MODE: a killed session's name starts again" ||
	    fail "$MODE: restart after kill"
	as_mode "$PINHOLE" session stop k || fail "$MODE: stop k"

	# A gateway that cannot serve: the parent says why, nothing is left.
	start busy --listen "127.0.0.1:$oport" >/dev/null 2>"$T/err"
	[ $? = 1 ] && grep -q "cannot listen on 127.0.0.1:$oport" "$T/err" &&
	    [ ! -e "$W/xdg/pinhole/session-busy.json" ] &&
	    [ ! -e "$W/xdg/pinhole/session-busy.lock" ] &&
	    ok "$MODE: a session that cannot listen says why, exit 1" ||
	    fail "$MODE: busy port: $(cat "$T/err")"

	# Bad names are usage errors.
	for bad in 'a/b' '' "$(printf '%065d' 0)"; do
		as_mode "$PINHOLE" session start "$bad" 2>/dev/null
		[ $? = 2 ] || fail "$MODE: bad name '$bad' accepted"
	done
	ok "$MODE: bad names are refused with status 2"

	# --foreground stays attached until SIGTERM.
	bg_mode "$PINHOLE" session start fg --foreground \
	    --listen "127.0.0.1:$pport" --resolver 127.0.0.1:9 --allow x.test \
	    --log "$W/audit.log" 2>"$T/fg.err"
	fg=$!
	wait_port "$pport"
	i=0
	while ! grep -q "attach a command" "$T/fg.err" && [ $i -lt 50 ]; do
		sleep 0.1; i=$((i + 1))
	done
	grep -q "^pinhole session start: session fg serves on 127\.0\.0\.1:$pport, and takes commands$" "$T/fg.err" &&
	    grep -q "attach a command with \`pinhole run --session fg -- COMMAND\`; answer its requests with \`pinhole watch --session fg\`" "$T/fg.err" &&
	    ok "$MODE: --foreground says where it serves and how to attach" ||
	    fail "$MODE: --foreground says: $(cat "$T/fg.err")"
	as_mode "$PINHOLE" session list | grep -q "^fg  *$fg " &&
	    ok "$MODE: --foreground: listed with its pid" ||
	    fail "$MODE: --foreground not listed"
	kill -TERM "$fg"
	wait "$fg"
	[ $? = 0 ] && [ ! -e "$W/xdg/pinhole/session-fg.json" ] &&
	    ok "$MODE: --foreground: SIGTERM ends it, record gone" ||
	    fail "$MODE: --foreground SIGTERM"

	# Ask mode: a held connection, approved through the control socket.
	start ask --ask --listen "127.0.0.1:$pport" >/dev/null
	get "$pport" "$ORIGIN" 15 >"$T/code" &
	held=$!
	i=0 id=
	while [ $i -lt 50 ] && [ -z "$id" ]; do
		sleep 0.1; i=$((i + 1))
		id=$(as_mode "$PINHOLE" pending --session-id ask --json |
		    sed -n 's/.*"id":"\(r[0-9a-f]*\)".*/\1/p' | head -1)
	done
	as_mode "$PINHOLE" session status ask | grep -q " 1 open request$" &&
	    ok "$MODE: status counts the open request" ||
	    fail "$MODE: status requests"
	as_mode "$PINHOLE" approve --once "$id" >/dev/null 2>&1
	wait "$held"
	[ "$(cat "$T/code")" = 200 ] &&
	    ok "$MODE: ask: approved through the session's control socket" ||
	    fail "$MODE: ask: $(cat "$T/code") id '$id'"
	as_mode "$PINHOLE" session stop ask || fail "$MODE: stop ask"
	stop_all
done
finish
