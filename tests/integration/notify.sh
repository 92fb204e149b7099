#!/bin/sh
# pinhole under a service manager: the proxy and a session started with
# --foreground say READY=1 (with their pid) once they serve, and
# STOPPING=1 on SIGTERM, on the datagram socket $NOTIFY_SOCKET names, as
# systemd's Type=notify wants; a detached session says nothing (its
# parent is what the manager waits for).  Diagnostics on the journal's
# stream ($JOURNAL_STREAM names stderr) carry syslog priorities.
. "$top_srcdir/tests/integration/lib.sh"

# A service manager's socket: every datagram to $T/notify is appended to
# $T/said, one per line with its newlines as '|'.
python3 - "$T/notify" "$T/said" <<'PY' &
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
while True:
    m = s.recv(4096).decode().replace("\n", "|")
    with open(sys.argv[2], "a") as f:
        f.write(m + "\n")
PY
PIDS="$PIDS $!"
i=0
while [ ! -S "$T/notify" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
: >"$T/said"

# Wait (at most 10 s) for a line of $T/said matching the regex $1.
said() {
	i=0
	while [ $i -lt 200 ]; do
		grep -Eq -- "$1" "$T/said" && return 0
		sleep 0.05
		i=$((i + 1))
	done
	return 1
}

# The proxy: ready once it listens, with its pid; stopping on SIGTERM.
port=$(free_port)
NOTIFY_SOCKET=$T/notify "$PINHOLE" proxy --listen "127.0.0.1:$port" \
    --allow example.com --log "$T/proxy.log" 2>"$T/proxy.err" &
pid=$!
PIDS="$PIDS $pid"
if said "^READY=1\|STATUS=session [0-9a-f]+: serving on 127\.0\.0\.1:$port\|MAINPID=$pid$"; then
	ok "proxy: READY=1 with its status and pid"
	python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), 1)" &&
	    ok "proxy: listening when it says so" ||
	    fail "proxy: ready, but nothing listens on $port"
else
	fail "proxy: no READY=1: $(cat "$T/said" "$T/proxy.err")"
fi
kill -TERM "$pid"
said "^STOPPING=1\|STATUS=stopping" && ok "proxy: STOPPING=1 on SIGTERM" ||
    fail "proxy: no STOPPING=1: $(cat "$T/said")"
wait "$pid" && ok "proxy: exits 0" || fail "proxy: exit status $?"
: >"$T/said"

# A session in the foreground, as a unit runs it: the same.
NOTIFY_SOCKET=$T/notify "$PINHOLE" session start nt1 --foreground \
    --allow example.com --log "$T/session.log" 2>"$T/session.err" &
pid=$!
PIDS="$PIDS $pid"
said "^READY=1\|STATUS=session nt1: serving\|MAINPID=$pid$" &&
    ok "session --foreground: READY=1 with its pid" ||
    fail "session --foreground: no READY=1: $(cat "$T/said" "$T/session.err")"
"$PINHOLE" session list | grep -q '^nt1' &&
    ok "session --foreground: listed once ready" ||
    fail "session --foreground: not listed"
"$PINHOLE" session stop nt1 >/dev/null 2>&1
said "^STOPPING=1" && ok "session --foreground: STOPPING=1 when stopped" ||
    fail "session --foreground: no STOPPING=1: $(cat "$T/said")"
wait "$pid" && ok "session --foreground: exits 0" || fail "session: exit $?"
: >"$T/said"

# Detached: the parent prints the name and exits; the gateway it leaves
# behind is not the service's main process and does not speak for it.
NOTIFY_SOCKET=$T/notify "$PINHOLE" session start nt2 --allow example.com \
    --log "$T/session.log" >"$T/out" 2>&1 &&
    ok "detached session starts" || fail "detached session: $(cat "$T/out")"
sleep 0.5
"$PINHOLE" session stop nt2 >/dev/null 2>&1
sleep 0.5
[ -s "$T/said" ] && fail "detached session notified: $(cat "$T/said")" ||
    ok "detached session: nothing said to the manager"

# The journal's stream: priorities, no name.  Any other stream: the name.
: >"$T/err"
JOURNAL_STREAM=$(stat -c '%d:%i' "$T/err") "$PINHOLE" proxy \
    --listen "127.0.0.1:$port" --policy "$T/missing" 2>>"$T/err"
grep -Eq "^<4>$T/missing: No such file or directory; run .pinhole doctor.$" "$T/err" &&
    ok "on the journal: <4> and no name" ||
    fail "on the journal: $(cat "$T/err")"
JOURNAL_STREAM=1:1 "$PINHOLE" proxy --listen "127.0.0.1:$port" \
    --policy "$T/missing" 2>"$T/err"
grep -Eq "^pinhole: $T/missing: No such file or directory; run .pinhole doctor.$" "$T/err" &&
    ok "another stream: the name" || fail "another stream: $(cat "$T/err")"

finish
