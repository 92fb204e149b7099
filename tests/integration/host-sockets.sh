#!/bin/sh
# The host's unix sockets are closed to the sandbox: a real session bus
# (dbus-daemon) in the runtime directory, a real ssh-agent, a real X
# server (Xvfb: its socket in /tmp/.X11-unix and its abstract one), a
# socat relay from a unix socket to a TCP canary, a service socket in
# /run, a socket bound in the runtime directory after the sandbox
# started, and avahi, which resolves names (a fake one that records
# what it hears, asked by nss-mdns).  allow-socket opens one by name
# ($SSH_AUTH_SOCK for ssh-add -l), never a name-resolving one; doctor
# lists them.  Without a /proc of its own, Landlock keeps the command
# out of the host's processes' roots.  As root and as nobody, standalone
# and attached to a session.
. "$top_srcdir/tests/integration/lib.sh"

need root dbus-daemon dbus-send ssh-agent ssh-add ssh-keygen socat \
    Xvfb xdpyinfo getent unshare
[ -e /lib/x86_64-linux-gnu/libnss_mdns4_minimal.so.2 ] ||
    [ -e /usr/lib/x86_64-linux-gnu/libnss_mdns4_minimal.so.2 ] ||
    skip "needs nss-mdns (libnss-mdns)"
export ASAN_OPTIONS=detect_leaks=0
unset SSH_AUTH_SOCK DISPLAY
PY=/usr/bin/python3
cp "$PINHOLE" "$T/pinhole"
cp "$top_srcdir/tests/integration/unixprobe.py" "$T/probe.py"
chmod 755 "$T/pinhole" "$T/probe.py"

# A canary on host loopback that counts the connections reaching it.
CANARY=$(free_port)
bg $PY -c 'import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(16)
while True:
    c, _ = s.accept()
    open(sys.argv[2], "a").write("hit\n"); c.close()' "$CANARY" "$T/canary"
wait_port "$CANARY"
: >"$T/canary" && chmod 666 "$T/canary"
hits() { wc -l <"$T/canary" | tr -d ' '; }

