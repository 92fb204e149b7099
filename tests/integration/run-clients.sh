#!/bin/sh
# pinhole run with real clients: curl, wget, python urllib, git over
# smart HTTP and pip against origins on the host's loopback, names from a
# test dnsmasq; name resolution through the gateway's DNS; and escape
# attempts that must fail without a packet reaching the host.  As root
# and as nobody.
. "$top_srcdir/tests/integration/lib.sh"

PY=/usr/bin/python3
need root dnsmasq curl wget git openssl dig getent $PY
export ASAN_OPTIONS=detect_leaks=0
# nobody must be able to run it, wherever the build dir is.
cp "$PINHOLE" "$T/pinhole" && chmod 755 "$T/pinhole"
mkdir -m 1777 "$T/w" "$T/w/root" "$T/w/nobody"

# DNS for the host side: origin.test is 127.0.0.1; every query is logged.
DNSP=$(free_port)
bg dnsmasq -k -u root -p "$DNSP" --listen-address=127.0.0.1 \
    --bind-interfaces --no-resolv --no-hosts --pid-file= \
    --address=/origin.test/127.0.0.1 --address=/live.test/127.0.0.1 \
    --log-queries \
    --log-facility="$T/dnsmasq.log"

# One HTTP origin: static files, a PEP 503 index, git http-backend (CGI).
mkdir -p "$T/www/simple/pinhole-demo" "$T/www/cgi-bin" "$T/repos"
echo hello from origin >"$T/www/hello.txt"
$PY - "$T/www/simple/pinhole-demo" <<'PYEOF'
import sys, zipfile
d = "pinhole_demo-1.0.dist-info/"
files = {
    "pinhole_demo.py": "",
    d + "METADATA": "Metadata-Version: 2.1\nName: pinhole-demo\nVersion: 1.0\n",
    d + "WHEEL": "Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
}
files[d + "RECORD"] = "".join(f + ",,\n" for f in files) + d + "RECORD,,\n"
whl = "pinhole_demo-1.0-py3-none-any.whl"
with zipfile.ZipFile(sys.argv[1] + "/" + whl, "w") as z:
    for name, text in files.items():
        z.writestr(name, text)
open(sys.argv[1] + "/index.html", "w").write(
    '<html><body><a href="%s">%s</a></body></html>\n' % (whl, whl))
PYEOF
cat >"$T/www/cgi-bin/git" <<EOF
#!/bin/sh
export GIT_PROJECT_ROOT="$T/repos" GIT_HTTP_EXPORT_ALL=1 HOME="$T/w"
export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=safe.directory GIT_CONFIG_VALUE_0='*'
exec git http-backend
EOF
chmod 755 "$T/www/cgi-bin/git"
git init -q "$T/src" && echo cloned-ok >"$T/src/README" &&
    git -C "$T/src" add README &&
    git -C "$T/src" -c user.name=t -c user.email=t@t commit -qm one &&
    git clone -q --bare "$T/src" "$T/repos/repo.git" || fail "cannot make the test repository"
chmod -R a+rX "$T/www" "$T/repos"
HP=$(free_port)
(cd "$T/www" && exec $PY -m http.server "$HP" --bind 127.0.0.1 --cgi) \
    >"$T/http.log" 2>&1 &
PIDS="$PIDS $!"

# A TLS origin with a certificate from a test CA.
make_certs origin.test
SP=$(free_port)
bg openssl s_server -quiet -accept "127.0.0.1:$SP" -cert "$T/leaf.pem" \
    -key "$T/leaf.key" -www
wait_port "$DNSP" && wait_port "$HP" && wait_port "$SP" || { finish; exit 1; }

cat >"$T/cfg/policy" <<EOF
allow-private 127.0.0.0/8
allow origin.test:*
EOF


# The checks run inside the sandbox: each prints one "ok:" or "FAIL:" line.
cat >"$T/checks.sh" <<'CHECKS'
# Expect a command to succeed and print $2.
works() {
	desc=$1 want=$2; shift 2
	if out=$("$@" 2>&1) && printf '%s\n' "$out" | grep -q -- "$want"; then
		echo "ok: $MODE: $desc"
	else
		echo "FAIL: $MODE: $desc: $(printf '%s\n' "$out" | tail -3)"
	fi
}

# Expect a command to fail.
blocked() {
	desc=$1; shift
	if out=$("$@" 2>&1); then
		echo "FAIL: $MODE: $desc: succeeded: $(printf '%s\n' "$out" | tail -2)"
	else
		echo "ok: $MODE: $desc fails"
	fi
}

