#!/bin/sh
# The real Claude Code (the version tests/package.json pins, installed
# with npm ci when missing), headless (`claude -p`), with pinhole-bash as
# its shell (CLAUDE_CODE_SHELL), playing an agent scripted by
# modelserver.py on loopback.  The whole story, as root and as nobody:
# a fetch is refused; the agent runs `pinhole request`; the person
# approves it once, for the session, naming the session by Claude Code's
# own id (a UUID); then main-agent calls and four parallel subagents'
# calls all reach the host without a question; another host is still
# refused; a command Claude Code's deny rule forbids is still refused by
# Claude Code, and an allowed one runs, as without pinhole; the
# SessionEnd hook stops the session; the log has an attach line naming
# each tool call, and verifies.  The test runs in a network namespace of
# its own: nothing leaves loopback.
# Missing tools skip a local run; in CI they fail it (77 and 1 alike
# after the namespace is made, where lib.sh's lack does the same).
NEED_IN_CI=fail
lack() {
	echo "${CI:+FAIL: }${CI:-SKIP: }$*" >&2
	[ "${CI:-}" = true ] && exit 1
	exit 77
}
mods="$top_builddir/tests/harness"
CLAUDE="$mods/node_modules/.bin/claude"
if [ -z "${PINHOLE_TEST_NETNS:-}" ]; then
	for t in curl python3 node npm unshare ip setpriv; do
		command -v $t >/dev/null 2>&1 || lack "$t is not installed"
	done
	# Install the pinned harness under the build directory, again
	# only when the lock file changed: the npm registry is the only
	# network the test uses, before it leaves the host's network.
	if ! cmp -s "$top_srcdir/tests/package-lock.json" \
	    "$mods/package-lock.json" || [ ! -x "$CLAUDE" ]; then
		mkdir -p "$mods"
		cp "$top_srcdir/tests/package.json" \
		    "$top_srcdir/tests/package-lock.json" "$mods/"
		. "$top_srcdir/tests/integration/npm.sh"
		npm_ci "$mods" >"$mods/npm.out" 2>&1 ||
		    lack "npm ci failed: $(tail -5 "$mods/npm.out")"
	fi
	chmod -R a+rX "$mods"
	PINHOLE_TEST_NETNS=1 exec unshare --net sh "$0" "$@"
fi
. "$top_srcdir/tests/integration/lib.sh"
here="$top_srcdir/tests/integration"
ip link set lo up || lack "cannot bring loopback up"
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY no_proxy NO_PROXY ALL_PROXY
"$CLAUDE" --version >"$T/version" 2>&1 || lack "claude: $(cat "$T/version")"
echo "harness: $(cat "$T/version")"

# The host the agent asks for, and another one.
mkdir "$T/www" && echo hello from origin >"$T/www/hello.txt"
chmod -R a+rX "$T/www"
OP=$(free_port)
OP2=$(free_port)
ip addr add 10.200.0.1/32 dev lo && ip addr add 10.200.0.2/32 dev lo ||
    lack "cannot add the origins' addresses"
bg python3 -m http.server "$OP" --bind 0.0.0.0 --directory "$T/www" \
    >/dev/null 2>&1
bg python3 -m http.server "$OP2" --bind 0.0.0.0 --directory "$T/www" \
    >/dev/null 2>&1
wait_port "$OP" && wait_port "$OP2" || { finish; exit 1; }

# What the model does: 1 + 1 + 4 subagents x 8 + 3 x 2 + 1 + 1 calls.
FETCH="curl -sS -o /dev/null -w %{http_code} -m 20"
script() {
	python3 - "$FETCH" "$OP" "$OP2" <<'PY'
import json, sys
fetch, op, op2 = sys.argv[1:4]
url = "http://10.200.0.1:%s/hello.txt" % op
agent = lambda n: {"tool": "Agent", "input": {"description": "fetch %d" % n,
    "prompt": "[sub] fetch the pages", "subagent_type": "general-purpose"}}
main = [fetch + " " + url + "?first",
        "pinhole request 10.200.0.1:%s --reason 'the agent needs it' --wait=90" % op,
        [agent(n) for n in range(4)]]
main += [[fetch + " " + url + "?main%d-%d" % (i, k) for k in range(2)]
         for i in range(3)]
main += [fetch + " http://10.200.0.2:%s/hello.txt?other" % op2,
         "touch made-by-the-agent"]
sub = [fetch + " " + url + "?sub%d" % i for i in range(8)]
print(json.dumps({"main": main, "sub": sub}))
PY
}
NCALLS=41	# Bash calls that run (the touch is refused by Claude Code)

