#!/usr/bin/env python3
"""The examples of pinhole's documents, read mechanically.

Every fenced code block of a markdown file and every .nf/.EX block of a
man page has a marker before it, which the rendered text does not show:

    <!-- example: KIND NAME [ARG...] -->      (markdown: the line before)
    .\\" example: KIND NAME [ARG...]           (roff: before .nf or .EX,
                                              only requests between)

KIND says how tests/integration/docs-examples.sh runs it:
    policy NAME [warn]  policy lines: they load with no error, and no
                        warning unless "warn" is said; ex_NAME, when the
                        test has it, checks what the text claims of them
    transcript NAME [home=DIR]
                        "$ CMD" lines each followed by its output: run
                        and compared (home=DIR: the test's HOME is
                        written as DIR in the text); ex_NAME, when the
                        test has it, sets up what the text assumes
    run NAME, output NAME
                        commands, or output shown: the test's ex_NAME
                        runs them (or what prints that output) and
                        checks what the text claims
    none REASON...      not runnable, and why
    untested REASON...  runnable but not run yet, and why
NAME is unique across the documents.

    doc-examples.py list FILE...        one line a block:
                                        FILE:LINE KIND NAME ARGS, or
                                        FILE:LINE unmarked / bad: why
    doc-examples.py dump DIR FILE...    each named block's text (roff
                                        escapes undone) to DIR/NAME, and
                                        the list to DIR/index
    doc-examples.py play FILE [FROM=TO]... -- PREFIX...
                                        run a transcript: each "$ CMD"
                                        (a trailing \\ continues it) as
                                        PREFIX sh -c CMD, its output
                                        (stderr too, FROM written as TO)
                                        compared with the lines after it,
                                        where "..." matches anything
Exit status 1 when a block is unmarked, a marker is malformed, or a
name is used twice.
"""
import os
import re
import subprocess
import sys

KINDS = ("policy", "transcript", "run", "output", "none", "untested")
MD_MARK = re.compile(r"^\s*<!--\s*example:\s*(.*?)\s*-->\s*$")
ROFF_MARK = re.compile(r'^\.\\"\s*example:\s*(.*?)\s*$')
ROFF_QUIET = re.compile(r"^\.(PP|LP|P|RS|RE|IP|sp|in|br|ft)\b[^\"]*$")
FENCE = re.compile(r"^(\s*)(```+|~~~+)")


def unroff(line):
    """A line of troff as it reads."""
    line = re.sub(r"\\f[BIRP]|\\f\(..|\\&|\\:", "", line)
    for k, v in (("\\(aq", "'"), ("\\(dq", '"'), ("\\(bu", "*"),
                 ("\\(em", "--"), ("\\-", "-"), ("\\e", "\\"),
                 ("\\ ", " "), ("\\~", " "), ("\\(ga", "`")):
        line = line.replace(k, v)
    return line


def markdown(path, lines):
    """(line, marker or None, text) for each fenced block."""
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence = m.group(1), m.group(2)
        start = i
        j = i - 1
        while j >= 0 and not lines[j].strip():
            j -= 1
        mark = MD_MARK.match(lines[j]) if j >= 0 else None
        body = []
        i += 1
        while i < len(lines) and not lines[i].strip().startswith(fence):
            line = lines[i]
            body.append(line[len(indent):] if line.startswith(indent)
                        else line.lstrip())
            i += 1
        i += 1
        yield start + 1, mark.group(1) if mark else None, body


def roff(path, lines):
    """(line, marker or None, text) for each .nf/.EX block."""
    i = 0
    while i < len(lines):
        if not re.match(r"^\.(nf|EX)\s*$", lines[i]):
            i += 1
            continue
        start = i
        end = ".fi" if lines[i].startswith(".nf") else ".EE"
        j = i - 1
        while j >= 0 and ROFF_QUIET.match(lines[j]):
            j -= 1
        mark = ROFF_MARK.match(lines[j]) if j >= 0 else None
        body = []
        i += 1
        while i < len(lines) and not lines[i].startswith(end):
            if not lines[i].startswith("."):
                body.append(unroff(lines[i]))
            i += 1
        i += 1
        yield start + 1, mark.group(1) if mark else None, body


