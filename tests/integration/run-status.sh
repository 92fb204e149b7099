#!/bin/sh
# The sandboxed command's exit status, signals and terminal, and that
# nothing is left behind when pinhole is killed; as root and as nobody.
. "$top_srcdir/tests/integration/lib.sh"

PROBE="$top_builddir/tests/integration/netns-probe"
need "$PROBE"
# nobody must be able to run it, wherever the build dir is.
cp "$PROBE" "$T/netns-probe" && chmod 755 "$T/netns-probe"
PROBE="$T/netns-probe"
need root
export ASAN_OPTIONS=detect_leaks=0
PY=/usr/bin/python3
mkdir -m 1777 "$T/w"

# Run a command as the mode's user.
as_mode() {
	if [ "$MODE" = nobody ]; then
		as_nobody env HOME="$T/w" "$@"
	else
		"$@"
	fi
}

# Wait (at most 10 s) until file $1 exists.
wait_file() {
	i=0
	while [ ! -e "$1" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	[ -e "$1" ]
}

# Check a status.
expect_status() {
	if [ "$2" = "$3" ]; then ok "$MODE: $1"; else fail "$MODE: $1: got $2, want $3"; fi
}

# Start the probe in the background running a script that writes
# $T/w/ready once its traps are set; $BGPID is the probe.
start_bg() {
	rm -f "$T/w/ready"
	if [ "$MODE" = nobody ]; then
		set -- env XDG_RUNTIME_DIR="$T/xdg-nobody" setpriv \
		    --reuid=nobody --regid=nogroup --clear-groups \
		    env HOME="$T/w" "$PROBE" sh -c "$1"
	else
		set -- "$PROBE" sh -c "$1"
	fi
	# A background job starts with SIGINT and SIGQUIT ignored: undo that.
	$PY -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
signal.signal(signal.SIGQUIT, signal.SIG_DFL)
os.execvp(sys.argv[1], sys.argv[1:])' "$@" &
	BGPID=$!
	PIDS="$PIDS $BGPID"
	wait_file "$T/w/ready" || fail "$MODE: the command did not start"
}

for MODE in root nobody; do
	as_mode "$PROBE" true
	expect_status "true exits 0" $? 0
	as_mode "$PROBE" sh -c 'exit 7'
	expect_status "exit 7" $? 7
	as_mode "$PROBE" sh -c 'kill -TERM $$'
	expect_status "killed by SIGTERM gives 143" $? 143
	as_mode "$PROBE" /nonexistent/cmd 2>/dev/null
	expect_status "a missing command gives 127" $? 127

	for sig in USR1 USR2 HUP TERM INT QUIT WINCH; do
		start_bg "trap 'exit 42' $sig; touch $T/w/ready; i=0; while [ \$i -lt 100 ]; do sleep 0.1; i=\$((i+1)); done; exit 3"
		kill -$sig "$BGPID"
		wait "$BGPID"
		expect_status "SIG$sig is passed on" $? 42
	done

	# A pty session: the command has the terminal; Ctrl-C reaches it,
	# and pinhole, in the same process group, survives to report 130.
	out=$(as_mode script -qec "$PROBE sh -c 'test -t 0 && test -t 1 && echo TTY-OK'" /dev/null)
	case $out in *TTY-OK*) ok "$MODE: the command has the terminal";;
	*) fail "$MODE: no terminal in the sandbox: $out";; esac
	as_mode $PY - "$PROBE" <<'PYEOF'
import os, pty, sys, time, select
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[1], [sys.argv[1], "sh", "-c", "echo READY; exec sleep 20"])
buf = b""
end = time.time() + 10
while b"READY" not in buf and time.time() < end:
    if select.select([fd], [], [], 0.5)[0]:
        buf += os.read(fd, 100)
os.write(fd, b"\x03")
end = time.time() + 10
while time.time() < end:
    r, status = os.waitpid(pid, os.WNOHANG)
    if r == pid:
        break
    time.sleep(0.05)
else:
    os.kill(pid, 9)
    sys.exit("pinhole did not end after Ctrl-C")
if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 130:
    sys.exit("status %r, want exit 130" % status)
