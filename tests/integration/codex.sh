#!/bin/sh
# The real Codex CLI (the version tests/package.json pins), `codex exec`
# against modelserver.py's Responses API on loopback, its shell commands
# put in pinhole by `pinhole hook --allow-call` as its PreToolUse hook
# (the config docs/agents.md gives), as root and as nobody: a fetch is
# refused; the agent runs `pinhole request`; the person approves it for
# the session, named by Codex's own session id (a UUID); then every
# later fetch, one turn of parallel calls among them, reaches the host
# without a question; another host is still refused; the SessionEnd hook
# stops the session; the log has an attach line naming each tool call,
# and verifies.  In a network namespace of its own: nothing leaves
# loopback.  Missing tools skip a local run; in CI they fail it.
. "$top_srcdir/tests/integration/npm.sh"
mods="$top_builddir/tests/harness"
CODEX="$mods/node_modules/.bin/codex"
if [ -z "${PINHOLE_TEST_NETNS:-}" ]; then
	for t in curl python3 node npm unshare ip setpriv; do
		command -v $t >/dev/null 2>&1 || harness_need "$t is not installed"
	done
	harness_ci codex || harness_need "npm ci failed: $(tail -5 "$mods/npm.out")"
	PINHOLE_TEST_NETNS=1 exec unshare --net sh "$0" "$@"
fi
. "$top_srcdir/tests/integration/lib.sh"
here="$top_srcdir/tests/integration"
ip link set lo up || harness_need "cannot bring loopback up"
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY no_proxy NO_PROXY ALL_PROXY
"$CODEX" --version >"$T/version" 2>"$T/version.err" || harness_need "codex: $(cat "$T/version")"
echo "harness: $(cat "$T/version")"

mkdir "$T/www" && echo hello from origin >"$T/www/hello.txt"
chmod -R a+rX "$T/www"
OP=$(free_port)
ip addr add 192.0.2.1/32 dev lo && ip addr add 192.0.2.2/32 dev lo ||
    harness_need "cannot add the origins' addresses"
bg python3 -m http.server "$OP" --bind 0.0.0.0 --directory "$T/www" \
    >/dev/null 2>&1
wait_port "$OP" || { finish; exit 1; }

# The model: refused, asks, then 8 fetches one at a time and 4 at once,
# another host, and the session's name as the command sees it.
FETCH="curl -sS -o /dev/null -w '%{http_code}\\n' -m 20"
U="http://192.0.2.1:$OP/hello.txt"
python3 - "$FETCH" "$U" "$OP" >"$T/script.json" <<'PY'
import json, sys
fetch, url, op = sys.argv[1:4]
s = [fetch + " " + url + "?first",
     "pinhole request 192.0.2.1:%s --reason 'the agent needs it' --wait=90" % op]
s += [fetch + " " + url + "?one%d" % i for i in range(8)]
s += [[fetch + " " + url + "?par%d" % i for i in range(4)]]
s += [fetch + " http://192.0.2.2:%s/hello.txt?other" % op,
      "printenv PINHOLE"]
print(json.dumps(s))
PY
chmod 644 "$T/script.json"
NCALLS=16

# Codex's home: its config (the model server, the hooks), a project.
setup_home() {
	mkdir -p "$W/codex" "$W/.config/pinhole" "$W/proj" "$W/xdg"
	chmod 700 "$W/xdg"
	echo 'allow-private 192.0.2.0/24' >"$W/.config/pinhole/policy"
	cat >"$W/codex/config.toml" <<EOF
model = "test-model"
model_provider = "scripted"
allow_login_shell = false
[model_providers.scripted]
name = "scripted"
base_url = "http://127.0.0.1:$MP/v1"
wire_api = "responses"
env_key = "SCRIPTED_API_KEY"
EOF
	# The hooks, as docs/agents.md gives them.
	sed -n '/^\[\[hooks.PreToolUse\]\]/,/^```/p' \
	    "$top_srcdir/docs/agents.md" | grep -v '^```' >>"$W/codex/config.toml"
	[ "$MODE" = nobody ] && chown -R nobody "$W"
}


