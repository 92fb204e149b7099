#!/bin/sh
# Transparent capture in pinhole run: programs that ignore HTTP_PROXY
# (curl --noproxy, a raw python socket, openssl s_client, ssh, git over
# ssh) reach allowed names by their fake addresses; SNI or Host naming
# another host is refused as fronting; a port the policy does not name,
# an IP literal and UDP other than DNS are refused (logged where the
# gateway sees them).  Origins live on the host's loopback; names come
# from a test dnsmasq.  As root and as nobody.
. "$top_srcdir/tests/integration/lib.sh"

PY=/usr/bin/python3
need root dnsmasq curl git openssl ssh ssh-keygen /usr/sbin/sshd $PY
export ASAN_OPTIONS=detect_leaks=0
cp "$PINHOLE" "$T/pinhole" && chmod 755 "$T/pinhole"
mkdir -m 1777 "$T/w" "$T/w/root" "$T/w/nobody"
# With nftables in the kernel (nf_tables and nft_tproxy), ports with no listener
# and UDP are captured and logged; pinhole -v says when they are not.
NFT=yes
"$T/pinhole" run -v -- true 2>&1 | grep -q "refused unlogged" && NFT=no

# Ports 80 and 443 are served on a loopback address of their own, so
# that nothing else on the host's 127.0.0.1 is in the way.
LO=127.0.$(($$ % 200 + 20)).$(($$ % 250 + 2))
wait_addr() {
	i=0
	while [ $i -lt 100 ]; do
		$PY -c "import socket; socket.create_connection(('$1',$2),0.2)" \
		    2>/dev/null && return 0
		sleep 0.1
		i=$((i + 1))
	done
	fail "nothing listens on $1 port $2"
	return 1
}

DNSP=$(free_port)
bg dnsmasq -k -u root -p "$DNSP" --listen-address=127.0.0.1 \
    --bind-interfaces --no-resolv --no-hosts --pid-file= \
    --address=/origin.test/127.0.0.1 --address=/ssh.test/127.0.0.1 \
    --address=/tls.test/$LO --address=/other.test/127.0.0.1

# An HTTP origin, and another on a port the policy does not name.
mkdir -p "$T/www"
echo hello from origin >"$T/www/hello.txt"
chmod -R a+rX "$T/www"
HP=$(free_port)
XP=$(free_port)
(cd "$T/www" && exec $PY -m http.server "$HP" --bind 127.0.0.1) \
    >"$T/http.log" 2>&1 &
PIDS="$PIDS $!"
(cd "$T/www" && exec $PY -m http.server "$XP" --bind 127.0.0.1) \
    >"$T/http-x.log" 2>&1 &
PIDS="$PIDS $!"
(cd "$T/www" && exec $PY -m http.server 80 --bind "$LO") \
    >"$T/http-80.log" 2>&1 &
PIDS="$PIDS $!"

# TLS origins: a test CA, a certificate for origin.test and tls.test.
make_certs origin.test tls.test other.test
SP=$(free_port)
bg openssl s_server -quiet -accept "127.0.0.1:$SP" -cert "$T/leaf.pem" \
    -key "$T/leaf.key" -www
bg openssl s_server -quiet -accept "$LO:443" -cert "$T/leaf.pem" \
    -key "$T/leaf.key" -www

# A server that speaks first: a banner, then it echoes one line.
BP=$(free_port)
start_banner "$BP"

# A server that sends 1 MiB first, then records what it is sent: the
# client's first bytes must still be judged, however much came down.
FP=$(free_port)
bg $PY -c '
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(8)
while True:
    c, _ = s.accept(); c.settimeout(10)
    try:
        c.sendall(b"x" * (1 << 20))
        while True:
            b = c.recv(4096)
            if not b:
                break
            open(sys.argv[2], "ab").write(b)
    except OSError:
        pass
    c.close()' "$FP" "$T/first.log"

# sshd as root on the host's loopback, key auth with a test key; a bare
# repository to clone over ssh.
mkdir -p "$T/ssh" "$T/repos"
ssh-keygen -q -t ed25519 -N '' -f "$T/ssh/hostkey" &&
    ssh-keygen -q -t ed25519 -N '' -f "$T/ssh/key" &&
    cp "$T/ssh/key.pub" "$T/ssh/authorized_keys" ||
    fail "cannot make the ssh keys"
for MODE in root nobody; do
	cp "$T/ssh/key" "$T/ssh/key-$MODE"
	chown "$MODE" "$T/ssh/key-$MODE" && chmod 600 "$T/ssh/key-$MODE"
done
chmod 755 "$T/ssh"
cat >"$T/ssh/sshd_config" <<EOF
ListenAddress 127.0.0.1
HostKey $T/ssh/hostkey
AuthorizedKeysFile $T/ssh/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PidFile none
LogLevel ERROR
EOF
MADE_RUN_SSHD=
[ -d /run/sshd ] || { mkdir -m 755 /run/sshd && MADE_RUN_SSHD=1; }
SSHP=$(free_port)
bg /usr/sbin/sshd -D -e -f "$T/ssh/sshd_config" -p "$SSHP" 2>"$T/sshd.log"
git init -q "$T/src" && echo cloned-ok >"$T/src/README" &&
    git -C "$T/src" add README &&
    git -C "$T/src" -c user.name=t -c user.email=t@t commit -qm one &&
    git clone -q --bare "$T/src" "$T/repos/repo.git" ||
    fail "cannot make the test repository"
