#!/bin/sh
# Escalation end to end in `pinhole run --ask`, as root and as nobody:
# the agent inside the sandbox meets a blocked host, the person outside
# answers with pinhole pending / approve / deny, and the agent's work
# goes on without a restart.  Two sandboxes a user, so that the rate
# limit of one does not fall on the steps of the other:
#   A: a held curl approved once; the next one held again and denied
#      with a reason (approve and deny saying so in words); --session;
#      --always (written into the policy file, approve saying where),
#      and --always --ttl (written with its end, gone after it);
#      a held name answered by the gateway's DNS at once, never upstream;
#      a name a deny rule refuses is not held (NXDOMAIN, and why).
#   C: (no --ask) a POST a read-only rule refuses, asked for and
#      approved: the grant lifts the rule's checks; a name the DNS
#      refused, asked for on every port and approved once, then for the
#      session: the ports the command then uses go through.
#   B: a TTL that runs out; a held connection without the proxy
#      (transparent capture); approving from inside fails every way;
#      a reason with terminal escapes is shown escaped; a flood of
#      requests meets the rate limit.
. "$top_srcdir/tests/integration/lib.sh"

PY=/usr/bin/python3
need root dnsmasq curl dig getent setpriv $PY
export ASAN_OPTIONS=detect_leaks=0
cp "$PINHOLE" "$T/pinhole" && chmod 755 "$T/pinhole"
mkdir -m 1777 "$T/w"

start_origin --log-queries --log-facility="$T/dnsmasq.log" ||
    { finish; exit 1; }

# The person: pinhole as the mode's user, outside the sandbox.
P() {
	as_mode "$T/pinhole" "$@"
}

# Wait for a pending request for host $1; print its id.
pending_id() {
	wait_pending "$1" P
}

# Start a sandbox running script $1 in ask mode; its output goes to $1.out.
sandbox() {
	as_mode "$T/pinhole" run --ask=30 --policy "$W/cfg/policy" \
	    --resolver "127.0.0.1:$DNSP" --log "$W/log/audit.log" -- \
	    env T="$T" W="$W" HP="$HP" PINHOLE_BIN="$T/pinhole" sh "$T/$1.sh" >"$W/$1.out" 2>&1 &
	box=$!
}

# The same without --ask: a name no rule allows is refused by the DNS.
sandbox_noask() {
	as_mode "$T/pinhole" run --policy "$W/cfg/policy" \
	    --resolver "127.0.0.1:$DNSP" --log "$W/log/audit.log" -- \
	    env T="$T" W="$W" HP="$HP" PINHOLE_BIN="$T/pinhole" sh "$T/$1.sh" >"$W/$1.out" 2>&1 &
	box=$!
}

# Count the sandbox's "ok:"/"FAIL:" lines into the totals.
tally() {
	sed 's/^/  /' "$W/$1.out"
	NPASS=$((NPASS + $(grep -c '^ok: ' "$W/$1.out")))
	NFAIL=$((NFAIL + $(grep -c '^FAIL: ' "$W/$1.out")))
	n=$(grep -c '^ok: \|^FAIL: ' "$W/$1.out")
	[ "$n" -ge "$2" ] || fail "$MODE: sandbox $1 ran $n of $2 checks"
}

cat >"$T/lib-in.sh" <<'EOF'
check() {
	if [ "$2" = "$3" ]; then echo "ok: $1"; else echo "FAIL: $1: got '$2', want '$3'"; fi
}
get() {
	curl -s -o "$W/body" -w '%{http_code}' -m "${2:-40}" "$1"
}
EOF

