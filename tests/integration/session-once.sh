#!/bin/sh
# A session's sandboxes see and use only their own: sandbox 1 asks for a
# host and is approved --once; sandbox 2, connecting to that host while
# the grant is still unused, is refused; sandbox 1 connects once, then is
# refused again.  Sandbox 2 sees neither sandbox 1's blocked hosts nor its
# request, whose id it is answered for as for one that does not exist;
# approve --sandbox names only a sandbox that asked, and only --once.
# In ask mode, two sandboxes held for one request: approved once, the
# first goes through and the second stays held, on a new request of its
# own, until that one is approved.  As root and as nobody.
. "$top_srcdir/tests/integration/lib.sh"

need curl
gport=$(free_port)
xport=$(free_port)
bg python3 -m http.server "$gport" --bind 127.0.0.1 --directory "$T" \
    >/dev/null 2>&1
wait_port "$gport" || { finish; exit 1; }
cp "$PINHOLE" "$T/pinhole"
CURL="curl -s -o /dev/null -w %{http_code} --noproxy ''"

# Sandbox 1: blocked on another port, asks, waits for the answer, then
# connects twice when told to, and stays until told to go.
cat >"$T/one.sh" <<'EOS'
W=$1 P=$2 G=$3 X=$4
CURL="curl -s -o /dev/null -w %{http_code} -m 5 --noproxy ''"
wait_for() {
	i=0
	while [ ! -e "$1" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done
}
eval "$CURL http://127.0.0.1:$X/" >"$W/one.x"
"$P" request "127.0.0.1:$G" --reason 'sandbox one' --wait=60 \
    >"$W/one.req" 2>&1
echo $? >"$W/one.rc"
wait_for "$W/one.go"
c1=$(eval "$CURL http://127.0.0.1:$G/")
c2=$(eval "$CURL http://127.0.0.1:$G/")
curl -s -m 5 "$PINHOLE_AGENT/pinhole/blocked" >"$W/one.blocked"
echo "$c1 $c2" >"$W/one.tmp" && mv "$W/one.tmp" "$W/one.codes"
wait_for "$W/one.end"
EOS
# Sandbox 2: the same host, its listings, sandbox 1's request by id.
cat >"$T/two.sh" <<'EOS'
W=$1 P=$2 G=$3 ID=$4
CURL="curl -s -o /dev/null -w %{http_code} -m 5 --noproxy ''"
eval "$CURL http://127.0.0.1:$G/" >"$W/two.code"
curl -s -m 5 "$PINHOLE_AGENT/pinhole/blocked" >"$W/two.blocked"
curl -s -m 5 "$PINHOLE_AGENT/pinhole/allowed" >"$W/two.allowed"
for q in '' '?format=json' '?wait=2'; do
	curl -s -m 10 -w ' %{http_code}' \
	    "$PINHOLE_AGENT/pinhole/request/$ID$q" >>"$W/two.theirs"
	curl -s -m 10 -w ' %{http_code}' \
	    "$PINHOLE_AGENT/pinhole/request/r0123456789abcdef$q" >>"$W/two.none"
done
"$P" request --status "$ID" >"$W/two.status" 2>&1
echo "rc $?" >>"$W/two.status"
EOS
chmod 644 "$T/one.sh" "$T/two.sh"

for MODE in root nobody; do
	W="$T/w/$MODE"
	mkdir -p "$W" && mkdir -m 700 "$W/xdg"
	[ "$MODE" = nobody ] && chown -R nobody "$W"
	as_mode "$T/pinhole" session start s --resolver 127.0.0.1:9 \
	    --allow 'allow-private 127.0.0.0/8' >/dev/null 2>"$T/err" ||
	    fail "$MODE: start: $(cat "$T/err")"

	as_mode "$T/pinhole" run --session s -- sh "$T/one.sh" "$W" \
	    "$T/pinhole" "$gport" "$xport" >"$W/one.out" 2>&1 &
	one=$!
	id=$(wait_pending 127.0.0.1 as_mode "$T/pinhole")
	echo "$id" | grep -qx 'r[0-9a-f]\{16\}' &&
	    ok "$MODE: a request id is r and 16 hex digits" ||
	    fail "$MODE: id '$id'"

	as_mode "$T/pinhole" approve --once --sandbox 2 "$id" >/dev/null \
	    2>"$T/err"
	rv=$?
	[ $rv = 1 ] && grep -q "sandbox 2 has not asked for $id" "$T/err" &&
	    ok "$MODE: --sandbox names only a sandbox that asked" ||
	    fail "$MODE: --sandbox 2: $rv $(cat "$T/err")"
	as_mode "$T/pinhole" approve --session --sandbox 1 "$id" >/dev/null \
	    2>"$T/err"
	[ $? = 2 ] && grep -q -- "--sandbox goes with --once" "$T/err" &&
	    ok "$MODE: --sandbox goes with --once only" ||
	    fail "$MODE: --session --sandbox: $(cat "$T/err")"
	as_mode "$T/pinhole" approve --once "$id" >/dev/null 2>"$T/err" ||
	    fail "$MODE: approve: $(cat "$T/err")"
	wait_file "$W/one.rc" && [ "$(cat "$W/one.rc")" = 0 ] &&
	    grep -q "^$id$" "$W/one.req" &&
	    ok "$MODE: sandbox 1 is told its request is approved" ||
	    fail "$MODE: sandbox 1's request: $(cat "$W/one.req")"

	# Sandbox 2, while sandbox 1's grant is unused.
	as_mode "$T/pinhole" run --session s -- sh "$T/two.sh" "$W" \
	    "$T/pinhole" "$gport" "$id" >"$W/two.out" 2>&1 ||
	    fail "$MODE: sandbox 2: $(cat "$W/two.out")"
	[ "$(cat "$W/two.code")" = 403 ] &&
	    ok "$MODE: sandbox 2 is refused the host approved once for 1" ||
	    fail "$MODE: sandbox 2 reached it: $(cat "$W/two.code")"
	grep -q "^127.0.0.1:$gport via " "$W/two.blocked" &&
	    ! grep -q ":$xport" "$W/two.blocked" &&
	    ok "$MODE: sandbox 2's blocked list is its own" ||
	    fail "$MODE: sandbox 2 blocked: $(cat "$W/two.blocked")"
	! grep -q "$id\|:$gport" "$W/two.allowed" &&
	    ok "$MODE: sandbox 2 is not shown sandbox 1's approval" ||
	    fail "$MODE: sandbox 2 allowed: $(cat "$W/two.allowed")"
	grep -q ' 404$' "$W/two.none" &&
	    cmp -s "$W/two.theirs" "$W/two.none" &&
	    ok "$MODE: sandbox 1's request id reads as one that does not exist" ||
	    fail "$MODE: by id: $(cat "$W/two.theirs") / $(cat "$W/two.none")"
	grep -q "rc [1-9]" "$W/two.status" && ! grep -q "approved" "$W/two.status" &&
	    ok "$MODE: pinhole request --status: no such request" ||
	    fail "$MODE: status: $(cat "$W/two.status")"

	# Sandbox 1 uses its grant once.
	touch "$W/one.go"
	wait_file "$W/one.codes"
	[ "$(cat "$W/one.codes")" = "200 403" ] &&
	    ok "$MODE: sandbox 1 connects once, then is refused again" ||
	    fail "$MODE: sandbox 1: $(cat "$W/one.codes")"
	grep -q "^127.0.0.1:$xport via " "$W/one.blocked" &&
	    ok "$MODE: sandbox 1's blocked list has its own" ||
	    fail "$MODE: sandbox 1 blocked: $(cat "$W/one.blocked")"
	as_mode "$T/pinhole" pending --json >"$W/pending"
	grep '"kind":"blocked"' "$W/pending" >"$W/blocked"
	grep ":$xport," "$W/blocked" | grep -q '"sandbox":"1"' &&
	    grep ":$gport," "$W/blocked" | grep -q '"sandbox":"2"' &&
	    as_mode "$T/pinhole" pending |
	    grep -q "127.0.0.1:$xport via .*(session s, sandbox 1)$" &&
	    ok "$MODE: the person sees every sandbox's, named" ||
	    fail "$MODE: pending: $(cat "$W/pending")"
	touch "$W/one.end"
	wait "$one" || fail "$MODE: sandbox 1 exited $?: $(cat "$W/one.out")"
	as_mode "$T/pinhole" session stop s >/dev/null 2>&1 ||
	    fail "$MODE: stop"

	# Ask mode: both held for one request; once is for the first.
	as_mode "$T/pinhole" session start a --ask=60 --resolver 127.0.0.1:9 \
	    --allow 'allow-private 127.0.0.0/8' >/dev/null 2>"$T/err" ||
	    fail "$MODE: start a: $(cat "$T/err")"
	for n in 1 2; do
		as_mode "$T/pinhole" run --session a -- sh -c \
		    "$CURL -m 90 http://127.0.0.1:$gport/ >$W/held$n.tmp; mv $W/held$n.tmp $W/held$n" \
		    >/dev/null 2>&1 &
		eval "held$n=\$!"
		[ $n = 1 ] && id=$(wait_pending 127.0.0.1 as_mode "$T/pinhole")
	done
	i=0
	while ! as_mode "$T/pinhole" pending -s a --json |
	    grep -q '"sandboxes":"1 2"' && [ $i -lt 100 ]; do
		sleep 0.1; i=$((i + 1))
	done
	as_mode "$T/pinhole" approve --once "$id" >/dev/null 2>"$T/err" ||
	    fail "$MODE: approve held: $(cat "$T/err")"
	wait "$held1"
	id2=$(wait_pending 127.0.0.1 as_mode "$T/pinhole")
	[ "$(cat "$W/held1")" = 200 ] && [ ! -e "$W/held2" ] &&
	    [ -n "$id2" ] && [ "$id2" != "$id" ] &&
	    as_mode "$T/pinhole" pending -s a --json | grep "$id2" |
	    grep -q '"sandbox":"2"' &&
	    ok "$MODE: ask: once lets sandbox 1 through; 2 waits on its own request" ||
	    fail "$MODE: ask: $(cat "$W/held1" "$W/held2" 2>&1) '$id' '$id2'"
	as_mode "$T/pinhole" approve --once "$id2" >/dev/null 2>"$T/err" ||
	    fail "$MODE: approve $id2: $(cat "$T/err")"
	wait "$held2"
	[ "$(cat "$W/held2")" = 200 ] &&
	    ok "$MODE: ask: approving that one lets sandbox 2 through" ||
	    fail "$MODE: ask: sandbox 2: $(cat "$W/held2" 2>&1)"
	as_mode "$T/pinhole" session stop a >/dev/null 2>&1 ||
	    fail "$MODE: stop a"
done
finish
