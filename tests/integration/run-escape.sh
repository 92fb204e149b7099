#!/bin/sh
# From inside the sandbox, every way around the gateway fails: routes,
# links, raw sockets, joining another netns, host loopback; as root and
# as nobody.
. "$top_srcdir/tests/integration/lib.sh"

PROBE="$top_builddir/tests/integration/netns-probe"
need "$PROBE"
# nobody must be able to run it, wherever the build dir is.
cp "$PROBE" "$T/netns-probe" && chmod 755 "$T/netns-probe"
PROBE="$T/netns-probe"
need root ip nsenter
export ASAN_OPTIONS=detect_leaks=0
PY=/usr/bin/python3
mkdir -m 1777 "$T/w"

# A service on host loopback, and one on a host abstract unix socket.
PORT=$(free_port)
bg $PY -m http.server "$PORT" --bind 127.0.0.1 >/dev/null 2>&1
wait_port "$PORT"
bg $PY -c 'import socket,time
s=socket.socket(socket.AF_UNIX); s.bind("\0pinhole-test-abstract"); s.listen(1); time.sleep(60)'

# Host IPC the sandbox must not see: a System V message queue and a
# POSIX shared-memory file; and a system D-Bus socket (made for the test
# where there is none: the system bus is where host resolvers answer).
need ipcmk
QID=$(ipcmk -Q | awk '{print $NF}')
[ -n "$QID" ] || skip "cannot make a System V message queue"
SHM=/dev/shm/pinhole-test-$$
touch "$SHM" && chmod 644 "$SHM"
BUS=/run/dbus/system_bus_socket
if [ ! -e $BUS ] && mkdir -p /run/dbus; then
	bg $PY -c 'import os, signal, socket, sys, time
p = sys.argv[1]
s = socket.socket(socket.AF_UNIX); s.bind(p); os.chmod(p, 0o666); s.listen(8)
signal.signal(signal.SIGTERM, lambda *a: (os.unlink(p), sys.exit(0)))
time.sleep(120)' $BUS
	i=0; while [ ! -S $BUS ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
fi
ipc_cleanup() {
	ipcrm -q "$QID" 2>/dev/null
	rm -f "$SHM"
	cleanup
}
trap ipc_cleanup EXIT

as_mode() {
	if [ "$MODE" = nobody ]; then
		as_nobody env HOME="$T/w" "$@"
	else
		"$@"
	fi
}

# Expect a command run in the sandbox to fail.
in_sandbox_fails() {
	desc=$1; shift
	if as_mode "$PROBE" "$@" >"$T/out" 2>&1; then
		fail "$MODE: $desc: succeeded: $(tail -2 "$T/out")"
	else
		ok "$MODE: $desc fails"
	fi
}

for MODE in root nobody; do
	in_sandbox_fails "ip route add" ip route add 1.2.3.4/32 dev ph0
	in_sandbox_fails "ip route replace default" ip route replace default dev lo
	in_sandbox_fails "ip link add" ip link add x0 type veth peer name x1
	in_sandbox_fails "ip addr add" ip addr add 10.9.9.9/32 dev lo
	in_sandbox_fails "a raw socket" $PY -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)'
	in_sandbox_fails "a packet socket" $PY -c 'import socket; socket.socket(socket.AF_PACKET, socket.SOCK_RAW)'
	in_sandbox_fails "joining the host netns" nsenter --net=/proc/1/ns/net true
	in_sandbox_fails "joining the gateway netns" sh -c \
	    'for f in /proc/$PPID/fd/*; do nsenter --net=$f true 2>/dev/null && exit 0; done; exit 1'
	in_sandbox_fails "reading pinhole's descriptors" sh -c \
	    'for f in /proc/$PPID/fd/*; do readlink $f && exit 0; done; exit 1'
	in_sandbox_fails "a host-loopback service" $PY -c \
	    "import socket; socket.create_connection(('127.0.0.1', $PORT), 2)"
	in_sandbox_fails "a host abstract unix socket" $PY -c \
	    'import socket; s=socket.socket(socket.AF_UNIX); s.connect("\0pinhole-test-abstract")'
	in_sandbox_fails "IPv6 beyond ::1" $PY -c \
	    "import socket; socket.create_connection(('2001:db8::1', 443), 2)"
	in_sandbox_fails "a capability" sh -c \
	    "grep -E '^Cap(Prm|Eff|Bnd|Amb):' /proc/self/status | grep -qv '0000000000000000\$'"
	in_sandbox_fails "writing resolv.conf" sh -c 'echo nameserver 127.0.0.1 >> /etc/resolv.conf'
	in_sandbox_fails "an AF_VSOCK socket" $PY -c \
	    'import socket; socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM)'
	in_sandbox_fails "io_uring" $PY -c 'import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
