#!/bin/sh
# pinhole proxy under pressure: the connection limit pauses accepting
# and resumes; running out of descriptors pauses accepting without
# spinning; both recover when clients go away.  Connect and idle
# timeouts.
. "$top_srcdir/tests/integration/lib.sh"
here="$top_srcdir/tests/integration"

need python3
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY

O=$(free_port)
bg python3 "$here/origin.py" "$O"
wait_port "$O"

# Hold N idle connections to port $1 for $3 seconds; print when held.
cat >"$T/hold.py" <<'EOF'
import socket, sys, time
socks = []
for i in range(int(sys.argv[2])):
    try:
        socks.append(socket.create_connection(("127.0.0.1", int(sys.argv[1])), 2))
    except OSError:
        break
print(len(socks), flush=True)
time.sleep(float(sys.argv[3]))
EOF

# Ask for the origin through proxy port $1 within $2 seconds; print the status.
cat >"$T/get.py" <<EOF
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), 2)
s.sendall(b"GET http://127.0.0.1:$O/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
s.settimeout(float(sys.argv[2]))
try:
    print(s.recv(100).split(b" ")[1].decode())
except (socket.timeout, IndexError):
    print("none")
EOF

# Wait (at most 10 s) until hold.py says its connections are open, then
# give the proxy a moment to accept them.
wait_held() {
	i=0
	while [ ! -s "$T/held" ] && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	sleep 0.5
}

# CPU time (user + system, in clock ticks) used so far by process $1.
cputime() {
	awk '{ print $14 + $15 }' "/proc/$1/stat"
}

# 1. The connection limit.
P=$(free_port)
"$PINHOLE" proxy --listen "127.0.0.1:$P" --allow "127.0.0.1:$O" \
    --allow "allow-private 127.0.0.0/8" --max-clients 3 \
    --handshake-timeout 30 2>"$T/err1" &
PROXY=$!
PIDS="$PIDS $PROXY"
wait_port "$P"
python3 "$T/hold.py" "$P" 3 60 >"$T/held" &
HOLD=$!
PIDS="$PIDS $HOLD"
wait_held
got=$(python3 "$T/get.py" "$P" 1)
[ "$got" = none ] && ok "at the limit a new client waits" || fail "at the limit: got $got"
# The held connections go away: the waiting clients are served.
kill "$HOLD"
wait "$HOLD" 2>/dev/null
got=$(python3 "$T/get.py" "$P" 3)
[ "$got" = 200 ] && ok "accepting resumes below the limit" || fail "after the limit: got $got"
kill "$PROXY"
wait "$PROXY"

# 2. Out of descriptors: accepting pauses (no spinning) and resumes.
P=$(free_port)
(ulimit -n 24 && exec "$PINHOLE" proxy --listen "127.0.0.1:$P" \
    --allow "127.0.0.1:$O" --allow "allow-private 127.0.0.0/8" \
    --max-clients 100 --handshake-timeout 30 2>"$T/err2") &
PROXY=$!
PIDS="$PIDS $PROXY"
wait_port "$P"
python3 "$T/hold.py" "$P" 40 3 >"$T/held" &
HOLD=$!
PIDS="$PIDS $HOLD"
sleep 0.7
c0=$(cputime "$PROXY")
sleep 1
c1=$(cputime "$PROXY")
used=$((c1 - c0))
[ "$used" -lt 30 ] && ok "out of descriptors: no spinning ($used ticks in 1 s)" ||
    fail "out of descriptors: $used ticks of CPU in 1 s"
wait "$HOLD"
sleep 0.5
got=$(python3 "$T/get.py" "$P" 3)
[ "$got" = 200 ] && ok "accepting resumes when descriptors free up" || fail "after EMFILE: got $got"
kill "$PROXY"
wait "$PROXY"
rv=$?
[ $rv -eq 0 ] && ok "clean exit" || fail "exit status $rv"
# 3. Timeouts: connect (an origin whose accept queue is full drops SYNs)
# and idle (a tunnel with no traffic).
B=$(free_port)
cat >"$T/blackhole.py" <<'EOF'
import socket, sys, time
l = socket.socket()
l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(("127.0.0.1", int(sys.argv[1])))
l.listen(0)
fill = []
for i in range(3):
    c = socket.socket()
    c.setblocking(False)
    c.connect_ex(("127.0.0.1", int(sys.argv[1])))
    fill.append(c)
time.sleep(30)
EOF
bg python3 "$T/blackhole.py" "$B"
sleep 0.5
P=$(free_port)
head -c 32 /dev/urandom >"$T/key"
"$PINHOLE" proxy --listen "127.0.0.1:$P" --allow "127.0.0.1:$O,$B" \
    --allow "allow-private 127.0.0.0/8" --connect-timeout 1 \
    --idle-timeout 1 --log "$T/audit3" --log-key "$T/key" 2>"$T/err3" &
PROXY=$!
PIDS="$PIDS $PROXY"
wait_port "$P"
got=$(python3 "$here/rawhttp.py" "$P" send "CONNECT 127.0.0.1:$B HTTP/1.1\r\n\r\n" 4)
[ "$got" = "504 timeout" ] && ok "connect timeout: 504" || fail "connect timeout: $got"
got=$(python3 - "$P" "$O" <<'EOF'
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"CONNECT 127.0.0.1:%s HTTP/1.1\r\n\r\n" % sys.argv[2].encode())
s.settimeout(5)
s.recv(100)
t = time.time()
print(s.recv(100) == b"" and round(time.time() - t))
EOF
)
case $got in
1|2) ok "idle tunnel closed after the idle timeout (${got}s)" ;;
*) fail "idle tunnel: $got" ;;
esac
loggrep "$T/audit3" '"event":"close","reason":"idle timeout"' &&
    ok "idle close logged" || fail "no idle close line"
kill "$PROXY"
wait "$PROXY"
expect "keyed audit log verifies" "$PINHOLE" log verify --key "$T/key" "$T/audit3"

if grep -q 'Sanitizer' "$T/err1" "$T/err2" "$T/err3"; then fail "sanitizer: $(cat "$T/err1" "$T/err2")"; fi

finish
