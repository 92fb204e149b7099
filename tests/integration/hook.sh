#!/bin/sh
# pinhole hook: a harness's PreToolUse call for Bash comes back with its
# command wrapped in `pinhole run --session`; run as the harness runs it
# (bash -c), it prints and exits exactly as the command run directly.
# Other tools get no answer; a malformed call is blocked (exit 2); the
# session is started on first use, by one of two racing calls; an odd
# session id is hashed.  --exec, the harness's shell, runs a command as
# bash does in the session of CLAUDE_CODE_SESSION_ID (a UUID), and with
# no network without it; --allow adds to the user's policy, and every
# other option of session start starts the session.  The bwrap
# recipe of docs/agents.md runs (as nobody).  As root and as nobody,
# each with its own runtime directory.
. "$top_srcdir/tests/integration/lib.sh"

need python3

# The call of tool $2 with command $3 (a file) in harness session $1.
call() {
	python3 - "$@" <<'PY'
import json, sys
sid, tool, path = sys.argv[1:4]
cmd = open(path).read() if path != "-" else ""
print(json.dumps({"session_id": sid, "transcript_path": "/nonexistent/t.jsonl",
    "cwd": "/nonexistent", "permission_mode": "default",
    "hook_event_name": "PreToolUse", "tool_name": tool,
    "tool_input": {"command": cmd, "description": "a test",
        "timeout": 120000, "run_in_background": False},
    "tool_use_id": "toolu_1"}))
PY
}
# The command of an answer ($1), after checking it keeps the other members.
wrapped() {
	python3 - "$1" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))["hookSpecificOutput"]
assert a["hookEventName"] == "PreToolUse" and a["permissionDecision"] == "ask"
u = a["updatedInput"]
assert {k: v for k, v in u.items() if k != "command"} == {"description":
    "a test", "timeout": 120000, "run_in_background": False}, u
sys.stdout.write(u["command"])
PY
}

# Run command $2 (a file) directly with bash -c, in $W/cwd, after "$@"
# from $3 on ran it there; say whether output and status agree ($1 says
# how it was run).
same_as_bash() {
	how=$1; c=$2; shift 2
	(cd "$W/cwd" && as_mode "$@") >"$T/got" 2>&1 </dev/null
	got=$?
	(cd "$W/cwd" && as_mode bash -c "$(cat "$T/cmd/$c")") \
	    >"$T/want" 2>&1 </dev/null
	want=$?
	[ "$got" = "$want" ] && cmp -s "$T/got" "$T/want" &&
	    ok "$MODE: $how: $c: same output and status ($got)" ||
	    fail "$MODE: $how: $c: got $got '$(cat "$T/got")', want $want '$(cat "$T/want")'"
}

# The commands, one file each.
mkdir "$T/cmd"
cat >"$T/cmd/quotes" <<'X'
echo 'single "double" in single' "double 'single' in double" it\'s
X
cat >"$T/cmd/vars" <<'X'
V='a  b'; echo "$V" $V "$(echo sub $V)" `echo tick` '$V' "\$V" $((6 * 7))
X
cat >"$T/cmd/backslash" <<'X'
printf '%s\n' 'a\nb' "c\\d" e\\f '\'; echo "\"" \$HOME
X
printf 'echo one\necho "two\nlines"\necho three\n' >"$T/cmd/newlines"
cat >"$T/cmd/heredoc" <<'X'
cat <<EOF
expanded $((1 + 1)) 'kept' "kept"
EOF
cat <<'EOF'
literal $HOME `x` \n 'q'
EOF
X
cat >"$T/cmd/chain" <<'X'
true && echo and || echo or; false && echo no || echo yes; false || { echo grouped; false; } && echo never || echo last
X
cat >"$T/cmd/background" <<'X'
(sleep 0.1; echo late) & echo early; wait; echo done $?
X
cat >"$T/cmd/status" <<'X'
echo out; echo err >&2; exit 7
X
cat >"$T/cmd/pwd" <<'X'
pwd
X
chmod -R a+rX "$T/cmd"