sys.exit(0 if libc.syscall(425, 4, ctypes.create_string_buffer(120)) >= 0 else 1)'
	in_sandbox_fails "seeing the host's message queue" sh -c \
	    "ipcs -q | grep -qw $QID"
	in_sandbox_fails "seeing the host's /dev/shm" test -e "$SHM"
	in_sandbox_fails "the system D-Bus" $PY -c \
	    "import socket; socket.socket(socket.AF_UNIX).connect('$BUS')"
	if $PY -c 'import socket; socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM)' 2>/dev/null; then
		as_mode "$PROBE" -V $PY -c 'import socket; socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM)' \
		    >"$T/out" 2>&1 && ok "$MODE: vsock when allowed" ||
		    fail "$MODE: vsock allowed: $(tail -2 "$T/out")"
	fi
	as_mode "$PROBE" sh -c 'ipcmk -Q >/dev/null && ipcs -q | grep -q 0x' >"$T/out" 2>&1 &&
	    ok "$MODE: the sandbox has System V IPC of its own" ||
	    fail "$MODE: no IPC in the sandbox: $(tail -2 "$T/out")"

	# A hidden directory (pinhole's control sockets) shows up empty.
	mkdir -p "$T/ctl-$MODE" && echo secret >"$T/ctl-$MODE/sock"
	[ "$MODE" = nobody ] && chown -R nobody "$T/ctl-$MODE"
	out=$(as_mode "$PROBE" -H "$T/ctl-$MODE" sh -c \
	    "ls -A $T/ctl-$MODE; cat $T/ctl-$MODE/sock 2>/dev/null" 2>&1)
	if [ -z "$out" ]; then
		ok "$MODE: a hidden directory shows empty"
	else
		fail "$MODE: a hidden directory shows: $out"
	fi
	in_sandbox_fails "writing into a hidden directory" \
	    -H "$T/ctl-$MODE" touch "$T/ctl-$MODE/x"

	# What the command sees.
	as_mode "$PROBE" -p 443 $PY - >"$T/out" 2>&1 <<'PYEOF'
import os, socket
assert os.environ["HTTPS_PROXY"] == "http://198.51.100.253:3128"
assert os.environ["NO_PROXY"] == "localhost,127.0.0.1"
assert os.environ["PINHOLE"] == "1"
assert "nameserver 198.51.100.253" in open("/etc/resolv.conf").read()
s = socket.create_connection(("192.0.2.7", 443), 2)
assert s.recv(100) == b"DST 192.0.2.7:443\n"
try:
    socket.create_connection(("192.0.2.7", 5555), 2)
    raise SystemExit("closed port connected")
except ConnectionRefusedError:
    pass
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.settimeout(2)
u.sendto(b"query", ("8.8.8.8", 53))
data, frm = u.recvfrom(100)
assert (data, frm) == (b"query", ("8.8.8.8", 53)), (data, frm)
PYEOF
	if [ $? = 0 ]; then ok "$MODE: every address reaches the gateway"; else fail "$MODE: $(tail -3 "$T/out")"; fi
done

