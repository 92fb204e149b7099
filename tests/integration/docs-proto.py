#!/usr/bin/env python3
"""Play an exchange of docs/control-protocol.md against a gateway.

    docs-proto.py SOCKET REQUEST_ID SENDS EXPECTS [TRIGGER]

SENDS holds the lines to send ("→ " or bare JSON), EXPECTS the lines to
expect ("← " or bare JSON, "..." where the page leaves members out).
The page's request id r7f3a09c41e2b5d86 is REQUEST_ID here.  Each line
received in turn must have the members the expected one has (no others
unless it leaves some out), with the same values for the members that do
not change from run to run; what varies (sessions, times, pids, ids,
counts) need only be there.  TRIGGER, a shell command, runs once the
first reply is in (events to come after it).
"""
import json
import socket
import subprocess
import sys

DOC_ID = "r7f3a09c41e2b5d86"
SAME = ("op", "ok", "item", "event", "host", "port", "state", "scope",
        "via", "reason", "answer", "ttl", "kind", "version", "subscribed",
        "id")


def lines(path, mark):
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line.startswith(mark):
                line = line[len(mark):].strip()
            elif line[:1] in ("→", "←"):
                continue
            if line:
                out.append(line)
    return out


def parse(line, rid):
    partial = "..." in line
    line = line.replace(",...", "").replace(DOC_ID, rid)
    return json.loads(line), partial


def main(argv):
    path, rid, sends, expects = argv[1], argv[2], argv[3], argv[4]
    trigger = argv[5] if len(argv) > 5 else None
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(20)
    s.connect(path)
    f = s.makefile("rw", encoding="utf-8")
    for line in lines(sends, "→"):
        f.write(line.replace(DOC_ID, rid) + "\n")
    f.flush()
    bad = 0
    for n, want in enumerate(lines(expects, "←")):
        w, partial = parse(want, rid)
        got = f.readline()
        if not got:
            print("FAIL: connection closed before: %s" % want)
            return 1
        g = json.loads(got)
        missing = set(w) - set(g)
        extra = set() if partial else set(g) - set(w)
        differ = [k for k in w if k in g and k in SAME and w[k] != g[k]]
        if missing or extra or differ:
            bad += 1
            print("FAIL: want %s\n  got %s\n  missing %s, extra %s, "
                  "differ %s" % (want, got.strip(), sorted(missing),
                                 sorted(extra), differ))
        else:
            print("ok: %s" % want[:70])
        if n == 0 and trigger:
            subprocess.run(["sh", "-c", trigger], timeout=60)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
