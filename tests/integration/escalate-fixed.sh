#!/bin/sh
# Refusals no grant can lift, in `pinhole run`, as root and as nobody: a
# deny rule, a name that resolves to loopback, a private address literal.
# The agent is told why and what must change, never to run pinhole
# request (403 page, headers, DNS EDE text, the audit "ask" field);
# pinhole request for such a target is refused at once; pinhole approve
# of a request a deny rule has since caught fails and says why; the
# agent endpoint lists the blocked attempts and the --allow rules too.
. "$top_srcdir/tests/integration/lib.sh"

need root dnsmasq curl dig setpriv
export ASAN_OPTIONS=detect_leaks=0
cp "$PINHOLE" "$T/pinhole" && chmod 755 "$T/pinhole"
mkdir -m 1777 "$T/w"

start_origin || { finish; exit 1; }

cat >"$T/inside.sh" <<'EOF'
check() {
	if [ "$2" = "$3" ]; then echo "ok: $1"; else echo "FAIL: $1: got '$2', want '$3'"; fi
}
# GET $1: the status; the headers and body in $W/hdr and $W/body.
get() {
	curl -s -D "$W/hdr" -o "$W/body" -w '%{http_code}' -m 10 "$1"
}
# No word of pinhole request in the answer just got.
no_ask() {
	if grep -qi "pinhole.request" "$W/hdr" "$W/body"; then
		echo "FAIL: $1 suggests pinhole request: $(cat "$W/hdr" "$W/body")"
	else
		echo "ok: $1 does not suggest pinhole request"
	fi
}
# pinhole request $1: refused at once with exit 4, saying $2.
refused() {
	"$PINHOLE_BIN" request "$1" --reason x --wait=5 >"$W/req" 2>&1
	check "pinhole request $1 is refused" $? 4
	grep -q "403: .*$2" "$W/req" && echo "ok: ... saying '$2'" ||
	    echo "FAIL: request $1: $(cat "$W/req")"
}

check "a host a grant could open: 403" "$(get "http://nowhere.test:$HP/")" 403
grep -q "^Pinhole-Request: pinhole request nowhere.test:$HP" "$W/hdr" &&
    grep -q "    pinhole request nowhere.test:$HP --reason" "$W/body" &&
    echo "ok: ... and the page says how to ask" ||
    echo "FAIL: nowhere.test: $(cat "$W/hdr" "$W/body")"

check "a deny rule: 403" "$(get "http://denied.test:$HP/")" 403
no_ask "the deny rule's refusal"
grep -q "denied by the rule 'deny denied.test' (.*policy:1), which no approval can override: to allow it, that rule must be removed" "$W/body" &&
    echo "ok: ... it names the rule to remove" ||
    echo "FAIL: deny page: $(cat "$W/body")"
refused "denied.test:$HP" "that rule must be removed"

check "a name that resolves to loopback: 403" \
    "$(get "http://private.test:$HP/hello.txt")" 403
grep -q "^Pinhole-Error: private-address" "$W/hdr" &&
    echo "ok: ... for its address" || echo "FAIL: $(cat "$W/hdr")"
no_ask "the private address's refusal"
grep -q "127.0.0.1 is a special-purpose address (loopback).*'allow-private 127.0.0.1'" "$W/body" &&
    echo "ok: ... it names the allow-private rule" ||
    echo "FAIL: private page: $(cat "$W/body")"
refused "private.test:$HP" "allow-private 127.0.0.1"

check "a private address literal: 403" "$(get "http://10.11.12.13:$HP/")" 403
no_ask "the literal's refusal"
refused "10.11.12.13:$HP" "allow-private 10.11.12.13"

dig +tries=1 +time=3 denied.test >"$W/dig" 2>&1
grep -q "blocked by pinhole policy: denied by the rule" "$W/dig" &&
    ! grep -q "pinhole request" "$W/dig" &&
    echo "ok: DNS: the EDE text of a denied name says what must change" ||
    echo "FAIL: dig denied.test: $(cat "$W/dig")"
dig +tries=1 +time=3 nowhere.test >"$W/dig" 2>&1
grep -q "ask: pinhole request nowhere.test" "$W/dig" &&
    echo "ok: DNS: a name a grant could open names the command" ||
    echo "FAIL: dig nowhere.test: $(cat "$W/dig")"

curl -s -m 10 "$PINHOLE_AGENT/pinhole/blocked" >"$W/blocked"
grep -q "^private.test:$HP via forward, .*; 127.0.0.1 is a special-purpose" "$W/blocked" &&
    echo "ok: /pinhole/blocked lists the private-address refusal" ||
    echo "FAIL: blocked: $(cat "$W/blocked")"
