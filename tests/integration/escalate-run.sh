#!/bin/sh
# Escalation from inside `pinhole run`: the sandbox cannot see or reach
# the control socket (by its path, through /proc, or as an abstract
# socket), while `pinhole request` and curl reach the agent endpoint.
. "$top_srcdir/tests/integration/lib.sh"

need curl
XDG_RUNTIME_DIR="$T/xdg"
export XDG_RUNTIME_DIR
mkdir -m 700 "$XDG_RUNTIME_DIR"
cp "$PINHOLE" "$T/pinhole"
cat >"$T/inside.sh" <<'EOS'
echo "listing:$(ls -A "$XDG_RUNTIME_DIR" 2>&1 | tr '\n' ' ')"
python3 - "$dir" <<'EOP'
import glob, os, socket, sys
d = sys.argv[1]
paths = glob.glob(d + "/*.sock") + glob.glob("/proc/*/root" + d + "/*.sock")
for p in paths:
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect(p)
        print("REACHED", p)
    except OSError:
        pass
print("abstract:", sum("@" in l and "pinhole" in l for l in open("/proc/net/unix")))
EOP
"$PINHOLE_BIN" request sandbox.test --reason inside && echo filed
curl -s "$PINHOLE_AGENT/pinhole/blocked"
getent hosts looked-up.test || echo "no such name"
curl -s "$PINHOLE_AGENT/pinhole/blocked"
EOS
if ! PINHOLE_BIN="$T/pinhole" "$PINHOLE" run -- sh "$T/inside.sh" \
    >"$T/out" 2>"$T/err"; then
	grep -q "user namespace" "$T/err" && skip "no namespaces here: $(head -1 "$T/err")"
	fail "pinhole run: $(tail -3 "$T/err")"
fi
grep -q '^listing:$' "$T/out" &&
    ok "the runtime directory, control directory and all, is empty inside" ||
    fail "inside listing: $(grep listing "$T/out")"
grep -q REACHED "$T/out" && fail "the sandbox reached a control socket" ||
    ok "no control socket reachable from the sandbox"
grep -q "abstract: 0" "$T/out" && ok "no abstract socket" || fail "abstract"
grep -q "^filed" "$T/out" && ok "pinhole request works inside" ||
    fail "request inside: $(cat "$T/out")"
grep -q "nothing blocked lately" "$T/out" &&
    ok "curl with HTTP_PROXY reaches the agent endpoint" ||
    fail "agent endpoint via the proxy: $(tail -2 "$T/out")"
grep -q "^looked-up.test via dns, [0-9]* times*, .*ask with: pinhole request looked-up.test --any-port$" "$T/out" &&
    ok "a name refused by the DNS is listed as blocked" ||
    fail "DNS blocked: $(tail -3 "$T/out")"
finish
