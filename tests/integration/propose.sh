#!/bin/sh
# From a first blocked run to a policy, as root and as nobody: a command
# in `pinhole run` is refused a few hosts (by the default deny, a deny
# rule, the special-purpose address guard); `pinhole log --propose`
# prints the lines that would have allowed them (with their ports, a
# wildcard for three names under one domain, counts as comments), and
# says in comments what no allow lifts; each printed line goes to
# `pinhole allow` as it is, and the same command run again is allowed.
. "$top_srcdir/tests/integration/lib.sh"
need root dnsmasq curl setpriv getent
export ASAN_OPTIONS=detect_leaks=0
cp "$PINHOLE" "$T/pinhole" && chmod 755 "$T/pinhole"
start_origin || { finish; exit 1; }

# What the command does: HTTP to names the gateway refuses, a deny rule,
# an address of loopback, and a name it only looks up.
cat >"$T/cmd.sh" <<SH
for h in a.cdn.x.test b.cdn.x.test c.x.test pypi.test pypi.test evil.test \
    127.0.0.2; do
	curl -s -o /dev/null -m 10 -w "\$h %{http_code}\n" "http://\$h:$HP/hello.txt"
done
getent hosts lookup.test || echo "lookup.test no name"
SH
chmod 644 "$T/cmd.sh"

for MODE in root nobody; do
	W=$T/w/$MODE
	mkdir -p "$W/xdg" "$W/cfg" "$W/log"
	chmod 700 "$W/xdg"
	printf 'deny evil.test\nallow-private 127.0.0.0/8\n' >"$W/cfg/policy"
	[ "$MODE" = nobody ] && chown -R nobody:nogroup "$W"
	L=$W/log/audit.log
	as_mode "$T/pinhole" run --policy "$W/cfg/policy" \
	    --resolver "127.0.0.1:$DNSP" --log "$L" -- sh "$T/cmd.sh" \
	    >"$W/first.out" 2>/dev/null
	grep -qx "pypi.test 403" "$W/first.out" &&
	    grep -qx "lookup.test no name" "$W/first.out" ||
	    fail "$MODE: the first run was not refused: $(cat "$W/first.out")"
	S=$(sed -n 's/.*"event":"start".*"session":"\([^"]*\)".*/\1/p' "$L" |
	    head -1)
	as_mode "$T/pinhole" log --propose --session "$S" "$L" \
	    >"$W/propose" 2>&1 || fail "$MODE: log --propose: $(cat "$W/propose")"
	sed "s/^/  $MODE: /" "$W/propose"
	grep -Eq "^allow pypi\.test:$HP +# 2 refused$" "$W/propose" &&
	    grep -Eq "^allow \*\.x\.test:$HP +# 3 refused: a\.cdn\.x\.test, b\.cdn\.x\.test, c\.x\.test$" "$W/propose" &&
	    grep -Eq "^allow lookup\.test +# [0-9]+ refused$" "$W/propose" &&
	    ok "$MODE: --propose: hosts with their ports, a wildcard, a name only looked up" ||
	    fail "$MODE: --propose: $(cat "$W/propose")"
	grep -qF "#   evil.test:$HP: 1 refused by the deny rule $W/cfg/policy:1" "$W/propose" &&
	    grep -qF "#   127.0.0.2:$HP: 1 refused, a special-purpose address (loopback): only 'allow-private 127.0.0.2' lifts that" "$W/propose" &&
	    ! grep -q '^allow evil\|^allow 127' "$W/propose" &&
	    ok "$MODE: --propose leaves out what no allow lifts, and says why" ||
	    fail "$MODE: --propose comments: $(cat "$W/propose")"
	as_mode "$T/pinhole" log --propose --session nosuch "$L" >"$W/none"
	[ "$(cat "$W/none")" = "# Nothing was refused." ] &&
	    ok "$MODE: --propose of another session: nothing" ||
	    fail "$MODE: --propose nosuch: $(cat "$W/none")"

	# Each line, as printed, to pinhole allow; then the command again.
	n=0
	grep -v '^#' "$W/propose" >"$W/lines"
	while IFS= read -r line; do
		as_mode "$T/pinhole" allow --policy "$W/cfg/policy" "$line" \
		    >>"$W/allow.out" 2>&1 ||
		    fail "$MODE: pinhole allow '$line': $(cat "$W/allow.out")"
		n=$((n + 1))
	done <"$W/lines"
	[ $n = 3 ] && [ "$(grep -c '^added to ' "$W/allow.out")" = 3 ] &&
	    ok "$MODE: pinhole allow takes each line as it is" ||
	    fail "$MODE: allow: $n lines: $(cat "$W/allow.out")"
	as_mode "$T/pinhole" run --policy "$W/cfg/policy" \
	    --resolver "127.0.0.1:$DNSP" --log "$L" -- sh "$T/cmd.sh" \
	    >"$W/again.out" 2>/dev/null
	grep -qx "pypi.test 200" "$W/again.out" &&
	    grep -qx "a.cdn.x.test 200" "$W/again.out" &&
	    grep -qx "c.x.test 200" "$W/again.out" &&
	    grep -q "lookup.test$" "$W/again.out" &&
	    grep -qx "evil.test 403" "$W/again.out" &&
	    ok "$MODE: the command run again is allowed what the lines allow" ||
	    fail "$MODE: again: $(cat "$W/again.out")"
done
finish
