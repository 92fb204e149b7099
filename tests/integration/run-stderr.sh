#!/bin/sh
# pinhole run says refusals where the person looks, as root and as
# nobody: a refused CONNECT, a refused name, a captured connection and a
# request a constraint refuses each one line on run's stderr with the
# request command; a deny rule says what to change instead; 50 refusals
# of one host a few lines and a count; --quiet none; a connection held by
# --ask says the approve command, which works as printed; pinhole request
# inside says why; attached to a session, each run says its own
# sandbox's refusals only, and sees only its own.
. "$top_srcdir/tests/integration/lib.sh"

need root dnsmasq curl getent setpriv
export ASAN_OPTIONS=detect_leaks=0
cp "$PINHOLE" "$T/pinhole" && chmod 755 "$T/pinhole"
mkdir -m 1777 "$T/w"
start_origin || { finish; exit 1; }

# pinhole run as the mode's user, options then the script $1 (in $T);
# stdout to $W/$1.out, stderr to $W/$1.err.
run() {
	s=$1; shift
	as_mode "$T/pinhole" run --policy "$W/cfg/policy" \
	    --resolver "127.0.0.1:$DNSP" --log "$W/log/audit.log" "$@" -- \
	    env T="$T" W="$W" HP="$HP" PINHOLE_BIN="$T/pinhole" sh "$T/$s.sh" \
	    >"$W/$s.out" 2>"$W/$s.err"
}

# Check that file $2 has (or, with $1 "no", has not) a line matching $3.
has() {
	if [ "$1" = no ]; then
		! grep -Eq -- "$3" "$2"
	else
		grep -Eq -- "$3" "$2"
	fi
}

cat >"$T/refusals.sh" <<'EOF'
curl -s -m 10 -o /dev/null https://blocked.test/
getent hosts named.test >/dev/null
python3 -c 'import socket; socket.getaddrinfo("py.test", 80)' 2>/dev/null
curl -s -m 10 -o /dev/null "http://denied.test:$HP/"
curl -s -m 10 -o /dev/null --noproxy '*' "http://ok.test:$((HP + 1))/"
curl -s -m 10 -o /dev/null -d x=1 "http://ro.test:$HP/up"
i=0
while [ $i -lt 50 ]; do
	curl -s -m 10 -o /dev/null "http://loop.test:$HP/x$i"
	i=$((i + 1))
done
"$PINHOLE_BIN" request >"$W/list" 2>&1
"$PINHOLE_BIN" request blocked.test:443 >"$W/request.out" 2>"$W/request.err"
EOF

cat >"$T/quiet.sh" <<'EOF'
curl -s -m 10 -o /dev/null https://blocked.test/
getent hosts named.test >/dev/null
EOF

cat >"$T/held.sh" <<'EOF'
curl -s -m 40 -o /dev/null -w '%{http_code}' "http://held.test:$HP/hello.txt" \
    >"$W/held.code"
EOF

# A sandbox of session s, $1 one of a b: refused $1.test, then, once the
# other was refused too, list what it was refused.
cat >"$T/attached.sh" <<'EOF'
curl -s -m 10 -o /dev/null "http://$ME.test:$HP/"
touch "$W/$ME.done"
i=0
while [ ! -e "$W/$OTHER.done" ] && [ $i -lt 200 ]; do
	sleep 0.1; i=$((i + 1))
done
"$PINHOLE_BIN" request >"$W/$ME.list" 2>&1
sleep 1
EOF