grep -q "^denied.test:$HP via forward, .*which no approval can override" "$W/blocked" &&
    echo "ok: /pinhole/blocked: the deny rule, without a command" ||
    echo "FAIL: blocked: $(cat "$W/blocked")"
grep -q "^nowhere.test:$HP via forward, .*ask with: pinhole request nowhere.test:$HP$" "$W/blocked" &&
    echo "ok: /pinhole/blocked: the others with the command" ||
    echo "FAIL: blocked: $(cat "$W/blocked")"
curl -s -m 10 "$PINHOLE_AGENT/pinhole/allowed" >"$W/allowed"
grep -qx "  allow cli.test:$HP" "$W/allowed" &&
    grep -qx "  deny denied.test" "$W/allowed" &&
    echo "ok: /pinhole/allowed lists the --allow rule and the file's" ||
    echo "FAIL: allowed: $(cat "$W/allowed")"

# A request filed, then a deny rule: the person cannot approve it.
"$PINHOLE_BIN" request "late.test:$HP" --reason later >"$W/late.out"
check "late.test is filed" $? 0
grep -o 'r[0-9a-f]\{16\}' "$W/late.out" | head -1 >"$W/late.tmp"
mv "$W/late.tmp" "$W/late.id"
i=0
while [ ! -e "$W/late.done" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
"$PINHOLE_BIN" request --status "$(cat "$W/late.id")" | grep -q pending &&
    echo "ok: the request the person could not approve is still pending" ||
    echo "FAIL: late.test status"
EOF
chmod 644 "$T/inside.sh"

for MODE in root nobody; do
	W=$T/w/$MODE
	mkdir -p "$W/xdg" "$W/cfg" "$W/log"
	printf 'deny denied.test\nallow private.test:%s\n' "$HP" >"$W/cfg/policy"
	[ "$MODE" = nobody ] && chown -R nobody:nogroup "$W"
	chmod 700 "$W/xdg"
	as_mode "$T/pinhole" run --policy "$W/cfg/policy" --allow "allow cli.test:$HP" \
	    --resolver "127.0.0.1:$DNSP" --log "$W/log/audit.log" -- \
	    env W="$W" HP="$HP" PINHOLE_BIN="$T/pinhole" sh "$T/inside.sh" \
	    >"$W/inside.out" 2>&1 &
	box=$!

	# The person adds a deny rule for a filed request, then approves.
	wait_file "$W/late.id" || fail "$MODE: late.test was not filed"
	id=$(cat "$W/late.id")
	reloads=$(grep -c '"event":"reload"' "$W/log/audit.log")
	echo "deny late.test" >>"$W/cfg/policy"
	i=0
	while [ "$(grep -c '"event":"reload"' "$W/log/audit.log")" = "$reloads" ] &&
	    [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	as_mode "$T/pinhole" approve --session "$id" >"$W/approve.out" 2>&1
	rc=$?
	[ $rc = 1 ] && grep -q "cannot approve $id: denied by the rule 'deny late.test' (.*policy:3), which no approval can override" "$W/approve.out" &&
	    ok "$MODE: approve fails, saying which rule stands in the way" ||
	    fail "$MODE: approve: rc $rc $(cat "$W/approve.out")"
	touch "$W/late.done"
	wait $box

	sed 's/^/  /' "$W/inside.out"
	NPASS=$((NPASS + $(grep -c '^ok: ' "$W/inside.out")))
	NFAIL=$((NFAIL + $(grep -c '^FAIL: ' "$W/inside.out")))
	n=$(grep -c '^ok: \|^FAIL: ' "$W/inside.out")
	[ "$n" -ge 25 ] || fail "$MODE: the sandbox ran $n of 25 checks"
	L=$W/log/audit.log
	loggrep "$L" '"host":"nowhere.test".*"ask":"pinhole request nowhere' &&
	    ok "$MODE: audit: a refusal a grant could lift has ask" ||
	    fail "$MODE: audit: no ask for nowhere.test"
	for h in denied.test private.test 10.11.12.13; do
		loggrep "$L" "\"host\":\"$h\".*\"ask\"" &&
		    fail "$MODE: audit: $h suggests asking" ||
		    ok "$MODE: audit: no ask for $h"
	done
	loggrep "$L" '"event":"dns".*"qname":"denied.test".*"ask"' &&
	    fail "$MODE: audit: the DNS refusal of denied.test suggests asking" ||
	    ok "$MODE: audit: no ask for the DNS refusal of denied.test"
done
finish