for MODE in root nobody; do
	W="$T/w/$MODE"
	mkdir -p "$W/xdg" "$W/cwd"
	chmod 700 "$W/xdg"
	[ "$MODE" = nobody ] && chown -R nobody "$W"
	SID="hook-$MODE"

	# Each command, wrapped, as the harness runs it; then directly.
	for c in quotes vars backslash newlines heredoc chain background \
	    status pwd; do
		call "$SID" Bash "$T/cmd/$c" >"$T/in"
		(cd "$W/cwd" && as_mode "$PINHOLE" hook) <"$T/in" \
		    >"$T/answer" 2>"$T/err" || {
			fail "$MODE: $c: hook: $(cat "$T/err")"
			continue
		}
		wrapped "$T/answer" >"$T/wrapped" || {
			fail "$MODE: $c: answer $(cat "$T/answer")"
			continue
		}
		same_as_bash "in the session" "$c" bash -c "$(cat "$T/wrapped")"
	done
	grep -q "^'[^']*/pinhole' run --session '$SID' -- '/bin/bash' -c '" \
	    "$T/wrapped" &&
	    ok "$MODE: the command runs in session $SID" ||
	    fail "$MODE: wrapped as $(cat "$T/wrapped")"

	# Another tool: no answer at all.
	call "$SID" Read - | as_mode "$PINHOLE" hook >"$T/answer" 2>"$T/err"
	[ $? = 0 ] && [ ! -s "$T/answer" ] && [ ! -s "$T/err" ] &&
	    ok "$MODE: another tool gets no answer" ||
	    fail "$MODE: Read: $(cat "$T/answer" "$T/err")"

	# Malformed: blocked, with the reason.
	printf '{"session_id":"%s","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":1}}' \
	    "$SID" | as_mode "$PINHOLE" hook >"$T/answer" 2>"$T/err"
	[ $? = 2 ] && [ ! -s "$T/answer" ] &&
	    grep -q "malformed call: tool_input.command is not a string" "$T/err" &&
	    ok "$MODE: a malformed call is blocked (exit 2)" ||
	    fail "$MODE: malformed: $(cat "$T/answer" "$T/err")"
	printf 'not json' | as_mode "$PINHOLE" hook >/dev/null 2>&1
	[ $? = 2 ] && ok "$MODE: not JSON is blocked" ||
	    fail "$MODE: not JSON not blocked"

	# Two calls of a new session at once: both answered, one session.
	call "$SID-race" Bash "$T/cmd/pwd" >"$T/in"
	as_mode "$PINHOLE" hook <"$T/in" >"$T/a1" 2>/dev/null &
	r1=$!
	as_mode "$PINHOLE" hook <"$T/in" >"$T/a2" 2>/dev/null
	r2=$?
	wait "$r1"
	[ $? = 0 ] && [ "$r2" = 0 ] && wrapped "$T/a1" >/dev/null &&
	    wrapped "$T/a2" >/dev/null &&
	    [ "$(as_mode "$PINHOLE" session list | grep -c "^$SID-race ")" = 1 ] &&
	    ok "$MODE: two racing calls both start the one session" ||
	    fail "$MODE: race: $r2 $(cat "$T/a1" "$T/a2")"

	# A session id pinhole does not take: hashed, stably.
	call "odd/$MODE id" Bash "$T/cmd/pwd" >"$T/in"
	as_mode "$PINHOLE" hook <"$T/in" >"$T/answer" 2>"$T/err"
	odd=$(sed -n "s/.* run --session '\(h-[0-9a-f]\{32\}\)'.*/\1/p" \
	    "$T/answer")
	[ -n "$odd" ] && as_mode "$PINHOLE" session status "$odd" >/dev/null &&
	    ok "$MODE: an odd session id runs as session $odd" ||
	    fail "$MODE: odd id: $(cat "$T/answer" "$T/err")"

	# The harness's shell (--exec, pinhole-bash): the command runs as
	# bash runs it, in the session of CLAUDE_CODE_SESSION_ID, a UUID;
	# without one, with no network at all.
	U=0b4f7c1e-9d2a-4e8b-a5c3-$MODE$(printf %0$((12 - ${#MODE}))d 0)
	for c in quotes vars status pwd; do
		same_as_bash --exec "$c" env CLAUDE_CODE_SESSION_ID="$U" \
		    "$PINHOLE" hook --exec -- -c "$(cat "$T/cmd/$c")"
	done
	as_mode env CLAUDE_CODE_SESSION_ID="$U" "$PINHOLE" hook --exec -- \
	    -c 'echo "$PINHOLE_AGENT"' >"$T/got" 2>&1
	[ -n "$(cat "$T/got")" ] &&
	    as_mode "$PINHOLE" session status "$U" >/dev/null &&
	    ok "$MODE: --exec runs the command in session $U" ||
	    fail "$MODE: --exec: $(cat "$T/got")"
	as_mode "$PINHOLE" hook --exec -- -c \
	    'ip -o link | grep -c .; exec 3<>/dev/tcp/127.0.0.1/9' \
	    >"$T/got" 2>&1
	[ $? != 0 ] && [ "$(head -n 1 "$T/got")" = 1 ] &&
	    ok "$MODE: --exec without a harness session: no network" ||
	    fail "$MODE: --exec without a session: $(cat "$T/got")"

	# The hook's rules add to the user's policy file, not replace it.
	mkdir -p "$W/.config/pinhole"
	echo 'allow a.test:443' >"$W/.config/pinhole/policy"
	[ "$MODE" = nobody ] && chown -R nobody "$W/.config"
	as_mode env CLAUDE_CODE_SESSION_ID="$U-more" "$PINHOLE" hook \
	    --allow b.test:443 --exec -- -c \
	    'curl -s "$PINHOLE_AGENT/pinhole/allowed"' >"$T/got" 2>&1
	grep -q a.test "$T/got" && grep -q b.test "$T/got" &&
	    ok "$MODE: hook --allow adds to the user's policy" ||
	    fail "$MODE: allowed in the session: $(cat "$T/got")"
	rm -r "$W/.config"

	# Every option of session start starts the hook's session: a policy
	# file, a log, a resolver, a proxy port, the prompt's wait.
	mkdir -p "$W/hookcfg"
	printf 'allow c.test:443\n' >"$W/hookcfg/policy"
	[ "$MODE" = nobody ] && chown -R nobody "$W/hookcfg"
	hp=$(free_port)
	as_mode env CLAUDE_CODE_SESSION_ID="$U-opts" "$PINHOLE" hook \
	    --policy "$W/hookcfg/policy" --log "$W/hookcfg/log" \
	    --resolver 127.0.0.1:9 --listen "127.0.0.1:$hp" --ask=5 \
	    --exec -- -c 'curl -s "$PINHOLE_AGENT/pinhole/allowed"' \
	    >"$T/got" 2>&1
	as_mode "$PINHOLE" session status "$U-opts" --json >"$T/status" 2>&1
	grep -q c.test "$T/got" && ! grep -q 'a\.test' "$T/got" &&
	    grep -q "\"log\":\"$W/hookcfg/log\"" "$T/status" &&
	    grep -q "\"listeners\":\"[^\"]*127.0.0.1:$hp" "$T/status" &&
	    grep -q '"event":"attach"' "$W/hookcfg/log" &&
	    ok "$MODE: the hook starts its session with session start's options" ||
	    fail "$MODE: hook options: $(cat "$T/got" "$T/status")"

	# The recipe that keeps a filesystem sandbox inside the session, for
	# an unprivileged harness (root in the sandbox has no capabilities,
	# and bwrap cannot map it into a namespace of its own).
	if [ "$MODE" = nobody ] && command -v bwrap >/dev/null; then
		as_mode "$PINHOLE" run --session "$SID" -- bwrap --share-net \
		    --ro-bind / / --dev /dev --tmpfs /tmp -- \
		    sh -c 'echo inside >/tmp/x && cat /tmp/x && ! touch /etc/x 2>/dev/null' \
		    >"$T/out" 2>&1
		[ $? = 0 ] && [ "$(cat "$T/out")" = inside ] &&
		    ok "$MODE: bwrap runs in the session, read-only /" ||
		    fail "$MODE: bwrap: $(cat "$T/out")"
	fi

	for s in "$SID" "$SID-race" $odd "$U" "$U-more" "$U-opts"; do
		as_mode "$PINHOLE" session stop "$s" ||
		    fail "$MODE: stop $s"
	done
	[ -z "$(as_mode "$PINHOLE" session list)" ] &&
	    ok "$MODE: every session the hook started is stopped" ||
	    fail "$MODE: sessions left: $(as_mode "$PINHOLE" session list)"
done
finish
