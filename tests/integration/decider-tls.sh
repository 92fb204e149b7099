#!/bin/sh
# The decider over TLS (--decider https://NAME:PORT/PATH), as root and as
# nobody: a decider on loopback with a CA of its own that wants a client
# certificate (tests/integration/decider-tls.py), found by name through
# the host's resolver (a hosts file of the test's own, in a mount
# namespace of its own).  It answers allow, deny and ask; its questions
# come on one kept connection, at most --decider-max at once; a server
# certificate of another CA is refused, logged and the attempt denied;
# without a client certificate the decider refuses, and the attempt is
# denied; so it is when nothing listens.
. "$top_srcdir/tests/integration/lib.sh"

PY=/usr/bin/python3
need root curl openssl setpriv unshare $PY
export ASAN_OPTIONS=detect_leaks=0
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY no_proxy NO_PROXY ALL_PROXY
cp "$PINHOLE" "$T/pinhole" && chmod 755 "$T/pinhole"
cp "$top_srcdir/tests/integration/decider-tls.py" "$T/decider-tls.py"
mkdir -m 1777 "$T/w"
start_origin || { finish; exit 1; }
ASK=8

# The decider's CA and certificate (for decider.test), a client
# certificate of the same CA, and a second CA that signed neither.
make_certs decider.test
EC="-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes"
openssl req $EC -keyout "$T/client.key" -out "$T/client.csr" \
    -subj /CN=pinhole-fleet-host 2>/dev/null &&
    openssl x509 -req -in "$T/client.csr" -CA "$T/ca.pem" \
    -CAkey "$T/ca.key" -CAcreateserial -out "$T/client.pem" -days 1 \
    2>/dev/null &&
    openssl req -x509 $EC -keyout "$T/other-ca.key" -out "$T/other-ca.pem" \
    -days 1 -subj /CN=another-ca 2>/dev/null ||
    fail "cannot make the certificates"
