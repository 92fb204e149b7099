#!/bin/sh
# Escalation end to end, without the gateway: escalate-probe hosts the
# queue, the control socket and the agent endpoint.  The agent asks with
# curl and `pinhole request`; the person answers with `pinhole approve`,
# `pinhole deny` and `pinhole watch` (in a pty); the audit log records it.
. "$top_srcdir/tests/integration/lib.sh"

PROBE="$top_builddir/tests/integration/escalate-probe"
need "$PROBE" curl

XDG_RUNTIME_DIR="$T/xdg"
export XDG_RUNTIME_DIR
mkdir -m 700 "$XDG_RUNTIME_DIR"
port=$(free_port)
PINHOLE_AGENT="http://127.0.0.1:$port"
export PINHOLE_AGENT
AUDIT="$T/audit.log"
bg "$PROBE" "$port" "e5ca1a7e" "$AUDIT" >"$T/probe.out" 2>"$T/probe.err"
probe_pid=$!
wait_port "$port" || { finish; exit 1; }
SOCK="$XDG_RUNTIME_DIR/pinhole/e5ca1a7e.sock"
[ -S "$SOCK" ] && ok "control socket at $SOCK" || fail "no control socket"

# The control directory is the user's alone; another uid cannot connect.
mode=$(stat -c %a "$XDG_RUNTIME_DIR/pinhole")
[ "$mode" = 700 ] && ok "control directory mode 700" || fail "mode $mode"
if [ "$(id -u)" = 0 ]; then
	chmod 755 "$T" "$XDG_RUNTIME_DIR"
	expect_fail "nobody cannot reach the socket" as_nobody python3 -c "
import socket; s = socket.socket(socket.AF_UNIX); s.connect('$SOCK')"
	expect_fail "nobody cannot reach it through /proc" as_nobody python3 -c "
import socket; s = socket.socket(socket.AF_UNIX); s.connect('/proc/$probe_pid/root$SOCK')"
fi
# A client in another network namespace (as the sandbox is) is refused,
# even as the same uid.
cat >"$T/hello.py" <<'EOF'
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(5)
try:
    s.connect(sys.argv[1])
    s.sendall(b'{"op":"hello","id":1}\n')
    print(s.recv(4096).decode())
except OSError as e:
    print("refused:", e)
EOF
python3 "$T/hello.py" "$SOCK" | grep -q '"ok":true' &&
    ok "a client in our netns is served" || fail "hello from our netns"
if [ "$(id -u)" = 0 ]; then other="unshare -n"; else other="unshare -rn"; fi
if $other true 2>/dev/null; then
	out=$($other python3 "$T/hello.py" "$SOCK" 2>&1)
	case $out in *'"ok"'*) fail "a client in another netns was served" ;;
	*) ok "a client in another netns is refused" ;; esac
else
	fail "cannot create a network namespace to test with"
fi
if grep -q '@.*e5ca1a7e' /proc/net/unix; then
	fail "an abstract pinhole socket exists"
else
	ok "no abstract socket"
fi

# The agent files a request with curl; it is pending, with its reason.
out=$(curl -s -d host=PyPI.org -d 'reason=pip install' \
    "$PINHOLE_AGENT/pinhole/request?format=json")
id1=$(echo "$out" | sed -n 's/.*"request":"\(r[0-9a-f]*\)".*/\1/p')
[ -n "$id1" ] && ok "curl filed $id1" || fail "curl filing: $out"
out=$(curl -s -d host=pypi.org:443 "$PINHOLE_AGENT/pinhole/request")
case $out in *"$id1"*) ok "same host coalesces" ;; *) fail "coalesce: $out" ;; esac
"$PINHOLE" pending --json >"$T/pending"
loggrep "$T/pending" "\"id\":\"$id1\",\"host\":\"pypi.org\",\"port\":443,\"reason\":\"pip install\",\"session\":\"e5ca1a7e\",\"since\":" &&
    ok "pending --json lists it" || fail "pending --json: $(cat "$T/pending")"
"$PINHOLE" pending >"$T/pending.txt"
loggrep "$T/pending.txt" "$id1  pypi.org:443  session e5ca1a7e.*asked 2 times" &&
    ok "pending lists it for people" || fail "pending: $(cat "$T/pending.txt")"

# A request names the sandbox that filed it first: pending shows its id,
# pid and command (escaped), and how often it was asked from elsewhere.
curl -s -H 'X-Probe-Sandbox: sbA' -d host=sb.test \
    "$PINHOLE_AGENT/pinhole/request" >/dev/null
curl -s -H 'X-Probe-Sandbox: sbB' -d host=sb.test \
    "$PINHOLE_AGENT/pinhole/request" >/dev/null
"$PINHOLE" pending >"$T/pending.txt"
grep -A1 ' sb.test:443 ' "$T/pending.txt" | grep -qF \
    "    sandbox sbA, pid $probe_pid: agent --task 'fix \\x1b[2J bug' (asked 1 more time from elsewhere)" &&
    ok "pending names the sandbox that asked" ||
    fail "pending sandbox: $(cat -v "$T/pending.txt")"
