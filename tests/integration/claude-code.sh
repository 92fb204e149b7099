#!/bin/sh
# The real Claude Code (the version tests/package.json pins, installed
# with npm ci when missing), with pinhole-bash as its shell
# (CLAUDE_CODE_SHELL), playing an agent scripted by modelserver.py on
# loopback.  The whole story, as root and as nobody: a fetch is refused;
# the agent runs `pinhole request`; the person approves it once, for the
# session, naming the session by Claude Code's own id (a UUID); then
# main-agent calls and four parallel subagents' calls all reach the host
# without a question; another host is still refused; Claude Code's own
# decisions are as without pinhole: a command its deny rule forbids is
# refused, a command no rule allows is asked about, the allowed ones
# run; the SessionEnd hook stops the session; the log has an attach
# line naming each tool call, and verifies.
#
# Headless (`claude -p`) by default.  With --tui (claude-code-tui.sh)
# Claude Code runs interactively in a tmux pane, driven by tuidrive.py as
# a person: it answers each permission prompt Yes and counts them, and
# ends with /exit.  The same script first runs in the same TUI without
# pinhole (the harness's own shell): the prompts, what they show and
# their options, must be the same with pinhole as without.
#
# The test runs in a network namespace of its own: nothing leaves
# loopback.  Missing tools skip a local run; in CI they fail it (77 and
# 1 alike after the namespace is made).
. "$top_srcdir/tests/integration/npm.sh"
mods="$top_builddir/tests/harness"
CLAUDE="$mods/node_modules/.bin/claude"
if [ -z "${PINHOLE_TEST_NETNS:-}" ]; then
	tools="curl python3 node npm unshare ip setpriv"
	[ "${1:-}" = --tui ] && tools="$tools tmux"
	[ "${1:-}" = --sandbox ] && tools="$tools bwrap socat rg"
	for t in $tools; do
		command -v $t >/dev/null 2>&1 || harness_need "$t is not installed"
	done
	# The pinned harness: the npm registry is the only network the
	# test uses, before it leaves the host's network.
	harness_ci claude ||
	    harness_need "npm ci failed: $(tail -5 "$mods/npm.out")"
	PINHOLE_TEST_NETNS=1 exec unshare --net sh "$0" "$@"
fi
. "$top_srcdir/tests/integration/lib.sh"
here="$top_srcdir/tests/integration"
TUI=; [ "${1:-}" = --tui ] && TUI=1
SANDBOX=; [ "${1:-}" = --sandbox ] && SANDBOX=1
ip link set lo up || harness_need "cannot bring loopback up"
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY no_proxy NO_PROXY ALL_PROXY
"$CLAUDE" --version >"$T/version" 2>&1 || harness_need "claude: $(cat "$T/version")"
echo "harness: $(cat "$T/version")"

# The host the agent asks for, and another one (addresses Claude Code's
# sandbox does not exempt from its proxy, as it does 10.0.0.0/8).
mkdir "$T/www" && echo hello from origin >"$T/www/hello.txt"
chmod -R a+rX "$T/www"
OP=$(free_port)
OP2=$(free_port)
ip addr add 192.0.2.1/32 dev lo && ip addr add 192.0.2.2/32 dev lo ||
    harness_need "cannot add the origins' addresses"
bg python3 -m http.server "$OP" --bind 0.0.0.0 --directory "$T/www" \
    >/dev/null 2>&1
bg python3 -m http.server "$OP2" --bind 0.0.0.0 --directory "$T/www" \
    >/dev/null 2>&1
wait_port "$OP" && wait_port "$OP2" || { finish; exit 1; }

# What the model does: 1 + 1 + 4 subagents x 8 + 3 x 2 + 1 + 1 + 1
# calls; the python3 call no rule allows (Claude Code asks about it).
FETCH="curl -sS -o /dev/null -w %{http_code} -m 20"
# Claude Code's sandbox starts its bridge to the proxy port beside the
# command, which may connect before it listens (refused, at once).
[ "${1:-}" = --sandbox ] && FETCH="$FETCH --retry 3 --retry-connrefused"
ASKED="python3 -c 'print(6*7)'"
script() {
	python3 - "$FETCH" "$OP" "$OP2" "$ASKED" "$SANDBOX" <<'PY'
import json, sys
fetch, op, op2, asked, sandbox = sys.argv[1:6]
url = "http://192.0.2.1:%s/hello.txt" % op
agent = lambda n: {"tool": "Agent", "input": {"description": "fetch %d" % n,
    "prompt": "[sub] fetch the pages", "subagent_type": "general-purpose"}}
main = [fetch + " " + url + "?first",
        "pinhole request 192.0.2.1:%s --reason 'the agent needs it' --wait=90" % op,
        [agent(n) for n in range(4)]]
main += [[fetch + " " + url + "?main%d-%d" % (i, k) for k in range(2)]
         for i in range(3)]
main += [asked, fetch + " http://192.0.2.2:%s/hello.txt?other" % op2,
         "touch made-by-the-agent"]
if sandbox:     # around the proxy: Claude Code's sandbox has no way out
    main += [fetch + " --noproxy '*' " + url + "?direct"]
sub = [fetch + " " + url + "?sub%d" % i for i in range(8)]
print(json.dumps({"main": main, "sub": sub}))
PY
}
# Bash calls that run: the touch is refused by Claude Code, and the
# python3 call too headless, where no one can be asked.
NCALLS=41
[ -n "$TUI" ] && NCALLS=42
HOW=pinhole
[ -n "$SANDBOX" ] && HOW=sandbox