# Proxy-aware clients, through HTTP_PROXY / HTTPS_PROXY.
works "curl http" "hello from origin" curl -sSf -m 10 "$URL/hello.txt"
works "curl https (CONNECT)" "s_server" \
    curl -sSf -m 10 --cacert "$T/ca.pem" "$TLS/"
works "curl: a denied name gets 403 and a reason" "Pinhole-Error" \
    curl -sS -m 10 -i http://denied.test/
works "wget http" "hello from origin" wget -q -T 10 -t 1 -O - \
    "$URL/hello.txt"
works "wget https" "s_server" wget -q -T 10 -t 1 -O - \
    --ca-certificate="$T/ca.pem" "$TLS/"
works "python urllib http" "hello from origin" $PY -c \
    'import sys, urllib.request as u
print(u.urlopen(sys.argv[1], timeout=10).read().decode())' "$URL/hello.txt"
works "python urllib https" "s_server" $PY -c \
    'import ssl, sys, urllib.request as u
c = ssl.create_default_context(cafile=sys.argv[2])
print(u.urlopen(sys.argv[1], timeout=10, context=c).read().decode())' \
    "$TLS/" "$T/ca.pem"
works "git clone over http" "cloned-ok" sh -c \
    "git clone -q $URL/cgi-bin/git/repo.git $T/w/clone-$MODE &&
    cat $T/w/clone-$MODE/README"
if $PY -m pip --version >/dev/null 2>&1; then
	works "pip download from a simple index" "pinhole_demo-1.0" \
	    sh -c "PIP_DISABLE_PIP_VERSION_CHECK=1 $PY -m pip download \
	    --no-cache-dir --no-deps --trusted-host origin.test -d $T/w/pip-$MODE \
	    --index-url $URL/simple/ pinhole-demo && ls $T/w/pip-$MODE"
else
	echo "note: $MODE: no pip for $PY; the pip case is left out"
fi

# Names resolve through the gateway: fake addresses, or nothing.
works "getent: an allowed name has a fake address" \
    "^198\.1[89]\.[0-9.]* *origin.test" getent hosts origin.test
blocked "getent: a denied name" getent hosts denied.test
works "UDP DNS to 8.8.8.8 is answered by the gateway" "^198\.1[89]\." \
    dig +short +tries=1 +time=3 @8.8.8.8 origin.test
works "a denied name: NXDOMAIN, EDE Blocked" "EDE: 15" \
    dig +tries=1 +time=3 @8.8.8.8 denied-udp.test
works "TCP DNS: the same" "status: NXDOMAIN" \
    dig +tcp +tries=1 +time=3 @192.0.2.53 denied-tcp.test

# Ways around the gateway.
blocked "changing the policy file" sh -c "echo 'allow *.test' >>$T/cfg/policy"
blocked "emptying the audit log" sh -c ": >$T/log/audit-$MODE.log"
blocked "changing the user's policy" sh -c \
    "echo 'allow *.test' >>$T/w/$MODE/.config/pinhole/policy"
blocked "an IP literal through the proxy" \
    curl -sSf -m 5 "http://127.0.0.1:$HP/escape-literal-proxy"
blocked "an IP literal, direct" \
    curl -sSf -m 5 --noproxy '*' "http://127.0.0.1:$HP/escape-literal"
blocked "the host's loopback DNS server" \
    dig +tries=1 +time=2 -p "$DNSP" @127.0.0.1 origin.test
# Without the proxy, an allowed name is captured (transparent.sh tests
# that in depth); nothing listens on the host's port 443.
works "an allowed name without the proxy" "hello from origin" \
    curl -sSf -m 5 --noproxy '*' "$URL/hello.txt"
blocked "an allowed name without the proxy, port 443" \
    curl -sSf -m 5 --noproxy '*' --cacert "$T/ca.pem" \
    "https://origin.test/escape-443"
CHECKS
chmod 644 "$T/checks.sh"

