#!/bin/sh
# pinhole check end to end: verdicts and exit codes, file:line errors,
# presets, the default policy path, and one request with its headers.
. "$top_srcdir/tests/integration/lib.sh"

CHECK_ENV=

# Run pinhole check (with $CHECK_ENV set); compare the exit status
# and the first line printed: of the verdict, or else of the error.
check() {
	want_rc=$1; want=$2; shift 2
	out=$(env $CHECK_ENV "$PINHOLE" check "$@" 2>"$T/check.err")
	rc=$?
	[ -z "$out" ] && out=$(cat "$T/check.err")
	if [ "$rc" -eq "$want_rc" ] && [ "$(echo "$out" | head -1)" = "$want" ]; then
		ok "check $* -> $rc $want"
	else
		fail "check $*: got $rc '$out', want $want_rc '$want'"
	fi
}

P=$T/policy
cat >"$P" <<'POLICY'
# test policy
allow pypi.org
allow *.pythonhosted.org
allow github.com:22,443
deny  upload.pypi.org
allow 203.0.113.0/24:443
allow [2001:db8::/32]:*
POLICY

check 0 "allow pypi.org:443 ($P:2: allow pypi.org)" --policy "$P" pypi.org
check 0 "allow pypi.org:80 ($P:2: allow pypi.org)" --policy "$P" PyPI.org.:80
check 1 "deny pypi.org:8080 (no rule allows this port: default deny)" \
    --policy "$P" pypi.org:8080
check 1 "deny evilpypi.org:443 (no rule matches: default deny)" \
    --policy "$P" evilpypi.org
check 1 "deny evil.example:443 (no rule matches: default deny)" \
    --policy "$P" evil.example
check 0 "allow a.b.files.pythonhosted.org:443 ($P:3: allow *.pythonhosted.org)" \
    --policy "$P" a.b.files.pythonhosted.org
check 1 "deny pythonhosted.org:443 (no rule matches: default deny)" \
    --policy "$P" pythonhosted.org
check 1 "deny upload.pypi.org:443 ($P:5: deny  upload.pypi.org)" \
    --policy "$P" --allow upload.pypi.org upload.pypi.org
check 0 "allow github.com:22 ($P:4: allow github.com:22,443)" \
    --policy "$P" github.com:22
check 1 "deny 203.0.113.7:443 (203.0.113.7 is a special-purpose address (reserved): only an allow-private rule lets pinhole connect to it)" \
    --policy "$P" 3405803783
check 0 "allow 203.0.113.7:443 ($P:6: allow 203.0.113.0/24:443)" \
    --policy "$P" --allow 'allow-private 203.0.113.0/24' 3405803783
check 0 "allow [2001:db8::1]:8080 ($P:7: allow [2001:db8::/32]:*)" \
    --policy "$P" --allow 'allow-private [2001:db8::/32]' '[2001:DB8::1]:8080'
check 0 "allow other.example:443 (--allow: allow other.example)" \
    --policy "$P" --allow other.example other.example

# Errors: FILE:LINE: message, exit 2.
printf 'allow ok.example\nalow pypi.org\n' >"$T/typo"
check 2 "$T/typo:2: unknown directive 'alow' (did you mean 'allow'?)" \
    --policy "$T/typo" pypi.org
printf 'allow *.co.uk\n' >"$T/psl"
check 2 "$T/psl:1: '*.co.uk' would match every site under the public suffix 'co.uk': name the site (*.example.co.uk)" \
    --policy "$T/psl" x.co.uk
printf 'include %s\n' "$T/loop" >"$T/loop"
check 2 "$T/loop:1: include loop: '$T/loop' is already being read" \
    --policy "$T/loop" pypi.org
check 2 "$T/nothere: No such file or directory" --policy "$T/nothere" pypi.org
check 2 "pinhole check: --allow: '*' alone would match every host: name the hosts (a wildcard needs a domain: *.example.com) (try 'pinhole check --help')" \
    --policy "$P" --allow '*' pypi.org
