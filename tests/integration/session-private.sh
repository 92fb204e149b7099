#!/bin/sh
# What one sandbox of a session asked for, looked up or was refused stays
# its own.  Sandbox 1 is refused a name that resolves to loopback, looks
# up a name of its own and asks for a host with a private reason.
# Sandbox 2, asking for the same host, is told of a request of its own
# (201, an id, reason and time of its own, nothing of sandbox 1's), and
# the person still sees one request, which approving answers for both;
# the reverse lookup of sandbox 1's fake address, and of every fake
# address near it, names nothing, nor does connecting to it, while its
# own name reads back; asking for the name sandbox 1 was refused is
# answered as for a name no sandbox met, and sandbox 2's recent
# refusals are its own.  `pinhole run` returns once the session has
# ended its sandbox, so a sandbox attached after it (the next tool call
# of a harness) lists sandbox 1's refusals.
# As root and as nobody.
. "$top_srcdir/tests/integration/lib.sh"

need root dnsmasq curl dig setpriv
export ASAN_OPTIONS=detect_leaks=0
cp "$PINHOLE" "$T/pinhole" && chmod 755 "$T/pinhole"
start_origin || { finish; exit 1; }

# Sandbox 1: refused priv.test (loopback), and so refused asking for it;
# looks up secret-a.test, asks for hidden.test:8443, then stays until
# told to go.
cat >"$T/one.sh" <<'EOS'
W=$1 HP=$2
curl -s -o /dev/null -w '%{http_code}' -m 10 --noproxy '' \
    "http://priv.test:$HP/" >"$W/one.priv"
curl -s -m 10 -w ' %{http_code}' -X POST --data-urlencode host=priv.test \
    --data-urlencode port=$HP "$PINHOLE_AGENT/pinhole/request" >"$W/one.fixed"
dig +short +tries=1 +time=3 secret-a.test >"$W/one.addr"
curl -s -m 10 -w ' %{http_code}' -X POST --data-urlencode host=hidden.test \
    --data-urlencode port=8443 \
    --data-urlencode 'reason=A private: deploy key for ACME 4711' \
    "$PINHOLE_AGENT/pinhole/request?format=json" >"$W/one.req"
touch "$W/one.ready"
i=0
while [ ! -e "$W/one.end" ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i + 1)); done
EOS
# Sandbox 2: the refused name (first: its reverse lookups are blocked
# names too, which the ring of recent ones keeps), the same host, reverse
# lookups.
cat >"$T/two.sh" <<'EOS'
W=$1 HP=$2 A=$3
D="dig +short +tries=1 +time=3"
for h in priv.test priv2.test; do
	curl -s -m 10 -w ' %{http_code}' -X POST --data-urlencode host=$h \
	    --data-urlencode port=$HP "$PINHOLE_AGENT/pinhole/request" \
	    >"$W/two.$h"
done
curl -s -m 10 -w ' %{http_code}' -X POST --data-urlencode host=hidden.test \
    --data-urlencode port=8443 --data-urlencode reason=theirs \
    "$PINHOLE_AGENT/pinhole/request?format=json" >"$W/two.req"
id=$(sed -n 's/.*"request":"\(r[0-9a-f]*\)".*/\1/p' "$W/two.req")
curl -s -m 10 "$PINHOLE_AGENT/pinhole/request/$id?format=json" \
    >"$W/two.status"
$D -x "$A" >"$W/two.ptr" 2>&1
net=${A%.*}
for i in $(seq 0 40); do $D -x "$net.$i"; done >"$W/two.ptrs" 2>&1
own=$($D b-own.test)
echo "$own $($D -x "$own")" >"$W/two.own"
curl -s -m 10 -w ' %{http_code}' --noproxy '' "http://$A:$HP/" \
    >"$W/two.fake" 2>&1
curl -s -m 10 "$PINHOLE_AGENT/pinhole/refused" >"$W/two.refused"
touch "$W/two.asked"
curl -s -m 40 "$PINHOLE_AGENT/pinhole/request/$id?format=json&wait=30" \
    >"$W/two.final"
EOS
chmod 644 "$T/one.sh" "$T/two.sh"