URL=http://origin.test:$HP
TLS=https://origin.test:$SP
for MODE in root nobody; do
	# Every client and escape check, in one sandbox: lines "ok: ..."
	# or "FAIL: ..." (the functions are the sandbox's own).
	in_run env MODE="$MODE" URL="$URL" TLS="$TLS" T="$T" PY="$PY" \
	    HP="$HP" DNSP="$DNSP" sh "$T/checks.sh"
	cat "$T/out"
	n=$(grep -c '^ok: ' "$T/out")
	NPASS=$((NPASS + n))
	NFAIL=$((NFAIL + $(grep -c '^FAIL: ' "$T/out")))
	[ "$n" -ge 21 ] || fail "$MODE: the checks did not all run"
	[ -d "$T/w/$MODE/.config/pinhole" ] ||
	    fail "$MODE: pinhole run did not make the user's policy directory"

	# pinhole allow outside, while the command runs: in force at once,
	# for the proxy and for DNS.
	rm -f "$T/w/asked" "$T/w/granted"
	cat >"$T/w/live.sh" <<EOF
curl -sS -o /dev/null -w 'first %{http_code}\\n' http://live.test:$HP/hello.txt
getent hosts live.test || echo 'first no name'
touch $T/w/asked
i=0
while [ ! -e $T/w/granted ] && [ \$i -lt 100 ]; do sleep 0.1; i=\$((i+1)); done
i=0
until curl -sSf -o /dev/null http://live.test:$HP/hello.txt 2>/dev/null; do
	i=\$((i+1)); [ \$i -lt 50 ] || break; sleep 0.1
done
curl -sS -o /dev/null -w 'then %{http_code}\\n' http://live.test:$HP/hello.txt
getent hosts live.test | sed 's/^/then /'
EOF
	if [ "$MODE" = nobody ]; then
		run="env XDG_RUNTIME_DIR=$T/xdg-nobody setpriv --reuid=nobody --regid=nogroup --clear-groups"
	else
		run=
	fi
	$run env HOME="$T/w/$MODE" "$T/pinhole" run --resolver "127.0.0.1:$DNSP" \
	    --allow 'allow-private 127.0.0.0/8' -- sh "$T/w/live.sh" \
	    >"$T/live.out" 2>&1 &
	live=$!
	i=0
	while [ ! -e "$T/w/asked" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	$run env HOME="$T/w/$MODE" "$T/pinhole" allow "live.test:$HP" ||
	    fail "$MODE: pinhole allow failed"
	touch "$T/w/granted"
	wait $live
	if grep -q "first 403" "$T/live.out" && grep -q "first no name" "$T/live.out" &&
	    grep -q "then 200" "$T/live.out" &&
	    grep -q "then 198\.1[89]\..*live.test" "$T/live.out"; then
		ok "$MODE: pinhole allow outside takes effect in a running sandbox"
	else
		fail "$MODE: live reload: $(cat "$T/live.out")"
	fi
done

# Exit statuses: the command's, or pinhole's own.
st() {
	want=$1; shift
	"$T/pinhole" "$@" >"$T/out" 2>&1
	got=$?
	if [ "$got" = "$want" ]; then ok "exit $want: $*"; else
		fail "exit $got, want $want: $*: $(tail -2 "$T/out")"; fi
}
st 7 run -- sh -c 'exit 7'
st 127 run -- /nonexistent/command
st 2 run --net 127.0.0.0/8 -- true
st 2 run --allow origin.test
st 2 run --ask 30 -- true
st 125 run --policy "$T/nonexistent" -- true
"$T/pinhole" run --net 10.99.0.0/30 -- sh -c 'echo $HTTP_PROXY' >"$T/out" 2>&1
grep -qx 'http://10.99.0.1:3128' "$T/out" && ok "--net moves the gateway" ||
    fail "--net: $(cat "$T/out")"

# What reached the host.
if grep -q escape "$T/http.log"; then
	fail "an escape attempt reached the origin: $(grep escape "$T/http.log")"
else
	ok "no escape attempt reached the origin"
fi
if grep -q denied "$T/dnsmasq.log"; then
	fail "a denied name reached the upstream DNS: $(grep denied "$T/dnsmasq.log")"
else
	ok "no denied name reached the upstream DNS"
fi
grep -q "query.*origin.test" "$T/dnsmasq.log" &&
    ok "the upstream DNS saw the allowed name" ||
    fail "the upstream DNS saw nothing: the test is broken"
for MODE in root nobody; do
	loggrep "$T/log/audit-$MODE.log" '"event":"start"' &&
	    loggrep "$T/log/audit-$MODE.log" '"verdict":"deny".*"host":"denied.test"' &&
	    loggrep "$T/log/audit-$MODE.log" '"qname":"denied-udp.test"' &&
	    ok "$MODE: the audit log has the decisions" ||
	    fail "$MODE: audit log: $(tail -3 "$T/log/audit-$MODE.log")"
done
finish