expect_fail "bad host is a usage error" "$PINHOLE" check --policy "$P" 'a..b'
"$PINHOLE" check --policy "$P" 'a..b' >/dev/null 2>&1
[ $? -eq 2 ] && ok "bad host exits 2" || fail "bad host does not exit 2"
"$PINHOLE" check --policy "$P" >/dev/null 2>&1
[ $? -eq 2 ] && ok "no host exits 2" || fail "no host does not exit 2"
"$PINHOLE" check --bogus pypi.org >/dev/null 2>&1
[ $? -eq 2 ] && ok "unknown option exits 2" || fail "unknown option does not exit 2"

# Presets, found through PINHOLE_PRESETDIR (set by the test harness).
printf 'include preset:python\ninclude preset:github\n' >"$T/presets"
check 0 "allow files.pythonhosted.org:443 ($PINHOLE_PRESETDIR/python:3: allow files.pythonhosted.org)" \
    --policy "$T/presets" files.pythonhosted.org
printf 'include preset:pythn\n' >"$T/nopreset"
check 2 "$T/nopreset:1: no preset 'pythn' in $PINHOLE_PRESETDIR (did you mean 'python'?); pinhole check --presets lists them" \
    --policy "$T/nopreset" pypi.org
"$PINHOLE" check --presets >"$T/out" 2>&1 &&
    grep -q '^python  *Python packages: pip and friends\.$' "$T/out" &&
    grep -q "^6 presets in $PINHOLE_PRESETDIR: add one with \`pinhole allow include preset:NAME\`\$" "$T/out" &&
    ok "--presets lists them, what each is for, and how to add one" ||
    fail "--presets: $(cat "$T/out")"
check 2 "pinhole check: --presets takes no HOST (try 'pinhole check --help')" \
    --presets pypi.org

# --allow takes what a policy line says, as run's --allow: one place
# turns them into lines.
check 0 "allow 10.1.2.3:443 (--allow: allow 10.1.2.3)" \
    --policy "$P" --allow 'allow-private 10.0.0.0/8' --allow 10.1.2.3 10.1.2.3
check 0 "allow registry.npmjs.org:443 ($PINHOLE_PRESETDIR/node:2: allow registry.npmjs.org)" \
    --policy "$P" --allow 'include preset:node' registry.npmjs.org
check 1 "deny pypi.org:443 (--allow: deny pypi.org)" \
    --policy "$P" --allow 'deny pypi.org' pypi.org
"$PINHOLE" check --policy "$P" --allow 'secret TOKEN for api.example' \
    --allow api.example api.example | grep -q '^inspected: ' &&
    ok "--allow takes a secret line" || fail "--allow secret"
check 0 "allow two.example:443 (--allow: allow two.example)" \
    --policy "$P" --allow 'one.example two.example' two.example
check 2 "pinhole check: --allow: 'readonly' is neither a directive nor a constraint (did you mean 'read-only'?), and not a host a rule names (try 'pinhole check --help')" \
    --policy "$P" --allow 'github.com readonly' github.com

# A host written as a URL: the host to write instead, wherever it is.
check 2 "pinhole check: bad host 'https://pypi.org': write the host, not a URL: pypi.org" \
    --policy "$P" https://pypi.org
check 2 "pinhole check: --allow: bad host 'https://pypi.org/simple': write the host, not a URL: allow pypi.org (a path goes on the rule as a constraint: allow pypi.org path /simple/**) (try 'pinhole check --help')" \
    --policy "$P" --allow https://pypi.org/simple pypi.org
printf 'allow http://x.example:8080/api\n' >"$T/url"
check 2 "$T/url:1: bad host 'http://x.example:8080/api': write the host, not a URL: allow x.example:8080 (a path goes on the rule as a constraint: allow x.example:8080 path /api/**)" \
    --policy "$T/url" x.example

