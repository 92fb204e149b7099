#!/bin/sh
# pinhole log: filters, --json, --summary, --propose, the default log,
# and verify's exit codes (3: lines recorded as lost, a session not
# whole), over a
# log made by an independent implementation of the documented chain
# (python3, docs/audit-log.md "The chain").
. "$top_srcdir/tests/integration/lib.sh"
need python3

# Write a chained log: gen.py OUT [KEYFILE|-] [loss]
cat >"$T/gen.py" <<'PY'
import hashlib, hmac, json, sys
out = sys.argv[1]
key = None
if len(sys.argv) > 2 and sys.argv[2] != "-":
    key = open(sys.argv[2], "rb").read()
def H(data):
    if key is None:
        return hashlib.sha256(data).digest()
    return hmac.new(key, data, hashlib.sha256).digest()
events = [
    dict(event="start", detail="listening on 127.0.0.1:3128"),
    dict(event="connect", verdict="allow", reason="rule", session="s1",
         host="pypi.org", port=443, via="connect", rule="policy:1"),
    dict(event="close", session="s1", host="pypi.org", port=443,
         bytes_up=1000, bytes_down=50000, ms=120),
    dict(event="connect", verdict="deny", reason="default-deny",
         session="s1", host="evil.example.net", port=443, via="connect"),
    dict(event="connect", verdict="deny", reason="default-deny",
         session="s2", host="evil.example.net", port=80, via="transparent"),
    dict(event="dns", verdict="deny", session="s2", qname="x.exfil.test",
         qtype="TXT", answer="NXDOMAIN"),
    dict(event="connect", verdict="allow", reason="rule", session="s2",
         host="files.pythonhosted.org", port=443, via="connect"),
    dict(event="close", session="s2", host="files.pythonhosted.org",
         port=443, bytes_up=10, bytes_down=900000, ms=800),
    dict(event="connect", verdict="deny", reason="default-deny",
         session="s2", host="esc\u001b[31m.test", port=443, via="connect"),
]
# "v2": schema 2 lines follow, as after an upgrade: two sandboxes of
# session s3, one with a quoted command.
v2 = len(sys.argv) > 3 and sys.argv[3].startswith("v2")
if v2:
    events += [
        dict(event="connect", verdict="allow", reason="rule", session="s3",
             sandbox="sbA", cmd="pip install 'a b'", pid=4242, conn=1,
             host="pypi.org", port=443, via="connect"),
        dict(event="close", session="s3", sandbox="sbA",
             cmd="pip install 'a b'", pid=4242, conn=1, host="pypi.org",
             port=443, bytes_up=1, bytes_down=2, ms=3),
        dict(event="connect", verdict="deny", reason="default-deny",
             session="s3", sandbox="sbB", cmd="curl x", pid=4343, conn=2,
             host="evil.example.net", port=443, via="connect"),
        dict(event="request", session="s3", sandbox="sbB", cmd="curl x",
             pid=4343, request_id="r0001", host="evil.example.net",
             port=443, via="agent"),
    ]
    # "v2whole": the session from its start to its stop.
    if sys.argv[3] == "v2whole":
        events.insert(9, dict(event="start", session="s3",
                              detail="listening", gateway_pid=1))
        events.append(dict(event="stop", session="s3"))
elif len(sys.argv) > 3:
    events.insert(3, dict(event="loss", reason="No space left on device",
         detail="the log could not be written; new connections were "
         "refused meanwhile", lost=429, lost_bytes=51234,
         lost_first="2024-12-02T12:02:10.000Z",
         lost_last="2024-12-02T12:02:50.000Z"))
chain = H(b"pinhole-audit-v1")
with open(out, "w", encoding="utf-8") as f:
    for i, e in enumerate(events):
        rec = dict(schema=2 if e.get("session") == "s3" else 1,
                   ts="2024-12-02T12:%02d:00.000Z" % i)
        rec.update(e)
        body = json.dumps(rec, separators=(",", ":"), ensure_ascii=False)
        body = body[:-1] + ',"seq":%d' % (i + 1)
        chain = H(chain + body.encode())
        f.write(body + ',"chain":"%s"}\n' % chain.hex())
