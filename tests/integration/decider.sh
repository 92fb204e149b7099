#!/bin/sh
# The decider (--decider) end to end, as root and as nobody: a real
# decider (tests/integration/decider.py) on loopback TCP and on a unix
# socket answers allow once, for the session, always with a ttl, deny
# with a note, and ask (then a person approves); one too slow, one
# malformed, one a 500, one too big, one with a member that does not
# belong, and one not there at all are all denied.  A deny rule and a
# private address are never put to it, and its allow does not open a name
# that resolves to a private address; the agent's reason is put to it.  The audit
# lines name the decider and the approver, and `pinhole log --summary`
# counts decisions by approver.  The two deciders of contrib/decider/
# answer too: the list from its file, the chat one through a webhook
# whose "person" posts the answer back.
. "$top_srcdir/tests/integration/lib.sh"

need root dnsmasq curl setpriv
cp "$PINHOLE" "$T/pinhole" && chmod 755 "$T/pinhole"
cp "$top_srcdir/tests/integration/decider.py" "$T/decider.py"
chmod 644 "$T/decider.py"
mkdir -m 1777 "$T/w"
# private.test resolves to an address the private-address guard refuses.
start_origin --address=/private.test/10.255.0.1 || { finish; exit 1; }
ASK=5
for f in decider-list.py decider-chat.py; do
	cp "$top_srcdir/contrib/decider/$f" "$T/$f" && chmod 755 "$T/$f"
done

# A chat channel's incoming webhook (tests/integration/chat-webhook.py).
cp "$top_srcdir/tests/integration/chat-webhook.py" "$T/webhook.py"

# pinhole as the mode's user, against gateway $G's control directory.
P() {
	if [ "$MODE" = nobody ]; then
		set -- setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"
	fi
	env HOME="$W" XDG_RUNTIME_DIR="$W/xdg$G" "$@"
}

# Start gateway $1 (a proxy of its own, its own queue and control
# directory) asking decider $2; its port is $PORT_$1.
gateway() {
	mkdir -p "$W/xdg$1" && chmod 700 "$W/xdg$1"
	[ "$MODE" = nobody ] && chown nobody:nogroup "$W/xdg$1"
	port=$(free_port)
	G=$1 bgp "$T/pinhole" proxy --listen "127.0.0.1:$port" \
	    --policy "$W/policy$1" --resolver "127.0.0.1:$DNSP" \
	    --log "$W/audit.log" --ask=$ASK --decider "$2" 2>"$W/proxy$1.err"
	eval "PORT_$1=$port"
	wait_port "$port"
}
bgp() {
	if [ "$MODE" = nobody ]; then
		set -- setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"
	fi
	bg env HOME="$W" XDG_RUNTIME_DIR="$W/xdg$G" "$@"
}

# GET $2 through gateway $1; the body goes to $W/body, headers to $W/head.
get() {
	eval "port=\$PORT_$1"
	curl -s -o "$W/body" -D "$W/head" -w '%{http_code}' -m 20 \
	    -x "http://127.0.0.1:$port" "$2"
}

# How many questions the decider got about host $1.
asked() {
	grep -c "\"host\":\"$1\"" "$W/questions" 2>/dev/null || true
}

check() {
	if [ "$2" = "$3" ]; then ok "$MODE: $1"; else fail "$MODE: $1: got '$2', want '$3'"; fi
}

