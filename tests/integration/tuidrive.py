#!/usr/bin/env python3
"""Drive Claude Code's interactive TUI running in a tmux pane, as a
person would: type the prompt, answer every permission prompt "Yes"
(Enter), count them, and /exit once the model said its last word.

    tuidrive.py SOCKET PROMPT REQUESTS MAINTURNS SUBTURNS NSUB OUT

SOCKET is the tmux server's socket (pane "main"); REQUESTS the model
server's request log: the run is over when it holds the main agent's
request that carries the answer of its MAINTURNS-th turn, and NSUB
subagents' requests that carry the answer of their SUBTURNS-th (Claude
Code runs subagents in the background: the main agent may finish
first, and /exit would then ask whether to stop them).  OUT receives
a JSON summary: {"finished", "exited", "prompts": [{"shown", "options"}],
"screen"}.  Every wait is for something seen (the screen, the log) and
bounded; nothing sleeps a fixed time before acting.
"""
import json
import re
import subprocess
import sys
import time

SOCK, PROMPT, REQUESTS, TURNS, SUBTURNS, NSUB, OUT = sys.argv[1:8]
TURNS, SUBTURNS, NSUB = int(TURNS), int(SUBTURNS), int(NSUB)
ASKED = "Do you want to proceed?"
OPTION = re.compile(r"^\s*(?:❯\s*)?\d\.\s")


def tmux(*a):
    return subprocess.run(["tmux", "-S", SOCK] + list(a),
                          capture_output=True, text=True).stdout


def screen():
    return tmux("capture-pane", "-p", "-t", "main", "-S", "-400")


def until(cond, secs, step=0.1):
    end = time.time() + secs
    while time.time() < end:
        v = cond()
        if v:
            return v
        time.sleep(step)
    return cond()


def main_done():
    """The model server answered the main agent's last turn, and each
    subagent's."""
    try:
        lines = open(REQUESTS).read().splitlines()
    except OSError:
        return False
    main, subs = False, 0
    for line in lines:
        body = json.loads(line).get("body") or {}
        msgs = body.get("messages") or []
        first = msgs[0].get("content") if msgs else ""
        if not isinstance(first, str):
            first = " ".join(b.get("text", "") for b in first
                             if isinstance(b, dict))
        turns = sum(1 for m in msgs if m.get("role") == "assistant" and
                    isinstance(m.get("content"), list) and
                    any(b.get("type") == "tool_use" for b in m["content"]))
        if "[sub]" in first:
            subs += turns >= SUBTURNS
        else:
            main = main or turns >= TURNS
    return main and subs >= NSUB


def asked(s):
    """The permission prompt on the screen, or None."""
    lines = s.rstrip().splitlines()[-40:]
    if not any(ASKED in l for l in lines):
        return None
    opts = [l.strip().lstrip("❯").strip() for l in lines if OPTION.match(l)]
    if not opts:
        return None
    # The command shown sits between two dashed rules, the reason for
    # asking under them.
    rules = [k for k, l in enumerate(lines) if l.strip().startswith("╌")]
    if len(rules) < 2:
        return None
    shown = [l.strip() for l in lines[rules[-2] + 1:rules[-1]]]
    why = [l.strip() for l in lines[rules[-1] + 1:] if l.strip()][:1]
    return {"shown": shown, "why": why, "options": opts}


res = {"finished": False, "exited": False, "prompts": []}
# The input box, then the prompt typed and seen in it, then Enter.
ready = until(lambda: "❯" in screen(), 90)
tmux("send-keys", "-t", "main", "-l", PROMPT)
typed = until(lambda: PROMPT in screen(), 20)
tmux("send-keys", "-t", "main", "Enter")
end = time.time() + 240
while ready and typed and time.time() < end:
    s = screen()
    a = asked(s)
    if a:
        res["prompts"].append(a)
        tmux("send-keys", "-t", "main", "Enter")
        # Answered: the question leaves the screen.
        until(lambda: asked(screen()) is None, 20)
        continue
    if main_done() and "All done." in s.split(PROMPT, 1)[-1]:
        res["finished"] = True
        break
    time.sleep(0.1)
# /exit, as a person ends the session (Claude Code runs SessionEnd).
tmux("send-keys", "-t", "main", "-l", "/exit")
until(lambda: "/exit" in screen().split(PROMPT, 1)[-1], 20)
tmux("send-keys", "-t", "main", "Enter")
res["exited"] = bool(until(lambda: "CLAUDE-EXITED" in screen(), 30))
res["screen"] = screen()
json.dump(res, open(OUT, "w"), indent=1)
