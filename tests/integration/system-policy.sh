#!/bin/sh
# The system policy layer, as root and as nobody: a system deny beats the
# user's allow in `pinhole check` and in `pinhole run` (curl through the
# gateway to a local origin); `pinhole request` is refused saying it is
# the system policy, `pinhole approve` cannot lift it, `pinhole allow`
# refuses the rule and says whose the deny is; a file dropped in policy.d while the command runs takes
# effect; a broken one keeps the old policy whole and is reported with
# FILE:LINE; the sandbox cannot write the system directory, even as root.
# The system policy's include of a glob: its files are the system's, and
# a file a running proxy's glob matches, added later, is read at once.
#
# The system directory is the one pinhole was built with (its check
# --help names it).  The test runs in a mount namespace of its own with
# an empty tmpfs there, so the host's files (if any) are never touched
# and tests running beside it never see this one's; a directory made as
# the mount point is removed at the end.
: "${PINHOLE:?PINHOLE must name the built program}"
: "${top_srcdir:?}"

. "$top_srcdir/tests/integration/sysdir.sh"
[ "${1:-}" = --in-namespace ] || sysdir_reexec
SYSDIR=$2
. "$top_srcdir/tests/integration/lib.sh"

need dnsmasq curl setpriv
mount -t tmpfs -o mode=755,size=1m pinhole-test "$SYSDIR" ||
    skip "cannot mount a tmpfs on $SYSDIR in a mount namespace"
export ASAN_OPTIONS=detect_leaks=0
cp "$PINHOLE" "$T/pinhole" && chmod 755 "$T/pinhole"
mkdir -m 1777 "$T/w"

start_origin || { finish; exit 1; }

# Wait (at most 10 s) for more than $2 lines of the log $1 to match $3.
wait_lines() {
	i=0
	while [ "$(grep -c -- "$3" "$1")" -le "$2" ] && [ $i -lt 100 ]; do
		sleep 0.1; i=$((i + 1))
	done
	[ "$(grep -c -- "$3" "$1")" -gt "$2" ]
}