chmod -R a+rX "$T/repos"

wait_port "$DNSP" && wait_port "$HP" && wait_port "$XP" && wait_port "$SP" &&
    wait_port "$BP" && wait_port "$FP" && wait_port "$SSHP" && wait_addr "$LO" 80 &&
    wait_addr "$LO" 443 || { finish; exit 1; }

cat >"$T/cfg/policy" <<EOF
allow-private 127.0.0.0/8
allow origin.test:$HP,$SP,$BP,$FP
allow ssh.test:$SSHP
allow tls.test
EOF


# Expect a command in the sandbox to succeed and print $2.
works() {
	desc=$1 want=$2; shift 2
	if in_run "$@" && grep -q -- "$want" "$T/out"; then
		ok "$MODE: $desc"
	else
		fail "$MODE: $desc: $(tail -3 "$T/out")"
	fi
}

# Expect a command in the sandbox to fail.
blocked() {
	desc=$1; shift
	if in_run "$@"; then
		fail "$MODE: $desc: succeeded: $(tail -2 "$T/out")"
	else
		ok "$MODE: $desc fails"
	fi
}

SSHO="-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes -o ConnectTimeout=10"
for MODE in root nobody; do
	works "curl http, no proxy" "hello from origin" \
	    curl -sSf -m 10 --noproxy '*' "http://origin.test:$HP/hello.txt"
	works "curl https, no proxy" "s_server" \
	    curl -sSf -m 10 --noproxy '*' --cacert "$T/ca.pem" "https://origin.test:$SP/"
	works "curl http on port 80 (Host read first)" "hello from origin" \
	    curl -sSf -m 10 --noproxy '*' "http://tls.test/hello.txt"
	works "curl https on port 443 (SNI read first)" "s_server" \
	    curl -sSf -m 10 --noproxy '*' --cacert "$T/ca.pem" "https://tls.test/"
	works "python, a raw socket" "hello from origin" $PY -c '
import socket, sys
s = socket.create_connection(("origin.test", int(sys.argv[1])), 10)
s.sendall(b"GET /hello.txt HTTP/1.0\r\nHost: origin.test\r\n\r\n")
d = b""
while True:
    b = s.recv(4096)
    if not b:
        break
    d += b
print(d.decode())' "$HP"
	works "a server that speaks first" "220 banner first.*echo" $PY -c '
import socket, sys
s = socket.create_connection(("origin.test", int(sys.argv[1])), 10)
s.settimeout(10)
b = s.recv(100)
s.sendall(b"echo\r\n")
print((b + s.recv(100)).decode().replace("\r\n", " "))' "$BP"
	works "ssh to an allowed name" "ssh-ok" \
	    ssh $SSHO -i "$T/ssh/key-$MODE" -p "$SSHP" root@ssh.test echo ssh-ok
	works "git clone over ssh" "cloned-ok" sh -c \
	    "GIT_SSH_COMMAND='ssh $SSHO -i $T/ssh/key-$MODE' git clone -q \
	    ssh://root@ssh.test:$SSHP$T/repos/repo.git $T/w/clone-$MODE &&
	    cat $T/w/clone-$MODE/README"

	blocked "s_client to origin.test naming other.test (fronting)" sh -c \
	    "openssl s_client -connect origin.test:$SP -servername other.test \
	    -CAfile $T/ca.pem -verify_return_error </dev/null"
	blocked "s_client on port 443 naming other.test (fronting)" sh -c \
	    "openssl s_client -connect tls.test:443 -servername other.test \
	    -CAfile $T/ca.pem -verify_return_error </dev/null"
	works "HTTP on port 80 naming another Host: 403, fronting" \
	    "Pinhole-Error: fronting" \
	    curl -sS -m 10 -i --noproxy '*' -H "Host: other.test" "http://tls.test/escape"
	works "1 MiB down first, then a Host naming another host: refused" \
	    "refused-after-1MiB" $PY -c '
import socket, sys
s = socket.create_connection(("origin.test", int(sys.argv[1])), 10)
s.settimeout(10)
n = 0
while n < (1 << 20):
    b = s.recv(65536)
    if not b:
        break
    n += len(b)
try:
    s.sendall(b"GET /escape HTTP/1.1\r\nHost: other.test\r\n\r\n")
    r = s.recv(100)
    print("refused-after-%dMiB" % (n >> 20) if not r else "answered")
except OSError:
    print("refused-after-%dMiB" % (n >> 20))' "$FP"
	blocked "an allowed name on a port the policy does not name" \
	    curl -sSf -m 5 --noproxy '*' "http://origin.test:$XP/escape-port"
	blocked "an IP literal on a captured port" \
	    curl -sSf -m 5 --noproxy '*' "http://192.0.2.1:$HP/escape-literal"
	blocked "an IP literal on another port" \
	    curl -sSf -m 5 --noproxy '*' "http://192.0.2.1:$XP/escape-literal"
	works "UDP to port 443 (QUIC) fails at once" "refused-fast" $PY -c '
