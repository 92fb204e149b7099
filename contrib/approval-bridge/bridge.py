#!/usr/bin/env python3
"""Answer a pinhole session's requests from a prompt of one's own.

Polls `pinhole pending --json --session-id SESSION` and shows each new
open request on stdout; reads one answer a line on stdin:

    o            allow once
    s            allow for the session (every later tool call too)
    d [NOTE]     deny; NOTE is what the model reads
    n            leave it open, ask again later

and gives it back with `pinhole approve` or `pinhole deny`.  Ends at the
end of its input.  Text from the sandbox is shown escaped.  A harness
bridges its own approval UI by replacing ask() and the print calls.
"""
import json
import os
import subprocess
import sys
import time

PINHOLE = os.environ.get("PINHOLE", "pinhole")
POLL = 0.2  # seconds between looks at the session's requests


def safe(text):
    """Escape what came from the sandbox: no control character survives."""
    return "".join(c if c.isprintable() else "\\x%02x" % ord(c)
                   if ord(c) < 0x100 else "\\u%04x" % ord(c)
                   for c in str(text))


def pending(session):
    """The session's open requests, oldest first."""
    out = subprocess.run([PINHOLE, "pending", "--json", "--session-id",
                          session], capture_output=True, text=True).stdout
    items = [json.loads(line) for line in out.splitlines() if line]
    return [i for i in items if i.get("kind") == "request" and
            i.get("state") == "pending"]


def answer(session, rid, line):
    """Give one answer line back to pinhole; False when it is no answer."""
    word, _, note = line.strip().partition(" ")
    base = ["--session-id", session, rid]
    if word == "o":
        cmd = [PINHOLE, "approve", "--once"] + base
    elif word == "s":
        cmd = [PINHOLE, "approve", "--session"] + base
    elif word == "d":
        cmd = [PINHOLE, "deny"] + (["--reason", note] if note else []) + base
    elif word == "n":
        return True
    else:
        return False
    return subprocess.run(cmd, stdout=subprocess.DEVNULL).returncode == 0


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: bridge.py SESSION")
    session = sys.argv[1]
    seen = set()
    while True:
        new = [r for r in pending(session) if r["id"] not in seen]
        if not new:
            time.sleep(POLL)
            continue
        r = new[0]
        print("request %s: %s:%s (%s)  [o]nce [s]ession [d]eny NOTE [n]ext"
              % (safe(r["id"]), safe(r.get("host", "")),
                 safe(r.get("port", "")), safe(r.get("reason", ""))),
              flush=True)
        line = sys.stdin.readline()
        if not line:
            return
        if not answer(session, r["id"], line):
            print("not an answer: %s" % safe(line.strip()), flush=True)
            continue
        if line.strip() == "n":
            seen.add(r["id"])
        print("answered %s: %s" % (safe(r["id"]), safe(line.strip())),
              flush=True)


if __name__ == "__main__":
    main()