cat >"$T/A.sh" <<'EOF'
. "$T/lib-in.sh"
URL=http://blocked.test:$HP/hello.txt
t0=$(date +%s%N)
addr=$(getent hosts never.test | cut -d' ' -f1)
t1=$(date +%s%N)
case $addr in 198.1[89].*) echo "ok: a blocked name has a fake address at once ($(( (t1 - t0) / 1000000 )) ms)" ;;
*) echo "FAIL: getent never.test: '$addr'" ;; esac
dig +tries=1 +time=3 denied.test >"$W/dig" 2>&1
grep -q "status: NXDOMAIN" "$W/dig" && grep -q "denied by the rule" "$W/dig" &&
    echo "ok: a name a deny rule refuses is not held: NXDOMAIN, and why" ||
    echo "FAIL: dig denied.test: $(cat "$W/dig")"
check "a host a deny rule refuses is not held" \
    "$(get "http://denied.test:$HP/hello.txt" 5)" 403
check "held, then approved once: the connection goes through" "$(get "$URL")" 200
check "... and the page arrives" "$(cat "$W/body")" "hello from origin"
check "the next connection is held again, and denied" "$(get "$URL")" 403
grep -q "denied by uid [0-9]* via cli: not today" "$W/body" &&
    echo "ok: the denial reason reaches the agent" ||
    echo "FAIL: denial reason: $(cat "$W/body")"
"$PINHOLE_BIN" request "session.test:$HP" --reason "for the session" \
    --wait=40 >/dev/null
check "request --wait: approved for the session" $? 0
check "session: a first connection" "$(get "http://session.test:$HP/hello.txt" 5)" 200
check "session: and a second" "$(get "http://session.test:$HP/hello.txt" 5)" 200
"$PINHOLE_BIN" request "always.test:$HP" --reason "for good" --wait=40 >/dev/null
check "request --wait: approved always" $? 0
check "always: a connection" "$(get "http://always.test:$HP/hello.txt" 5)" 200
"$PINHOLE_BIN" request "ending.test:$HP" --wait=40 >/dev/null
check "request --wait: approved always, for 3 s" $? 0
check "always with a TTL: a connection" "$(get "http://ending.test:$HP/hello.txt" 5)" 200
sleep 3.5
code=$(get "http://ending.test:$HP/hello.txt" 2)
[ "$code" != 200 ] && echo "ok: after its TTL the always rule is gone ($code)" ||
    echo "FAIL: always with a TTL: still allowed after the TTL"
EOF

cat >"$T/B.sh" <<'EOF'
. "$T/lib-in.sh"
"$PINHOLE_BIN" request "ttl.test:$HP" --reason short --wait=40 >/dev/null
check "request --wait: approved for 2 s" $? 0
check "within the TTL" "$(get "http://ttl.test:$HP/hello.txt" 5)" 200
sleep 2.5
check "after the TTL the host is held again" "$(get "http://ttl.test:$HP/hello.txt" 2)" 000
check "without the proxy: held, approved once, through" \
    "$(curl -s -o "$W/body" -w '%{http_code}' -m 40 --noproxy '*' "http://tp.test:$HP/hello.txt")" 200
id=$("$PINHOLE_BIN" request "self.test:$HP" --reason mine | grep -o 'r[0-9a-f]*' | head -1)
[ -n "$id" ] && echo "ok: filed $id" || echo "FAIL: no id for self.test"
"$PINHOLE_BIN" approve --session "$id" >/dev/null 2>&1 &&
    echo "FAIL: pinhole approve worked inside" ||
    echo "ok: pinhole approve fails inside"
"$PINHOLE_BIN" pending >/dev/null 2>&1 &&
    echo "FAIL: pinhole pending worked inside" ||
    echo "ok: pinhole pending fails inside"
for path in approve "approve?id=$id" "decide" "control"; do
	code=$(curl -s -o /dev/null -w '%{http_code}' -m 5 \
	    -d "id=$id&scope=session" "$PINHOLE_AGENT/pinhole/$path")
	case $code in 2*) echo "FAIL: POST /pinhole/$path: $code" ;;
	*) echo "ok: POST /pinhole/$path: $code" ;; esac
done
"$PINHOLE_BIN" request --status "$id" | grep -q pending &&
    echo "ok: the request is still pending" ||
    echo "FAIL: status: $("$PINHOLE_BIN" request --status "$id")"