for MODE in root nobody; do
	W="$T/w/$MODE"
	mkdir -p "$W/cfg" "$W/log" && mkdir -m 700 "$W/xdg"
	printf 'allow-private 127.0.0.0/8\nallow ok.test:%s\ndeny denied.test\nallow ro.test:%s read-only\n' \
	    "$HP" "$HP" >"$W/cfg/policy"
	[ "$MODE" = nobody ] && chown -R nobody "$W"
	E="$W/refusals.err"

	run refusals || true
	if grep -q "user namespace" "$E"; then
		skip "no namespaces here: $(head -1 "$E")"
	fi
	has yes "$E" '^pinhole: refused blocked\.test:443 \(no rule matches: default deny\); ask: pinhole request blocked\.test:443, then wait for the answer: pinhole request --status ID --wait \(ID is what it prints\)$' &&
	    ok "$MODE: a refused CONNECT is one line, with the request command" ||
	    fail "$MODE: CONNECT: $(cat "$E")"
	has yes "$E" '^pinhole: refused the name named\.test \(.*\); ask: pinhole request named\.test --any-port, then wait for the answer: pinhole request --status ID --wait \(ID is what it prints\)$' &&
	    ok "$MODE: a name refused by the DNS (getent) is one line" ||
	    fail "$MODE: getent: $(cat "$E")"
	has yes "$E" '^pinhole: refused the name py\.test ' &&
	    ok "$MODE: a name refused by the DNS (python getaddrinfo)" ||
	    fail "$MODE: getaddrinfo: $(cat "$E")"
	[ "$(grep -c 'named\.test' "$E")" = 1 ] &&
	    ok "$MODE: a name's lookups make one line" ||
	    fail "$MODE: named.test: $(grep named.test "$E")"
	has yes "$E" "^pinhole: refused GET / on denied\.test:$HP: denied by the rule 'deny denied\.test' .*that rule must be removed from the policy$" &&
	    has no "$E" 'denied\.test.*pinhole request' &&
	    ok "$MODE: a deny rule's refusal says what to change, not how to ask" ||
	    fail "$MODE: deny rule: $(grep denied.test "$E")"
	has yes "$E" "^pinhole: refused ok\.test:$((HP + 1)) \(no rule allows this port: default deny\); ask: pinhole request ok\.test:$((HP + 1)), then wait for the answer: pinhole request --status ID --wait \\(ID is what it prints\\)$" &&
	    ok "$MODE: a captured connection's refusal (no proxy) is one line" ||
	    fail "$MODE: captured: $(grep ok.test "$E")"
	has yes "$E" "^pinhole: refused POST /up on ro\.test:$HP \(.*read-only.*\); ask: pinhole request ro\.test:$HP, then wait for the answer: pinhole request --status ID --wait \\(ID is what it prints\\)$" &&
	    ok "$MODE: a request a rule's constraint refuses names the request" ||
	    fail "$MODE: constraint: $(grep ro.test "$E")"
	# Each line counts 1, or the N of "again, N times" or "N times".
	n=$(grep -c 'loop\.test' "$E")
	total=$(grep 'loop\.test' "$E" | sed -n \
	    -e 's/.* again, \([0-9]*\) times* (.*/\1/p' \
	    -e 't' -e 's/.*loop\.test:[0-9]* \([0-9]*\) times (.*/\1/p' \
	    -e 't' -e 's/.*/1/p' | awk '{ s += $1 } END { print s + 0 }')
	[ "$n" -ge 1 ] && [ "$n" -le 6 ] && [ "$total" = 50 ] &&
	    ok "$MODE: 50 refusals of a host: $n lines, all 50 counted" ||
	    fail "$MODE: loop: $n lines, $total counted: $(grep loop.test "$E")"
	has no "$E" '^pinhole: .*[^[:print:]]' && [ "$(grep -vc '^pinhole: ' "$E")" = 0 ] &&
	    ok "$MODE: every line whole, printable, prefixed" ||
	    fail "$MODE: stray output: $(grep -v '^pinhole: ' "$E" | head -3)"
	has yes "$W/list" "^blocked\.test:443 via connect, 1 time, last .*: no rule matches: default deny; ask with: pinhole request blocked\.test:443$" &&
	    has yes "$W/list" "^GET / on denied\.test:$HP via forward, .*which no approval can override" &&
	    ok "$MODE: pinhole request with no host lists the refusals, why" ||
	    fail "$MODE: request list: $(cat "$W/list")"
	has yes "$W/request.err" "^pinhole request: asked the person for blocked\.test:443$" &&
	    has yes "$W/request.err" "^pinhole request: it answers the refusal at .*: no rule matches: default deny$" &&
	    has yes "$W/request.err" "^pinhole request: wait for the answer with: pinhole request --status r[0-9a-f]+ --wait$" &&
	    has no "$W/request.err" "refused last" &&
	    has yes "$W/request.out" '^r[0-9a-f]+$' &&
	    ok "$MODE: pinhole request HOST says what it asked, the refusal it answers, how to wait" ||
	    fail "$MODE: request: $(cat "$W/request.out" "$W/request.err")"

	run quiet --quiet || true
	[ ! -s "$W/quiet.err" ] && ok "$MODE: --quiet says nothing" ||
	    fail "$MODE: --quiet: $(cat "$W/quiet.err")"

	run held --ask=30 &
	box=$!
	i=0
	while ! has yes "$W/held.err" '^pinhole: holding ' && [ $i -lt 200 ]; do
		sleep 0.1; i=$((i + 1))
	done
	cmd=$(sed -n "s/^pinhole: holding held\.test:$HP for approval (30 s): \(pinhole approve [^ ]*\) \[--session|--always\]$/\1/p" "$W/held.err")
	if [ -n "$cmd" ]; then
		ok "$MODE: a held connection says the approve command"
		# shellcheck disable=SC2086
		set -- $cmd
		shift
		as_mode "$T/pinhole" "$@" >"$T/approve" 2>&1 &&
		    ok "$MODE: the approve command works as printed" ||
		    fail "$MODE: $cmd: $(cat "$T/approve")"
	else
		fail "$MODE: no holding line: $(cat "$W/held.err")"
	fi
	wait $box
	[ "$(cat "$W/held.code" 2>/dev/null)" = 200 ] &&
	    ok "$MODE: approved, the held connection goes through" ||
	    fail "$MODE: held: $(cat "$W/held.code" 2>/dev/null)"
	has yes "$W/held.err" "^pinhole: approved held\.test:$HP \(once, by uid [0-9]+ via cli\)$" &&
	    ok "$MODE: the decision is said" ||
	    fail "$MODE: decided: $(cat "$W/held.err")"

	as_mode "$T/pinhole" session start s --resolver "127.0.0.1:$DNSP" \
	    --allow 'allow-private 127.0.0.0/8' --log "$W/log/session.log" \
	    >/dev/null 2>"$T/err" || fail "$MODE: session: $(cat "$T/err")"
	rm -f "$W/a.done" "$W/b.done"
	for ME in a b; do
		OTHER=a; [ $ME = a ] && OTHER=b
		as_mode "$T/pinhole" run --session s -- env ME=$ME OTHER=$OTHER \
		    W="$W" HP="$HP" PINHOLE_BIN="$T/pinhole" sh "$T/attached.sh" \
		    >/dev/null 2>"$W/$ME.err" &
		eval "pid_$ME=\$!"
	done
	wait "$pid_a" "$pid_b"
	has yes "$W/a.err" "^pinhole: refused GET / on a\.test:$HP \(.*\); ask: pinhole request a\.test:$HP, then wait for the answer: pinhole request --status ID --wait \\(ID is what it prints\\)$" &&
	    has yes "$W/b.err" "^pinhole: refused GET / on b\.test:$HP " &&
	    ok "$MODE: attached, each run says its sandbox's refusal" ||
	    fail "$MODE: attached: $(cat "$W/a.err" "$W/b.err")"
	has no "$W/a.err" 'b\.test' && has no "$W/b.err" 'a\.test' &&
	    ok "$MODE: attached, no run says another sandbox's" ||
	    fail "$MODE: attached, crossed: $(cat "$W/a.err" "$W/b.err")"
	has yes "$W/a.list" "^GET / on a\.test:$HP via forward" &&
	    has no "$W/a.list" 'b\.test' && has no "$W/b.list" 'a\.test' &&
	    ok "$MODE: attached, each sandbox lists only its own refusals" ||
	    fail "$MODE: lists: $(cat "$W/a.list" "$W/b.list")"
	as_mode "$T/pinhole" session stop s >/dev/null 2>&1
done
finish