# What the sandbox runs: the checks of a running gateway, in steps the
# test outside paces ($W/step1, $W/step2).
cat >"$T/inside.sh" <<'EOF'
check() {
	if [ "$2" = "$3" ]; then echo "ok: $1"; else echo "FAIL: $1: got '$2', want '$3'"; fi
}
get() {
	curl -s -o "$W/body" -w '%{http_code}' -m 10 "http://$1:$HP/hello.txt"
}
# Wait (at most 30 s) for the test outside to make file $1.
step() {
	i=0
	while [ ! -e "$1" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
}
check "ok.test: 200" "$(get ok.test)" 200
check "dropped.test: 200" "$(get dropped.test)" 200
check "sysdeny.test, which the user allows, the system denies: 403" \
    "$(get sysdeny.test)" 403
grep -q "denied by the rule 'deny sysdeny.test' (system $SYSDIR/policy:1), which no approval nor rule of yours can override: it is the system policy" "$W/body" &&
    echo "ok: ... and the page says it is the system policy" ||
    echo "FAIL: deny page: $(cat "$W/body")"
"$PINHOLE_BIN" request "sysdeny.test:$HP" --reason x --wait=5 >"$W/req" 2>&1
check "pinhole request sysdeny.test is refused" $? 4
grep -q "403: .*system $SYSDIR/policy:1.*it is the system policy" "$W/req" &&
    echo "ok: ... saying it is the system policy" ||
    echo "FAIL: request: $(cat "$W/req")"
"$PINHOLE_BIN" request "later.test:$HP" --reason later >"$W/late.out"
check "later.test is filed" $? 0
grep -o 'r[0-9a-f]\{16\}' "$W/late.out" | head -1 >"$W/late.tmp"
mv "$W/late.tmp" "$W/late.id"

step "$W/step1"
check "a file dropped in policy.d denies dropped.test: 403" \
    "$(get dropped.test)" 403
touch "$W/step1.seen"

step "$W/step2"
check "a broken file in policy.d: ok.test stays allowed" "$(get ok.test)" 200
check "... and dropped.test denied" "$(get dropped.test)" 403

for a in "touch $SYSDIR/new" "echo allow x.test >$SYSDIR/policy.d/99-mine.policy" \
    "echo >>$SYSDIR/policy" "rm -f $SYSDIR/policy" "mkdir $SYSDIR/sub" \
    "mv $SYSDIR/policy.d $SYSDIR/moved"; do
	if sh -c "$a" 2>/dev/null; then
		echo "FAIL: the sandbox could: $a"
	else
		echo "ok: the sandbox cannot: $a"
	fi
done
EOF
chmod 644 "$T/inside.sh"

for MODE in root nobody; do
	W=$T/w/$MODE
	mkdir -p "$W/xdg" "$W/cfg" "$W/log"
	printf 'allow sysdeny.test:%s\nallow dropped.test:%s\nallow ok.test:%s\nallow-private 127.0.0.0/8\n' \
	    "$HP" "$HP" "$HP" >"$W/cfg/policy"
	[ "$MODE" = nobody ] && chown -R nobody:nogroup "$W"
	chmod 700 "$W/xdg"
	rm -rf "$SYSDIR/policy.d"
	mkdir -m 755 "$SYSDIR/policy.d"
	printf 'deny sysdeny.test\n' >"$SYSDIR/policy"
	chmod 644 "$SYSDIR/policy"

	out=$(as_mode "$T/pinhole" check --policy "$W/cfg/policy" \
	    "sysdeny.test:$HP")
	[ $? = 1 ] && [ "$out" = "deny sysdeny.test:$HP (system $SYSDIR/policy:1: deny sysdeny.test)" ] &&
	    ok "$MODE: check: the system deny wins, and says it is the system's" ||
	    fail "$MODE: check: $out"
	out=$(as_mode "$T/pinhole" check --policy "$W/cfg/policy" "ok.test:$HP" |
	    head -1)
	[ "$out" = "allow ok.test:$HP ($W/cfg/policy:3: allow ok.test:$HP)" ] &&
	    ok "$MODE: check: a user rule is named as before" ||
	    fail "$MODE: check ok.test: $out"
	as_mode "$T/pinhole" allow --policy "$W/cfg/other" sysdeny.test \
	    >"$W/allow.out" 2>&1
	[ $? = 1 ] && [ "$(cat "$W/allow.out")" = "pinhole allow: not added, for it cannot take effect: 'allow sysdeny.test' never allows anything on any of its ports: 'deny sysdeny.test' (system $SYSDIR/policy:1) denies it there, and a deny always wins; only an administrator can lift a deny of the system policy" ] &&
	    [ ! -e "$W/cfg/other" ] &&
	    ok "$MODE: pinhole allow refuses a rule the system denies, and says whose the deny is" ||
	    fail "$MODE: allow: $(cat "$W/allow.out")"

	as_mode "$T/pinhole" run --policy "$W/cfg/policy" \
	    --resolver "127.0.0.1:$DNSP" --log "$W/log/audit.log" -- \
	    env W="$W" HP="$HP" SYSDIR="$SYSDIR" PINHOLE_BIN="$T/pinhole" \
	    sh "$T/inside.sh" >"$W/inside.out" 2>"$W/run.err" &
	box=$!

	# A deny dropped in policy.d: it takes effect, and the person
	# cannot approve the request it now refuses.
	wait_file "$W/late.id" || fail "$MODE: later.test was not filed"
	id=$(cat "$W/late.id")
	L=$W/log/audit.log
	reloads=$(grep -c '"event":"reload","verdict":"allow"' "$L")
	printf '# fleet\ndeny later.test\ndeny dropped.test\n' \
	    >"$SYSDIR/policy.d/50-late.policy"
	wait_lines "$L" "$reloads" '"event":"reload","verdict":"allow"' ||
	    fail "$MODE: no reload after a file was dropped in policy.d"
	as_mode "$T/pinhole" approve --session "$id" >"$W/approve.out" 2>&1
	rc=$?
	[ $rc = 1 ] && grep -q "cannot approve $id: denied by the rule 'deny later.test' (system $SYSDIR/policy.d/50-late.policy:2), which no approval nor rule of yours can override" "$W/approve.out" &&
	    ok "$MODE: approve cannot lift a system deny, and says whose it is" ||
	    fail "$MODE: approve: rc $rc $(cat "$W/approve.out")"
	touch "$W/step1"
	wait_file "$W/step1.seen" || fail "$MODE: the sandbox did not go on"

	# A broken file: the old policy stays whole, FILE:LINE is reported.
	denies=$(grep -c '"event":"reload","verdict":"deny"' "$L")
	printf 'deny ok.test\nalow typo.test\n' >"$SYSDIR/policy.d/60-bad.policy"
	wait_lines "$L" "$denies" '"event":"reload","verdict":"deny"' ||
	    fail "$MODE: no reload refused for a broken file"
	loggrep "$L" "\"event\":\"reload\",\"verdict\":\"deny\".*\"reason\":\"bad policy\".*\"detail\":\"$SYSDIR/policy.d/60-bad.policy:2: unknown directive 'alow'" &&
	    ok "$MODE: audit: the refused reload names FILE:LINE" ||
	    fail "$MODE: audit: $(grep '"reload"' "$L" | tail -2)"
	touch "$W/step2"
	wait $box || fail "$MODE: pinhole run: $(tail -3 "$W/run.err")"
	grep -q "policy not reloaded, the old one stays: $SYSDIR/policy.d/60-bad.policy:2: unknown directive 'alow'" "$W/run.err" &&
	    ok "$MODE: pinhole says which file and line it refused" ||
	    fail "$MODE: stderr: $(tail -3 "$W/run.err")"

	sed 's/^/  /' "$W/inside.out"
	NPASS=$((NPASS + $(grep -c '^ok: ' "$W/inside.out")))
	NFAIL=$((NFAIL + $(grep -c '^FAIL: ' "$W/inside.out")))
	n=$(grep -c '^ok: \|^FAIL: ' "$W/inside.out")
	[ "$n" -ge 16 ] || fail "$MODE: the sandbox ran $n of 16 checks"
	[ -f "$SYSDIR/policy" ] && [ ! -e "$SYSDIR/policy.d/99-mine.policy" ] &&
	    [ ! -e "$SYSDIR/new" ] && [ -d "$SYSDIR/policy.d" ] &&
	    ok "$MODE: the system directory is as it was" ||
	    fail "$MODE: the system directory changed: $(ls -la "$SYSDIR")"
	loggrep "$L" "\"host\":\"sysdeny.test\".*\"rule\":\"system $SYSDIR/policy:1\"" &&
	    ok "$MODE: audit: the refusal's rule is the system's" ||
	    fail "$MODE: audit: $(grep sysdeny "$L" | head -2)"
	loggrep "$L" '"host":"sysdeny.test".*"ask"' &&
	    fail "$MODE: audit: the system deny suggests asking" ||
	    ok "$MODE: audit: no ask for a system deny"

	out=$(as_mode "$T/pinhole" check --policy "$W/cfg/policy" ok.test 2>&1)
	[ $? = 2 ] && [ "$out" = "$SYSDIR/policy.d/60-bad.policy:2: unknown directive 'alow' (did you mean 'allow'?) (the system policy, $SYSDIR: only an administrator can fix it)" ] &&
	    ok "$MODE: check refuses a broken system file with FILE:LINE, for an administrator" ||
	    fail "$MODE: check with a broken file: $out"

	# include with a glob, relative to the system policy.
	rm -f "$SYSDIR/policy.d/60-bad.policy"
	rm -rf "$SYSDIR/teams" && mkdir -m 755 "$SYSDIR/teams"
	printf 'deny inc1.test\n' >"$SYSDIR/teams/a.policy"
	printf 'deny sysdeny.test\ninclude teams/*.policy\n' >"$SYSDIR/policy"
	chmod 644 "$SYSDIR/teams/a.policy" "$SYSDIR/policy"
	printf 'allow inc1.test:%s\nallow inc2.test:%s\nallow-private 127.0.0.0/8\n' \
	    "$HP" "$HP" >"$W/cfg/inc"
	chmod 644 "$W/cfg/inc"
	out=$(as_mode "$T/pinhole" check --policy "$W/cfg/inc" "inc1.test:$HP")
	[ $? = 1 ] && [ "$out" = "deny inc1.test:$HP (system $SYSDIR/teams/a.policy:1: deny inc1.test)" ] &&
	    ok "$MODE: check: a file the system's include matches is the system's" ||
	    fail "$MODE: check include: $out"
	P=$(free_port)
	bg_mode "$T/pinhole" proxy --listen "127.0.0.1:$P" --policy "$W/cfg/inc" \
	    --resolver "127.0.0.1:$DNSP" --log "$W/log/inc.log"
	gw=$!
	wait_port "$P"
	pget() {
		curl -s -o /dev/null -w '%{http_code}' -m 10 \
		    -x "http://127.0.0.1:$P" "http://$1:$HP/hello.txt"
	}
	c1=$(pget inc1.test) c2=$(pget inc2.test)
	[ "$c1 $c2" = "403 200" ] &&
	    ok "$MODE: proxy: the included deny holds, the other host passes" ||
	    fail "$MODE: proxy include: inc1 $c1, inc2 $c2"
	reloads=$(grep -c '"event":"reload","verdict":"allow"' "$W/log/inc.log")
	printf 'deny inc2.test\n' >"$SYSDIR/teams/.b.tmp"
	chmod 644 "$SYSDIR/teams/.b.tmp"
	mv "$SYSDIR/teams/.b.tmp" "$SYSDIR/teams/b.policy"
	wait_lines "$W/log/inc.log" "$reloads" '"event":"reload","verdict":"allow"' ||
	    fail "$MODE: no reload after a file was added where the include looks"
	c2=$(pget inc2.test)
	[ "$c2" = 403 ] &&
	    ok "$MODE: proxy: a file added where the include looks is read" ||
	    fail "$MODE: proxy include: inc2 $c2 after teams/b.policy"
	kill "$gw"
	printf 'deny sysdeny.test\n' >"$SYSDIR/policy"
	rm -rf "$SYSDIR/teams"
done
finish
