# Shared helpers for integration scripts: source it, then call the
# functions.  Every script gets a private temp dir ($T) removed at exit,
# and every process it starts through `bg` is stopped at exit.
set -u
: "${PINHOLE:?PINHOLE must name the built program}"
: "${top_srcdir:?}"

T=$(mktemp -d /tmp/pinhole-it.XXXXXX)
chmod 755 "$T"
PIDS=

# A runtime directory (control sockets) and a home of the test's own, for
# root and for nobody: a gateway started here can never answer, or be
# answered by, another test's or a person's.
mkdir -m 700 "$T/xdg" "$T/xdg-nobody"
mkdir -p "$T/home" "$T/home-nobody"
chown nobody "$T/xdg-nobody" "$T/home-nobody" 2>/dev/null
export XDG_RUNTIME_DIR="$T/xdg" HOME="$T/home"
# Where in_run's policy and logs live.
mkdir "$T/cfg" && mkdir -m 1777 "$T/log"
unset XDG_CONFIG_HOME XDG_STATE_HOME

cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null; done
	for p in $PIDS; do wait "$p" 2>/dev/null; done
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

NFAIL=0
NPASS=0

# Report a failed check and go on; the script fails at `finish`.
fail() {
	echo "FAIL: $*" >&2
	NFAIL=$((NFAIL + 1))
}

# Report a passed check.
ok() {
	echo "ok: $*"
	NPASS=$((NPASS + 1))
}

# Stop here: the test cannot run on this machine.
skip() {
	echo "SKIP: $*" >&2
	exit 77
}

# The machine lacks what the test needs: skip, or, in a script that set
# NEED_IN_CI=fail, fail when CI=true (CI installs all it needs).
lack() {
	if [ "${NEED_IN_CI:-}" = fail ] && [ "${CI:-}" = true ]; then
		fail "$*"
		finish
		exit 1
	fi
	skip "$*"
}

