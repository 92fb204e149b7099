#!/bin/sh
# pinhole run --session: commands attached to one session's gateway, each
# in a sandbox of its own; the policy, the grants and the log are the
# session's, every line names the sandbox; a missing or dead session is
# exit 125 and leaves no network; a killed command's sandbox is dropped;
# 64 at once, the attach limit, and 10,000 attach cycles without a leak.
# As root and as nobody (each with its own control directory).
. "$top_srcdir/tests/integration/lib.sh"

need curl
oport=$(free_port)
gport=$(free_port)
http_origin "$oport" "$T"
http_origin "$gport" "$T"
wait_port "$oport" && wait_port "$gport" || { finish; exit 1; }
cp "$PINHOLE" "$T/pinhole"
# Freed memory goes back at once, so that RSS tells a leak.
ASAN_OPTIONS="${ASAN_OPTIONS:-}:quarantine_size_mb=0"
export ASAN_OPTIONS

start() {
	as_mode "$T/pinhole" session start "$@" --resolver 127.0.0.1:9 \
	    --allow 'allow-private 127.0.0.0/8' --allow "127.0.0.1:$oport" \
	    --log "$W/log/audit.log"
}
# curl through the sandbox's proxy (NO_PROXY would skip it for 127/8).
CURL="curl -s -o /dev/null -w %{http_code} -m 5 --noproxy ''"
inside() {
	s=$1; shift
	as_mode "$T/pinhole" run --session "$s" -- sh -c "$*"
}
# The network namespaces held by this test's pinhole (the machine's
# others come and go with other work).
netns_ours() {
	lsns -n -t net -o PID | while read -r p; do
		[ "$(readlink "/proc/$p/exe" 2>/dev/null)" = "$T/pinhole" ] &&
		    echo "$p"
	done | wc -l
}
field() {	# the session's record member $2
	sed -n "s/.*\"$2\":\([0-9]*\).*/\1/p" "$W/xdg/pinhole/session-$1.json"
}
# Wait (at most 30 s) until session $1 has $2 sandboxes attached.
wait_attached() {
	i=0
	while [ "$(field "$1" attached)" != "$2" ] && [ $i -lt 600 ]; do
		sleep 0.05; i=$((i + 1))
	done
	[ "$(field "$1" attached)" = "$2" ]
}

in_s3() {	# a pinhole command for session s3: in_s3 VERB ARGS...
	verb=$1; shift
	as_mode "$T/pinhole" "$verb" -s s3 "$@"
}

