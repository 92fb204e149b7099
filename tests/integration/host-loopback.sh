#!/bin/sh
# A service on the host's own loopback (a registry mirror, a dev
# server) is reached from the sandbox as host.pinhole.internal:PORT,
# through the proxy and captured, once a rule names it exactly (or a
# grant for it); a wildcard does not open it, a deny closes it, and a
# try at 127.0.0.1 is refused with a text that names the way.  As root
# and as nobody, standalone and attached to a session.
. "$top_srcdir/tests/integration/lib.sh"

need curl
export ASAN_OPTIONS=detect_leaks=0
cp "$PINHOLE" "$T/pinhole" && chmod 755 "$T/pinhole"
mkdir -p "$T/www" && echo hello from the host >"$T/www/hello.txt"
chmod -R a+rX "$T/www"
HP=$(free_port)
bg python3 -m http.server "$HP" --bind 127.0.0.1 --directory "$T/www"
wait_port "$HP" || { finish; exit 1; }
H=host.pinhole.internal
CURL="curl -sS -m 10"

# pinhole run ($HOW: run, or attached to session s) as $MODE, with the
# policy file $W/policy; output in $T/out.
sandbox() {
	if [ "$MODE" = nobody ]; then
		set -- setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"
	fi
	if [ "$HOW" = session ]; then
		set -- "$@" run --session s
	else
		set -- "$@" run --policy "$W/cfg/policy" --resolver 127.0.0.1:9 \
		    --log "$W/log/audit.log"
	fi
	env HOME="$W" XDG_RUNTIME_DIR="$W/xdg" "$@" -- sh -c "$SCRIPT" \
	    >"$T/out" 2>&1
}
session() {	# start or stop session s as $MODE
	set -- "$T/pinhole" session "$@"
	if [ "$MODE" = nobody ]; then
		set -- setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"
	fi
	env HOME="$W" XDG_RUNTIME_DIR="$W/xdg" "$@" >/dev/null 2>"$T/err"
}
policy() {
	printf '%s\n' "$@" >"$W/cfg/policy"
	[ "$HOW" = session ] || return 0
	session stop s
	session start s --policy "$W/cfg/policy" --resolver 127.0.0.1:9 \
	    --log "$W/log/session.log" || fail "$MODE: session: $(cat "$T/err")"
}

for MODE in root nobody; do
	W="$T/w/$MODE"
	mkdir -p "$W/log" "$W/cfg" && mkdir -m 700 "$W/xdg"
	[ "$MODE" = nobody ] && chown -R nobody "$W"
	for HOW in run session; do
		policy "allow $H:$HP"
		SCRIPT="$CURL http://$H:$HP/hello.txt; $CURL --noproxy '*' http://$H:$HP/hello.txt"
		sandbox "$T/pinhole"
		[ "$(grep -c 'hello from the host' "$T/out")" = 2 ] &&
		    ok "$MODE $HOW: allow $H:$HP reaches the host's loopback, proxied and captured" ||
		    fail "$MODE $HOW: $(cat "$T/out")"

		policy "allow *.pinhole.internal:$HP"
		SCRIPT="$CURL http://$H:$HP/hello.txt"
		sandbox "$T/pinhole"
		grep -q "a wildcard never opens the host's loopback: the policy needs the rule 'allow $H:$HP'" "$T/out" &&
		    ! grep -q 'hello from the host' "$T/out" &&
		    ok "$MODE $HOW: a wildcard does not open it, and says what does" ||
		    fail "$MODE $HOW: wildcard: $(cat "$T/out")"

		policy "allow $H:$HP" "deny *.internal"
		sandbox "$T/pinhole"
		! grep -q 'hello from the host' "$T/out" &&
		    ok "$MODE $HOW: a deny closes it" ||
		    fail "$MODE $HOW: deny: $(cat "$T/out")"

		policy ""
		SCRIPT="$CURL --noproxy '' http://127.0.0.1:$HP/hello.txt"
		sandbox "$T/pinhole"
		grep -q "a service on the host's loopback is $H (rule: 'allow $H:PORT')" "$T/out" &&
		    ok "$MODE $HOW: 127.0.0.1 through the gateway is refused, naming $H" ||
		    fail "$MODE $HOW: 127.0.0.1: $(cat "$T/out")"
		[ "$HOW" = session ] && session stop s
	done
done
finish