# Claude Code's home: its settings, its first-run state, a project.
# $1 is how its commands run: pinhole (pinhole-bash as its shell),
# plain (its own shell, no pinhole), or sandbox (its own sandbox, with
# the session started by its SessionStart hook as the sandbox's proxy,
# the settings docs/agents.md gives).
setup_home() {
	mkdir -p "$W/.claude" "$W/.config/pinhole" "$W/proj" \
	    "$W/bin" "$W/xdg"
	chmod 700 "$W/xdg"
	echo 'allow-private 192.0.2.0/24' >"$W/.config/pinhole/policy"
	printf '#!/bin/sh\nexec %s hook --exec -- "$@"\n' "$PINHOLE" \
	    >"$W/bin/pinhole-bash"
	chmod 755 "$W/bin/pinhole-bash"
	case $1 in
	pinhole) how="\"env\": { \"CLAUDE_CODE_SHELL\": \"$W/bin/pinhole-bash\" }," ;;
	plain) how= ;;
	sandbox) how='"env": { "PINHOLE_AGENT": "http://localhost:3128" },
  "sandbox": { "enabled": true, "failIfUnavailable": true,
    "network": { "httpProxyPort": 3128, "socksProxyPort": 1080 } },' ;;
	esac
	start=
	[ "$1" = sandbox ] && start='"SessionStart": [ { "hooks": [ { "type": "command",
      "command": "pinhole session start \"$CLAUDE_CODE_SESSION_ID\" --listen 127.0.0.1:3128 --socks 127.0.0.1:1080" } ] } ],'
	cat >"$W/.claude/settings.json" <<J
{ $how
  "permissions": { "allow": [ "Bash(curl:*)", "Bash(pinhole request:*)" ],
                   "deny": [ "Bash(touch:*)" ] },
  "hooks": { $start
    "SessionEnd": [ { "hooks": [ { "type": "command",
      "command": "pinhole session stop \"\$CLAUDE_CODE_SESSION_ID\"" } ] } ] } }
J
	cat >"$W/.claude.json" <<J
{"hasCompletedOnboarding": true, "theme": "dark",
 "customApiKeyResponses": {"approved": ["t-000000000000000000"], "rejected": []},
 "projects": {"$W/proj": {"hasTrustDialogAccepted": true, "allowedTools": []}}}
J
	script >"$W/script.json"
	[ "$MODE" = nobody ] && chown -R nobody "$W"
}


# The model server for $W, on port $MP.
model_server() {
	MP=$(free_port)
	bg python3 "$here/modelserver.py" --port "$MP" --log "$W/requests" \
	    --results "$W/results" --script "$W/script.json" 2>/dev/null
	wait_port "$MP"
}

# The environment Claude Code gets, and nothing else of the test's.
claude_env() {
	echo "PATH=$(dirname "$PINHOLE"):/usr/bin:/bin HOME=$W" \
	    "XDG_RUNTIME_DIR=$W/xdg LANG=C.UTF-8 USER=$MODE SHELL=/bin/bash" \
	    "ANTHROPIC_BASE_URL=http://127.0.0.1:$MP" \
	    "ANTHROPIC_API_KEY=sk-ant-test-000000000000000000" \
	    "DISABLE_TELEMETRY=1 DISABLE_AUTOUPDATER=1" \
	    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1"
}