for MODE in root nobody; do
	W="$T/w/$MODE"
	mkdir -p "$W" && mkdir -m 700 "$W/xdg"
	[ "$MODE" = nobody ] && chown -R nobody "$W"
	as_mode "$T/pinhole" session start s --resolver "127.0.0.1:$DNSP" \
	    --allow 'allow secret-a.test b-own.test' \
	    --allow "allow priv.test:$HP" --allow "allow priv2.test:$HP" \
	    >/dev/null 2>"$T/err" || fail "$MODE: start: $(cat "$T/err")"
	as_mode "$T/pinhole" run --session s -- sh "$T/one.sh" "$W" "$HP" \
	    >"$W/one.out" 2>&1 &
	one=$!
	wait_file "$W/one.ready" || fail "$MODE: sandbox 1: $(cat "$W/one.out")"
	addr=$(cat "$W/one.addr")
	id1=$(sed -n 's/.*"request":"\(r[0-9a-f]*\)".*/\1/p' "$W/one.req")
	[ "$(cat "$W/one.priv")" = 403 ] && [ -n "$id1" ] &&
	    grep -q '127.0.0.1 is a special-purpose' "$W/one.fixed" &&
	    grep -q ' 403$' "$W/one.fixed" &&
	    echo "$addr" | grep -q '^198\.1[89]\.' &&
	    ok "$MODE: sandbox 1 is refused priv.test, resolves, asks" ||
	    fail "$MODE: sandbox 1: $(cat "$W/one.priv" "$W/one.fixed" "$W/one.addr" "$W/one.req")"

	as_mode "$T/pinhole" run --session s -- sh "$T/two.sh" "$W" "$HP" \
	    "$addr" >"$W/two.out" 2>&1 &
	two=$!
	wait_file "$W/two.asked" || fail "$MODE: sandbox 2: $(cat "$W/two.out")"

	# 1. The same host: a request of its own.
	id2=$(sed -n 's/.*"request":"\(r[0-9a-f]*\)".*/\1/p' "$W/two.req")
	grep -q ' 201$' "$W/two.req" && [ -n "$id2" ] && [ "$id2" != "$id1" ] &&
	    ! grep -q "$id1\|ACME\|coalesced\":true" "$W/two.req" &&
	    grep -q '"reason":"theirs"' "$W/two.req" &&
	    ok "$MODE: sandbox 2 asking for the same host gets a request of its own" ||
	    fail "$MODE: sandbox 2's request: $(cat "$W/two.req") (1: $id1)"
	grep -q "\"request\":\"$id2\".*\"state\":\"pending\"" "$W/two.status" &&
	    ! grep -q "$id1\|ACME" "$W/two.status" &&
	    ok "$MODE: ... and reads it back by its id, as its own" ||
	    fail "$MODE: sandbox 2's status: $(cat "$W/two.status")"
	n=$(as_mode "$T/pinhole" pending -s s --json | grep -c '"host":"hidden.test"')
	[ "$n" = 1 ] &&
	    ok "$MODE: the person sees one request for the host" ||
	    fail "$MODE: pending: $(as_mode "$T/pinhole" pending -s s --json)"
	as_mode "$T/pinhole" approve -s s --session "$id1" >/dev/null \
	    2>"$T/err" || fail "$MODE: approve: $(cat "$T/err")"
	wait "$two" || fail "$MODE: sandbox 2 exited $?: $(cat "$W/two.out")"
	grep -q "\"request\":\"$id2\".*\"state\":\"approved\"" \
	    "$W/two.final" &&
	    ok "$MODE: one approval answers sandbox 2's request too" ||
	    fail "$MODE: sandbox 2's answer: $(cat "$W/two.final")"

	# 2. Reverse lookups name only what sandbox 2 was given.
	[ ! -s "$W/two.ptr" ] && ! grep -q 'secret-a' "$W/two.ptrs" &&
	    ok "$MODE: sandbox 2's PTR of sandbox 1's fake address names nothing" ||
	    fail "$MODE: PTR: $(cat "$W/two.ptr" "$W/two.ptrs")"
	grep -q '^198\.1[89]\.[0-9.]* b-own\.test\.$' "$W/two.own" &&
	    ok "$MODE: ... while its own name reads back" ||
	    fail "$MODE: own PTR: $(cat "$W/two.own")"
	! grep -q 'secret-a\| 200$' "$W/two.fake" &&
	    ok "$MODE: connecting to sandbox 1's fake address names nothing" ||
	    fail "$MODE: fake address: $(cat "$W/two.fake")"

	# 3. Sandbox 1's refusal is not sandbox 2's.
	# (allowed already, as priv2.test is, which no sandbox met)
	sed "s/priv2\.test/priv.test/g" "$W/two.priv2.test" >"$W/two.want"
	cmp -s "$W/two.priv.test" "$W/two.want" &&
	    grep -q 'allowed already' "$W/two.priv.test" &&
	    ! grep -q '127\.0\.0\.1\|special' "$W/two.priv.test" &&
	    ok "$MODE: asking for the name sandbox 1 was refused: as for any" ||
	    fail "$MODE: priv.test: $(cat "$W/two.priv.test") / $(cat "$W/two.priv2.test")"

	grep -q 'priv\.test' "$W/two.refused" &&
	    fail "$MODE: sandbox 2 lists sandbox 1's refusal: $(cat "$W/two.refused")" ||
	    ok "$MODE: sandbox 2's recent refusals are its own"

	# 4. `pinhole run` returns once the session has ended its sandbox
	# (the gateway, stopped here, resumes in 1 s): a harness's next tool
	# call, started when this one returned, finds it ended ...
	gw=$(as_mode "$T/pinhole" session status s --json |
	    sed -n 's/.*"pid":\([0-9]*\).*/\1/p')
	kill -STOP "$gw"
	touch "$W/one.end"
	(sleep 1; touch "$W/cont"; kill -CONT "$gw") &
	cont=$!
	wait "$one" || fail "$MODE: sandbox 1 exited $?: $(cat "$W/one.out")"
	[ -e "$W/cont" ] &&
	    ok "$MODE: run returns once the session has ended the sandbox" ||
	    fail "$MODE: run returned while the session was stopped"
	wait "$cont"
	# ... and sees its refusals.
	as_mode "$T/pinhole" run --session s -- sh -c \
	    'curl -s -m 10 "$PINHOLE_AGENT/pinhole/refused"' >"$W/three.out" 2>&1
	grep -q "priv\.test:$HP" "$W/three.out" &&
	    ok "$MODE: the next sandbox lists the ended sandbox 1's refusals" ||
	    fail "$MODE: sandbox 3: $(cat "$W/three.out")"
	as_mode "$T/pinhole" session stop s >/dev/null 2>&1 ||
	    fail "$MODE: stop"
done
finish