# Claude Code's home: its settings, its first-run state, a project.
setup_home() {
	mkdir -p "$W/.claude" "$W/.config/pinhole" "$W/proj" \
	    "$W/bin" "$W/xdg"
	chmod 700 "$W/xdg"
	echo 'allow-private 10.200.0.0/24' >"$W/.config/pinhole/policy"
	printf '#!/bin/sh\nexec %s hook --exec -- "$@"\n' "$PINHOLE" \
	    >"$W/bin/pinhole-bash"
	chmod 755 "$W/bin/pinhole-bash"
	cat >"$W/.claude/settings.json" <<J
{ "env": { "CLAUDE_CODE_SHELL": "$W/bin/pinhole-bash" },
  "permissions": { "allow": [ "Bash(curl:*)", "Bash(pinhole request:*)" ],
                   "deny": [ "Bash(touch:*)" ] },
  "hooks": { "SessionEnd": [ { "hooks": [ { "type": "command",
      "command": "pinhole session stop \"\$CLAUDE_CODE_SESSION_ID\"" } ] } ] } }
J
	cat >"$W/.claude.json" <<J
{"hasCompletedOnboarding": true, "theme": "dark",
 "customApiKeyResponses": {"approved": ["sk-ant-test-000000000000000000"], "rejected": []},
 "projects": {"$W/proj": {"hasTrustDialogAccepted": true, "allowedTools": []}}}
J
	script >"$W/script.json"
	[ "$MODE" = nobody ] && chown -R nobody "$W"
}

# The person: wait for the agent's request, approve it for the session
# by the name pending gives; the name and the approval land in $W.
person() {
	i=0
	while [ $i -lt 900 ]; do
		as_mode "$PINHOLE" pending --json >"$W/pending" 2>&1
		grep -q '"id":"r' "$W/pending" && break
		sleep 0.1
		i=$((i + 1))
	done
	sid=$(sed -n 's/.*"session":"\([^"]*\)".*/\1/p' "$W/pending" | head -n 1)
	id=$(sed -n 's/.*"id":"\(r[0-9a-f]*\)".*/\1/p' "$W/pending" | head -n 1)
	echo "$sid" >"$W/sid"
	date +%s.%N >"$W/approved-at"
	as_mode "$PINHOLE" approve "$sid/$id" --session >"$W/approve" 2>&1
}

for MODE in root nobody; do
	W="$T/w/$MODE"
	setup_home
	MP=$(free_port)
	bg python3 "$here/modelserver.py" --port "$MP" --log "$W/requests" \
	    --results "$W/results" --script "$W/script.json" 2>/dev/null
	wait_port "$MP" || { fail "$MODE: no model server"; continue; }
	person &
	pp=$!
	(cd "$W/proj" && as_mode env -i PATH="$(dirname "$PINHOLE"):/usr/bin:/bin" \
	    HOME="$W" XDG_RUNTIME_DIR="$W/xdg" LANG=C.UTF-8 \
	    USER="$MODE" ANTHROPIC_BASE_URL="http://127.0.0.1:$MP" \
	    ANTHROPIC_API_KEY=sk-ant-test-000000000000000000 \
	    DISABLE_TELEMETRY=1 DISABLE_AUTOUPDATER=1 \
	    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 \
	    timeout 600 "$CLAUDE" -p "fetch the pages" --output-format \
	    stream-json --verbose --permission-mode default) \
	    >"$W/stream" 2>"$W/claude.err" </dev/null
	rc=$?
	kill "$pp" 2>/dev/null
	wait "$pp" 2>/dev/null
	[ $rc = 0 ] && grep '"type":"result"' "$W/stream" |
	    grep -q '"subtype":"success"' &&
	    ok "$MODE: claude -p ran the story to its end" ||
	    fail "$MODE: claude exit $rc: $(tail -c 600 "$W/stream") $(tail -5 "$W/claude.err")"
	python3 - "$W" "$OP" "$OP2" "$NCALLS" <<'PY' >"$W/verdicts" 2>&1
import json, sys
w, op, op2, ncalls = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
said = []
def say(ok, what):
    said.append(("ok: " if ok else "FAIL: ") + what)
# Each tool call's command and its result, from the model's requests
# (the main agent's and the subagents'); the session and the refusals
# Claude Code made, from its stream.
calls, results, sid, denials = {}, {}, None, []
for line in open(w + "/requests"):
    r = json.loads(line)
    for m in (r.get("body") or {}).get("messages") or []:
        if not isinstance(m.get("content"), list):
            continue
        for b in m["content"]:
            if b.get("type") == "tool_use" and b.get("name") == "Bash":
                calls[b["id"]] = b["input"]["command"]
            if b.get("type") == "tool_result":
                c = b.get("content")
                if isinstance(c, list):
                    c = "".join(x.get("text", "") for x in c)
                results[b["tool_use_id"]] = c or ""