def blocks(path):
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    read = markdown if path.endswith(".md") else roff
    for line, mark, body in read(path, lines):
        yield "%s:%d" % (path, line), mark, body


def steps(lines):
    """(command, expected output lines) for each "$ " line."""
    out = []
    cont = False
    for line in lines:
        if cont:
            out[-1][0] += "\n" + line
        elif line.startswith("$ "):
            out.append([line[2:], []])
        elif out:
            out[-1][1].append(line)
        cont = line.endswith("\\")
    for cmd, want in out:
        while want and not want[-1].strip():
            want.pop()
    return out


def matches(want, got):
    """Does each line of got match want's, "..." matching anything?"""
    if len(want) != len(got):
        return False
    for w, g in zip(want, got):
        pat = ".*".join(re.escape(p) for p in w.rstrip().split("..."))
        if not re.fullmatch(pat, g.rstrip()):
            return False
    return True


def play(argv):
    path = argv[0]
    subs = []
    i = 1
    while i < len(argv) and argv[i] != "--":
        subs.append(argv[i].split("=", 1))
        i += 1
    prefix = argv[i + 1:]
    with open(path, encoding="utf-8") as f:
        lines = f.read().rstrip("\n").split("\n")
    bad = 0
    for cmd, want in steps(lines):
        p = subprocess.run(prefix + ["sh", "-c", cmd], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=60)
        got = p.stdout.decode("utf-8", "replace")
        for a, b in sorted(subs, key=lambda s: -len(s[0])):
            got = got.replace(a, b)
        got = got.rstrip("\n").split("\n") if got.strip() else []
        if matches(want, got):
            print("ok: $ %s" % cmd)
        else:
            bad += 1
            print("FAIL: $ %s (exit %d)" % (cmd, p.returncode))
            print("  want:\n" + "".join("    %s\n" % w for w in want) +
                  "  got:\n" + "".join("    %s\n" % g for g in got), end="")
    return 1 if bad else 0


def main(argv):
    if len(argv) > 2 and argv[1] == "play":
        return play(argv[2:])
    if len(argv) < 3 or argv[1] not in ("list", "dump"):
        sys.stderr.write(__doc__)
        return 2
    dump = argv[2] if argv[1] == "dump" else None
    files = argv[3:] if dump else argv[2:]
    bad = 0
    seen = {}
    out = []
    for path in files:
        for where, mark, body in blocks(path):
            if mark is None:
                out.append("%s unmarked" % where)
                bad += 1
                continue
            words = mark.split()
            kind = words[0] if words else ""
            if kind not in KINDS:
                out.append("%s bad: unknown kind %r" % (where, kind))
                bad += 1
                continue
            if kind in ("none", "untested"):
                if len(words) < 3:
                    out.append("%s bad: '%s' needs a reason" % (where, kind))
                    bad += 1
                else:
                    out.append("%s %s - %s" % (where, kind,
                                               " ".join(words[1:])))
                continue
            if len(words) < 2 or not re.match(r"^[a-z0-9][a-z0-9-]*$",
                                              words[1]):
                out.append("%s bad: %s needs a name" % (where, kind))
                bad += 1
                continue
            name = words[1]
            if name in seen:
                out.append("%s bad: %s is also %s" % (where, name,
                                                      seen[name]))
                bad += 1
                continue
            seen[name] = where
            out.append("%s %s %s %s" % (where, kind, name,
                                        " ".join(words[2:])))
            if dump:
                with open(os.path.join(dump, name), "w",
                          encoding="utf-8") as f:
                    f.write("\n".join(body) + "\n")
    text = "\n".join(out) + "\n"
    if dump:
        with open(os.path.join(dump, "index"), "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