if grep -q "$(printf '\033')" "$T/pending.txt"; then fail "raw ESC of the command reached the terminal"; else ok "the command is shown escaped"; fi
grep -A1 " $id1 " "$T/pending.txt" | grep -q sandbox &&
    fail "a request from no sandbox names one" ||
    ok "a request from no sandbox names none"
"$PINHOLE" pending --json >"$T/pending"
loggrep "$T/pending" "\"host\":\"sb.test\",.*\"session\":\"e5ca1a7e\",\"sandbox\":\"sbA\",\"cmd\":\"agent --task 'fix \\\\u001b\[2J bug'\",.*\"count\":2,\"pid\":$probe_pid,\"others\":1" &&
    ok "pending --json names the sandbox" || fail "pending --json sandbox: $(cat "$T/pending")"
loggrep "$AUDIT" "\"event\":\"request\",.*\"sandbox\":\"sbA\",\"cmd\":\"agent --task 'fix \\\\u001b\[2J bug'\",\"pid\":$probe_pid,.*\"host\":\"sb.test\"" &&
    ok "audit: the request names the sandbox" || fail "audit request sandbox"

# Approve for the session while `pinhole request --wait` waits.
(sleep 1; "$PINHOLE" approve --session --ttl 1h "$id1" >"$T/approve.out" 2>&1) &
helper=$!
"$PINHOLE" request --status "$id1" --wait=20 >"$T/wait.out"
rc=$?
wait "$helper"
[ $rc = 0 ] && loggrep "$T/wait.out" "approved \(session\)" &&
    ok "--wait returns 0 on approval" || fail "wait: rc $rc $(cat "$T/wait.out")"
loggrep "$T/approve.out" "^approved $id1: pypi.org:443 for this session \(e5ca1a7e\), until it stops, for 3600 s at most$" &&
    ok "approve says so, the scope in words" ||
    fail "approve: $(cat "$T/approve.out")"
expect_fail "approving twice fails" "$PINHOLE" approve "$id1"
curl -s "$PINHOLE_AGENT/pinhole/allowed" >"$T/allowed"
loggrep "$T/allowed" "pypi.org:443 session \(request $id1\)" &&
    ok "allowed lists the grant" || fail "allowed: $(cat "$T/allowed")"

# Deny with a reason: the agent sees it, exit 1.  Escapes stay escaped.
(i=0 id=
 while [ -z "$id" ] && [ $i -lt 200 ]; do
	sleep 0.1; i=$((i + 1))
	id=$("$PINHOLE" pending --json | sed -n 's/.*"id":"\(r[0-9a-f]*\)","host":"deny.test".*/\1/p')
 done
 "$PINHOLE" deny --reason "$(printf 'not now \033[31m')" "$id" >/dev/null 2>&1) &
helper=$!
"$PINHOLE" request deny.test:8443 --reason x --wait=20 >"$T/deny.out"
rc=$?
wait "$helper"
[ $rc = 1 ] && loggrep "$T/deny.out" 'denied: not now \\x1b\[31m' &&
    ok "--wait returns 1 with the person's reason" ||
    fail "deny: rc $rc $(cat -v "$T/deny.out")"
if grep -q "$(printf '\033')" "$T/deny.out"; then fail "raw ESC reached the agent's terminal"; else ok "no raw ESC"; fi

# No answer in time: exit 3.
"$PINHOLE" request slow.test --wait=1 >"$T/slow.out"
rc=$?
[ $rc = 3 ] && ok "--wait times out with 3" || fail "timeout: rc $rc"
id=$(head -1 "$T/slow.out")
loggrep "$T/slow.out" "^timed out: no answer yet \(pinhole request --status $id\)\$" &&
    [ -n "$id" ] && ok "the timeout names the request" ||
    fail "timeout message: $(cat "$T/slow.out")"

# The endpoint's port field is a port: 1 to 65535, digits only.
for p in 99999 0 +80 '%2080' 0x50 -1; do
	out=$(curl -s -o /dev/null -w '%{http_code}' -d host=port.test \
	    -d "port=$p" "$PINHOLE_AGENT/pinhole/request?format=json")
	[ "$out" = 400 ] && ok "agent port '$p' refused" ||
	    fail "agent port '$p': HTTP $out"
done

# Blocked attempts show in pending and in /pinhole/blocked with the hint.
curl -s "http://127.0.0.1:$port/probe/block?host=blocked.test&port=443" >/dev/null
curl -s "$PINHOLE_AGENT/pinhole/blocked" >"$T/blocked"
loggrep "$T/blocked" "blocked.test:443 via connect, 1 time.*ask with: pinhole request blocked.test:443" &&
    ok "blocked lists the attempt and the command" || fail "blocked: $(cat "$T/blocked")"
"$PINHOLE" pending --json | grep -q '"kind":"blocked","host":"blocked.test"' &&
    ok "pending --json lists blocked hosts" || fail "pending blocked"