# A service socket in /run, as a system daemon's (docker's, say) is.
RUNSOCK=/run/pinhole-test-$$.sock
bg $PY -c 'import os, socket, sys, time
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); os.chmod(sys.argv[1], 0o666)
s.listen(8); time.sleep(600)' "$RUNSOCK"
i=0; while [ ! -S "$RUNSOCK" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
trap 'rm -f "$RUNSOCK"; cleanup' EXIT

# As $MODE's user, with the runtime directory $XDG and HOME $W.
user() {
	if [ "$MODE" = nobody ]; then
		set -- setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"
	fi
	env HOME="$W" XDG_RUNTIME_DIR="$XDG" \
	    ${SSH_AUTH_SOCK:+SSH_AUTH_SOCK=$SSH_AUTH_SOCK} "$@"
}
user_bg() {
	if [ "$MODE" = nobody ]; then
		set -- setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"
	fi
	bg env HOME="$W" XDG_RUNTIME_DIR="$XDG" "$@"
}
wait_sock() {
	i=0; while [ ! -S "$1" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
	[ -S "$1" ] || fail "$MODE: $1 never appeared"
}

# The user's desktop: a session bus, an ssh-agent with a key, an X
# server, a relay to the canary.
desktop() {
	user_bg dbus-daemon --session --nofork --nopidfile \
	    --address="unix:path=$XDG/bus"
	user mkdir -m 700 "$W/ssh-agent"
	user_bg ssh-agent -D -a "$W/ssh-agent/agent.sock" >/dev/null
	user ssh-keygen -q -t ed25519 -N '' -f "$W/key" -C pinhole-test
	user_bg socat "UNIX-LISTEN:$W/relay.sock,fork" "TCP:127.0.0.1:$CANARY"
	user_bg Xvfb ":$DISPLAYNO" -nolisten tcp -auth /dev/null
	# Bound now, listening once told (SIGUSR1).
	user_bg $PY -c 'import os, signal, socket, sys, time
p = sys.argv[1]
try: os.unlink(p)
except OSError: pass
s = socket.socket(socket.AF_UNIX); s.bind(p)
signal.signal(signal.SIGUSR1, lambda *a: s.listen(4))
time.sleep(600)' "$W/later.sock"
	LISTENER=$!
	wait_sock "$XDG/bus"; wait_sock "$W/ssh-agent/agent.sock"
	wait_sock "$W/relay.sock"; wait_sock "/tmp/.X11-unix/X$DISPLAYNO"
	user env SSH_AUTH_SOCK="$W/ssh-agent/agent.sock" ssh-add -q "$W/key" 2>/dev/null ||
	    fail "$MODE: ssh-add"
}

PROBES=
probes() {
	PROBES="bus=$XDG/bus agent=$W/ssh-agent/agent.sock relay=$W/relay.sock"
	PROBES="$PROBES x11=/tmp/.X11-unix/X$DISPLAYNO"
	PROBES="$PROBES x11abstract=@/tmp/.X11-unix/X$DISPLAYNO run=$RUNSOCK"
}

# What the sandbox says of each socket, by name: "reached" or "closed".
said() { sed -n "s/^$1 \([a-z]*\).*/\1/p" "$T/out" | head -1; }

# run (standalone) or session (attached): pinhole run with its options.
sandbox() {
	if [ "$HOW" = session ]; then
		user "$T/pinhole" run --session s -- "$@"
	else
		user "$T/pinhole" run --policy "$W/cfg/policy" --resolver \
		    127.0.0.1:9 --log "$W/log/audit.log" -- "$@"
	fi
}

check_closed() {
	before=$(hits)
	sandbox sh -c "ls -A \"$XDG\"; $PY $T/probe.py $PROBES; \
	    dbus-send --session --dest=org.freedesktop.DBus --print-reply / \
	    org.freedesktop.DBus.ListNames >/dev/null 2>&1 && echo dbus-send reached; \
	    SSH_AUTH_SOCK=$W/ssh-agent/agent.sock ssh-add -l >/dev/null 2>&1 && echo ssh-add reached; \
	    xdpyinfo -display :$DISPLAYNO >/dev/null 2>&1 && echo xdpyinfo reached; \
	    socat -T2 - UNIX-CONNECT:$W/relay.sock </dev/null >/dev/null 2>&1 && echo socat reached; \
	    true" >"$T/out" 2>&1 || fail "$MODE $HOW: the probe failed: $(tail -3 "$T/out")"
	for p in bus agent relay x11 x11abstract run; do
		[ "$(said $p)" = closed ] && ok "$MODE $HOW: $p is closed" ||
		    fail "$MODE $HOW: $p: $(grep "^$p " "$T/out")"
	done
	for p in dbus-send ssh-add xdpyinfo socat; do
		grep -q "^$p reached" "$T/out" && fail "$MODE $HOW: $p reached" ||
		    ok "$MODE $HOW: $p fails inside"
	done
	grep -q "^bus$\|^pinhole$" "$T/out" &&
	    fail "$MODE $HOW: the runtime directory shows: $(head -3 "$T/out")" ||
	    ok "$MODE $HOW: the runtime directory is empty"
	[ "$(hits)" = "$before" ] && ok "$MODE $HOW: nothing reached the canary" ||
	    fail "$MODE $HOW: the canary was reached"
}

# Sockets bound once the sandbox runs: in the runtime directory, in /run
# (a service restarted: its socket unlinked and bound again), in a
# directory of nothing but sockets (an ssh-agent's, restarted); and one
# bound before but listening only later.
LATE='import os, socket, sys, time
for p in sys.argv[2:]:
    try: os.unlink(p)
    except OSError: pass
    s = socket.socket(socket.AF_UNIX); s.bind(p); os.chmod(p, 0o666); s.listen(4)
    globals()[p] = s
open(sys.argv[1], "w").close(); time.sleep(60)'
check_late() {
	rm -f "$W/sync/started" "$W/sync/bound"
	sandbox sh -c "touch $W/sync/started; i=0; \
	    while [ ! -e $W/sync/bound ] && [ \$i -lt 200 ]; do sleep 0.05; i=\$((i+1)); done; \
	    $PY $T/probe.py late=$XDG/late.sock run=$RUNSOCK agentdir=$W/ssh-agent/new.sock \
	    listens=$W/later.sock" >"$T/out" 2>&1 &
	spid=$!
	wait_file "$W/sync/started"
	[ "$MODE" = root ] && bg $PY -c "$LATE" "$W/sync/run" "$RUNSOCK"
	[ "$MODE" = root ] && wait_file "$W/sync/run"
	user_bg $PY -c "$LATE" "$W/sync/bound" "$XDG/late.sock" \
	    "$W/ssh-agent/new.sock"
	wait_file "$W/sync/bound"
	kill -USR1 "$LISTENER" 2>/dev/null
	wait "$spid"
	for p in late run agentdir listens; do
		[ "$(said $p)" = closed ] &&
		    ok "$MODE $HOW: a socket bound or listening later is closed ($p)" ||
		    fail "$MODE $HOW: $p: $(cat "$T/out")"
	done
}

# allow-socket $SSH_AUTH_SOCK (expanded where the sandbox is made)
# opens the agent and nothing else.
check_opened() {
	SSH_AUTH_SOCK="$W/ssh-agent/agent.sock" sandbox sh -c \
	    "ssh-add -l; $PY $T/probe.py $PROBES" >"$T/out" 2>&1
	grep -q pinhole-test "$T/out" &&
	    ok "$MODE $HOW: allow-socket \$SSH_AUTH_SOCK: ssh-add -l lists the key" ||
	    fail "$MODE $HOW: ssh-add -l: $(head -3 "$T/out")"
	[ "$(said agent)" = reached ] && [ "$(said bus)" = closed ] &&
	    [ "$(said relay)" = closed ] &&
	    ok "$MODE $HOW: the opened socket only" ||
	    fail "$MODE $HOW: opened: $(cat "$T/out")"
}

DISPLAYNO=$((70 + $$ % 20))
for MODE in root nobody; do
	W="$T/w/$MODE"
	XDG="$W/xdg"
	mkdir -p "$W/log" "$W/cfg" "$W/sync" && mkdir -m 700 "$XDG"
	[ "$MODE" = nobody ] && chown -R nobody "$W"
	DISPLAYNO=$((DISPLAYNO + 1))
	desktop
	probes
	# The daemons answer outside the sandbox.
	user $PY "$T/probe.py" $PROBES >"$T/out" 2>&1
	n=$(grep -c ' reached' "$T/out")
	[ "$n" = 6 ] && ok "$MODE: every socket answers outside" ||
	    fail "$MODE: outside: $(cat "$T/out")"
	user dbus-send --session --dest=org.freedesktop.DBus --print-reply / \
	    org.freedesktop.DBus.ListNames >/dev/null 2>&1 &&
	    ok "$MODE: dbus-send works outside" || fail "$MODE: dbus-send outside"
	before=$(hits)
	user socat -T2 - "UNIX-CONNECT:$W/relay.sock" </dev/null >/dev/null 2>&1
	[ "$(hits)" -gt "$before" ] && ok "$MODE: the relay reaches the canary outside" ||
	    fail "$MODE: the relay does not work outside"

	HOW=run
	: >"$W/cfg/policy"
	check_closed
	check_late
	echo 'allow-socket $SSH_AUTH_SOCK' >"$W/cfg/policy"
	check_opened

	HOW=session
	: >"$W/cfg/policy"
	user "$T/pinhole" session start s --policy "$W/cfg/policy" \
	    --resolver 127.0.0.1:9 --log "$W/log/session.log" >/dev/null 2>"$T/err" ||
	    fail "$MODE: session start: $(cat "$T/err")"
	check_closed
	check_late
	user "$T/pinhole" session stop s >/dev/null 2>&1
	echo 'allow-socket $SSH_AUTH_SOCK' >"$W/cfg/policy"
	user "$T/pinhole" session start s --policy "$W/cfg/policy" \
	    --resolver 127.0.0.1:9 --log "$W/log/session.log" >/dev/null 2>"$T/err" ||
	    fail "$MODE: session start: $(cat "$T/err")"
	check_opened
	user "$T/pinhole" session stop s >/dev/null 2>&1

	# doctor lists the host's sockets and what a sandbox reaches.
	user env SSH_AUTH_SOCK="$W/ssh-agent/agent.sock" "$T/pinhole" doctor --policy \
	    "$W/cfg/policy" --resolver 127.0.0.1:9 --log "$W/log/audit.log" \
	    >"$T/out" 2>&1
	grep -q "^sockets .*a sandbox reaches 1, by allow-socket: $W/ssh-agent/agent.sock" "$T/out" &&
	    grep -q "^ *$XDG/bus  closed (its directory is emptied)" "$T/out" &&
	    grep -q "^ *$W/relay.sock  closed$" "$T/out" &&
	    grep -q "^ *$RUNSOCK  closed (its directory is emptied)" "$T/out" &&
	    grep -q "^ *$W/ssh-agent/agent.sock  REACHED (allow-socket)" "$T/out" &&
	    ok "$MODE: doctor lists the host's sockets and what a sandbox reaches" ||
	    fail "$MODE: doctor: $(grep -A12 '^sockets' "$T/out")"

	# The sockets that resolve names stay closed: the policy cannot open them.
	user "$T/pinhole" run --policy "$W/cfg/policy" --resolver 127.0.0.1:9 \
	    --log "$W/log/audit.log" --allow 'allow-socket /run/avahi-daemon/socket' \
	    -- true >"$T/out" 2>&1
	[ $? != 0 ] && grep -q "resolves names around the gateway" "$T/out" &&
	    ok "$MODE: allow-socket of avahi's socket is refused" ||
	    fail "$MODE: avahi allowed: $(cat "$T/out")"
done

# avahi, asked by nss-mdns, in a mount namespace of the test's own (a
# fake avahi at /run/avahi-daemon/socket, an nsswitch.conf that asks
# it): it answers outside the sandbox, and hears nothing from inside.
mkdir -p /run/avahi-daemon 2>/dev/null
cat >"$T/nsswitch.conf" <<'EOF'
hosts: files mdns4_minimal [NOTFOUND=return] dns
EOF
cat >"$T/avahi.py" <<'EOF'
import os, socket, sys, time
p = "/run/avahi-daemon/socket"
s = socket.socket(socket.AF_UNIX); s.bind(p); os.chmod(p, 0o666); s.listen(8)
open(sys.argv[2], "w").close()
end = time.time() + 120
while time.time() < end:
    c, _ = s.accept()
    line = c.makefile().readline()
    open(sys.argv[1], "a").write(line)
    name = line.split()[-1] if line.split() else "?"
    c.sendall(("+ 2 0 %s 10.9.9.9\n" % name).encode()); c.close()
EOF
chmod 644 "$T/avahi.py" "$T/nsswitch.conf"
: >"$T/heard" && chmod 666 "$T/heard"
W="$T/w/avahi"; XDG="$W/xdg"
mkdir -p "$W/log" "$W/cfg" && mkdir -m 700 "$XDG" && : >"$W/cfg/policy"
chown -R nobody "$W"
unshare -m --propagation private sh -c '
	mount -t tmpfs tmpfs /run/avahi-daemon || exit 1
	mount --bind "$1/nsswitch.conf" /etc/nsswitch.conf || exit 1
	'"$PY"' "$1/avahi.py" "$1/heard" "$1/avahi-up" & apid=$!
	i=0; while [ ! -e "$1/avahi-up" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i+1)); done
	getent hosts outside.local >"$1/outside" 2>&1
	for MODE in root nobody; do
		set -- "$1" env HOME="$2" XDG_RUNTIME_DIR="$2/xdg"
		[ $MODE = nobody ] && set -- "$@" setpriv --reuid=nobody \
		    --regid=nogroup --clear-groups
		"$@" "$3" run --policy "$2/cfg/policy" --resolver 127.0.0.1:9 \
		    --log "$2/log/$MODE.log" -- getent hosts inside-$MODE.local \
		    >"$1/inside-$MODE" 2>&1
		set -- "$1" "$2" "$3"
	done
	kill $apid' sh "$T" "$W" "$T/pinhole"
grep -q "10.9.9.9 *outside.local" "$T/outside" && grep -q outside.local "$T/heard" &&
    ok "nss-mdns asks the fake avahi outside the sandbox" ||
    fail "avahi outside: $(cat "$T/outside")"
for MODE in root nobody; do
	grep -q "inside-$MODE" "$T/heard" &&
	    fail "$MODE: avahi heard a name from inside: $(cat "$T/heard")" ||
	    ok "$MODE: avahi hears nothing from inside the sandbox"
	grep -q 10.9.9.9 "$T/inside-$MODE" &&
	    fail "$MODE: a name resolved through avahi inside" ||
	    ok "$MODE: getent hosts x.local does not resolve inside"
done

# Without a /proc of its own (a locked mount over the host's keeps an
# unprivileged one from being made), the command sees the host's
# processes but not into them: Landlock.
bg setpriv --reuid=nobody --regid=nogroup --clear-groups sleep 120
HOSTPID=$!
W="$T/w/proc"; XDG="$W/xdg"
mkdir -p "$W/log" "$W/cfg" && mkdir -m 700 "$XDG" && : >"$W/cfg/policy"
chown -R nobody "$W"
unshare -m --propagation private sh -c '
	mount -t tmpfs tmpfs /proc/sys || exit 1
	exec env HOME="$1" XDG_RUNTIME_DIR="$1/xdg" setpriv --reuid=nobody \
	    --regid=nogroup --clear-groups "$2" run --policy "$1/cfg/policy" \
	    --resolver 127.0.0.1:9 --log "$1/log/audit.log" -- sh -c "
		[ -d /proc/$3 ] && echo host-procs
		ls /proc/$3/root/ >/dev/null 2>&1 && echo root-reached
		cat /proc/$3/environ >/dev/null 2>&1 && echo environ-reached
		cat /proc/self/status >/dev/null && echo self-ok
		true"' sh "$W" "$T/pinhole" "$HOSTPID" >"$T/out" 2>&1
if grep -q host-procs "$T/out"; then
	ok "nobody: with the host's /proc, the host's processes show"
	grep -q reached "$T/out" &&
	    fail "nobody: into a host process: $(cat "$T/out")" ||
	    ok "nobody: Landlock keeps the command out of their root and environ"
	grep -q self-ok "$T/out" && ok "nobody: /proc/self works" ||
	    fail "nobody: /proc/self: $(cat "$T/out")"
else
	fail "nobody: a /proc of its own was made: the case is not tried ($(cat "$T/out"))"
fi
setpriv --reuid=nobody --regid=nogroup --clear-groups ls /proc/$HOSTPID/root/ >/dev/null 2>&1 &&
    ok "nobody: outside the sandbox the same root is open" ||
    fail "nobody: outside, /proc/$HOSTPID/root is closed too: the case is moot"

finish