import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(5)
s.connect(("origin.test", 443))
t = time.monotonic()
try:
    s.send(b"\xc0quic-like"); s.recv(100); print("answered")
except ConnectionRefusedError:
    print("refused-fast" if time.monotonic() - t < 1 else "refused-slow")
except socket.timeout:
    print("timed out")'
done

# What reached the host.
touch "$T/first.log"
if grep -q escape "$T/http.log" "$T/http-x.log" "$T/http-80.log" "$T/first.log"; then
	fail "an escape attempt reached an origin: $(grep -h escape "$T"/http*.log)"
else
	ok "no refused attempt reached an origin"
fi

# What the audit log says.
for MODE in root nobody; do
	A="$T/log/audit-$MODE.log"
	check_log() {
		if loggrep "$A" "$2"; then ok "$MODE: log: $1"; else fail "$MODE: log: $1"; fi
	}
	check_log "an allowed transparent connection, name from Host" \
	    '"event":"close".*"host":"origin.test","port":'$HP',.*"via":"transparent","name_from":"host"'
	check_log "the same on port 80, decided on Host" \
	    '"event":"connect","verdict":"allow".*"host":"tls.test","port":80,.*"name_from":"host"'
	check_log "name from SNI on port 443" \
	    '"event":"connect","verdict":"allow".*"host":"tls.test","port":443,.*"name_from":"sni"'
	check_log "ssh: name from the fake address" \
	    '"event":"connect","verdict":"allow".*"host":"ssh.test","port":'$SSHP',.*"via":"transparent","name_from":"fake-ip"'
	check_log "fronting, with both names" \
	    '"verdict":"deny","reason":"fronting".*"host":"origin.test".*"detail":"TLS SNI other.test"'
	check_log "fronting on 443, refused before dialing" \
	    '"verdict":"deny","reason":"fronting".*"host":"tls.test","port":443,"via"'
	check_log "fronting over HTTP" \
	    '"verdict":"deny","reason":"fronting".*"host":"tls.test","port":80,.*"detail":"Host other.test"'
	check_log "an IP literal, with address and port" \
	    '"verdict":"deny","reason":"ip-literal".*"host":"192.0.2.1","port":'$HP','
	if [ $NFT = yes ]; then
		check_log "a port the policy does not name (nftables)" \
		    '"verdict":"deny","reason":"port".*"host":"origin.test","port":'$XP','
		check_log "an IP literal on another port (nftables)" \
		    '"verdict":"deny","reason":"ip-literal".*"host":"192.0.2.1","port":'$XP','
		check_log "UDP to port 443 (nftables)" \
		    '"verdict":"deny","reason":"udp".*"host":"origin.test","port":443,"via":"transparent","name_from":"fake-ip"'
	else
		echo "note: no capture rule (no nf_tables or nft_tproxy): other ports are refused unlogged"
	fi
	"$T/pinhole" log verify "$A" >/dev/null 2>&1 && ok "$MODE: log verifies" ||
	    fail "$MODE: the audit log does not verify"
done
# A policy that names more ports than get listeners of their own (a
# range of 101, as README's example): every one is still served, standalone
# and attached, through its listener or the capture rule.
lo=$((HP > 1100 ? HP - 50 : 1050))
printf 'allow-private 127.0.0.0/8\nallow origin.test:%s-%s\n' "$lo" \
    "$((lo + 100))" >"$T/cfg/many"
for MODE in root nobody; do
	W="$T/w/$MODE"
	set -- curl -sSf -m 10 --noproxy '*' "http://origin.test:$HP/hello.txt"
	as=env
	[ "$MODE" = nobody ] && as=as_nobody
	$as env HOME="$W" "$T/pinhole" run --policy "$T/cfg/many" \
	    --resolver "127.0.0.1:$DNSP" --log "$T/log/many-$MODE.log" -- "$@" \
	    >"$T/out" 2>&1 && grep -q "hello from origin" "$T/out" &&
	    ok "$MODE: a range of 101 ports: run, port $HP captured" ||
	    fail "$MODE: a range of 101 ports: $(tail -3 "$T/out")"
	$as env HOME="$W" "$T/pinhole" session start many --policy \
	    "$T/cfg/many" --resolver "127.0.0.1:$DNSP" \
	    --log "$T/log/many-s-$MODE.log" >/dev/null 2>"$T/err" ||
	    fail "$MODE: session start: $(cat "$T/err")"
	$as env HOME="$W" "$T/pinhole" run --session many -- "$@" >"$T/out" 2>&1 &&
	    grep -q "hello from origin" "$T/out" &&
	    ok "$MODE: a range of 101 ports: run --session" ||
	    fail "$MODE: a range of 101 ports, attached: $(tail -3 "$T/out")"
	$as env HOME="$W" "$T/pinhole" session stop many >/dev/null 2>&1
done

[ -n "$MADE_RUN_SSHD" ] && rmdir /run/sshd 2>/dev/null
finish