chmod 644 "$T"/*.pem "$T"/*.key
printf '127.0.0.1 localhost\n127.0.0.1 decider.test\n' >"$T/hosts"
chmod 644 "$T/hosts"
cp "$top_srcdir/contrib/decider/decider-chat.py" "$T/decider-chat.py"

# A chat channel's incoming webhook, answering the chat decider over
# HTTPS (tests/integration/chat-webhook.py).
cp "$top_srcdir/tests/integration/chat-webhook.py" "$T/webhook.py"

# pinhole proxy as the mode's user, in a mount namespace where
# /etc/hosts names the decider; its port is $PORT_$1.
gateway() {
	g=$1; shift
	port=$(free_port)
	as=
	[ "$MODE" = nobody ] && as="setpriv --reuid=nobody --regid=nogroup --clear-groups"
	bg unshare -m --propagation private sh -c 'mount --bind "$1" /etc/hosts &&
	    shift && exec "$@"' sh "$T/hosts" env HOME="$W" \
	    XDG_RUNTIME_DIR="$W/xdg$g" $as "$T/pinhole" proxy \
	    --listen "127.0.0.1:$port" --allow 'allow-private 127.0.0.0/8' \
	    --resolver "127.0.0.1:$DNSP" --log "$W/audit.log" --ask=$ASK "$@" \
	    2>"$W/proxy$g.err"
	eval "PORT_$g=$port"
	wait_port "$port"
}
get() {
	eval "port=\$PORT_$1"
	curl -s -o "$W/body" -w '%{http_code}' -m 20 \
	    -x "http://127.0.0.1:$port" "$2"
}
check() {
	if [ "$2" = "$3" ]; then ok "$MODE: $1"; else fail "$MODE: $1: got '$2', want '$3'"; fi
}
asked() {
	grep -c "\"host\":\"$1\"" "$W/questions" 2>/dev/null || true
}

for MODE in root nobody; do
	W=$T/w/$MODE
	mkdir -p "$W"
	for g in A B C D E F G; do mkdir -m 700 "$W/xdg$g"; done
	: >"$W/questions"
	chmod 666 "$W/questions"
	[ "$MODE" = nobody ] && chown -R nobody:nogroup "$W"
	bg $PY "$T/decider-tls.py" "$W/dport" "$T/leaf.pem" "$T/leaf.key" \
	    "$T/ca.pem" "$W/questions" 2>"$W/decider.err"
	wait_file "$W/dport" || fail "$MODE: the decider did not start"
	DP=$(cat "$W/dport")
	URL=https://decider.test:$DP/decide
	TLS="--decider-ca $T/ca.pem --decider-cert $T/client.pem --decider-key $T/client.key"
	L=$W/audit.log

	gateway A --decider "$URL" $TLS
	gateway E --decider "$URL" $TLS
	gateway F --decider "$URL" $TLS --decider-max 2
	gateway B --decider "$URL" --decider-ca "$T/other-ca.pem" \
	    --decider-cert "$T/client.pem" --decider-key "$T/client.key"
	gateway C --decider "$URL" --decider-ca "$T/ca.pem"
	gateway D --decider "https://decider.test:$(free_port)/" \
	    --decider-ca "$T/ca.pem"

	# Allow, deny, ask.
	check "allow: through" "$(get A "http://allow1.test:$HP/hello.txt")" 200
	check "... the page arrives" "$(cat "$W/body")" "hello from origin"
	check "deny: refused" "$(get A "http://deny.test:$HP/hello.txt")" 403
	grep -q "denied by tls-ops via decider: not from this fleet" "$W/body" &&
	    ok "$MODE: deny: its note reaches the agent" ||
	    fail "$MODE: deny: $(cat "$W/body")"
	get A "http://ask.test:$HP/hello.txt" >"$W/ask.code" &
	held=$!
	id=$(wait_pending ask.test as_mode env XDG_RUNTIME_DIR="$W/xdgA" \
	    "$T/pinhole") && as_mode env XDG_RUNTIME_DIR="$W/xdgA" \
	    "$T/pinhole" approve --once "$id" >/dev/null ||
	    fail "$MODE: ask: no pending request to approve"
	wait $held
	check "ask: left to the person, who approves" "$(cat "$W/ask.code")" 200
	loggrep "$L" "\"event\":\"grant\".*\"host\":\"allow1.test\".*\"by\":\"tls-ops via decider\",\"decider\":\"$URL\"" &&
	    loggrep "$L" "\"event\":\"deny\".*\"reason\":\"not from this fleet\".*\"host\":\"deny.test\".*\"decider\":\"$URL\"" &&
	    ok "$MODE: audit: the https decider's grant and denial" ||
	    fail "$MODE: audit: $(grep 'allow1.test\|deny.test' "$L" | tail -3)"
	grep -q "^pinhole-fleet-host " "$W/questions" &&
	    ! grep -v "^pinhole-fleet-host " "$W/questions" | grep -q . &&
	    ok "$MODE: every question came with the client certificate" ||
	    fail "$MODE: questions: $(cat "$W/questions")"

	# Kept connections: questions one after another (gateway E; each
	# gateway takes 5 requests a minute) on the connection the first
	# opened.
	for n in 2 3 4; do
		check "allow $n: through" \
		    "$(get E "http://allow$n.test:$HP/hello.txt")" 200
	done
	conns=$(grep '"host":"allow[234]' "$W/questions" | cut -d' ' -f2 |
	    sort -u | wc -l)
	check "three questions on one connection" "$conns" 1

	# At most 2 out at once: four slow questions together.
	for n in 1 2 3 4; do
		get F "http://slow$n.test:$HP/hello.txt" >"$W/slow$n.code" &
		eval "slow$n=\$!"
	done
	for n in 1 2 3 4; do eval "wait \$slow$n"; done
	check "four slow questions: all allowed" \
	    "$(cat "$W"/slow[1-4].code | tr -d '\n')" 200200200200
	most=$(grep '"host":"slow' "$W/questions" | cut -d' ' -f3 | sort -n | tail -1)
	[ "${most:-9}" -le 2 ] && [ "$(asked 'slow[1-4].test')" = 4 ] &&
	    ok "$MODE: at most 2 questions out at once (--decider-max 2)" ||
	    fail "$MODE: in flight: $(grep slow "$W/questions" | cut -d' ' -f1-3)"

	# A server certificate of another CA: refused, logged, denied.
	check "wrong server certificate: denied" \
	    "$(get B "http://wrongca.test:$HP/hello.txt")" 403
	loggrep "$L" '"event":"deny".*"reason":"TLS: the decider.s certificate: .*"host":"wrongca.test".*"by":"decider"' &&
	    grep -q "decider $URL: request r[0-9a-f]* denied: TLS: the decider's certificate" "$W/proxyB.err" &&
	    ok "$MODE: the certificate is refused, logged, the attempt denied" ||
	    fail "$MODE: wrong CA: $(grep wrongca "$L" | tail -1) $(cat "$W/proxyB.err")"
	check "... no question got through" "$(asked wrongca.test)" 0

	# No client certificate: the decider refuses the connection.
	check "no client certificate: denied" \
	    "$(get C "http://nocert.test:$HP/hello.txt")" 403
	loggrep "$L" '"event":"deny".*"reason":"(TLS|connection): .*"host":"nocert.test".*"by":"decider"' &&
	    ok "$MODE: the decider's refusal is logged, the attempt denied" ||
	    fail "$MODE: no client cert: $(grep nocert "$L" | tail -1)"
	check "... it asked nothing" "$(asked nocert.test)" 0

	# The chat decider of contrib/decider/ over HTTPS, as deploy.md has
	# it: a client certificate of the fleet's CA for questions, the
	# token for answers.
	CP=$(free_port)
	bg $PY "$T/webhook.py" "$W/chat" "https://127.0.0.1:$CP/answer" \
	    tok "$T/ca.pem" 2>"$W/webhook.err"
	wait_file "$W/chat.port" || fail "$MODE: the webhook did not start"
	bg env DECIDER_TOKEN=tok DECIDER_TLS_CERT="$T/leaf.pem" \
	    DECIDER_TLS_KEY="$T/leaf.key" DECIDER_CLIENT_CA="$T/ca.pem" \
	    $PY "$T/decider-chat.py" "127.0.0.1:$CP" \
	    "http://127.0.0.1:$(cat "$W/chat.port")/" 2>"$W/chat.err"
	wait_port "$CP"
	gateway G --decider "https://decider.test:$CP/decide" $TLS
	check "decider-chat.py over HTTPS: allowed in the channel" \
	    "$(get G "http://chatok.test:$HP/hello.txt")" 200
	grep -q "asks for chatok.test:$HP" "$W/chat" &&
	    ok "$MODE: the channel got the question" ||
	    fail "$MODE: chat: $(cat "$W/chat" "$W/chat.err" "$W/webhook.err")"

	# Nothing listens.
	check "decider down: denied" "$(get D "http://down.test:$HP/hello.txt")" 403
	loggrep "$L" '"event":"deny".*"reason":"connection: .*"host":"down.test"' &&
	    ok "$MODE: audit: the decider could not be reached" ||
	    fail "$MODE: down: $(grep down.test "$L" | tail -1)"
done

# A name the host's resolver does not know: the gateway does not start.
"$T/pinhole" proxy --listen "127.0.0.1:$(free_port)" --log "$T/x.log" \
    --decider https://nowhere.invalid/ >/dev/null 2>"$T/err"
[ $? != 0 ] && grep -q "https://nowhere.invalid/" "$T/err" &&
    ok "a decider's name that does not resolve stops the start" ||
    fail "nowhere.invalid: $(cat "$T/err")"
finish
