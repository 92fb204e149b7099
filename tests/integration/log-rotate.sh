#!/bin/sh
# The sandbox tries to rotate its own refusals out of the log: a few
# refused requests, then a flood of allowed ones with 1 KB paths, with a
# small --log-max-size.  The rotation that deletes the file holding the
# refusals writes a "drop" line in the chain that counts them (and every
# line deleted, with its seq range and the chain it ends with), and says
# so on stderr; `pinhole log verify` of the files kept names what is
# missing: the lines dropped, the refusals among them, and the session
# whose start is gone (exit 3, never "intact").  With a small log budget
# the flood is summed up by kind, every request counted, the refusals
# written one by one.  As root and as nobody.
. "$top_srcdir/tests/integration/lib.sh"

PY=/usr/bin/python3
need root dnsmasq python3 $PY
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY no_proxy NO_PROXY ALL_PROXY
export ASAN_OPTIONS=detect_leaks=0
cp "$PINHOLE" "$T/pinhole" && chmod 755 "$T/pinhole"
mkdir -m 1777 "$T/w"
start_origin
printf "allow origin.test:%s\nallow-private 127.0.0.1/32\n" "$HP" >"$T/cfg/policy"
chmod -R a+rX "$T/cfg"

# In the sandbox: $1 refused requests, then $2 allowed ones with 1 KB
# paths, all through the gateway ($HTTP_PROXY), each on a connection of
# its own; prints how many of each got the answer expected.
cat >"$T/flood.py" <<'EOF'
import os, socket, sys
proxy = os.environ["HTTP_PROXY"].split("//")[1].rstrip("/")
host, port = proxy.rsplit(":", 1)
def get(url):
    s = socket.create_connection((host, int(port)), 10)
    s.sendall(b"GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
              % url.encode())
    data = b""
    while True:
        b = s.recv(65536)
        if not b:
            break
        data += b
    s.close()
    return data.split(b" ", 2)[1]
refused = sum(get("http://denied%d.test/" % i) == b"403"
              for i in range(int(sys.argv[1])))
origin = sys.argv[3]
allowed = sum(get("http://%s/%04d%s" % (origin, i, "a" * 1024)) == b"404"
              for i in range(int(sys.argv[2])))
print("refused", refused, "allowed", allowed)
EOF
chmod 644 "$T/flood.py"