# The watch UI in a pty: a reason with terminal escapes shows escaped, and
# the sandbox that asked; s approves for the session.
cat >"$T/watch.py" <<'EOF'
import subprocess, sys
sys.path.insert(0, sys.argv[3])
from ptydrive import Pty
pinhole = sys.argv[1]
p = Pty([pinhole, "watch"])
p.pump(5, b"watching session")
# The requests before took the burst: ask again until a new one is taken
# (one every 12 s), as an agent told "ask again" does.
for _ in range(60):
    code = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w",
        "%{http_code}", "-H", "X-Probe-Sandbox: sbW", "-d",
        "host=watch.test", "--data-urlencode",
        "reason=look \x1b[2J\x1b]0;pwned\x07 \u202e here",
        sys.argv[4] + "/pinhole/request"], capture_output=True).stdout
    if code != b"429":
        break
    p.pump(0.5)
p.pump(5, b"watch.test")
# answer the watch.test request: move it to the front with n
for _ in range(20):
    p.pump(0.3)
    if b"watch.test" in p.prompt():
        break
    p.key(b"n")
p.key(b"s")
p.pump(5, b"(by uid")
ok = p.quit()
open(sys.argv[2], "wb").write(p.out)
sys.exit(0 if ok else 1)
EOF
if timeout 90 python3 "$T/watch.py" "$PINHOLE" "$T/watch.out" \
    "$top_srcdir/tests/integration" "$PINHOLE_AGENT"; then
	ok "watch exits 0 on q"
else
	fail "watch: $(cat -v "$T/watch.out" | tail -5)"
fi
grep -q 'look \\x1b\[2J\\x1b\]0;pwned\\x07 \\u202e here' "$T/watch.out" &&
    ok "watch shows the reason escaped" || fail "watch reason: $(cat -v "$T/watch.out")"
grep -qF "    sandbox sbW, pid $probe_pid: agent --task 'fix \\x1b[2J bug'" "$T/watch.out" &&
    grep -q 'watch.test:443 (session e5ca1a7e, sandbox sbW)' "$T/watch.out" &&
    ok "watch names the sandbox, escaped, in the request and the prompt" ||
    fail "watch sandbox: $(cat -v "$T/watch.out")"
if python3 -c "
import sys; d = open(sys.argv[1], 'rb').read().replace(b'\x1b[K', b'')
sys.exit(0 if b'\x1b' in d or b'\x07' in d or '\u202e'.encode() in d else 1)" "$T/watch.out"; then
	fail "raw escape from the agent reached the watch terminal"
else
	ok "no raw escape in watch output"
fi
grep -q "approved r[0-9a-f]*: watch.test:443 for this session (e5ca1a7e), until it stops (by uid [0-9]* via watch)" "$T/watch.out" &&
    ok "s approves for the session" || fail "watch approve: $(cat -v "$T/watch.out" | tail -3)"

# The rate limit: a burst of 5 new requests, then 429.
codes=
for h in r1 r2 r3 r4 r5 r6 r7; do
	codes="$codes $(curl -s -o /dev/null -w '%{http_code}' -d host=$h.test "$PINHOLE_AGENT/pinhole/request")"
done
case $codes in *429*) ok "rate limit answers 429 ($codes)" ;; *) fail "no 429: $codes" ;; esac
out=$("$PINHOLE" request r8.test 2>&1)
rc=$?
[ $rc = 4 ] && echo "$out" | grep -q "429: too many requests" &&
    ok "pinhole request reports the limit" || fail "limit: rc $rc $out"

# The audit log: request, grant, deny, with who decided.
loggrep "$AUDIT" "\"event\":\"request\",\"reason\":\"pip install\",\"session\":\"e5ca1a7e\",\"host\":\"pypi.org\",\"port\":443,\"via\":\"agent\",\"request_id\":\"$id1\"" &&
    ok "audit: request" || fail "audit request"
loggrep "$AUDIT" "\"event\":\"grant\",\"verdict\":\"allow\",.*\"request_id\":\"$id1\",\"scope\":\"session\",\"ttl\":3600,\"by\":\"uid $(id -u) via cli\"" &&
    ok "audit: grant" || fail "audit grant"
loggrep "$AUDIT" '"event":"deny","verdict":"deny","reason":"not now \\\\x1b\[31m".*"by":"uid [0-9]+ via cli"' &&
    ok "audit: deny" || fail "audit deny"
loggrep "$AUDIT" '"event":"grant".*"host":"watch.test".*"by":"uid [0-9]+ via watch"' &&
    ok "audit: grant via watch" || fail "audit watch grant"

# Stale sockets are dropped; the socket goes away with the host.
kill "$probe_pid" 2>/dev/null
i=0
while [ -e "$SOCK" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
[ ! -e "$SOCK" ] && ok "socket removed at exit" || fail "socket left behind"
expect_fail "no session: pending fails" "$PINHOLE" pending
finish