PY

python3 "$T/gen.py" "$T/audit.log"
printf '%s\n' 0123456789abcdef0123456789abcdef >"$T/key"
python3 "$T/gen.py" "$T/keyed.log" "$T/key"

# verify: exit 0 for an intact log, 1 with the bad line named, 2 on misuse.
expect "verify an intact log" "$PINHOLE" log verify "$T/audit.log"
grep -q '^intact: 9 lines in 1 file(s), seq 1 to 9' "$T/out" ||
    fail "verify summary: $(cat "$T/out")"
expect "verify a keyed log with its key" \
    "$PINHOLE" log verify --key "$T/key" "$T/keyed.log"
python3 "$T/gen.py" "$T/loss.log" - loss
"$PINHOLE" log verify "$T/loss.log" >"$T/out" 2>&1
[ $? -eq 3 ] && grep -q '^LINES LOST: 1 loss record(s) in the log: 429 line(s) could not be written' "$T/out" &&
    grep -q '^  .*loss.log:4: 429 line(s), 51234 bytes, not written from 2024-12-02T12:02:10.000Z to 2024-12-02T12:02:50.000Z: No space left on device$' "$T/out" &&
    grep -q '^chain intact otherwise: 10 lines' "$T/out" && ! grep -q '^intact' "$T/out" &&
    ok "verify reports the lines recorded as lost, exit 3" ||
    fail "verify loss: $(cat "$T/out")"
expect_fail "verify a keyed log without its key" \
    "$PINHOLE" log verify "$T/keyed.log"
grep -q 'keyed.log:1: edited, or the wrong key' "$T/out" ||
    fail "wrong key message: $(cat "$T/out")"
sed 's/pypi.org/pypi.com/' "$T/audit.log" >"$T/edited.log"
"$PINHOLE" log verify "$T/edited.log" >"$T/out" 2>&1
[ $? -eq 1 ] && grep -q 'edited.log:2: edited' "$T/out" &&
    ok "an edited line is named" || fail "edited: $(cat "$T/out")"
sed 5d "$T/audit.log" >"$T/deleted.log"
"$PINHOLE" log verify "$T/deleted.log" >"$T/out" 2>&1
[ $? -eq 1 ] && grep -q 'deleted.log:5: deleted: 1 line' "$T/out" &&
    ok "a deleted line is named" || fail "deleted: $(cat "$T/out")"
head -c -20 "$T/audit.log" >"$T/cut.log"
"$PINHOLE" log verify "$T/cut.log" >"$T/out" 2>&1
[ $? -eq 1 ] && grep -q 'cut.log:9: cut short' "$T/out" &&
    ok "a file cut short is reported" || fail "cut: $(cat "$T/out")"
"$PINHOLE" log verify >"$T/out" 2>&1
[ $? -eq 2 ] && grep -q "$T/home/.local/state/pinhole/audit.log" "$T/out" &&
    ok "verify with no file and no default log: exit 2" ||
    fail "verify no file: $(cat "$T/out")"
mkdir -p "$T/state/pinhole"
cp "$T/audit.log" "$T/state/pinhole/audit.log"
XDG_STATE_HOME="$T/state" "$PINHOLE" log verify >"$T/out" 2>&1 &&
    grep -q '^intact: 9 lines' "$T/out" &&
    ok "verify with no file checks the default log" ||
    fail "verify default: $(cat "$T/out")"
XDG_STATE_HOME="$T/state" "$PINHOLE" log --json >"$T/out" </dev/null &&
    cmp -s "$T/out" "$T/audit.log" &&
    ok "pinhole log with no file reads the default log" ||
    fail "log default: $(cat "$T/out")"