# Special-purpose addresses: denied as run denies them, with the rule
# that would lift it; a name's addresses are vetted when it connects.
check 1 "deny 127.0.0.1:8080 (127.0.0.1 is a special-purpose address (loopback): only an allow-private rule lets pinhole connect to it)" \
    --policy "$P" --allow 127.0.0.1:8080 127.0.0.1:8080
"$PINHOLE" check --policy "$P" --allow 127.0.0.1:8080 127.0.0.1:8080 |
    sed -n 2p | grep -qx 'lift it with: pinhole allow allow-private 127.0.0.1' &&
    ok "check names the allow-private line" || fail "no allow-private line"
check 0 "allow 127.0.0.1:8080 (--allow: allow 127.0.0.1:8080)" \
    --policy "$P" --allow 127.0.0.1:8080 --allow 'allow-private 127.0.0.0/8' \
    127.0.0.1:8080
check 1 "deny [fd00::1]:443 (fd00::1 is a special-purpose address (private): only an allow-private rule lets pinhole connect to it)" \
    --policy "$P" --allow '[fd00::/8]' '[fd00::1]'
check 1 "deny app.localhost:80 (app.localhost is a loopback name, and its addresses (127.0.0.1, ::1) are special-purpose: only an allow-private rule lets pinhole connect to them)" \
    --policy "$P" --allow app.localhost app.localhost:80
check 0 "allow localhost:80 (--allow: allow localhost)" \
    --policy "$P" --allow localhost --allow 'allow-private 127.0.0.1' localhost:80
# An address of this host's own is refused as run refuses it: here, a
# public one on the loopback link of a network namespace of the test's
# own.
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null && command -v ip >/dev/null; then
	unshare -n sh -c 'ip addr add 1.2.3.4/32 dev lo &&
	    exec "$0" check --policy "$1" --allow 1.2.3.4 1.2.3.4' \
	    "$PINHOLE" "$P" >"$T/out" 2>&1
	[ $? = 1 ] && head -1 "$T/out" | grep -qx 'deny 1.2.3.4:443 (1.2.3.4 is an address of this host'"'"'s own: only an allow-private rule lets pinhole connect to it)' &&
	    ok "an address of this host's own is denied" ||
	    fail "own address: $(cat "$T/out")"
fi
"$PINHOLE" check --policy "$P" pypi.org | grep -q '^vetted when it connects: an address pypi.org resolves to that is special-purpose' &&
    ok "a name's addresses are vetted when it connects" || fail "no vetted line"

# Request rules: METHOD PATH names the rule or the constraint.
printf 'allow github.test read-only path /myorg/**\nallow api.test methods GET\nallow api.test methods POST path /v1/upload\n' >"$T/req"
check 0 "allow GET /myorg/r.git/info/refs?service=git-upload-pack on github.test:443 ($T/req:1: allow github.test read-only path /myorg/**)" \
    --policy "$T/req" github.test GET '/myorg/r.git/info/refs?service=git-upload-pack'
check 1 "deny POST /myorg/r.git/git-receive-pack on github.test:443 ($T/req:1: allow github.test read-only path /myorg/**)" \
    --policy "$T/req" github.test POST /myorg/r.git/git-receive-pack
out=$("$PINHOLE" check --policy "$T/req" github.test POST /myorg/r.git/git-receive-pack)
echo "$out" | grep -q '^refused by: read-only: POST /myorg/r.git/git-receive-pack is a git push' &&
    ok "check names the constraint" || fail "check: $out"
check 1 "deny GET /myorg/../other on github.test:443 ($T/req:1: allow github.test read-only path /myorg/**)" \
    --policy "$T/req" github.test GET /myorg/../other
check 2 "deny GET /myorg/%2e%2e%2fother (the path has an encoded '/' or '\\')" \
    --policy "$T/req" github.test GET /myorg/%2e%2e%2fother
check 0 "allow POST /v1/upload on api.test:443 ($T/req:3: allow api.test methods POST path /v1/upload)" \
    --policy "$T/req" api.test POST /v1/upload
