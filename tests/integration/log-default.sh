#!/bin/sh
# Without --log, pinhole proxy and pinhole run log to the default file,
# $XDG_STATE_HOME/pinhole/audit.log or ~/.local/state/pinhole/audit.log
# (directory 0700, file 0600), which `pinhole log` and `pinhole log
# verify` read with no argument and which the sandbox cannot write; as
# root and as nobody.
. "$top_srcdir/tests/integration/lib.sh"

need root curl python3 setpriv
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY no_proxy NO_PROXY ALL_PROXY

cp "$PINHOLE" "$T/pinhole" && chmod 755 "$T/pinhole"
mkdir -m 755 "$T/w"

# Run a command as the mode's user, with the mode's own home (in the
# background, $! is the command itself).
as_mode() {
	if [ "$MODE" = nobody ]; then
		exec env XDG_RUNTIME_DIR="$T/xdg-nobody" HOME="$H" setpriv \
		    --reuid=nobody --regid=nogroup --clear-groups -- "$@"
	fi
	exec env HOME="$H" "$@"
}

# The mode of a file, in octal.
mode_of() {
	stat -c %a "$1"
}

for MODE in root nobody; do
	H="$T/w/$MODE"
	mkdir "$H"
	[ "$MODE" = root ] || chown nobody "$H"
	LOG="$H/.local/state/pinhole/audit.log"

	# pinhole proxy: a refusal goes to the default file.
	P=$(free_port)
	as_mode "$T/pinhole" proxy --listen "127.0.0.1:$P" \
	    --allow allowed.test 2>"$T/err-$MODE" &
	GW=$!
	PIDS="$PIDS $GW"
	wait_port "$P" || { cat "$T/err-$MODE" >&2; continue; }
	code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 \
	    -x "http://127.0.0.1:$P" http://denied.test/)
	kill "$GW"
	wait "$GW"
	[ "$code" = 403 ] && loggrep "$LOG" '"event":"request","verdict":"deny".*"host":"denied.test"' &&
	    ok "$MODE: proxy: the refusal is in ~/.local/state/pinhole/audit.log" ||
	    fail "$MODE: proxy: $code, no line in $LOG: $(cat "$T/err-$MODE")"
	[ "$(mode_of "$LOG")" = 600 ] &&
	    [ "$(mode_of "$H/.local/state/pinhole")" = 700 ] &&
	    [ "$(stat -c %U "$LOG")" = "$MODE" ] &&
	    ok "$MODE: the file is 0600, its directory 0700, the user's" ||
	    fail "$MODE: modes $(mode_of "$LOG") $(mode_of "$H/.local/state/pinhole")"
	(as_mode "$T/pinhole" log --blocked --json) >"$T/out" 2>&1 </dev/null &&
	    grep -q '"host":"denied.test"' "$T/out" &&
	    ok "$MODE: pinhole log reads the default file" ||
	    fail "$MODE: pinhole log: $(cat "$T/out")"
	(as_mode "$T/pinhole" log verify) >"$T/out" 2>&1 &&
	    grep -q '^intact: 3 lines' "$T/out" &&
	    ok "$MODE: pinhole log verify checks the default file" ||
	    fail "$MODE: verify: $(cat "$T/out")"

	# XDG_STATE_HOME, when set, is used instead.
	P=$(free_port)
	as_mode env XDG_STATE_HOME="$H/state" "$T/pinhole" proxy \
	    --listen "127.0.0.1:$P" 2>"$T/err-$MODE" &
	GW=$!
	PIDS="$PIDS $GW"
	wait_port "$P"
	kill "$GW"
	wait "$GW"
	loggrep "$H/state/pinhole/audit.log" '"event":"stop"' &&
	    ok "$MODE: XDG_STATE_HOME/pinhole/audit.log" ||
	    fail "$MODE: XDG_STATE_HOME: $(cat "$T/err-$MODE")"

	# pinhole run: the same file, read-only in the sandbox.
	(as_mode "$T/pinhole" run --allow allowed.test -- sh -c '
		curl -s -o /dev/null -w "%{http_code}\n" --max-time 10 \
		    http://denied.test/
		if (: >>"$HOME/.local/state/pinhole/audit.log") 2>/dev/null
		then
			echo writable
		fi') >"$T/out" 2>"$T/err-$MODE"
	rv=$?
	[ $rv -eq 0 ] && grep -qx 403 "$T/out" && ! grep -q writable "$T/out" &&
	    loggrep "$LOG" '"event":"request","verdict":"deny".*"session":"run-[0-9a-f]*".*"host":"denied.test"' &&
	    ok "$MODE: run: the refusal is in the default file, read-only inside" ||
	    fail "$MODE: run: exit $rv: $(cat "$T/out" "$T/err-$MODE")"
	(as_mode "$T/pinhole" log verify) >"$T/out" 2>&1 &&
	    ok "$MODE: the chain goes on across proxy and run" ||
	    fail "$MODE: verify after run: $(cat "$T/out")"

	# No home to put it in: the gateway does not start, and says why.
	(as_mode env -u HOME -u XDG_STATE_HOME timeout 10 "$T/pinhole" \
	    proxy --listen "127.0.0.1:$(free_port)") >"$T/out" 2>&1
	[ $? -ne 0 ] && grep -q 'give --log' "$T/out" &&
	    ok "$MODE: no HOME: refuses to start without a log" ||
	    fail "$MODE: no HOME: $(cat "$T/out")"
done

finish
