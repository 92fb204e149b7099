#!/bin/sh
# pinhole allow / disallow end to end: the default path, atomic replace
# keeping mode and comments, idempotence, refusals leaving the file
# untouched, disallow's exit codes, CRLF and symlinks.
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
command -v curl >/dev/null || skip "curl is not installed"
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
