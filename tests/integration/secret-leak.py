#!/usr/bin/env python3
"""Can a secret's value be read from what the sandbox saw?
Usage: secret-leak.py FILE... (the values, one a line, on standard input)
Each file is searched for each value as it is, with percent-encoding,
'+' for a space and JSON escapes undone, and in every run of base64
digits (standard and URL-safe) decoded from each of its first four
places, so at every alignment.  Prints "FILE: how" for each leak found
and exits 1 when there was one; the value itself is never printed."""
import re
import sys
import urllib.parse

values = [v.encode() for v in sys.stdin.read().split("\n") if v]
B64 = {"standard": b"+/", "URL-safe": b"-_"}


def unjson(data):
    out = re.sub(rb"\\u([0-9a-fA-F]{4})",
                 lambda m: bytes([int(m.group(1), 16) & 0xff]), data)
    return re.sub(rb"\\(.)", rb"\1", out)


def decoded_runs(data, extra):
    """Every run of base64 digits, decoded from each of its first places."""
    pat = rb"[A-Za-z0-9" + re.escape(extra) + rb"]+"
    for m in re.finditer(pat, data):
        run = m.group(0).translate(bytes.maketrans(extra, b"+/"))
        for k in range(min(4, len(run))):
            bits = "".join(format(
                b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                b"0123456789+/".index(c), "06b") for c in run[k:])
            yield bytes(int(bits[i:i + 8], 2)
                        for i in range(0, len(bits) - 7, 8))


def forms(data):
    yield "as it is", data
    yield "percent-encoded", urllib.parse.unquote_to_bytes(data)
    yield "form-encoded", urllib.parse.unquote_to_bytes(
        data.replace(b"+", b" "))
    yield "JSON-escaped", unjson(data)


leaked = False
for path in sys.argv[1:]:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        print("%s: %s" % (path, e.strerror))
        sys.exit(2)
    for how, text in forms(data):
        for n, v in enumerate(values):
            if v in text:
                print("%s: value %d %s" % (path, n + 1, how))
                leaked = True
            for name, extra in B64.items():
                if any(v in d for d in decoded_runs(text, extra)):
                    print("%s: value %d in %s base64, %s" % (
                        path, n + 1, name, how))
                    leaked = True
sys.exit(1 if leaked else 0)