# Nothing yet: pinhole log and --summary say so, and what to do; exit 0.
for opt in "" --summary; do
	# shellcheck disable=SC2086
	XDG_STATE_HOME="$T/none" "$PINHOLE" log $opt >"$T/out" 2>"$T/err"
	[ $? = 0 ] && [ ! -s "$T/out" ] &&
	    grep -q "^pinhole log: nothing logged yet: no audit log at $T/none/pinhole/audit.log.*pinhole run -- COMMAND" "$T/err" &&
	    ok "log $opt with no log yet says what to do" ||
	    fail "log $opt, no log: $(cat "$T/out" "$T/err")"
done
: >"$T/empty.log"
"$PINHOLE" log --summary "$T/empty.log" >"$T/out" 2>"$T/err"
[ $? = 0 ] && [ ! -s "$T/out" ] &&
    grep -q "^pinhole log: nothing logged yet in $T/empty.log" "$T/err" &&
    ok "log --summary of an empty log says nothing is logged yet" ||
    fail "empty log: $(cat "$T/out" "$T/err")"
"$PINHOLE" log --host nowhere.test "$T/audit.log" >"$T/out" 2>"$T/err"
[ $? = 0 ] && grep -q "^pinhole log: none of the 9 lines matches: loosen" "$T/err" &&
    ok "log whose filters match nothing says so" ||
    fail "no match: $(cat "$T/out" "$T/err")"
"$PINHOLE" log verify "$T/nonexistent" >"$T/out" 2>&1
[ $? -eq 2 ] && ok "verify of a missing file: exit 2" ||
    fail "verify missing: $(cat "$T/out")"

# Filters and output forms.
"$PINHOLE" log --blocked "$T/audit.log" >"$T/out"
[ "$(grep -c deny "$T/out")" -eq 4 ] && ! grep -q allow "$T/out" &&
    ok "--blocked" || fail "--blocked: $(cat "$T/out")"
grep -q 'esc\\u001b\[31m.test:443' "$T/out" &&
    ok "terminal output escapes control characters" ||
    fail "escape: $(cat "$T/out")"
"$PINHOLE" log --json --host '*.pythonhosted.org' "$T/audit.log" >"$T/out"
[ "$(wc -l <"$T/out")" -eq 2 ] &&
    python3 -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1])]' "$T/out" &&
    ok "--json --host GLOB" || fail "--json --host: $(cat "$T/out")"
"$PINHOLE" log --json --session s1 "$T/audit.log" >"$T/out"
[ "$(wc -l <"$T/out")" -eq 3 ] && ok "--session" || fail "--session: $(cat "$T/out")"
"$PINHOLE" log --json --since 2024-12-02T12:06 "$T/audit.log" >"$T/out"
[ "$(wc -l <"$T/out")" -eq 3 ] && ok "--since TIME" || fail "--since: $(cat "$T/out")"
"$PINHOLE" log --json --since 1h "$T/audit.log" >"$T/out"
[ "$(wc -l <"$T/out")" -eq 0 ] && ok "--since 1h (the log is older)" ||
    fail "--since 1h: $(cat "$T/out")"
"$PINHOLE" log --since yesterday "$T/audit.log" >"$T/out" 2>&1
[ $? -eq 2 ] && ok "a bad --since is a usage error" || fail "bad --since"
"$PINHOLE" log --json - <"$T/audit.log" >"$T/out"
cmp -s "$T/out" "$T/audit.log" && ok "standard input, --json as is" ||
    fail "stdin --json"
"$PINHOLE" log "$T/audit.log" >"$T/out"
head -1 "$T/out" | grep -q '^TIME (UTC) *EVENT *VERDICT *SESSION *TARGET' &&
    grep -q '^2024-12-02 12:01:00 connect allow s1 *pypi.org:443 *via=connect' "$T/out" &&
    ok "columns" || fail "columns: $(cat "$T/out")"
! grep -q "$(printf '\033')" "$T/out" && ok "no colour when not a terminal" ||
    fail "colour on a pipe"
