#!/bin/sh
# pinhole allow / disallow end to end: the default path, atomic replace
# keeping mode and comments, idempotence, refusals leaving the file
# untouched, disallow's exit codes, CRLF and symlinks; every line a
# policy takes, rules typed without quotes, and rules that could not
# take effect refused.
. "$top_srcdir/tests/integration/lib.sh"

# Run pinhole; compare the exit status and the first line of output.
run() {
	want_rc=$1; want=$2; shift 2
	out=$("$@" 2>&1)
	rc=$?
	if [ "$rc" -eq "$want_rc" ] && [ "$(echo "$out" | head -1)" = "$want" ]; then
		ok "$* -> $rc $want"
	else
		fail "$*: got $rc '$out', want $want_rc '$want'"
	fi
}

# Check that a file holds exactly the text given.
same() {
	if printf "$2" | cmp -s - "$1"; then ok "$3"; else
		fail "$3: file holds:"; cat "$1" >&2
	fi
}

# The default policy file: made with its directory (0700) and file (0600).
X=$T/xdg
run 0 "added to $X/pinhole/policy:2: allow pypi.org" \
    env XDG_CONFIG_HOME="$X" "$PINHOLE" allow PyPI.org.
[ "$(stat -c %a "$X/pinhole")" = 700 ] && ok "directory made 0700" ||
    fail "directory mode $(stat -c %a "$X/pinhole")"
[ "$(stat -c %a "$X/pinhole/policy")" = 600 ] && ok "file made 0600" ||
    fail "file mode $(stat -c %a "$X/pinhole/policy")"
cp "$X/pinhole/policy" "$T/before"
run 0 "already in $X/pinhole/policy:2: allow pypi.org" \
    env XDG_CONFIG_HOME="$X" "$PINHOLE" allow pypi.org:443,80
cmp -s "$T/before" "$X/pinhole/policy" && ok "idempotent allow" ||
    fail "idempotent allow changed the file"
run 0 "allow pypi.org:443 ($X/pinhole/policy:2: allow pypi.org)" \
    env XDG_CONFIG_HOME="$X" "$PINHOLE" check pypi.org
run 0 "added to $T/home/.config/pinhole/policy:2: allow home.example" \
    env -u XDG_CONFIG_HOME HOME="$T/home" "$PINHOLE" allow home.example

# An existing file: replaced by rename, mode and comments kept.
P=$T/p/policy
mkdir -p "$T/p"
printf '# my policy\n\nallow a.example   # why a\n\n# end\n' >"$P"
chmod 640 "$P"
ino=$(stat -c %i "$P")
run 0 "added to $P:6: allow github.com:22,443" \
    "$PINHOLE" allow --policy "$P" github.com:443,22 '*.Example.org'
same "$P" '# my policy\n\nallow a.example   # why a\n\n# end\nallow github.com:22,443\nallow *.example.org\n' \
    "comments and order kept"
[ "$(stat -c %a "$P")" = 640 ] && ok "mode kept" || fail "mode $(stat -c %a "$P")"
[ "$(stat -c %i "$P")" != "$ino" ] && ok "replaced by rename" ||
    fail "file written in place"
[ -z "$(ls -A "$T/p" | grep -v '^policy$')" ] && ok "no temp file left" ||
    fail "left behind: $(ls -A "$T/p")"

# Refusals: exit 2, FILE:LINE: message, the file untouched.
cp "$P" "$T/before"
ino=$(stat -c %i "$P")
run 2 "pinhole allow: '*.com' would match every site under the public suffix 'com': name the site (*.example.com)" \
    "$PINHOLE" allow --policy "$P" ok.example '*.com'
run 2 "pinhole allow: bad port '99999' (a port 1 to 65535, a list like 22,443, a range like 8000-8100, or *)" \
    "$PINHOLE" allow --policy "$P" x.example:99999
printf 'include missing.policy\n' >>"$P"
cp "$P" "$T/before"
ino=$(stat -c %i "$P")
run 2 "$P:8: cannot read '$T/p/missing.policy': No such file or directory" \
    "$PINHOLE" allow --policy "$P" ok.example
cmp -s "$T/before" "$P" && [ "$(stat -c %i "$P")" = "$ino" ] &&
    ok "refused edits leave the file untouched" || fail "refused edit wrote"
printf 'alow typo.example\n' >"$T/typo"
run 2 "$T/typo:1: unknown directive 'alow' (did you mean 'allow'?)" \
    "$PINHOLE" allow --policy "$T/typo" ok.example
run 2 "pinhole allow: no RULE given (try 'pinhole allow --help')" \
    "$PINHOLE" allow --policy "$P"

