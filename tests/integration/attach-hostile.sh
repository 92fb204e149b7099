#!/bin/sh
# A hostile process of the session's user on NAME.attach: a descriptor
# refused costs the session nothing; connections that never speak do not
# lock real commands out.  As root and as nobody.
. "$top_srcdir/tests/integration/lib.sh"

cp "$PINHOLE" "$T/pinhole"
HOSTILE="$top_srcdir/tests/integration/attach-hostile.py"
field() {	# the session's record member $2
	sed -n "s/.*\"$2\":\([0-9]*\).*/\1/p" "$W/xdg/pinhole/session-$1.json"
}

for MODE in root nobody; do
	W="$T/w/$MODE"
	mkdir -p "$W/log" && mkdir -m 700 "$W/xdg"
	[ "$MODE" = nobody ] && chown -R nobody "$W"
	as_mode "$T/pinhole" session start h1 --resolver 127.0.0.1:9 \
	    --log "$W/log/audit.log" >/dev/null 2>"$T/err" ||
	    fail "$MODE: start: $(cat "$T/err")"
	sock="$W/xdg/pinhole/h1.attach"

	# A connected TCP socket said to be the proxy listener: refused,
	# and its descriptor closed.
	as_mode /usr/bin/python3 "$HOSTILE" leak "$sock" "$(field h1 pid)" 20 \
	    >"$T/leak" 2>&1
	read -r _ fd0 fd1 _ <"$T/leak"
	[ "${fd0:-x}" = "${fd1:-y}" ] &&
	    ok "$MODE: 20 refused descriptors: $fd0 descriptors before and after" ||
	    fail "$MODE: refused descriptors leak: $(cat "$T/leak")"

	# 256 silent connections (the default --max-sandboxes) held open:
	# a real command still attaches.
	mkfifo "$W/hold"
	as_mode /usr/bin/python3 "$HOSTILE" idle "$sock" 256 \
	    <"$W/hold" >"$W/held" 2>&1 &
	idler=$!
	exec 3>"$W/hold"
	i=0
	while ! grep -q held "$W/held" && [ $i -lt 100 ]; do
		sleep 0.05; i=$((i + 1))
	done
	(cd "$W" && as_mode timeout 20 "$T/pinhole" run --session h1 -- true) \
	    2>"$T/err"
	rv=$?
	[ $rv = 0 ] && ok "$MODE: 256 silent connections do not lock out a command" ||
	    fail "$MODE: silent connections: $rv $(cat "$T/err")"
	exec 3>&-
	wait $idler
	as_mode "$T/pinhole" session stop h1 >/dev/null 2>&1 ||
	    fail "$MODE: stop h1"
done
finish