for MODE in root nobody; do
	W="$T/w/$MODE"
	mkdir -p "$W/log" && mkdir -m 700 "$W/xdg"
	[ "$MODE" = nobody ] && chown -R nobody "$W"

	start s1 >/dev/null 2>"$T/err" || fail "$MODE: start: $(cat "$T/err")"
	code=$(inside s1 "$CURL http://127.0.0.1:$oport/")
	[ "$code" = 200 ] && ok "$MODE: an allowed host from an attached command" ||
	    fail "$MODE: allowed: $code"
	code=$(inside s1 "$CURL http://127.0.0.1:$gport/")
	[ "$code" = 403 ] && ok "$MODE: another host is refused" ||
	    fail "$MODE: refused: $code"
	loggrep "$W/log/audit.log" "\"event\":\"request\".*\"sandbox\":\"2\",\"cmd\":\"sh -c 'curl .*\"pid\":[0-9]*,\"conn\":[0-9]*,.*\"port\":$gport" &&
	    ok "$MODE: the refusal names the sandbox, its command and pid" ||
	    fail "$MODE: log: $(tail -3 "$W/log/audit.log")"
	loggrep "$W/log/audit.log" '"event":"detach","session":"s1","sandbox":"2",.*"detail":"exit 0"' &&
	    ok "$MODE: the sandbox's end is logged" || fail "$MODE: no detach line"
	inside s1 'exit 7'
	[ $? = 7 ] && ok "$MODE: the command's exit status" || fail "$MODE: status"
	as_mode env PINHOLE_SESSION=s1 "$T/pinhole" run -- true &&
	    loggrep "$W/log/audit.log" '"event":"attach","session":"s1","sandbox":"4"' &&
	    ok "$MODE: PINHOLE_SESSION attaches" || fail "$MODE: PINHOLE_SESSION"
	as_mode "$T/pinhole" run --session nope -- touch "$W/ran" 2>"$T/err"
	rv=$?
	[ $rv = 125 ] && [ ! -e "$W/ran" ] &&
	    grep -q "session nope is not running" "$T/err" &&
	    ok "$MODE: no such session: 125, the command did not run" ||
	    fail "$MODE: missing session: $rv $(cat "$T/err")"
	as_mode "$T/pinhole" run --session s1 --allow x.test -- true 2>"$T/err"
	[ $? = 2 ] && grep -q -- "--allow belongs to the session" "$T/err" &&
	    ok "$MODE: gateway options go to the session" ||
	    fail "$MODE: gateway option: $(cat "$T/err")"

	# A request from a command that has gone, approved for the session,
	# serves every later command; other hosts stay refused.
	inside s1 "\"$T/pinhole\" request 127.0.0.1:$gport --reason 'uv lock'" \
	    >/dev/null
	id=$(wait_pending 127.0.0.1 as_mode "$T/pinhole")
	as_mode "$T/pinhole" pending >"$T/pend"
	loggrep "$W/log/audit.log" '"event":"request",.*"session":"s1","sandbox":"5","cmd":"sh -c' &&
	    grep -q "sandbox 5, pid [0-9]*: sh -c" "$T/pend" &&
	    ok "$MODE: the request names its sandbox, in the log and pending" ||
	    fail "$MODE: request line: $(grep request_id "$W/log/audit.log" | tail -1)"
	as_mode "$T/pinhole" approve "$id" --session -s s1 >/dev/null 2>&1 ||
	    fail "$MODE: approve $id"
	code=$(inside s1 "$CURL http://127.0.0.1:$gport/; $CURL http://127.0.0.1:$gport/")
	[ "$code" = 200200 ] && ok "$MODE: the session grant serves the next command" ||
	    fail "$MODE: after the grant: $code"

	# 64 at once, all through, all counted.
	i=0 jobs=
	while [ $i -lt 64 ]; do
		inside s1 "c=\$($CURL -S -m 30 http://127.0.0.1:$gport/); while [ ! -e $W/go ]; do sleep 0.05; done; echo \$c" \
		    >"$W/par.$i" 2>&1 &
		jobs="$jobs $!"
		i=$((i + 1))
	done
	wait_attached s1 64 && ok "$MODE: 64 commands attached at once" ||
	    fail "$MODE: attached: $(field s1 attached)"
	touch "$W/go"
	wait $jobs
	[ "$(cat "$W"/par.* | grep -c '^200$')" = 64 ] &&
	    ok "$MODE: 64 parallel commands reached the granted host" ||
	    fail "$MODE: parallel: $(cat "$W"/par.* | sort | uniq -c); not 200: $(grep -L '^200$' "$W"/par.* | xargs cat)"
	wait_attached s1 0 || fail "$MODE: still attached: $(field s1 attached)"

	# A killed command: its sandbox is gone, its end closed.
	as_mode sh -c 'echo $$ >"$0"; exec "$@"' "$W/sleeper" "$T/pinhole" \
	    run --session s1 -- sleep 30 &
	wait_attached s1 1 || fail "$MODE: sleeper not attached"
	kill -9 "$(cat "$W/sleeper")"
	wait_attached s1 0 &&
	    ok "$MODE: a killed command's sandbox is dropped" ||
	    fail "$MODE: killed: $(field s1 attached) attached"

	# The attach limit: a clear error, not a hang.
	start s2 --max-sandboxes 1 >/dev/null 2>"$T/err" ||
	    fail "$MODE: start s2: $(cat "$T/err")"
	as_mode "$T/pinhole" run --session s2 -- sh -c \
	    "while [ ! -e $W/go2 ]; do sleep 0.05; done; $CURL http://127.0.0.1:$oport/" \
	    >"$W/held" 2>&1 &
	held=$!
	wait_attached s2 1 || fail "$MODE: s2: not attached"
	as_mode "$T/pinhole" run --session s2 -- true 2>"$T/err"
	rv=$?
	[ $rv = 125 ] && grep -q "as many as the session takes" "$T/err" &&
	    ok "$MODE: over the attach limit: 125 and why" ||
	    fail "$MODE: limit: $rv $(cat "$T/err")"

	# The session killed: the attached command has no network at all,
	# and no new command attaches.
	kill -9 "$(field s2 pid)"
	touch "$W/go2"
	wait $held
	# curl's 000; the run may also say the session went away.
	grep -qx 000 "$W/held" &&
	    ok "$MODE: a killed session leaves its command without network" ||
	    fail "$MODE: after the kill: $(cat "$W/held")"
	as_mode "$T/pinhole" run --session s2 -- touch "$W/ran2" 2>"$T/err"
	[ $? = 125 ] && [ ! -e "$W/ran2" ] &&
	    ok "$MODE: a dead session refuses new commands" ||
	    fail "$MODE: dead session: $(cat "$T/err")"

	# Held connections (--ask) of three commands, one approval.
	start s3 --ask=20 >/dev/null 2>"$T/err" || fail "$MODE: s3: $(cat "$T/err")"
	i=0 jobs=
	while [ $i -lt 3 ]; do
		as_mode "$T/pinhole" run --session s3 -- sh -c \
		    "curl -s -o /dev/null -w %{http_code} -m 25 --noproxy '' http://127.0.0.1:$gport/" \
		    >"$W/ask.$i" 2>"$W/said.$i" &
		jobs="$jobs $!"
		i=$((i + 1))
	done
	id=$(wait_pending 127.0.0.1 in_s3)
	# Approve once all three are held (each says so), or after 30 s.
	i=0
	while [ "$(cat "$W"/said.* | grep -c '^pinhole: holding')" -lt 3 ] &&
	    [ $i -lt 300 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	as_mode "$T/pinhole" approve "$id" --session -s s3 >/dev/null 2>&1 ||
	    fail "$MODE: approve held $id"
	wait $jobs
	[ "$(cat "$W"/ask.*)" = 200200200 ] &&
	    ok "$MODE: one approval releases three commands' held connections" ||
	    fail "$MODE: held: $(cat "$W"/ask.*)"
	# (each by the id it was given: the first's is the request's)
	cat "$W"/said.* | sed -n "s/^pinhole: holding 127\.0\.0\.1:$gport for approval (20 s): pinhole approve s3\/\(r[0-9a-f]\{16\}\) .*/\1/p" |
	    sort -u >"$W/said.ids"
	[ "$(wc -l <"$W/said.ids")" = 3 ] && grep -qx "$id" "$W/said.ids" &&
	    [ "$(cat "$W"/said.* | grep -c "^pinhole: approved 127\.0\.0\.1:$gport (session, ")" = 3 ] &&
	    ok "$MODE: each command says its connection is held, and approved" ||
	    fail "$MODE: said: $(cat "$W"/said.*)"
	as_mode "$T/pinhole" session stop s3 >/dev/null 2>&1

	# Real commands come and go: no namespace, link or descriptor stays.
	pid=$(field s1 pid)
	fd0=$(ls /proc/"$pid"/fd | wc -l) ns0=$(netns_ours)
	i=0
	while [ $i -lt 100 ]; do
		as_mode "$T/pinhole" run --session s1 -- true || break
		i=$((i + 1))
	done
	ran=$i
	wait_attached s1 0
	fd1=$(ls /proc/"$pid"/fd | wc -l) ns1=$(netns_ours)
	[ $ran = 100 ] && [ "$fd0" = "$fd1" ] && [ "$ns1" -le "$ns0" ] &&
	    ok "$MODE: 100 commands: $fd1 descriptors, $ns1 network namespaces, no more than before" ||
	    fail "$MODE: after $ran commands: fds $fd0 -> $fd1, netns $ns0 -> $ns1"

	# 10,000 attach cycles: descriptors and memory as they were.
	pid=$(field s1 pid)
	as_mode /usr/bin/python3 "$top_srcdir/tests/integration/attach-cycle.py" \
	    "$W/xdg/pinhole/s1.attach" "$pid" 10000 300 >"$T/cyc" 2>&1
	read -r _ fd0 fd1 _ rss0 rss1 <"$T/cyc"
	[ "${fd0:-x}" = "${fd1:-y}" ] &&
	    [ $((rss1 - rss0)) -lt 8192 ] &&
	    ok "$MODE: 10,000 attach cycles: $fd0 descriptors before and after, RSS $rss0 -> $rss1 kB" ||
	    fail "$MODE: cycles: $(cat "$T/cyc")"
	as_mode "$T/pinhole" session stop s1 >/dev/null 2>&1 ||
	    fail "$MODE: stop s1"
done
finish
