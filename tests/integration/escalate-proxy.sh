#!/bin/sh
# Escalation through `pinhole proxy`: the agent endpoint on the proxy's
# own port, a blocked host approved with `pinhole approve` then reached
# through the proxy, a once grant used up, ask mode holding a connection
# until the person answers, and the audit lines of it all.
. "$top_srcdir/tests/integration/lib.sh"

need curl
XDG_RUNTIME_DIR="$T/xdg"
export XDG_RUNTIME_DIR
mkdir -m 700 "$XDG_RUNTIME_DIR"

oport=$(free_port)
bg python3 -m http.server "$oport" --bind 127.0.0.1 --directory "$T" \
    >/dev/null 2>&1
pport=$(free_port)
AUDIT="$T/audit.log"
bg "$PINHOLE" proxy --listen "127.0.0.1:$pport" --log "$AUDIT" --ask \
    --allow 'allow-private 127.0.0.0/8' 2>"$T/proxy.err"
wait_port "$oport" && wait_port "$pport" || { finish; exit 1; }
PINHOLE_AGENT="http://127.0.0.1:$pport"
export PINHOLE_AGENT
ORIGIN="http://127.0.0.1:$oport/"

get() {
	curl -s -o /dev/null -w '%{http_code}' -m "${2:-5}" \
	    -x "http://127.0.0.1:$pport" "$1"
}

# The agent endpoint answers on the proxy port; nothing is allowed yet.
curl -s "$PINHOLE_AGENT/pinhole" | grep -q "agent endpoint" &&
    ok "the agent endpoint answers on the proxy port" ||
    fail "no agent endpoint"
code=$(get "$ORIGIN" 2)
[ "$code" = 000 ] && ok "ask mode holds a blocked connection" ||
    fail "held connection: $code"

# The held attempt filed a request; approve it once while a second
# connection is held: it goes through, and the grant is used up.
id=$(wait_pending 127.0.0.1 "$PINHOLE")
[ -n "$id" ] && ok "the held connection filed $id" || fail "no request filed"
# Approve once the second attempt is held (the request counts it).
(i=0
 while ! "$PINHOLE" pending --json | grep -q "\"id\":\"$id\".*\"count\":2" &&
     [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
 "$PINHOLE" approve --once "$id" >/dev/null 2>&1) &
helper=$!
code=$(get "$ORIGIN" 10)
wait "$helper"
[ "$code" = 200 ] && ok "approved once: the held connection goes through" ||
    fail "held then approved: $code"
loggrep "$AUDIT" "\"rule\":\"grant $id\"" && ok "audit names the grant" ||
    fail "no grant rule in the audit"

# The once grant is used up: the next connection is held again; deny it.
(i=$(wait_pending 127.0.0.1 "$PINHOLE") && "$PINHOLE" deny --reason "enough" "$i" \
    >/dev/null 2>&1) &
helper=$!
code=$(get "$ORIGIN" 10)
wait "$helper"
[ "$code" = 403 ] && ok "denied: the held connection gets 403" ||
    fail "held then denied: $code"

# The agent asks with pinhole request --wait; approved for the session,
# every later connection goes through.
(i=$(wait_pending 127.0.0.1 "$PINHOLE") && "$PINHOLE" approve --session "$i" \
    >/dev/null 2>&1) &
helper=$!
"$PINHOLE" request "127.0.0.1:$oport" --reason "the test origin" \
    --wait=15 >"$T/req.out"
rc=$?
wait "$helper"
[ $rc = 0 ] && ok "pinhole request --wait: approved" ||
    fail "request --wait: rc $rc $(cat "$T/req.out")"
[ "$(get "$ORIGIN")" = 200 ] && [ "$(get "$ORIGIN")" = 200 ] &&
    ok "a session grant lets every connection through" ||
    fail "session grant"
curl -s "$PINHOLE_AGENT/pinhole/allowed" | grep -q "127.0.0.1:$oport session" &&
    ok "/pinhole/allowed lists the session grant" || fail "allowed"
"$PINHOLE" request "127.0.0.1:$oport" | grep -q "allowed already" &&
    ok "asking again: allowed already" || fail "allowed already"

# Blocked attempts are listed with the command to ask.
curl -s "$PINHOLE_AGENT/pinhole/blocked" |
    grep -q "127.0.0.1:$oport via forward.*pinhole request 127.0.0.1:$oport" &&
    ok "/pinhole/blocked lists the attempts" || fail "blocked"

loggrep "$AUDIT" '"event":"grant".*"scope":"once","by":"uid [0-9]+ via cli"' &&
    ok "audit: once grant" || fail "audit once grant"
loggrep "$AUDIT" '"event":"deny","verdict":"deny","reason":"enough"' &&
    ok "audit: deny" || fail "audit deny"
loggrep "$AUDIT" '"event":"grant".*"scope":"session"' &&
    ok "audit: session grant" || fail "audit session grant"
finish
