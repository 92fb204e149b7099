#!/bin/sh
# A socket that answers where pinhole expects its own is not trusted for
# being there.  Another user who made /tmp/pinhole-UID first (the control
# directory without XDG_RUNTIME_DIR) gets no `run --session`, no
# `pending` and no file removed through a link; a listener in another
# network namespace at a session's own sockets is neither attached to
# nor asked, and a sandbox cannot bind in /tmp/pinhole-UID; a command
# that moves the decider's directory aside and binds a decider of its
# own at the same path is not asked either, and its request is denied;
# the log shipping's spool is out of the sandbox's sight.  The first
# part as root against nobody, in a /tmp of its own; the rest as root
# and as nobody.
. "$top_srcdir/tests/integration/lib.sh"

need root python3 setpriv unshare curl
export ASAN_OPTIONS=detect_leaks=0
PY=/usr/bin/python3
cp "$PINHOLE" "$T/pinhole" && chmod 755 "$T/pinhole"

# A listener at DIR/NAME.attach (seqpacket) and DIR/NAME.sock (stream)
# that notes each connection in LOG; makes DIR with MODE (octal) when it
# is missing; says "ready" in LOG.
cat >"$T/fake.py" <<'EOF'
import os, socket, sys, time
d, name, logp, mode = sys.argv[1:5]
if not os.path.isdir(d):
    os.mkdir(d)
    os.chmod(d, int(mode, 8))
socks = []
for suf, kind in ((".attach", socket.SOCK_SEQPACKET),
                  (".sock", socket.SOCK_STREAM)):
    p = os.path.join(d, name + suf)
    s = socket.socket(socket.AF_UNIX, kind)
    s.bind(p)
    os.chmod(p, 0o666)
    s.listen(8)
    s.settimeout(0.1)
    socks.append(s)
open(logp, "a").write("ready\n")
end = time.time() + 120
while time.time() < end:
    for s in socks:
        try:
            c, _ = s.accept()
        except OSError:
            continue
        open(logp, "a").write("connected\n")
        c.close()
EOF

# An HTTP decider on a unix socket at PATH answering VERDICT to every
# question, noting each in LOG; says "ready" in LOG.
cat >"$T/decider.py" <<'EOF'
import json, os, socket, sys, time
path, verdict, logp = sys.argv[1:4]
s = socket.socket(socket.AF_UNIX)
s.bind(path)
s.listen(8)
s.settimeout(0.1)
body = json.dumps({"decision": "allow", "scope": "session"}
                  if verdict == "allow" else {"decision": "deny"}).encode()
open(logp, "a").write("ready\n")
end = time.time() + 120
while time.time() < end:
    try:
        c, _ = s.accept()
    except OSError:
        continue
    c.settimeout(5)
    try:
        data = b""
        while b"\r\n\r\n" not in data:
            data += c.recv(4096)
        open(logp, "a").write("asked\n")
        c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                  b"Content-Length: %d\r\nConnection: close\r\n\r\n"
                  % len(body) + body)
    except OSError:
        pass
    c.close()
EOF
chmod 644 "$T/fake.py" "$T/decider.py"

# Part 1, in a mount namespace with a /tmp of its own ($T bound back):
# nobody makes /tmp/pinhole-0 first and listens there.
cat >"$T/foreign.sh" <<'EOF'
set -u
T=$1 PY=$2
mount --make-rprivate / && mount -t tmpfs tmpfs /mnt && mkdir /mnt/t &&
    mount --bind "$T" /mnt/t && mount -t tmpfs tmpfs /tmp &&
    mkdir -p "$T" && mount --bind /mnt/t "$T" || { echo "no /tmp"; exit 1; }
chmod 1777 /tmp
unset XDG_RUNTIME_DIR
F=$T/foreign
mkdir -p "$F" && chmod 777 "$F"
setpriv --reuid=nobody --regid=nogroup --clear-groups \
    "$PY" "$T/fake.py" /tmp/pinhole-0 S "$F/log" 777 &
fp=$!
i=0
while ! grep -q ready "$F/log" 2>/dev/null && [ $i -lt 200 ]; do
	sleep 0.05; i=$((i + 1))
done
"$T/pinhole" run --session S -- true >"$F/run.out" 2>&1
echo "$?" >"$F/run.rc"
"$T/pinhole" pending >"$F/pending.out" 2>&1
"$T/pinhole" session list >"$F/list.out" 2>&1
# The name a link to a directory of root's, with a file the name of a
# socket that refuses.
kill "$fp"; wait "$fp" 2>/dev/null
mkdir -m 700 "$F/rootdir" && echo keep >"$F/rootdir/x.sock"
setpriv --reuid=nobody --regid=nogroup --clear-groups \
    sh -c "rm -rf /tmp/pinhole-0 && ln -s '$F/rootdir' /tmp/pinhole-0"
"$T/pinhole" pending >"$F/pending2.out" 2>&1
EOF
timeout 120 unshare -m sh "$T/foreign.sh" "$T" "$PY" >"$T/foreign.out" 2>&1
F=$T/foreign
[ "$(cat "$F/run.rc" 2>/dev/null)" != 0 ] &&
    loggrep "$F/run.out" "/tmp/pinhole-0 is not a directory of yours with mode 0700" &&
    ok "run --session refuses a control directory another user made" ||
    fail "run --session: rc $(cat "$F/run.rc" 2>/dev/null): $(cat "$F/run.out" "$T/foreign.out")"
loggrep "$F/pending.out" "is not a directory of yours" &&
    ok "pending says the directory is not the user's" ||
    fail "pending: $(cat "$F/pending.out")"
[ ! -s "$F/list.out" ] || ! grep -q "^S " "$F/list.out" &&
    ok "session list lists no session of another user's" ||
    fail "session list: $(cat "$F/list.out")"