# Headless: claude -p in $W/proj as $MODE's user, its stream in $W/stream.
run_headless() {
	(cd "$W/proj" && as_mode env -i $(claude_env) timeout 600 "$CLAUDE" \
	    -p "fetch the pages" --output-format stream-json --verbose \
	    --permission-mode default) >"$W/stream" 2>"$W/claude.err" </dev/null
	rc=$?
	[ $rc = 0 ] && grep '"type":"result"' "$W/stream" |
	    grep -q '"subtype":"success"' &&
	    ok "$MODE: claude -p ran the story to its end" ||
	    fail "$MODE: claude exit $rc: $(tail -c 600 "$W/stream") $(tail -5 "$W/claude.err")"
}

# Interactive: claude in $W/proj in the pane of a tmux server of
# $MODE's user, driven by tuidrive.py (as that user) until /exit; its
# summary in $W/tui.json.  $1 names the run.
run_tui() {
	# The main agent's turns, a subagent's, and how many subagents.
	turns=$(python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))
print(len(s["main"]), len(s["sub"]), sum(1 for t in s["main"]
    if isinstance(t, list) for c in t if isinstance(c, dict)))' \
	    "$W/script.json")
	as_mode env SHELL=/bin/sh tmux -S "$W/tmux" new-session -d -s main \
	    -x 200 -y 50 -c "$W/proj" "env -i $(claude_env) TERM=xterm-256color \
	    $CLAUDE --permission-mode default; echo CLAUDE-EXITED \$?; read x" ||
	    { fail "$1: tmux"; return; }
	# The tmux server is stopped at exit too, should the test end early.
	PIDS="$PIDS $(as_mode tmux -S "$W/tmux" display-message -p '#{pid}')"
	as_mode /usr/bin/python3 "$here/tuidrive.py" "$W/tmux" "fetch the pages" \
	    "$W/requests" $turns "$W/tui.json" 2>"$W/tui.err"
	as_mode tmux -S "$W/tmux" kill-server 2>/dev/null
	python3 - "$W/tui.json" <<'PY' >"$W/tui.verdict" 2>&1
import json, sys
try:
    r = json.load(open(sys.argv[1]))
    ok, scr = r["finished"] and r["exited"], r["screen"][-1500:]
except (OSError, ValueError) as e:
    ok, scr = False, "no summary from tuidrive.py: %s" % e
print("ok" if ok else "FAIL: %s" % scr)
PY
	if [ "$(cat "$W/tui.verdict")" = ok ]; then
		ok "$1: the TUI ran the story to its end, then /exit"
	else
		fail "$1: the TUI: $(cat "$W/tui.verdict" "$W/tui.err")"
	fi
}

# The same story in the TUI without pinhole: Claude Code's own prompts.
if [ -n "$TUI" ]; then
	MODE=root
	W="$T/w/plain"
	setup_home plain
	if model_server; then
		run_tui "without pinhole"
	fi
fi

for MODE in root nobody; do
	W="$T/w/$MODE"
	setup_home "$HOW"
	model_server || { fail "$MODE: no model server"; continue; }
	harness_person &
	pp=$!
	if [ -n "$TUI" ]; then
		run_tui "$MODE"
	else
		run_headless
	fi
	kill "$pp" 2>/dev/null
	wait "$pp" 2>/dev/null
	python3 - "$W" "$OP" "$OP2" "$ASKED" "$T/w/plain" "$SANDBOX" <<'PY' >"$W/verdicts" 2>&1
import json, os, sys
w, op, op2, asked, plain, sandbox = sys.argv[1:7]
tui = os.path.exists(w + "/tui.json")
said = []
def say(ok, what):
    said.append(("ok: " if ok else "FAIL: ") + what)
# Each tool call's command and its result, from the model's requests
# (the main agent's and the subagents'); Claude Code's session id, from
# their headers.
calls, results, sid = {}, {}, None
for line in open(w + "/requests"):
    r = json.loads(line)
    h = {k.lower(): v for k, v in (r.get("headers") or {}).items()}
    sid = sid or h.get("x-claude-code-session-id")
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
out = lambda pat: [results.get(i, "") for i, c in calls.items() if pat in c]
first = out("?first")
say(len(first) == 1 and "403" in first[0] and
    (sandbox or "pinhole: refused GET /hello.txt on 192.0.2.1:%s" % op
     in first[0]),
    "the first fetch is refused, and pinhole says so: %r" % first)
req = out("pinhole request")
say(len(req) == 1 and "approved" in req[0], "pinhole request: %r" % req)
# The status a fetch ends with (after the lines of its retries, if any).
code = lambda r: (r.strip().splitlines() or [""])[-1]
main = [code(r) for r in out("?main")]
subs = [code(r) for r in out("?sub")]
say(len(main) == 6 and all(r == "200" for r in main),
    "6 main-agent fetches after the approval: %r" % main)