if command -v script >/dev/null; then
	script -qec "'$PINHOLE' log --blocked '$T/audit.log'" /dev/null >"$T/out" </dev/null
	grep -q "$(printf '\033')\[31mdeny" "$T/out" && ok "denials in red on a terminal" ||
	    fail "colour on a terminal: $(cat -v "$T/out")"
	NO_COLOR=1 script -qec "'$PINHOLE' log --blocked '$T/audit.log'" /dev/null >"$T/out" </dev/null
	! grep -q "$(printf '\033')\[31m" "$T/out" && ok "NO_COLOR" || fail "NO_COLOR"
fi
printf 'not json\n' >>"$T/audit.log"
"$PINHOLE" log --json "$T/audit.log" >"$T/out" 2>"$T/err"
grep -q '1 line(s) were not audit lines' "$T/err" && ok "bad lines skipped, counted" ||
    fail "bad line: $(cat "$T/err")"

# Schema 2 after schema 1 in one file: verified, read, filtered by
# sandbox; the columns name the sandbox.
python3 "$T/gen.py" "$T/v2.log" - v2
python3 "$T/gen.py" "$T/v2whole.log" - v2whole
expect "verify schema 1 and 2 lines in one chain" "$PINHOLE" log verify "$T/v2whole.log"
grep -q '^intact: 15 lines' "$T/out" || fail "verify v2: $(cat "$T/out")"
# Schema 2 names the gateway's session: one without its start and its
# stop line is not whole (exit 3); --partial lets it begin mid-way.
"$PINHOLE" log verify "$T/v2.log" >"$T/out" 2>&1
[ $? -eq 3 ] &&
    grep -q '^INCOMPLETE: session s3 (.*v2.log:10, seq 10 to 13): its start is not in the files given: they begin in its middle' "$T/out" &&
    grep -q '^INCOMPLETE: session s3 (.*v2.log:10, 2024-12-02T12:09:00.000Z, seq 10 to 13): no stop line: its start line, with its gateway.s pid, is not in the files given' "$T/out" &&
    grep -q '^chain intact otherwise: 13 lines' "$T/out" &&
    ok "a session without its start and its stop: named, exit 3" ||
    fail "verify v2 session: $(cat "$T/out")"
"$PINHOLE" log verify --partial "$T/v2.log" >"$T/out" 2>&1
[ $? -eq 3 ] && ! grep -q 'its start is not' "$T/out" &&
    grep -q '^INCOMPLETE: session s3 .*no stop line' "$T/out" &&
    ok "--partial: a session begun in an earlier file is no gap" ||
    fail "verify --partial: $(cat "$T/out")"
"$PINHOLE" log --json --sandbox sbA "$T/v2.log" >"$T/out"
[ "$(wc -l <"$T/out")" -eq 2 ] && [ "$(grep -c '"sandbox":"sbA"' "$T/out")" -eq 2 ] &&
    ok "--sandbox" || fail "--sandbox: $(cat "$T/out")"
"$PINHOLE" log --json --sandbox sbB --blocked "$T/v2.log" >"$T/out"
[ "$(wc -l <"$T/out")" -eq 1 ] && grep -q '"event":"connect"' "$T/out" &&
    ok "--sandbox with --blocked" || fail "--sandbox --blocked: $(cat "$T/out")"
"$PINHOLE" log --json --sandbox nosuch "$T/v2.log" >"$T/out"
[ ! -s "$T/out" ] && ok "--sandbox matches no schema-1 line" ||
    fail "--sandbox nosuch: $(cat "$T/out")"
"$PINHOLE" log "$T/v2.log" >"$T/out"
grep -q '^2024-12-02 12:09:00 connect allow s3 *pypi.org:443 *sandbox=sbA via=connect' "$T/out" &&
    grep -q '^2024-12-02 12:01:00 connect allow s1 *pypi.org:443 *via=connect' "$T/out" &&
    ok "columns name the sandbox of schema 2 lines" || fail "v2 columns: $(cat "$T/out")"