# disallow: every allow line for the rule goes, nothing else.
P2=$T/p2
printf '# top\nallow x.example\ndeny bad.example\nallow X.example.:443,80 # dup\nallow x.example:22\n' >"$P2"
run 0 "removed from $P2:2: allow x.example (and its duplicates)" \
    "$PINHOLE" disallow --policy "$P2" x.example
same "$P2" '# top\ndeny bad.example\nallow x.example:22\n' "disallow kept the rest"
cp "$P2" "$T/before"
run 1 "pinhole disallow: no such rule in $P2: allow x.example" \
    "$PINHOLE" disallow --policy "$P2" x.example
run 1 "pinhole disallow: no such rule in $P2: allow bad.example" \
    "$PINHOLE" disallow --policy "$P2" bad.example
run 2 "pinhole disallow: bad host 'a..b': empty label in name" \
    "$PINHOLE" disallow --policy "$P2" 'a..b'
cmp -s "$T/before" "$P2" && ok "disallow of a missing rule writes nothing" ||
    fail "disallow of a missing rule wrote"
run 1 "pinhole disallow: no such rule in $T/none/policy: allow x.example" \
    "$PINHOLE" disallow --policy "$T/none/policy" x.example
[ ! -e "$T/none" ] && ok "disallow makes no file" || fail "disallow made $T/none"

# Every line a policy takes, typed as one argument or as words; a rule
# of several words is one rule, never several wrong ones.
P3=$T/p3
run 0 "added to $P3:2: allow-private 127.0.0.0/8" \
    "$PINHOLE" allow --policy "$P3" allow-private 127.0.0.0/8
run 0 "added to $P3:3: allow github.com read-only path /x/**" \
    "$PINHOLE" allow --policy "$P3" github.com read-only path '/x/**' pypi.org
"$PINHOLE" allow --policy "$P3" deny evil.example include preset:python \
    allow-vsock allow-socket /run/x.sock 'secret TOKEN for api.example' \
    >"$T/out" 2>&1 || fail "directives: $(cat "$T/out")"
same "$P3" '# pinhole policy, one rule a line: see pinhole-policy(5)\nallow-private 127.0.0.0/8\nallow github.com read-only path /x/**\nallow pypi.org\ndeny evil.example\ninclude preset:python\nallow-vsock\nallow-socket /run/x.sock\nsecret TOKEN for api.example\n' \
    "every directive is added, each a line of its own"
cp "$P3" "$T/before"
run 2 "pinhole allow: 'readonly' is neither a directive nor a constraint (did you mean 'read-only'?), and not a host a rule names (try 'pinhole allow --help')" \
    "$PINHOLE" allow --policy "$P3" github.com readonly
run 2 "pinhole allow: 'read-only' is not a host: it goes after one (HOST read-only) (try 'pinhole allow --help')" \
    "$PINHOLE" allow --policy "$P3" read-only github.com
run 2 "pinhole allow: bad host 'https://pypi.org/simple': write the host, not a URL: allow pypi.org (a path goes on the rule as a constraint: allow pypi.org path /simple/**)" \
    "$PINHOLE" allow --policy "$P3" https://pypi.org/simple
run 2 "$P3:10: no preset 'pyton' in $PINHOLE_PRESETDIR (did you mean 'python'?); pinhole check --presets lists them" \
    "$PINHOLE" allow --policy "$P3" include preset:pyton
run 2 "pinhole allow: --for: 'deny x.example' is not an allow rule, and only those end (try 'pinhole allow --help')" \
    "$PINHOLE" allow --policy "$P3" --for 1h deny x.example
cmp -s "$T/before" "$P3" && ok "refused words leave the file untouched" ||
    fail "refused words wrote"

# A rule that cannot take effect is refused (exit 1), the file
# untouched; one that takes effect on some ports only is added and said;
# one that leaves another rule idle is added and said.
run 1 "pinhole allow: not added, for it cannot take effect: 'allow evil.example' never allows anything on any of its ports: 'deny evil.example' ($P3:5) denies it there, and a deny always wins" \
    "$PINHOLE" allow --policy "$P3" evil.example
run 1 "pinhole allow: not added, for it cannot take effect: the constraints of 'allow pypi.org read-only' never apply on any of its ports: 'allow pypi.org' ($P3:4) allows it there without constraints, and a request any allow rule lets through is allowed" \
    "$PINHOLE" allow --policy "$P3" ok.example 'pypi.org read-only'
cmp -s "$T/before" "$P3" && ok "a rule that cannot take effect is not written, nor the others" ||
    fail "a dead rule was written"
