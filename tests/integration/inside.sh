#!/bin/sh
# Inside pinhole's sandbox the person's commands say where they are and
# how the agent asks instead, and exit non-zero, as root and as nobody:
# run, allow, approve, pending, deny, watch, session, proxy, log and
# doctor.  Outside, the same variables alone (no sandbox's link) change
# nothing.  pinhole request outside a sandbox says what to do.
. "$top_srcdir/tests/integration/lib.sh"

need root dnsmasq setpriv
export ASAN_OPTIONS=detect_leaks=0
cp "$PINHOLE" "$T/pinhole" && chmod 755 "$T/pinhole"
mkdir -m 1777 "$T/w"
start_origin || { finish; exit 1; }

# Each person's command, run inside: its stderr and status, one file each.
cat >"$T/inside.sh" <<'EOS'
i=0
for c in "run -- true" "allow x.test" "approve r0123456789abcdef" \
    "pending" "deny r0123456789abcdef" "watch" "session list" \
    "session start s" "proxy" "log" "doctor"; do
	i=$((i + 1))
	# shellcheck disable=SC2086
	"$PINHOLE_BIN" $c </dev/null >"$W/out.$i" 2>"$W/err.$i"
	echo "$? $c" >"$W/rc.$i"
done
echo "$i" >"$W/count"
EOS
chmod 644 "$T/inside.sh"

for MODE in root nobody; do
	W="$T/w/$MODE"
	mkdir -p "$W/log" && mkdir -m 700 "$W/xdg"
	[ "$MODE" = nobody ] && chown -R nobody "$W"
	as_mode "$T/pinhole" run --allow 'allow-private 127.0.0.0/8' \
	    --resolver "127.0.0.1:$DNSP" --log "$W/log/audit.log" -- \
	    env W="$W" PINHOLE_BIN="$T/pinhole" sh "$T/inside.sh" \
	    >"$W/run.out" 2>"$W/run.err"
	if grep -q "user namespace" "$W/run.err"; then
		skip "no namespaces here: $(head -1 "$W/run.err")"
	fi
	n=$(cat "$W/count" 2>/dev/null)
	[ "$n" = 11 ] || fail "$MODE: ran $n of 11: $(cat "$W/run.err")"
	i=1
	while [ "$i" -le "${n:-0}" ]; do
		read -r rc c <"$W/rc.$i"
		want=1
		[ "$c" = "run -- true" ] && want=125
		name=${c%% *}
		if [ "$rc" = "$want" ] &&
		    grep -q "^pinhole $name: you are inside pinhole's sandbox, where the person's commands do not work: ask with \`pinhole request HOST\[:PORT\] --reason \.\.\.\`" "$W/err.$i" &&
		    [ "$(wc -l <"$W/err.$i")" = 1 ] && [ ! -s "$W/out.$i" ]; then
			ok "$MODE: inside, pinhole $c says so and exits $rc"
		else
			fail "$MODE: inside, pinhole $c: exit $rc: $(cat "$W/out.$i" "$W/err.$i")"
		fi
		i=$((i + 1))
	done

	# Outside, the sandbox's variables alone are no sandbox.
	as_mode env PINHOLE=1 PINHOLE_AGENT=http://10.253.0.1:3128 \
	    "$T/pinhole" pending >"$W/pending" 2>&1
	rc=$?
	[ $rc = 1 ] && ! grep -q "inside" "$W/pending" &&
	    grep -q "no running pinhole session" "$W/pending" &&
	    ok "$MODE: outside, PINHOLE=1 alone is not the sandbox" ||
	    fail "$MODE: outside: rc $rc $(cat "$W/pending")"
	env -u PINHOLE_AGENT -u http_proxy -u HTTP_PROXY \
	    "$T/pinhole" request x.test >"$W/request" 2>&1
	rc=$?
	[ $rc = 4 ] && grep -q "not a command run by pinhole run" "$W/request" &&
	    grep -q "pinhole run -- COMMAND" "$W/request" &&
	    ok "$MODE: outside, pinhole request says what to do" ||
	    fail "$MODE: request outside: rc $rc $(cat "$W/request")"
done
finish