"$PINHOLE" log --summary "$T/v2.log" >"$T/out" 2>/dev/null
sed -n '/^Sessions/,$p' "$T/out" | grep -q '^ *2 *1 *1 *1 *2  s3$' &&
    ok "--summary counts schema 2 sessions" || fail "v2 summary: $(cat "$T/out")"

# Summary of requests the gateway read, by host and method; and of an
# empty table.
cat >"$T/req.log" <<'EOF'
{"schema":2,"ts":"2024-12-02T12:00:00.000Z","event":"request","verdict":"allow","host":"api.test","port":443,"method":"GET","path":"/v1/a","status":200,"bytes_up":10,"bytes_down":300}
{"schema":2,"ts":"2024-12-02T12:00:01.000Z","event":"request","verdict":"allow","host":"api.test","port":443,"method":"GET","path":"/v1/b","status":200,"bytes_up":10,"bytes_down":200}
{"schema":2,"ts":"2024-12-02T12:00:02.000Z","event":"request","verdict":"deny","reason":"constraint","host":"api.test","port":443,"method":"POST","path":"/v1/a","status":403}
EOF
"$PINHOLE" log --summary "$T/req.log" >"$T/out" 2>&1
sed -n '/^Requests by host and method/,/^$/p' "$T/out" | grep -q '^ *2 *2 *0 *20 *500  GET *api.test$' &&
    sed -n '/^Requests by host and method/,/^$/p' "$T/out" | grep -q '^ *1 *0 *1 *0 *0  POST *api.test$' &&
    ok "--summary by host and method" || fail "method summary: $(cat "$T/out")"
printf '{"schema":2,"ts":"2024-12-02T12:00:00.000Z","event":"stop"}\n' >"$T/empty.log"
"$PINHOLE" log --summary "$T/empty.log" >"$T/out" 2>&1 &&
    ok "--summary of a log with nothing to count" || fail "empty summary: $(cat "$T/out")"

# --propose: the lines that would have allowed the refusals; a host that
# is none (the escape sequence) is counted, never printed.
"$PINHOLE" log --propose "$T/audit.log" >"$T/out" 2>/dev/null
grep -Eq '^allow evil\.example\.net:80,443 +# 2 refused$' "$T/out" &&
    grep -Eq '^allow x\.exfil\.test +# 1 refused$' "$T/out" &&
    grep -qx '# 1 refused for other reasons (pinhole log --blocked)' "$T/out" &&
    ! grep -q "$(printf '\033')" "$T/out" &&
    ok "--propose" || fail "--propose: $(cat "$T/out")"
"$PINHOLE" log --propose --session s1 "$T/audit.log" >"$T/out" 2>/dev/null
[ "$(grep -v '^#' "$T/out")" = "$(printf 'allow evil.example.net:443%14s# 1 refused' '')" ] &&
    ok "--propose --session" || fail "--propose --session: $(cat "$T/out")"
"$PINHOLE" log --propose --json "$T/audit.log" >"$T/out" 2>&1
[ $? -eq 2 ] && ok "--propose and --json do not go together" ||
    fail "--propose --json: $(cat "$T/out")"

# Summary.
"$PINHOLE" log --summary "$T/audit.log" >"$T/out" 2>/dev/null
sed -n '/^Top blocked/,/^$/p' "$T/out" | grep -q '^ *2  evil.example.net$' &&
    sed -n '/^Top allowed/,/^$/p' "$T/out" | sed -n 3p |
        grep -q '^ *10 *900000 *1  files.pythonhosted.org$' &&
    grep -q '^ *3  connect *deny *default-deny$' "$T/out" &&
    sed -n '/^Sessions/,$p' "$T/out" | grep -q '^ *4 *1 *3 *10 *900000  s2$' &&
    ok "--summary" || fail "--summary: $(cat "$T/out")"

finish