# Go on only if the machine has all the test needs; each argument is
# "root" (run as root), an executable's path, PYTHON:MODULE (a module
# that python imports, e.g. $PY:requests) or a command on the PATH.
need() {
	for n; do
		case $n in
		root)	[ "$(id -u)" = 0 ] || lack "needs root" ;;
		*:*)	"${n%%:*}" -c "import ${n#*:}" >/dev/null 2>&1 ||
			    lack "needs ${n#*:} for ${n%%:*}" ;;
		/*)	[ -x "$n" ] || lack "needs $n" ;;
		*)	command -v "$n" >/dev/null 2>&1 ||
			    lack "$n is not installed" ;;
		esac
	done
}

# Check that a command succeeds (or fails, with `expect_fail`).
expect() {
	desc=$1; shift
	if "$@" >"$T/out" 2>&1; then ok "$desc"; else fail "$desc: $(tail -3 "$T/out")"; fi
}
expect_fail() {
	desc=$1; shift
	if "$@" >"$T/out" 2>&1; then fail "$desc: succeeded"; else ok "$desc"; fi
}

# Run a command in the background, stopped at exit.
bg() {
	"$@" &
	PIDS="$PIDS $!"
}

# An HTTP server of the files in $2 on 127.0.0.1:$1, quiet, stopped at
# exit; its backlog takes many clients at once (http.server's is 5: a
# burst past it waits for SYN retransmits, seconds on a loaded machine).
http_origin() {
	bg python3 -c 'import functools, http.server, sys
class H(http.server.SimpleHTTPRequestHandler):
	def log_message(self, *a):
		pass
http.server.ThreadingHTTPServer.request_queue_size = 256
h = functools.partial(H, directory=sys.argv[2])
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), h).serve_forever()' "$1" "$2"
}

# A port free for TCP and UDP on 127.0.0.1 (see tests/free-port.py).
free_port() {
	python3 "$top_srcdir/tests/free-port.py"
}

# Wait until something listens on TCP 127.0.0.1:$1 (at most 10 s).
# One python process polls, so a loaded machine does not pay a start-up
# per try.
wait_port() {
	python3 - "$1" <<'EOF' && return 0
import socket, sys, time
end = time.time() + 10
while time.time() < end:
    try:
        socket.create_connection(("127.0.0.1", int(sys.argv[1])), 0.2).close()
        sys.exit(0)
    except OSError:
        time.sleep(0.05)
sys.exit(1)
EOF
	fail "nothing listens on port $1"
	return 1
}

# Wait (at most 30 s) until file $1 exists.
wait_file() {
	i=0
	while [ ! -e "$1" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
	[ -e "$1" ]
}

# Wait (at most 20 s) until file $1 has a line matching extended regex $2.
wait_line() {
	j=0
	while ! grep -Eq -- "$2" "$1" 2>/dev/null && [ $j -lt 400 ]; do
		sleep 0.05; j=$((j + 1))
	done
	grep -Eq -- "$2" "$1"
}

# Check that a log file has a line matching an extended regex.
loggrep() {
	grep -Eq -- "$2" "$1"
}

# A test CA ($T/ca.pem) and a leaf certificate for the names given
# ($T/leaf.pem, $T/leaf.key; the first name is its CN), readable by all.
make_certs() {
	san="DNS:$1"
	for n in "$@"; do [ "$n" = "$1" ] || san="$san,DNS:$n"; done
	printf 'subjectAltName=%s\n' "$san" >"$T/san"
	EC="-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes"
	openssl req -x509 $EC -keyout "$T/ca.key" -out "$T/ca.pem" -days 1 \
	    -subj /CN=pinhole-test-ca 2>/dev/null &&
	openssl req $EC -keyout "$T/leaf.key" -out "$T/leaf.csr" \
	    -subj "/CN=$1" 2>/dev/null &&
	openssl x509 -req -in "$T/leaf.csr" -CA "$T/ca.pem" -CAkey "$T/ca.key" \
	    -CAcreateserial -out "$T/leaf.pem" -days 1 -extfile "$T/san" \
	    2>/dev/null || fail "cannot make the test certificates"
	chmod 644 "$T"/*.pem
}

# pinhole run -- "$@" as $MODE's user (root or nobody), with the test's
# $T/cfg/policy, its DNS server on 127.0.0.1:$DNSP and a log per user in
# $T/log (directories of their own: the sandbox sees them read-only); the
# output goes to $T/out.
in_run() {
	set -- env HOME="$T/w/$MODE" "$T/pinhole" run --policy "$T/cfg/policy" \
	    --resolver "127.0.0.1:$DNSP" --log "$T/log/audit-$MODE.log" -- "$@"
	if [ "$MODE" = nobody ]; then
		set -- env XDG_RUNTIME_DIR="$T/xdg-nobody" setpriv \
		    --reuid=nobody --regid=nogroup --clear-groups "$@"
	fi
	"$@" >"$T/out" 2>&1
}

# Run a command as an unprivileged user, with its own runtime directory.
as_nobody() {
	env XDG_RUNTIME_DIR="$T/xdg-nobody" HOME="$T/home-nobody" \
	    setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$@"
}

# Start dnsmasq on 127.0.0.1:$DNSP, answering every name under .test with
# 127.0.0.1 (more dnsmasq options in "$@"), and an HTTP origin on
# 127.0.0.1:$HP serving $T/www, which has hello.txt; wait for both.
start_origin() {
	DNSP=$(free_port)
	bg dnsmasq -k -u root -p "$DNSP" --listen-address=127.0.0.1 \
	    --bind-interfaces --no-resolv --no-hosts --pid-file= \
	    --address=/test/127.0.0.1 "$@"
	mkdir "$T/www" && echo hello from origin >"$T/www/hello.txt"
	chmod -R a+rX "$T/www"
	HP=$(free_port)
	http_origin "$HP" "$T/www"
	wait_port "$DNSP" && wait_port "$HP"
}

# A TCP server on 127.0.0.1:$1 that speaks first: a banner ("220 banner
# first"), then it echoes one line; stopped at exit.
start_banner() {
	bg python3 -c '
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(8)
while True:
    c, _ = s.accept(); c.settimeout(10)
    try:
        c.sendall(b"220 banner first\r\n"); c.sendall(c.recv(100))
    except OSError:
        pass
    c.close()' "$1"
}

# Run a command as $MODE's user (root or nobody) with HOME $W and the
# runtime directory $W/xdg (the caller makes both, owned by that user).
as_mode() {
	if [ "$MODE" = nobody ]; then
		set -- setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"
	fi
	env HOME="$W" XDG_RUNTIME_DIR="$W/xdg" "$@"
}

# The same in the background, stopped at exit.
bg_mode() {
	if [ "$MODE" = nobody ]; then
		set -- setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"
	fi
	bg env HOME="$W" XDG_RUNTIME_DIR="$W/xdg" "$@"
}

# Wait (at most 30 s) for a pending request for host $1, asking the
# gateway with the pinhole command in "$@" (e.g. "$PINHOLE"); print its id.
wait_pending() {
	host=$1; shift
	i=0
	while [ $i -lt 300 ]; do
		id=$("$@" pending --json 2>/dev/null | sed -n \
		    "s/.*\"id\":\"\(r[0-9a-f]*\)\",\"host\":\"$host\".*/\1/p" |
		    head -1)
		[ -n "$id" ] && { echo "$id"; return 0; }
		sleep 0.1
		i=$((i + 1))
	done
	echo "no pending request for $host" >&2
	return 1
}

# Print the closing line and exit with the verdict.
finish() {
	echo "$NPASS passed, $NFAIL failed"
	[ "$NFAIL" -eq 0 ]
}