for MODE in root nobody; do
	L="$T/log/$MODE"
	mkdir -p "$L" "$T/w/$MODE"
	[ "$MODE" = nobody ] && chown nobody "$L" "$T/w/$MODE"
	set -- env HOME="$T/w/$MODE" "$T/pinhole" run --policy "$T/cfg/policy" \
	    --resolver "127.0.0.1:$DNSP" --log "$L/audit.log" \
	    --log-max-size 64K --log-keep 2 -- \
	    $PY "$T/flood.py" 3 1500 "origin.test:$HP"
	if [ "$MODE" = nobody ]; then
		set -- env XDG_RUNTIME_DIR="$T/xdg-nobody" setpriv \
		    --reuid=nobody --regid=nogroup --clear-groups "$@"
	fi
	"$@" >"$T/out" 2>"$T/err"
	rc=$?
	if [ "$rc" -eq 0 ] && grep -qx 'refused 3 allowed 1500' "$T/out"; then
		ok "$MODE: 3 refused, then 1500 allowed requests"
	else
		fail "$MODE: the run: exit $rc: $(cat "$T/out") $(tail -3 "$T/err")"
	fi
	cat "$L/audit.log.2" "$L/audit.log.1" "$L/audit.log" >"$T/all" 2>/dev/null

	# The refusals are kept, or the drop line of the rotation that
	# deleted them counts them, and stderr said so.
	kept=$(grep -c '"event":"request","verdict":"deny"' "$T/all")
	denied=$(grep '"event":"drop"' "$L/audit.log" |
	    sed -n 's/.*"denied":\([0-9]*\).*/\1/p' | tail -1)
	if [ $((kept + ${denied:-0})) -ge 3 ] && [ "${denied:-0}" -ge 3 ] &&
	    grep -q 'rotation deleted .*audit.log.2, which held lines of this session: [0-9]* line(s) deleted so far, seq 1 to [0-9]*, [3-9][0-9]* of them refusals: recorded in' "$T/err"; then
		ok "$MODE: the refusals deleted are counted by a drop line ($denied), and said"
	else
		fail "$MODE: refusals: $kept kept, drop line says ${denied:-none}: $(grep rotation "$T/err" | tail -1)"
	fi

	# verify of the files kept: intact chain, but not whole (exit 3).
	"$T/pinhole" log verify "$L/audit.log.2" "$L/audit.log.1" \
	    "$L/audit.log" >"$T/verify" 2>&1
	rv=$?
	if [ $rv -eq 3 ] &&
	    grep -q "^LINES DROPPED: [0-9]* drop record(s) in the log: rotation deleted [0-9]* line(s) of a running session, $denied of them refusals" "$T/verify" &&
	    grep -q '^INCOMPLETE: session run-[0-9a-f]* (.*audit.log.2:[0-9]*, seq [0-9]* to [0-9]*): its start is not in the files given' "$T/verify" &&
	    grep -q '^chain intact otherwise' "$T/verify" &&
	    ! grep -q '^intact' "$T/verify"; then
		ok "$MODE: verify names what is missing, exit 3"
	else
		fail "$MODE: verify: exit $rv: $(cat "$T/verify")"
	fi

	# A budget of one line and 1K a second: past its first ten
	# seconds' worth, the flood is summed up by kind, and every request
	# is in the log, one by one or counted; the refusals one by one.
	L="$T/log/$MODE-budget"
	mkdir -p "$L"
	[ "$MODE" = nobody ] && chown nobody "$L"
	set -- env HOME="$T/w/$MODE" "$T/pinhole" run --policy "$T/cfg/policy" \
	    --resolver "127.0.0.1:$DNSP" --log "$L/audit.log" \
	    --log-budget 1,1K -- $PY "$T/flood.py" 3 300 "origin.test:$HP"
	if [ "$MODE" = nobody ]; then
		set -- env XDG_RUNTIME_DIR="$T/xdg-nobody" setpriv \
		    --reuid=nobody --regid=nogroup --clear-groups "$@"
	fi
	"$@" >"$T/out" 2>"$T/err"
	grep -qx 'refused 3 allowed 300' "$T/out" ||
	    fail "$MODE: budget: the run: $(cat "$T/out") $(tail -3 "$T/err")"
	summed=$(sed -n 's/.*"event":"request","verdict":"allow".*"detail":"summed up: over the log budget of 1 lines and 1024 bytes a second","count":\([0-9]*\),"first":"[-0-9T:.Z]*","last":"[-0-9T:.Z]*",.*/\1/p' \
	    "$L/audit.log" | awk '{ n += $1 } END { print n + 0 }')
	single=$(grep '"event":"request","verdict":"allow"' "$L/audit.log" |
	    grep -vc '"count":')
	refused=$(grep -c '"event":"request","verdict":"deny"' "$L/audit.log")
	if [ "$summed" -gt 0 ] && [ $((summed + single)) -eq 300 ] &&
	    [ "$single" -lt 150 ] && [ "$refused" -eq 3 ]; then
		ok "$MODE: past the budget: $summed requests summed up, $single one by one, 3 refusals one by one"
	else
		fail "$MODE: budget: $summed summed up, $single one by one, $refused refusals"
	fi
	tail -1 "$L/audit.log" | grep -q '"event":"stop"' &&
	    ok "$MODE: what was summed up is written before the stop line" ||
	    fail "$MODE: the last line: $(tail -1 "$L/audit.log")"
done

finish