for line in open(w + "/stream"):
    m = json.loads(line)
    sid = sid or m.get("session_id")
    if m.get("type") == "result":
        denials = [d["tool_input"].get("command", "")
                   for d in m.get("permission_denials", [])]
out = lambda pat: [results.get(i, "") for i, c in calls.items() if pat in c]
first = out("?first")
say(len(first) == 1 and "403" in first[0] and
    "pinhole: refused GET /hello.txt on 10.200.0.1:%s" % op in first[0],
    "the first fetch is refused, and pinhole says so: %r" % first)
req = out("pinhole request")
say(len(req) == 1 and "approved" in req[0], "pinhole request: %r" % req)
main = out("?main")
subs = out("?sub")
say(len(main) == 6 and all(r.strip() == "200" for r in main),
    "6 main-agent fetches after the approval: %r" % main)
say(len(subs) == 32 and all(r.strip() == "200" for r in subs),
    "32 fetches of 4 parallel subagents: %d, %r" % (len(subs),
    sorted(set(r.strip() for r in subs))))
other = out("?other")
say(len(other) == 1 and "403" in other[0],
    "another host is still refused: %r" % other)
touch = out("touch")
say(len(touch) == 1 and "denied" in touch[0],
    "Claude Code's deny rule still refuses touch: %r %r" % (touch, denials))
sidfile = open(w + "/sid").read().strip()
say(sid is not None and len(sid) == 36 and sidfile == sid,
    "the person approved in session %s, Claude Code's %s" % (sidfile, sid))
say(len(calls) == ncalls + 1, "%d Bash calls (want %d)" % (len(calls),
    ncalls + 1))
print("\n".join(said))
PY
	sed -n 's/^ok: /ok: '"$MODE"': /p' "$W/verdicts"
	grep "^FAIL: " "$W/verdicts" | while read -r l; do echo "FAIL: $MODE: ${l#FAIL: }"; done
	NFAIL=$((NFAIL + $(grep -c "^FAIL: " "$W/verdicts")))
	NPASS=$((NPASS + $(grep -c "^ok: " "$W/verdicts")))
	grep -q "^approved r[0-9a-f]*: 10.200.0.1:$OP for this session ($(cat "$W/sid")), until it stops" \
	    "$W/approve" && ok "$MODE: approve SESSION/ID --session, the UUID whole" ||
	    fail "$MODE: approve: $(cat "$W/approve" "$W/pending")"
	[ ! -e "$W/proj/made-by-the-agent" ] &&
	    ok "$MODE: the refused touch did not run" ||
	    fail "$MODE: touch ran"
	# SessionEnd stopped the session.
	sid=$(cat "$W/sid")
	[ -z "$(as_mode "$PINHOLE" session list)" ] &&
	    ok "$MODE: the SessionEnd hook stopped session $sid" ||
	    fail "$MODE: sessions left: $(as_mode "$PINHOLE" session list)"
	# The log: one attach line per tool call, naming it; it verifies.
	as_mode "$PINHOLE" log --json --session "$sid" >"$W/log" 2>&1
	n=$(grep -c '"event":"attach"' "$W/log")
	missing=$(python3 - "$W/log" "$W/script.json" <<'PY'
import json, sys
cmds = [json.loads(l).get("cmd", "") for l in open(sys.argv[1])
        if '"event":"attach"' in l]
s = json.load(open(sys.argv[2]))
want = [t for t in s["main"] + s["sub"] if isinstance(t, str)]
want += [c for t in s["main"] if isinstance(t, list) for c in t
         if isinstance(c, str)]
for c in want:
    if c.startswith("touch"):
        continue
    if not any(c.replace("'", "'\\''") in x or c in x for x in cmds):
        print(c, [x for x in cmds if "first" in x] or cmds[:1])
PY
)
	[ "$n" = "$NCALLS" ] && [ -z "$missing" ] &&
	    ok "$MODE: the log names each of the $n tool calls" ||
	    fail "$MODE: $n attach lines (want $NCALLS); not named: $missing"
	grep '"event":"grant"' "$W/log" | grep -q "\"session\":\"$sid\"" &&
	    ok "$MODE: the grant is in the log under $sid" ||
	    fail "$MODE: no grant line for $sid"
	as_mode "$PINHOLE" log verify >"$W/verify" 2>&1 &&
	    ok "$MODE: the log verifies" ||
	    fail "$MODE: log verify: $(cat "$W/verify")"
	# Figures: approval to effect, and the harness's round trip per call.
	python3 - "$W" <<'PY'
import json, sys
w = sys.argv[1]
t = [json.loads(l)["t"] for l in open(w + "/requests") if '"t"' in l]
at = float(open(w + "/approved-at").read())
print("figures: %d model requests; approved at +%.3f s" % (len(t),
    at - t[0] if t else 0))
PY
done
finish