PYEOF
	expect_status "Ctrl-C on the terminal gives 130" $? 0

	# What the command leaves running ends with it.
	as_mode "$PROBE" sh -c 'sleep 32.5 & exit 0'
	if pgrep -f "sleep 32.5" >/dev/null; then
		fail "$MODE: a background process outlived the command"
	else
		ok "$MODE: background processes end with the command"
	fi

	# SIGKILL pinhole: the command dies, the namespaces and link vanish.
	links=$(ip -o link | cut -d: -f2 | sort)
	start_bg "sleep 31.25 & touch $T/w/ready; wait"
	kill -KILL "$BGPID"
	wait "$BGPID" 2>/dev/null
	i=0
	while pgrep -f "sleep 31.25" >/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	if pgrep -f "sleep 31.25" >/dev/null; then
		fail "$MODE: the command outlived a SIGKILLed pinhole"
	else
		ok "$MODE: the command dies with pinhole"
	fi
	if [ "$(ip -o link | cut -d: -f2 | sort)" = "$links" ]; then
		ok "$MODE: no links left on the host"
	else
		fail "$MODE: host links changed"
	fi
done

# pinhole run without a control directory of its own: 125, the command
# not run, one message naming the directory and the fix.
cp "$PINHOLE" "$T/pinhole" && chmod 755 "$T/pinhole"
mkdir -m 755 "$T/rootdir"
mkdir -m 755 "$T/open" "$T/open/pinhole"
touch "$T/file"
# $1: what; $2: XDG_RUNTIME_DIR (- unset); $3: a regex the message must match.
xdg_refused() {
	rm -f "$T/w/ran"
	if [ "$2" = - ]; then set -- "$1" "$3" env -u XDG_RUNTIME_DIR
	else set -- "$1" "$3" env XDG_RUNTIME_DIR="$2"; fi
	desc=$1 want=$2; shift 2
	if [ "$MODE" = nobody ]; then
		set -- setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"
	fi
	"$@" HOME="$T/w" "$T/pinhole" run --allow x.test -- touch "$T/w/ran" \
	    >"$T/xdg.out" 2>&1
	rc=$?
	if [ $rc != 125 ]; then
		fail "$MODE: $desc: status $rc, want 125: $(cat "$T/xdg.out")"
	elif [ -e "$T/w/ran" ]; then
		fail "$MODE: $desc: the command ran"
	elif [ "$(wc -l <"$T/xdg.out")" != 1 ] ||
	    ! grep -Eq -- "$want" "$T/xdg.out"; then
		fail "$MODE: $desc: message: $(cat "$T/xdg.out")"
	else
		ok "$MODE: $desc: 125, not run, says what to fix"
	fi
}
FIX='set XDG_RUNTIME_DIR to a directory of yours with mode 0700'
# Every refusal for a reason pinhole doctor checks ends by naming it.
DOC='; run `pinhole doctor`'
for MODE in root nobody; do
	xdg_refused "XDG_RUNTIME_DIR missing" "$T/missing" \
	    "^pinhole: XDG_RUNTIME_DIR=$T/missing: No such file or directory: $FIX, or unset it$DOC\$"
	xdg_refused "XDG_RUNTIME_DIR a file" "$T/file" \
	    "^pinhole: XDG_RUNTIME_DIR=$T/file: Not a directory: $FIX, or unset it$DOC\$"
	xdg_refused "XDG_RUNTIME_DIR/pinhole open to others" "$T/open" \
	    "^pinhole: XDG_RUNTIME_DIR=$T/open: $T/open/pinhole is not a directory of ours with mode 0700: remove it, or $FIX, or unset it$DOC\$"
	[ "$MODE" = nobody ] && xdg_refused "XDG_RUNTIME_DIR not writable" \
	    "$T/rootdir" "^pinhole: XDG_RUNTIME_DIR=$T/rootdir: cannot create $T/rootdir/pinhole: Permission denied: $FIX, or unset it$DOC\$"
done
# Unset: /tmp/pinhole-UID, refused the same way when it is not ours.
MODE=nobody
if [ ! -e /tmp/pinhole-65534 ]; then
	mkdir -m 755 /tmp/pinhole-65534
	xdg_refused "unset, /tmp/pinhole-65534 not ours" - \
	    "^pinhole: /tmp/pinhole-65534 is not a directory of ours with mode 0700: remove it, or $FIX$DOC\$"
	rmdir /tmp/pinhole-65534
fi
MODE=root
as_mode env XDG_RUNTIME_DIR= HOME="$T/w" "$T/pinhole" run --allow x.test -- \
    touch "$T/w/ran" >"$T/xdg.out" 2>&1
expect_status "XDG_RUNTIME_DIR empty: /tmp/pinhole-0 is used" $? 0
finish