"$PINHOLE_BIN" request "esc.test:$HP" \
    --reason "$(printf 'look \033[2J\033]0;pwned\007 here')" >/dev/null
limited=0
for i in 1 2 3 4 5 6 7 8 9 10; do
	case $("$PINHOLE_BIN" request "flood$i.test" 2>&1) in
	*"429: too many requests"*) limited=$((limited + 1)) ;; esac
done
[ $limited -ge 8 ] && echo "ok: a flood is rate-limited ($limited of 10 refused)" ||
    echo "FAIL: flood: only $limited of 10 refused"
touch "$W/B.filed"
i=0
while [ ! -e "$W/B.seen" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
sleep 4		# the TTL's expire event is written by a 5 s sweep
EOF
cat >"$T/C.sh" <<'EOF'
. "$T/lib-in.sh"
check "a read-only rule refuses a POST" \
    "$(curl -s -o "$W/body" -w '%{http_code}' -m 10 -d x=1 "http://ro.test:$HP/up")" 403
grep -q "an approval lifts the request checks of the rule" "$W/body" &&
    grep -q "pinhole request ro.test:$HP --reason" "$W/body" &&
    echo "ok: the 403 page says an approval lifts the rule's checks" ||
    echo "FAIL: 403 page: $(cat "$W/body")"
"$PINHOLE_BIN" request "ro.test:$HP" --reason upload --wait=40 >"$W/ro.out" 2>"$W/ro.err"
check "a request for a host a read-only rule allows is filed, approved" $? 0
grep -q "^pinhole request: approving it lifts the request checks of the rule 'allow ro.test:$HP read-only'" "$W/ro.err" &&
    echo "ok: pinhole request says what approving lifts" ||
    echo "FAIL: request: $(cat "$W/ro.out" "$W/ro.err")"
check "approved, the POST reaches the origin" \
    "$(curl -s -o /dev/null -w '%{http_code}' -m 10 -d x=1 "http://ro.test:$HP/up")" 501
getent hosts far.test >/dev/null
check "a name no rule allows is refused by the DNS" $? 2
"$PINHOLE_BIN" request far.test --any-port --reason mirror --wait=40 \
    >"$W/far.out" 2>"$W/far.err"
check "request --any-port for the refused name: approved once" $? 0
grep -q "^pinhole request: asked the person for far.test (any port)$" "$W/far.err" &&
    echo "ok: pinhole request says it asked for every port" ||
    echo "FAIL: request --any-port: $(cat "$W/far.out" "$W/far.err")"
case $(getent hosts far.test) in 198.1[89].*) echo "ok: approved, the name resolves" ;;
*) echo "FAIL: getent far.test after the approval" ;; esac
check "the next connection, on the port the command uses, goes through" \
    "$(curl -s -o /dev/null -w '%{http_code}' -m 10 "http://far.test:$HP/hello.txt")" 200
check "once: the connection used it up" \
    "$(curl -s -o /dev/null -w '%{http_code}' -m 10 "http://far.test:$HP/hello.txt")" 403
"$PINHOLE_BIN" request "wide.test:*" --wait=40 >/dev/null 2>&1
check "request HOST:* approved for the session" $? 0
check "the session grant opens the port used" \
    "$(curl -s -o /dev/null -w '%{http_code}' -m 10 "http://wide.test:$HP/hello.txt")" 200
code=$(curl -s -o /dev/null -w '%{http_code}' -m 10 "http://wide.test:$((HP + 1))/hello.txt")
[ "$code" != 403 ] && echo "ok: and any other port ($code: not refused)" ||
    echo "FAIL: wide.test on another port: $code"
EOF