# A symlinked /etc/resolv.conf (dangling, as with systemd-resolved's stub
# not running) is covered too; built in a private mount namespace.
mkdir "$T/etc" "$T/real"
mount --bind /etc "$T/real" 2>/dev/null || skip "cannot bind-mount"
umount "$T/real"
for MODE in root nobody; do
	unshare -m --propagation private sh -c '
		T=$1; shift
		mount --bind /etc "$T/real" || exit 1
		for f in "$T"/real/*; do ln -s "$f" "$T/etc/"; done
		rm -f "$T/etc/resolv.conf"
		ln -s /run/pinhole-test/missing/stub-resolv.conf "$T/etc/resolv.conf"
		mount --bind "$T/etc" /etc || exit 1
		exec "$@"' sh "$T" sh -c "$(cat <<EOF2
if [ $MODE = nobody ]; then run="env XDG_RUNTIME_DIR=$T/xdg-nobody setpriv --reuid=nobody --regid=nogroup --clear-groups"; else run=; fi
\$run $PROBE cat /etc/resolv.conf
EOF2
)" >"$T/out" 2>&1
	if grep -q "nameserver 198.51.100.253" "$T/out"; then
		ok "$MODE: a dangling resolv.conf symlink is covered"
	else
		fail "$MODE: symlinked resolv.conf: $(tail -2 "$T/out")"
	fi
	rm -f "$T"/etc/*
done
# Keystrokes pushed into the terminal the command shares with pinhole
# (TIOCSTI) would run in the person's shell once pinhole exits, outside
# the sandbox: refused, standalone and attached.
need script
cat >"$T/sti.py" <<'EOF2'
import fcntl, os, termios
fd = os.open("/dev/tty", os.O_RDWR)
try:
    fcntl.ioctl(fd, termios.TIOCSTI, b"#")
    print("TIOCSTI pushed a key")
except OSError as e:
    print("TIOCSTI: " + e.strerror)
EOF2
chmod 644 "$T/sti.py"
cp "$PINHOLE" "$T/pinhole" && chmod 755 "$T/pinhole"
script -qec "$PY $T/sti.py" /dev/null </dev/null >"$T/out" 2>&1
grep -q "TIOCSTI pushed a key" "$T/out" && ok "TIOCSTI works outside" ||
    fail "TIOCSTI outside: $(cat "$T/out")"
for MODE in root nobody; do
	mkdir -p "$T/sti-$MODE/log" && mkdir -m 700 "$T/sti-$MODE/xdg"
	[ "$MODE" = nobody ] && chown -R nobody "$T/sti-$MODE"
	as=env
	[ "$MODE" = nobody ] && as="setpriv --reuid=nobody --regid=nogroup --clear-groups"
	E="env HOME=$T/sti-$MODE XDG_RUNTIME_DIR=$T/sti-$MODE/xdg"
	script -qec "$E $as $T/pinhole run --resolver 127.0.0.1:9 --log $T/sti-$MODE/log/a.log -- $PY $T/sti.py" \
	    /dev/null </dev/null >"$T/out" 2>&1
	grep -q "TIOCSTI: Operation not permitted" "$T/out" &&
	    ok "$MODE: TIOCSTI is refused in the sandbox" ||
	    fail "$MODE: TIOCSTI: $(cat "$T/out")"
	$E $as "$T/pinhole" session start sti --resolver 127.0.0.1:9 \
	    --log "$T/sti-$MODE/log/s.log" >/dev/null 2>&1
	script -qec "$E $as $T/pinhole run --session sti -- $PY $T/sti.py" \
	    /dev/null </dev/null >"$T/out" 2>&1
	grep -q "TIOCSTI: Operation not permitted" "$T/out" &&
	    ok "$MODE: TIOCSTI is refused in an attached sandbox" ||
	    fail "$MODE: TIOCSTI attached: $(cat "$T/out")"
	$E $as "$T/pinhole" session stop sti >/dev/null 2>&1
done
finish