# --header: an upgrade and a method override, as the gateway reads them.
printf 'allow chat.test read-only path /api/**\nallow chat.test read-only websocket path /live/**\n' >"$T/ws"
WS="--header Connection:upgrade --header Upgrade:websocket"
check 0 "allow GET /live/x on chat.test:443 ($T/ws:2: allow chat.test read-only websocket path /live/**)" \
    --policy "$T/ws" chat.test GET /live/x $WS
check 1 "deny GET /api/x on chat.test:443 ($T/ws:1: allow chat.test read-only path /api/**)" \
    --policy "$T/ws" chat.test GET /api/x $WS
"$PINHOLE" check --policy "$T/ws" chat.test GET /api/x $WS |
    grep -q '^refused by: upgrade: a WebSocket to /api/x needs a rule that says websocket' &&
    ok "check names the upgrade's refusal" || fail "check: upgrade"
check 0 "allow GET /api/x on chat.test:443 ($T/ws:1: allow chat.test read-only path /api/**)" \
    --policy "$T/ws" chat.test GET /api/x
check 1 "deny GET /api/x on chat.test:443 ($T/ws:1: allow chat.test read-only path /api/**)" \
    --policy "$T/ws" chat.test GET /api/x --header 'X-HTTP-Method-Override: DELETE'
"$PINHOLE" check --policy "$T/ws" chat.test GET /api/x \
    --header 'X-HTTP-Method-Override: DELETE' |
    grep -q '^refused by: read-only: GET /api/x with X-HTTP-Method-Override: DELETE is not a read' &&
    ok "check names the override's refusal" || fail "check: override"
check 0 "allow GET /api/x on chat.test:443 ($T/ws:1: allow chat.test read-only path /api/**)" \
    --policy "$T/ws" chat.test GET /api/x --header 'X-HTTP-Method-Override: head'
check 2 "pinhole check: --header goes with METHOD PATH (try 'pinhole check --help')" \
    --policy "$T/ws" chat.test --header 'X: y'
check 2 "pinhole check: the --header lines do not parse as HTTP headers" \
    --policy "$T/ws" chat.test GET / --header 'no colon'
check 2 "pinhole check: --allow: websocket: goes with read-only, methods or path (a rule without them lets a WebSocket through already) (try 'pinhole check --help')" \
    --allow 'chat.test websocket' chat.test
"$PINHOLE" check --policy "$T/req" api.test | grep -q '^inspected: ' &&
    ok "check says a host is inspected" || fail "no inspected line"
"$PINHOLE" check --policy "$P" pypi.org | grep -q '^inspected: ' &&
    fail "an unconstrained host is inspected" || ok "unconstrained: tunnelled"

# The default policy: XDG_CONFIG_HOME, then ~/.config; missing = empty.
mkdir -p "$T/xdg/pinhole" "$T/home/.config/pinhole"
echo 'allow xdg.example' >"$T/xdg/pinhole/policy"
echo 'allow home.example' >"$T/home/.config/pinhole/policy"
CHECK_ENV="XDG_CONFIG_HOME=$T/xdg HOME=$T/home"
check 0 \
    "allow xdg.example:443 ($T/xdg/pinhole/policy:1: allow xdg.example)" xdg.example
CHECK_ENV="XDG_CONFIG_HOME= HOME=$T/home"
check 0 \
    "allow home.example:443 ($T/home/.config/pinhole/policy:1: allow home.example)" home.example
CHECK_ENV="XDG_CONFIG_HOME=$T/empty HOME=$T/empty"
check 1 \
    "deny pypi.org:443 (no rule matches: default deny)" pypi.org
check 0 \
    "allow pypi.org:443 (--allow: allow pypi.org)" --allow pypi.org pypi.org
"$PINHOLE" check --help | grep -q 'XDG_CONFIG_HOME' &&
    ok "--help names the default policy" || fail "--help lacks the default policy"

finish