for MODE in root nobody; do
	W=$T/w/$MODE
	mkdir -p "$W"
	for g in A B C D E F H; do
		printf 'allow-private 127.0.0.0/8\ndeny denied.test\n' >"$W/policy$g"
	done
	: >"$W/questions"
	chmod 666 "$W/questions"
	[ "$MODE" = nobody ] && chown -R nobody:nogroup "$W"
	bg python3 "$T/decider.py" "$W/dport" "$W/decider.sock" \
	    "$W/questions" 2>"$W/decider.err"
	wait_file "$W/dport" || fail "$MODE: the decider did not start"
	DP=$(cat "$W/dport")
	DURL=http://127.0.0.1:$DP/decide
	dead=$(free_port)
	gateway A "$DURL"
	gateway B "$DURL"
	gateway C "unix:$W/decider.sock"
	gateway D "http://127.0.0.1:$dead/"
	gateway H "$DURL"
	L=$W/audit.log

	# Allow once: the next connection is asked about again.
	check "allow once: through" "$(get A "http://once.test:$HP/hello.txt")" 200
	check "... the page arrives" "$(cat "$W/body")" "hello from origin"
	check "allow once: the next is asked again" \
	    "$(get A "http://once.test:$HP/hello.txt")" 200
	check "... two questions" "$(asked once.test)" 2
	loggrep "$L" "\"event\":\"grant\".*\"host\":\"once.test\".*\"scope\":\"once\",\"by\":\"alice@example via decider\",\"decider\":\"$DURL\"" &&
	    ok "$MODE: audit: the grant names the approver and the decider" ||
	    fail "$MODE: audit once: $(grep once.test "$L" | head -3)"
	grep '/decide ' "$W/questions" | head -1 | grep -q "\"via\":\"forward\".*\"timeout\":$((ASK - 1))" &&
	    ok "$MODE: the question is POSTed to the URL's path with via and timeout" ||
	    fail "$MODE: question: $(head -1 "$W/questions")"
	grep -q '"host":"once.test","port":'"$HP"',"via":"forward","method":"GET","path":"/hello.txt","refused":"' "$W/questions" &&
	    ok "$MODE: the question has the method, the path and why it was refused" ||
	    fail "$MODE: question: $(head -1 "$W/questions")"

	# Allow for the session: asked once.
	check "allow session: through" "$(get A "http://session.test:$HP/hello.txt")" 200
	check "allow session: again, without asking" \
	    "$(get A "http://session.test:$HP/hello.txt")" 200
	check "... one question" "$(asked session.test)" 1

	# Allow always with a ttl: written into the policy with its end.
	check "allow always: through" "$(get A "http://always.test:$HP/hello.txt")" 200
	grep -qx "allow always.test:$HP until 20[0-9-]*T[0-9:]*Z" "$W/policyA" &&
	    ok "$MODE: always with a ttl is written into the policy" ||
	    fail "$MODE: policy: $(cat "$W/policyA")"
	loggrep "$L" '"event":"grant".*"host":"always.test".*"scope":"always","ttl":3600,"by":"carol via decider"' &&
	    ok "$MODE: audit: always, its ttl and its approver" ||
	    fail "$MODE: audit always"

	# Deny with a note: it reaches the agent.
	check "deny: refused" "$(get A "http://note.test:$HP/hello.txt")" 403
	grep -q "denied by dave via decider: use the mirror at pkg.test" "$W/body" &&
	    ok "$MODE: the note reaches the agent" ||
	    fail "$MODE: note: $(cat "$W/body")"
	loggrep "$L" '"event":"deny","verdict":"deny","reason":"use the mirror at pkg.test".*"by":"dave via decider","decider":"' &&
	    ok "$MODE: audit: the denial, its note and approver" ||
	    fail "$MODE: audit note"

	# A deny rule and a private address are never asked about.
	check "a deny rule refuses at once" \
	    "$(get A "http://denied.test:$HP/hello.txt")" 403
	check "a private address is refused at once" \
	    "$(get A "http://10.255.0.1:$HP/")" 403
	check "... neither is put to the decider" \
	    "$(asked denied.test)$(asked 10.255.0.1)" 00

	# A session grant with a ttl of 2 s: it ends, and the next attempt
	# is asked about again.
	check "allow for 2 s: through" "$(get H "http://ttl.test:$HP/hello.txt")" 200
	check "... again at once, without asking" \
	    "$(get H "http://ttl.test:$HP/hello.txt")" 200
	check "... one question" "$(asked ttl.test)" 1
	sleep 3
	check "after the ttl: through again" \
	    "$(get H "http://ttl.test:$HP/hello.txt")" 200
	check "... asked again" "$(asked ttl.test)" 2
	loggrep "$L" '"event":"grant".*"host":"ttl.test".*"scope":"session","ttl":2,"by":"frank via decider"' &&
	    loggrep "$L" '"event":"expire".*"reason":"ttl".*"host":"ttl.test"' &&
	    ok "$MODE: audit: the grant's ttl, and its end" ||
	    fail "$MODE: audit ttl: $(grep ttl.test "$L" | head -4)"

	# The decider allows a name that resolves to a private address: the
	# guard still refuses it.
	check "a private address behind an allowed name: refused" \
	    "$(get H "http://once.private.test:$HP/hello.txt")" 403
	grep -qi '^Pinhole-Error: private-address' "$W/head" &&
	    ok "$MODE: ... by the private-address guard" ||
	    fail "$MODE: private guard: $(cat "$W/head")"
	loggrep "$L" '"verdict":"deny","reason":"private-address".*"host":"once.private.test"' &&
	    ok "$MODE: audit: the guard's refusal after the decider's allow" ||
	    fail "$MODE: audit private: $(grep once.private.test "$L" | tail -2)"

	# Ask: the person approves with pinhole approve.
	get B "http://ask.test:$HP/hello.txt" >"$W/ask.code" &
	held=$!
	id=$(G=B wait_pending ask.test P "$T/pinhole") &&
	    G=B P "$T/pinhole" approve --once "$id" >/dev/null ||
	    fail "$MODE: ask: no pending request to approve"
	wait $held
	check "ask: held, then approved by the person" "$(cat "$W/ask.code")" 200
	loggrep "$L" "\"event\":\"grant\".*\"request_id\":\"$id\".*\"by\":\"uid [0-9]+ via cli\"" &&
	    ok "$MODE: audit: the person's grant names the person" ||
	    fail "$MODE: audit ask"
	grep "\"request_id\":\"$id\"" "$L" | grep -q '"decider"' &&
	    fail "$MODE: the person's grant names a decider" ||
	    ok "$MODE: the person's grant names no decider"

	# Too slow, malformed, a 500: each denied, and why is logged.
	check "slow: denied" "$(get B "http://slow.test:$HP/hello.txt")" 403
	grep -q "denied by decider: no answer in $((ASK - 1)) s" "$W/body" &&
	    ok "$MODE: the agent is told the decider did not answer" ||
	    fail "$MODE: slow: $(cat "$W/body")"
	check "malformed: denied" "$(get B "http://malformed.test:$HP/hello.txt")" 403
	check "500: denied" "$(get B "http://error.test:$HP/hello.txt")" 403
	loggrep "$L" '"event":"deny".*"reason":"no answer in '$((ASK - 1))' s".*"host":"slow.test".*"by":"decider"' &&
	    ok "$MODE: audit: no answer in time" || fail "$MODE: audit slow"
	loggrep "$L" '"event":"deny".*"reason":"a malformed answer: .*"host":"malformed.test"' &&
	    ok "$MODE: audit: a malformed answer" || fail "$MODE: audit malformed"
	loggrep "$L" '"event":"deny".*"reason":"status 500".*"host":"error.test"' &&
	    ok "$MODE: audit: status 500" || fail "$MODE: audit 500"

	# On the unix socket: allow, a huge answer, a member too many, and
	# the agent's own request with its reason.
	check "unix socket: allow once" "$(get C "http://unix.test:$HP/hello.txt")" 200
	loggrep "$L" "\"host\":\"unix.test\".*\"by\":\"erin via decider\",\"decider\":\"unix:$W/decider.sock\"" &&
	    ok "$MODE: audit: the unix decider and its approver" ||
	    fail "$MODE: audit unix"
	check "huge answer: denied" "$(get C "http://huge.test:$HP/hello.txt")" 403
	loggrep "$L" '"event":"deny".*"reason":"an answer of 100[0-9]* bytes, more than 8192".*"host":"huge.test"' &&
	    ok "$MODE: audit: an answer too big" || fail "$MODE: audit huge"
	check "a member that does not belong: denied" \
	    "$(get C "http://extra.test:$HP/hello.txt")" 403
	G=C P env PINHOLE_AGENT="http://127.0.0.1:$PORT_C" "$T/pinhole" \
	    request "reason.test:$HP" --reason "to read the docs" --wait=15 \
	    >"$W/req.out" 2>&1
	check "the agent's request: denied by the decider" $? 1
	grep '"host":"reason.test"' "$W/questions" | grep -q '"request":"r[0-9a-f]*".*"reason":"to read the docs"' &&
	    ok "$MODE: the question carries the request id and the agent's reason" ||
	    fail "$MODE: reason: $(grep reason.test "$W/questions")"

	# No decider listening: denied, and why.
	check "no decider: denied" "$(get D "http://dead.test:$HP/hello.txt")" 403
	loggrep "$L" '"event":"deny".*"reason":"connection: .*"host":"dead.test".*"by":"decider","decider":"http://127.0.0.1:'$dead'/"' &&
	    ok "$MODE: audit: the decider could not be reached" ||
	    fail "$MODE: audit dead: $(grep dead.test "$L" | tail -2)"

	# contrib/decider/decider-list.py on a unix socket.
	printf 'approver ops-list\nallow listok.test session\ndeny list*.test no lists here\n' \
	    >"$W/list.rules"
	bg python3 "$T/decider-list.py" "$W/list.rules" "$W/list.sock" \
	    2>"$W/list.err"
	i=0
	while [ ! -S "$W/list.sock" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	chmod 666 "$W/list.sock"
	gateway E "unix:$W/list.sock"
	check "decider-list.py: allowed by its file" \
	    "$(get E "http://listok.test:$HP/hello.txt")" 200
	check "decider-list.py: denied by its file" \
	    "$(get E "http://listno.test:$HP/hello.txt")" 403
	grep -q "denied by ops-list via decider: no lists here" "$W/body" &&
	    ok "$MODE: decider-list.py's note reaches the agent" ||
	    fail "$MODE: decider-list.py: $(cat "$W/body")"

	# contrib/decider/decider-chat.py, asking through the webhook.
	cport=$(free_port)
	bg python3 "$T/webhook.py" "$W/chat" "http://127.0.0.1:$cport/answer" \
	    chat-secret
	wait_file "$W/chat.port" || fail "$MODE: no webhook"
	bg env DECIDER_TOKEN=chat-secret python3 "$T/decider-chat.py" \
	    "127.0.0.1:$cport" "http://127.0.0.1:$(cat "$W/chat.port")/hook"
	wait_port "$cport"
	gateway F "http://127.0.0.1:$cport/decide"
	check "decider-chat.py: allowed in the chat" \
	    "$(get F "http://chatok.test:$HP/hello.txt")" 200
	check "decider-chat.py: denied in the chat" \
	    "$(get F "http://chatno.test:$HP/hello.txt")" 403
	grep -q "asks for chatok.test:$HP (GET /hello.txt)" "$W/chat" &&
	    ok "$MODE: the question was posted to the channel" ||
	    fail "$MODE: chat: $(cat "$W/chat" 2>&1)"
	code=$(curl -s -o /dev/null -w '%{http_code}' -m 5 -d '{"request":"r0000"}' \
	    -H 'Authorization: Bearer wrong' "http://127.0.0.1:$cport/answer")
	check "decider-chat.py refuses an answer without the token" "$code" 403

	# pinhole run, the decider named by its socket's path alone: the
	# sandboxed command's stderr carries the note.
	mkdir -p "$W/xdgR" "$W/rcfg" "$W/rlog" && chmod 700 "$W/xdgR"
	printf 'allow-private 127.0.0.0/8\n' >"$W/rcfg/policy"
	[ "$MODE" = nobody ] && chown -R nobody:nogroup "$W/xdgR" "$W/rcfg" "$W/rlog"
	G=R P "$T/pinhole" run --policy "$W/rcfg/policy" --resolver "127.0.0.1:$DNSP" \
	    --log "$W/rlog/audit.log" --decider "$W/decider.sock" -- \
	    curl -s -o /dev/null -w '%{http_code}\n' -m 20 \
	    "http://note.test:$HP/hello.txt" >"$W/run.out" 2>"$W/run.err"
	check "run --decider: denied in the sandbox" "$(cat "$W/run.out")" 403
	grep -q "denied note.test:$HP (by dave via decider): use the mirror at pkg.test" "$W/run.err" &&
	    ok "$MODE: run --decider: the note is on the command's stderr" ||
	    fail "$MODE: run stderr: $(cat "$W/run.err")"

	"$T/pinhole" log --summary "$L" "$W/rlog/audit.log" >"$W/summary" 2>&1
	sed -n '/by approver/,/^$/p' "$W/summary" >"$W/by"
	grep -Eq '^ +4 +1  alice@example via decider$' "$W/by" &&
	    grep -Eq '^ +2 +0  frank via decider$' "$W/by" &&
	    grep -Eq '^ +0 +2  dave via decider$' "$W/by" &&
	    grep -Eq '^ +1 +0  uid [0-9]+ via cli$' "$W/by" &&
	    grep -Eq '^ +0 +[67]  decider$' "$W/by" &&
	    ok "$MODE: log --summary counts decisions by approver" ||
	    fail "$MODE: summary: $(cat "$W/by")"
	loggrep "$L" '"verdict":"allow".*"rule":"grant r' &&
	    ok "$MODE: connections name the grant they went through on" ||
	    fail "$MODE: no connection on a grant"
done
finish