grep -q connected "$F/log" && fail "a client connected to the impostor" ||
    ok "no client connected to the impostor"
[ -e "$F/rootdir/x.sock" ] &&
    ok "a file behind a link in its place stays" ||
    fail "pending removed a file through a link"

# One gateway mode at a time: $MODE, $W.
start_w() {
	W="$T/w-$MODE"
	mkdir -p "$W/xdg" "$W/dec" "$W/log" && chmod 700 "$W/xdg"
	[ "$MODE" = nobody ] && chown -R nobody "$W"
}

for MODE in root nobody; do
	start_w

	# Part 2: a listener in another network namespace, in the user's
	# own directory.
	as_mode mkdir -p -m 700 "$W/xdg/pinhole"
	if [ "$MODE" = root ]; then set -- unshare -n
	else set -- unshare -rn; fi
	bg_mode "$@" "$PY" "$T/fake.py" "$W/xdg/pinhole" S "$W/fake.log" 700
	wait_line "$W/fake.log" ready || fail "$MODE: the impostor did not start"
	as_mode "$T/pinhole" run --session S -- true >"$W/run.out" 2>&1 &&
	    fail "$MODE: run --session attached to the impostor" ||
	    loggrep "$W/run.out" "answers from uid [0-9]+ or another network namespace: not your session" &&
	    ok "$MODE: run --session does not attach to a listener in another netns" ||
	    fail "$MODE: run --session: $(cat "$W/run.out")"
	as_mode "$T/pinhole" pending >"$W/pending.out" 2>&1
	loggrep "$W/pending.out" "answers from uid [0-9]+ or another network namespace: not your gateway" &&
	    ok "$MODE: pending does not ask a listener in another netns" ||
	    fail "$MODE: pending: $(cat "$W/pending.out")"
	rm -f "$W/xdg/pinhole/S.attach" "$W/xdg/pinhole/S.sock"

	# Nor can a sandbox bind in the other control directory, the one
	# a client without XDG_RUNTIME_DIR uses: hidden too.
	as_mode "$T/pinhole" run -- sh -c 'd=/tmp/pinhole-$(id -u)
	    mkdir -p "$d" 2>/dev/null; touch "$d/S.attach" 2>/dev/null &&
	    echo wrote; ls -A "$d"' >"$W/tmpctl.out" 2>&1
	[ ! -s "$W/tmpctl.out" ] &&
	    ok "$MODE: the sandbox sees /tmp/pinhole-UID empty and cannot write there" ||
	    fail "$MODE: /tmp/pinhole-UID in the sandbox: $(cat "$W/tmpctl.out")"

	# Part 3: the decider, denying, in a directory that holds its notes
	# too (one of sockets alone the sandbox empties); the command moves
	# it aside and binds an approving one at its path.
	echo notes >"$W/dec/notes"
	bg_mode "$PY" "$T/decider.py" "$W/dec/decider.sock" deny \
	    "$W/real.log"
	wait_line "$W/real.log" ready || fail "$MODE: no decider"
	as_mode "$T/pinhole" session start dec --ask=10 \
	    --decider "unix:$W/dec/decider.sock" --log "$W/log/audit.log" \
	    --log "syslog+tcp://127.0.0.1:$(free_port)" \
	    --log-spool "$W/spool" >"$W/start.out" 2>&1 ||
	    fail "$MODE: session start: $(cat "$W/start.out")"
	cat >"$W/swap.sh" <<EOF
mv "$W/dec" "$W/dec.old" && mkdir "$W/dec" || echo "cannot move" >"$W/moved"
"$PY" "$T/decider.py" "$W/dec/decider.sock" allow "$W/fake-decider.log" &
i=0
while ! grep -q ready "$W/fake-decider.log" 2>/dev/null && [ \$i -lt 200 ]; do
	sleep 0.05; i=\$((i + 1))
done
"$T/pinhole" request swap.test:443 --reason swapped --wait=10
echo "rc \$?"
kill %1
EOF
	chmod 644 "$W/swap.sh"
	as_mode "$T/pinhole" run --session dec -- sh "$W/swap.sh" \
	    >"$W/swap.out" 2>&1
	grep -q "^rc 0" "$W/swap.out" &&
	    fail "$MODE: the command's own decider approved: $(cat "$W/swap.out")" ||
	    ok "$MODE: a decider the command binds at the decider's path approves nothing"
	grep -q asked "$W/fake-decider.log" 2>/dev/null &&
	    fail "$MODE: the command's decider was asked" ||
	    ok "$MODE: the command's decider is not asked"
	loggrep "$W/log/audit.log" '"event":"grant"' &&
	    fail "$MODE: a grant was logged" || ok "$MODE: no grant"
	loggrep "$W/log/audit.log" "another network namespace \(a sandbox's\?\): not the decider" &&
	    ok "$MODE: the log says why the request was denied" ||
	    fail "$MODE: no denial naming the impostor in the log: $(grep swap.test "$W/log/audit.log" | tail -2; cat "$W/swap.out")"

	# Part 4: the spool, where lines wait for the collector: unseen.
	as_mode "$T/pinhole" run --session dec -- sh -c \
	    "ls -A '$W/spool'; touch '$W/spool/x' && echo wrote" \
	    >"$W/spool.out" 2>&1
	[ ! -e "$W/spool/x" ] && ! grep -q "spool$\|wrote" "$W/spool.out" &&
	    [ -n "$(ls -A "$W/spool")" ] &&
	    ok "$MODE: the spool is hidden from the sandbox" ||
	    fail "$MODE: spool: $(cat "$W/spool.out"; ls -A "$W/spool")"
	as_mode "$T/pinhole" session stop dec >/dev/null 2>&1
done
finish