for MODE in root nobody; do
	W="$T/w/$MODE"
	MP=$(free_port)
	setup_home
	bg python3 "$here/modelserver.py" --port "$MP" --log "$W/requests" \
	    --results "$W/results" --script "$T/script.json" 2>/dev/null
	wait_port "$MP" || { fail "$MODE: no model server"; continue; }
	harness_person &
	pp=$!
	(cd "$W/proj" && as_mode env -i PATH="$(dirname "$PINHOLE"):/usr/bin:/bin" \
	    HOME="$W" XDG_RUNTIME_DIR="$W/xdg" LANG=C.UTF-8 USER="$MODE" \
	    CODEX_HOME="$W/codex" SCRIPTED_API_KEY=test \
	    timeout 300 "$CODEX" exec --skip-git-repo-check --json \
	    -s danger-full-access --dangerously-bypass-hook-trust \
	    "fetch the pages") >"$W/events" 2>"$W/codex.err" </dev/null
	rc=$?
	kill "$pp" 2>/dev/null
	wait "$pp" 2>/dev/null
	[ $rc = 0 ] && grep -q '"turn.completed"' "$W/events" &&
	    ok "$MODE: codex exec ran the story to its end" ||
	    fail "$MODE: codex exit $rc: $(tail -c 600 "$W/events") $(tail -5 "$W/codex.err")"
	sid=$(cat "$W/sid")
	python3 - "$W" "$OP" "$sid" <<'PY' >"$W/verdicts" 2>&1
import json, sys
w, op, sid = sys.argv[1:4]
said = []
def say(ok, what):
    said.append(("ok: " if ok else "FAIL: ") + what)
calls, results, thread = {}, {}, None
for line in open(w + "/requests"):
    for it in (json.loads(line).get("body") or {}).get("input") or []:
        if it.get("type") == "function_call":
            calls[it["call_id"]] = json.loads(it["arguments"])["cmd"]
        if it.get("type") == "function_call_output":
            o = it.get("output")
            if isinstance(o, list):
                o = "".join(x.get("text", "") for x in o)
            results[it["call_id"]] = o or ""
for line in open(w + "/events"):
    e = json.loads(line)
    thread = thread or e.get("thread_id")
out = lambda pat: [results.get(i, "") for i, c in calls.items() if pat in c]
# A command's output (its stdout and stderr, in either order).
code = lambda r: r.split("Output:\n", 1)[-1].strip()
refused = lambda r: "403" in code(r).splitlines()
first = out("?first")
say(len(first) == 1 and refused(first[0]) and
    "pinhole: refused GET /hello.txt on 192.0.2.1:%s" % op in first[0],
    "the first fetch is refused, and pinhole says so: %r" % first)
req = out("pinhole request")
say(len(req) == 1 and "approved (session)" in req[0],
    "pinhole request: %r" % req)
after = out("?one") + out("?par")
say(len(after) == 12 and all(code(r) == "200" for r in after),
    "12 fetches after the approval, 4 in one turn: %r" %
    sorted(set(code(r) for r in after)))
other = out("?other")
say(len(other) == 1 and refused(other[0]),
    "another host is still refused: %r" % other)
env = out("printenv PINHOLE")
say(len(env) == 1 and code(env[0]) == "1",
    "the commands run in pinhole: %r" % env)
say(len(sid) == 36 and sid == thread,
    "the person approved in session %s, Codex's %s" % (sid, thread))
print("\n".join(said))
PY
	harness_verdicts "$W/verdicts"
	harness_log "$sid"
	n=$(grep '"event":"attach"' "$W/log" | grep -c '"cmd":"/bin/bash -c ')
	[ "$n" = "$NCALLS" ] &&
	    ok "$MODE: the log has an attach line for each of the $n tool calls" ||
	    fail "$MODE: $n attach lines (want $NCALLS)"
done
finish
