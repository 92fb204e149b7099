#!/bin/sh
# Anthropic's sandbox-runtime (srt, the version pinned in srt/package.json)
# with its network.httpProxyPort and network.socksProxyPort pointed at a
# pinhole session's listeners on loopback: srt starts no proxy of its own and bridges
# the sandbox's proxy ports to pinhole's, so pinhole decides.  As root and
# as nobody: an allowed host over HTTP and over SOCKS5, a denied host
# refused and logged, and a host asked about from one srt command,
# approved for the session, then reached by the next srt command without
# asking.  Names under .test resolve through the test's dnsmasq, which
# only pinhole asks: srt exempts 127.0.0.1 from its proxy variables.
. "$top_srcdir/tests/integration/lib.sh"
here="$top_srcdir/tests/integration"

# Missing tools skip a local run; in CI they fail it.
NEED_IN_CI=fail
need curl python3 dnsmasq node npm bwrap socat rg
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY no_proxy NO_PROXY ALL_PROXY

# Install the pinned srt under the build directory, again only when the
# lock file changed.
mods="$top_builddir/tests/srt"
if ! cmp -s "$here/srt/package-lock.json" "$mods/package-lock.json" ||
    [ ! -x "$mods/node_modules/.bin/srt" ]; then
	mkdir -p "$mods"
	cp "$here/srt/package.json" "$here/srt/package-lock.json" "$mods/"
	. "$here/npm.sh"
	npm_ci "$mods" >"$T/npm.out" 2>&1 ||
	    lack "npm ci failed: $(tail -5 "$T/npm.out")"
fi
SRT="$mods/node_modules/.bin/srt"
chmod -R a+rX "$mods"

start_origin || { finish; exit 1; }
P=$(free_port)
SP=$(free_port)
LOG="$T/audit.log"
ERR="$T/proxy.err"
cat >"$T/policy" <<EOF
allow origin.test:$HP
allow-private 127.0.0.0/8
deny  blocked.test
EOF
bg "$PINHOLE" session start srt --foreground \
    --listen "127.0.0.1:$P" --socks "127.0.0.1:$SP" \
    --policy "$T/policy" --log "$LOG" --resolver "127.0.0.1:$DNSP" \
    --ask=20 2>"$ERR"
PROXY=$!
wait_port "$P" && wait_port "$SP" || { cat "$ERR" >&2; finish; exit 1; }

# srt's settings: no domain list of its own (both proxies are external,
# so it filters nothing), pinhole's two ports, the filesystem left open.
cat >"$T/srt.json" <<EOF
{
  "network": {
    "allowedDomains": [],
    "deniedDomains": [],
    "httpProxyPort": $P,
    "socksProxyPort": $SP
  },
  "filesystem": { "denyRead": [], "allowWrite": [], "denyWrite": [] }
}
EOF
chmod 644 "$T/srt.json"

# Run a shell command under srt as $MODE's user; output in $T/srt.out.
srt() {
	set -- "$SRT" --settings "$T/srt.json" sh -c "$1"
	if [ "$MODE" = nobody ]; then
		(cd "$T/home-nobody" && as_nobody "$@") >"$T/srt.out" 2>&1
	else
		(cd "$T/home" && "$@") >"$T/srt.out" 2>&1
	fi
}

U="http://origin.test:$HP/hello.txt"
for MODE in root nobody; do
	srt "curl -sS -m 10 $U" && grep -q "hello from origin" "$T/srt.out" &&
	    ok "$MODE: srt's HTTP proxy variables lead to pinhole" ||
	    fail "$MODE: HTTP through srt: $(tail -3 "$T/srt.out")"
	# srt gives SOCKS5 clients socks5h://localhost:PORT in FTP_PROXY.
	srt 'case $FTP_PROXY in socks5h://*) ;; *) exit 9;; esac
	    curl -sS -m 10 --proxy "$FTP_PROXY" '"$U" &&
	    grep -q "hello from origin" "$T/srt.out" &&
	    ok "$MODE: srt's SOCKS5 port leads to pinhole" ||
	    fail "$MODE: SOCKS5 through srt: $(tail -3 "$T/srt.out")"
	srt "curl -sS -m 10 -o /dev/null -w '%{http_code}' http://blocked.test:$HP/"
	grep -q '^403' "$T/srt.out" && ok "$MODE: a denied host gets 403" ||
	    fail "$MODE: denied host: $(tail -3 "$T/srt.out")"

	# One srt command asks; the person approves for the session; the
	# next srt command gets through at once.
	H="held-$MODE.test"
	srt "curl -sS -m 25 http://$H:$HP/hello.txt" &
	held=$!
	id=$(wait_pending "$H" "$PINHOLE") &&
	    ok "$MODE: the held connection filed $id" ||
	    fail "$MODE: no request filed for $H"
	"$PINHOLE" approve --session "$id" >/dev/null 2>&1 ||
	    fail "$MODE: approve --session $id"
	wait "$held" && grep -q "hello from origin" "$T/srt.out" &&
	    ok "$MODE: approved: the held srt command gets through" ||
	    fail "$MODE: held then approved: $(tail -3 "$T/srt.out")"
	srt "curl -sS -m 5 http://$H:$HP/hello.txt" &&
	    grep -q "hello from origin" "$T/srt.out" &&
	    ok "$MODE: the next srt command is not asked again" ||
	    fail "$MODE: after the session grant: $(tail -3 "$T/srt.out")"
	[ "$(grep -c "\"host\":\"$H\".*\"rule\":\"grant $id\"" "$LOG")" -ge 2 ] &&
	    ok "$MODE: audit: both connections under the grant" ||
	    fail "$MODE: grant lines: $(grep "$H" "$LOG")"
done

loggrep "$LOG" "\"verdict\":\"allow\".*\"session\":\"srt\".*\"host\":\"origin.test\".*\"via\":\"forward\"" &&
    ok "audit: allow over HTTP" || fail "no HTTP allow line: $(grep origin.test "$LOG")"
loggrep "$LOG" '"verdict":"allow".*"host":"origin.test".*"via":"socks"' &&
    ok "audit: allow via socks" || fail "no SOCKS5 allow line"
loggrep "$LOG" '"verdict":"deny".*"host":"blocked.test"' &&
    ok "audit: the deny line" || fail "no deny line for blocked.test"
kill -TERM "$PROXY"
wait "$PROXY" || fail "the proxy exited with $?"
if grep -q 'ERROR: \(Address\|Leak\)Sanitizer' "$ERR"; then
	fail "sanitizer: $(grep -A5 Sanitizer "$ERR")"
fi

finish