run 1 "pinhole allow: not added, for it cannot take effect: 'allow evil.example:8080' never allows anything on any of its ports: 'deny evil.example' ($P3:5) denies it there, and a deny always wins" \
    "$PINHOLE" allow --policy "$P3" evil.example:8080
printf 'deny part.example:80\n' >>"$P3"
"$PINHOLE" allow --policy "$P3" part.example >"$T/out" 2>"$T/err"
[ $? = 0 ] && grep -qx "added to $P3:11: allow part.example" "$T/out" &&
    grep -qx "pinhole allow: 'allow part.example' never allows anything on port 80: 'deny part.example:80' ($P3:10) denies it there, and a deny always wins" "$T/err" &&
    ok "a rule a deny covers on some ports is added, and said" ||
    fail "part.example: $(cat "$T/out" "$T/err")"
"$PINHOLE" allow --policy "$P3" github.com >"$T/out" 2>"$T/err"
[ $? = 0 ] && grep -qx "added to $P3:12: allow github.com" "$T/out" &&
    grep -qx "pinhole allow: this leaves another rule idle: $P3:3: the constraints of 'allow github.com read-only path /x/\*\*' never apply on any of its ports: 'allow github.com' ($P3:12) allows it there without constraints, and a request any allow rule lets through is allowed" "$T/err" &&
    ok "a rule that leaves another idle is added, and said" ||
    fail "github.com: $(cat "$T/out" "$T/err")"
run 0 "removed from $P3:5: deny evil.example" \
    "$PINHOLE" disallow --policy "$P3" deny evil.example:1-65535
run 0 "added to $P3:12: allow evil.example" \
    "$PINHOLE" allow --policy "$P3" evil.example
run 0 "removed from $P3:2: allow-private 127.0.0.0/8" \
    "$PINHOLE" disallow --policy "$P3" allow-private 127.0.0.0/8
run 1 "pinhole disallow: no such rule in $P3: include preset:node" \
    "$PINHOLE" disallow --policy "$P3" include preset:node

# CRLF files stay CRLF; a symlink stays a link to the edited file.
printf '# dos\r\nallow a.example\r\n' >"$T/crlf"
run 0 "added to $T/crlf:3: allow b.example" \
    "$PINHOLE" allow --policy "$T/crlf" b.example
same "$T/crlf" '# dos\r\nallow a.example\r\nallow b.example\r\n' "CRLF kept"
ln -s crlf "$T/link"
run 0 "added to $T/link:4: allow c.example" \
    "$PINHOLE" allow --policy "$T/link" c.example
[ -L "$T/link" ] && grep -q '^allow c.example' "$T/crlf" &&
    ok "symlink target edited" || fail "symlink replaced"

# --for: the rule is written with its end, and a running proxy drops it
# then, without being told.
need curl
run 2 "pinhole allow: --for: bad duration 'soon' (90s, 15m, 2h, 7d) (try 'pinhole allow --help')" \
    "$PINHOLE" allow --policy "$T/ending" --for soon a.example
oport=$(free_port)
bg python3 -m http.server "$oport" --bind 127.0.0.1 --directory "$T" \
    >/dev/null 2>&1
pport=$(free_port)
printf 'allow-private 127.0.0.0/8\n' >"$T/ending"
bg "$PINHOLE" proxy --listen "127.0.0.1:$pport" --policy "$T/ending" \
    --log "$T/ending.log" -v 2>"$T/ending.err"
wait_port "$oport" && wait_port "$pport" || { finish; exit 1; }
"$PINHOLE" allow --policy "$T/ending" --for 3s "127.0.0.1:$oport" >"$T/out"
grep -q "^added to $T/ending:2: allow 127.0.0.1:$oport until 20[0-9-]*T[0-9:]*Z$" "$T/out" &&
    ok "--for writes the rule with its end" || fail "--for: $(cat "$T/out")"
get() {
	curl -s -o /dev/null -w '%{http_code}' -m 5 -x "http://127.0.0.1:$pport" \
	    "http://127.0.0.1:$oport/"
}
i=0
until [ "$(get)" = 200 ] || [ $i -ge 20 ]; do sleep 0.1; i=$((i + 1)); done
[ "$(get)" = 200 ] && ok "the rule is in force" || fail "not allowed after allow --for"
# A policy that stops parsing meanwhile keeps the old rules, but not
# past their end.
printf 'alow broken.example\n' >>"$T/ending"
sleep 3.5
[ "$(get)" = 403 ] && ok "and gone after its end, with the file broken" ||
    fail "still allowed after its end"
grep -q "a rule of the policy has ended" "$T/ending.err" &&
    ok "the proxy noticed the end" || fail "no reload at the end"
finish