chmod 644 "$T"/*.sh

for MODE in root nobody; do
	W=$T/w/$MODE
	mkdir -p "$W/xdg" "$W/cfg" "$W/log"
	printf 'allow-private 127.0.0.0/8\ndeny denied.test\nallow ro.test:%s read-only\n' \
	    "$HP" >"$W/cfg/policy"
	[ "$MODE" = nobody ] && chown -R nobody:nogroup "$W"
	chmod 700 "$W/xdg"

	sandbox A
	id=$(pending_id blocked.test) && P approve --once "$id" >"$W/once.out"
	grep -Eq "^approved $id: blocked\.test:$HP once: the next connection of (sandbox [0-9a-z]+|the command that asked) \(session run-[0-9a-f]+\)$" "$W/once.out" &&
	    ok "$MODE: approve --once says once, for whom" ||
	    fail "$MODE: approve --once: $(cat "$W/once.out")"
	id2=$(pending_id blocked.test)
	[ -n "$id2" ] && [ "$id2" != "$id" ] &&
	    ok "$MODE: the once grant is used up: a new request $id2" ||
	    fail "$MODE: once: '$id' then '$id2'"
	P deny --reason "not today" "$id2" >"$W/deny.out"
	grep -q "^denied $id2: blocked\.test:$HP (session run-[0-9a-f]*); the agent is told: not today$" "$W/deny.out" &&
	    ok "$MODE: deny says what the agent is told" ||
	    fail "$MODE: deny: $(cat "$W/deny.out")"
	id=$(pending_id session.test) && P approve --session "$id" >/dev/null
	id=$(pending_id always.test) && P approve --always "$id" >"$W/always.out" ||
	    fail "$MODE: approve --always"
	grep -q "^approved $id: always\.test:$HP always: added to $W/cfg/policy:4: allow always\.test:$HP$" "$W/always.out" &&
	    ok "$MODE: approve --always names the file, line and rule" ||
	    fail "$MODE: approve --always: $(cat "$W/always.out")"
	id=$(pending_id ending.test) &&
	    P approve --always --ttl 3 "$id" >/dev/null ||
	    fail "$MODE: approve --always --ttl 3"
	wait $box
	tally A 15
	grep -qx "allow always.test:$HP" "$W/cfg/policy" &&
	    ok "$MODE: always is written into the policy file" ||
	    fail "$MODE: policy: $(cat "$W/cfg/policy")"
	grep -qx "allow ending.test:$HP until 20[0-9-]*T[0-9:]*Z" "$W/cfg/policy" &&
	    ok "$MODE: always with a TTL is written with its end" ||
	    fail "$MODE: policy: $(cat "$W/cfg/policy")"
	loggrep "$W/log/audit.log" '"event":"reload","verdict":"allow"' &&
	    ok "$MODE: the gateway reloaded the policy" ||
	    fail "$MODE: no reload in the audit log"
	grep -q "never.test" "$T/dnsmasq.log" &&
	    fail "$MODE: a held name was asked upstream" ||
	    ok "$MODE: a held name is not asked upstream"

	sandbox_noask C
	id=$(pending_id ro.test) && P pending >"$W/ro.pending" &&
	    P approve --session "$id" >"$W/ro.approve"
	grep -q "^    approving lifts the request checks of the rule 'allow ro.test:$HP read-only' ($W/cfg/policy:3), which refused POST /up: read-only: POST /up is not a read$" "$W/ro.pending" &&
	    ok "$MODE: pending says what approving lifts" ||
	    fail "$MODE: pending ro.test: $(cat "$W/ro.pending")"
	grep -q "^approved $id: ro\.test:$HP for this session (run-[0-9a-f]*), until it stops$" "$W/ro.approve" &&
	    ok "$MODE: approve --session says for this session" ||
	    fail "$MODE: approve --session: $(cat "$W/ro.approve")"
	id=$(pending_id far.test) && P pending >"$W/far.pending" &&
	    P approve --once "$id" >"$W/far.approve"
	grep -q "^$id  far\.test (any port)  session run-" "$W/far.pending" &&
	    ok "$MODE: pending shows a request for every port as such" ||
	    fail "$MODE: pending far.test: $(cat "$W/far.pending")"
	grep -Eq "^approved $id: far\.test \(any port\) once: the next connection of " "$W/far.approve" &&
	    ok "$MODE: approve says every port, once" ||
	    fail "$MODE: approve far.test: $(cat "$W/far.approve")"
	id=$(pending_id wide.test) && P approve --session "$id" >/dev/null ||
	    fail "$MODE: approve wide.test"
	wait $box
	tally C 14
	grep -q "^pinhole: refused the name far\.test (.*); ask: pinhole request far\.test --any-port, then wait for the answer: pinhole request --status ID --wait (ID is what it prints)$" "$W/C.out" &&
	    ok "$MODE: the DNS refusal's advice asks for every port" ||
	    fail "$MODE: DNS notice: $(grep far.test "$W/C.out")"
	loggrep "$W/log/audit.log" '"event":"dns","verdict":"deny".*"qname":"far.test".*"ask":"pinhole request far.test --any-port"' &&
	    ok "$MODE: audit: the DNS refusal asks for every port" ||
	    fail "$MODE: audit: far.test dns"
	loggrep "$W/log/audit.log" '"event":"request",.*"host":"far.test","port":0' &&
	    ok "$MODE: audit: the request is for port 0, every port" ||
	    fail "$MODE: audit: far.test request"

	sandbox B
	id=$(pending_id ttl.test) &&
	    P approve --session --ttl 2 "$id" >/dev/null
	id=$(pending_id tp.test) && P approve --once "$id" >/dev/null ||
	    fail "$MODE: approve tp.test"
	i=0
	while [ ! -e "$W/B.filed" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
	P pending >"$W/pending.txt" 2>&1
	touch "$W/B.seen"
	wait $box
	tally B 12
	grep -q 'look \\x1b\[2J\\x1b\]0;pwned\\x07 here' "$W/pending.txt" &&
	    ok "$MODE: the person sees the reason escaped" ||
	    fail "$MODE: pending: $(cat -v "$W/pending.txt")"
	grep -q "$(printf '\033')" "$W/pending.txt" &&
	    fail "$MODE: a raw ESC reached the person's terminal" ||
	    ok "$MODE: no raw ESC in pending"
	grep -q "self.test:$HP" "$W/pending.txt" &&
	    ok "$MODE: the sandbox's own request is still pending" ||
	    fail "$MODE: self.test not pending"
	L=$W/log/audit.log
	loggrep "$L" '"event":"grant".*"host":"blocked.test".*"scope":"once","by":"uid [0-9]+ via cli"' &&
	    ok "$MODE: audit: once grant" || fail "$MODE: audit once"
	loggrep "$L" '"event":"deny","verdict":"deny","reason":"not today".*"host":"blocked.test"' &&
	    ok "$MODE: audit: deny with reason" || fail "$MODE: audit deny"
	loggrep "$L" "\"event\":\"request\",.*\"host\":\"ro.test\".*\"detail\":\"the request checks of the rule 'allow ro.test:$HP read-only'" &&
	    ok "$MODE: audit: the request says what a grant lifts" ||
	    fail "$MODE: audit: request ro.test"
	loggrep "$L" "\"event\":\"grant\",.*\"host\":\"always.test\".*\"detail\":\"$W/cfg/policy:4: allow always.test:$HP\"" &&
	    ok "$MODE: audit: the always grant says where it wrote" ||
	    fail "$MODE: audit: always grant detail"
	loggrep "$L" '"event":"grant".*"host":"always.test".*"scope":"always"' &&
	    ok "$MODE: audit: always grant" || fail "$MODE: audit always"
	loggrep "$L" '"event":"expire".*"reason":"ttl".*"host":"ttl.test"' &&
	    ok "$MODE: audit: the TTL expired" || fail "$MODE: audit expire"
	loggrep "$L" '"event":"connect".*"host":"tp.test".*"rule":"grant r' ||
	    loggrep "$L" '"host":"tp.test".*"rule":"grant r' &&
	    ok "$MODE: audit: the captured connection went through on its grant" ||
	    fail "$MODE: audit tp.test"
done
finish