say(len(subs) == 32 and all(r == "200" for r in subs),
    "32 fetches of 4 parallel subagents: %d, %r" % (len(subs),
    sorted(set(subs))))
other = out("?other")
say(len(other) == 1 and "403" in other[0],
    "another host is still refused: %r" % other)
touch = out("touch")
say(len(touch) == 1 and "denied" in touch[0],
    "Claude Code's deny rule still refuses touch: %r" % touch)
py = out(asked)
if tui:
    say(len(py) == 1 and py[0].strip() == "42",
        "the command Claude Code asked about ran once approved: %r" % py)
else:
    say(len(py) == 1 and "requires approval" in py[0],
        "the command Claude Code would ask about is refused headless: %r" % py)
sidfile = open(w + "/sid").read().strip() if os.path.exists(w + "/sid") \
    else None
say(sid is not None and len(sid) == 36 and sidfile == sid,
    "the person approved in session %s, Claude Code's %s" % (sidfile, sid))
s = json.load(open(w + "/script.json"))
agents = sum(1 for t in s["main"] if isinstance(t, list) for c in t
             if isinstance(c, dict))
ncalls = sum(len(t) if isinstance(t, list) else 1 for t in s["main"]
             if not isinstance(t, dict)) - agents + agents * len(s["sub"])
say(len(calls) == ncalls, "%d Bash calls (want %d)" % (len(calls), ncalls))
if sandbox:
    direct = out("?direct")
    say(len(direct) == 1 and "200" not in direct[0],
        "a fetch around the proxy does not get out of Claude Code's "
        "sandbox: %r" % direct)
# The prompts: the same as Claude Code's own without pinhole, the
# commands it shows and the answers it offers (the run's directory
# written as W).
if tui:
    def prompts(d):
        r = json.load(open(d + "/tui.json"))
        return [json.loads(json.dumps(p).replace(d, "W"))
                for p in r["prompts"]]
    have, want = prompts(w), prompts(plain)
    say(have == want and len(want) == 1 and
        any(asked in l for l in want[0]["shown"]),
        "%d permission prompt(s), as without pinhole: %r" % (len(have),
        have if have != want else [p["shown"][-3:] for p in have]))
    if have != want:
        said.append("FAIL: without pinhole: %r" % want)
print("\n".join(said))
PY
	harness_verdicts "$W/verdicts"
	grep -q "^approved r[0-9a-f]*: 192.0.2.1:$OP for this session ($(cat "$W/sid")), until it stops" \
	    "$W/approve" && ok "$MODE: approve SESSION/ID --session, the UUID whole" ||
	    fail "$MODE: approve: $(cat "$W/approve" "$W/pending")"
	[ ! -e "$W/proj/made-by-the-agent" ] &&
	    ok "$MODE: the refused touch did not run" ||
	    fail "$MODE: touch ran"
	# SessionEnd stopped the session; the log has the grant, verifies
	# and has one attach line per tool call, naming it.
	sid=$(cat "$W/sid")
	harness_log "$sid"
	n=$(grep -c '"event":"attach"' "$W/log")
	missing=$(python3 - "$W/log" "$W/script.json" "${TUI:-$ASKED}" <<'PY'
import json, sys
cmds = [json.loads(l).get("cmd", "") for l in open(sys.argv[1])
        if '"event":"attach"' in l]
s = json.load(open(sys.argv[2]))
want = [t for t in s["main"] + s["sub"] if isinstance(t, str)]
want += [c for t in s["main"] if isinstance(t, list) for c in t
         if isinstance(c, str)]
for c in want:
    if c.startswith("touch") or c == sys.argv[3]:
        continue
    if not any(c.replace("'", "'\\''") in x or c in x for x in cmds):
        print(c, [x for x in cmds if "first" in x] or cmds[:1])
PY
)
	if [ -n "$SANDBOX" ]; then
		# Claude Code's sandbox: every fetch after the approval is a
		# request the session's listener allowed under the grant.
		n=$(grep '"event":"request","verdict":"allow"' "$W/log" |
		    grep "\"host\":\"192.0.2.1\",\"port\":$OP," |
		    grep -c '"via":"forward","rule":"grant r')
		[ "$n" = 38 ] &&
		    ok "$MODE: the log has the 38 fetches, under the grant" ||
		    fail "$MODE: $n fetches under the grant (want 38)"
	else
		[ "$n" = "$NCALLS" ] && [ -z "$missing" ] &&
		    ok "$MODE: the log names each of the $n tool calls" ||
		    fail "$MODE: $n attach lines (want $NCALLS); not named: $missing"
	fi
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
