#!/bin/sh
# The sandbox cannot rewrite its own policy, for this run or the next:
# not by swapping a symlink on the way, renaming the policy's directory
# or a parent of the user's policy, writing a dotfiles target, or through
# a file replaced from outside while it runs; nor read the log key or
# change the log; a reload never reads a file the sandbox could change;
# a policy or log whose directory holds the working directory or HOME is
# refused; AF_VSOCK only with allow-vsock.  As root and as nobody.
. "$top_srcdir/tests/integration/lib.sh"

PY=/usr/bin/python3
need root dnsmasq curl setpriv $PY
export ASAN_OPTIONS=detect_leaks=0
cp "$PINHOLE" "$T/pinhole" && chmod 755 "$T/pinhole"
mkdir -m 1777 "$T/w"
XC=

DNSP=$(free_port)
bg dnsmasq -k -u root -p "$DNSP" --listen-address=127.0.0.1 \
    --bind-interfaces --no-resolv --no-hosts --pid-file= \
    --address=/test/127.0.0.1
mkdir "$T/www" && echo hello >"$T/www/hello.txt" && chmod -R a+rX "$T/www"
HP=$(free_port)
bg $PY -m http.server "$HP" --bind 127.0.0.1 --directory "$T/www"
wait_port "$DNSP" && wait_port "$HP" || { finish; exit 1; }

# What the sandbox runs: an attack ($1), then whether evil.test got in
# (the watcher has had time to reload: 2 s of tries).
cat >"$T/attack.sh" <<'EOF'
[ "$1" = none ] || { sh -c "$1" >/dev/null 2>&1 && echo "ATTACK-WORKED"; }
i=0
while [ $i -lt 20 ]; do
	code=$(curl -s -o /dev/null -w '%{http_code}' -m 5 "http://evil.test:$HP/hello.txt")
	[ "$code" = 200 ] && { echo ESCAPED; exit 0; }
	sleep 0.1; i=$((i + 1))
done
echo HELD
EOF
chmod 644 "$T/attack.sh"

# Run as the mode's user, in $W, with its own HOME and runtime directory.
as_mode() {
	if [ "$MODE" = nobody ]; then
		set -- setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"
	fi
	(cd "$W" && env HOME="$W/home" XDG_RUNTIME_DIR="$W/xdg" \
	    ${XC:+XDG_CONFIG_HOME="$XC"} "$@")
}

# pinhole run [options...] -- sh attack.sh ATTACK: output in $W/out.
sandbox() {
	attack=$1; shift
	as_mode "$T/pinhole" run --resolver "127.0.0.1:$DNSP" \
	    --allow 'allow-private 127.0.0.0/8' "$@" -- \
	    env HP="$HP" W="$W" sh "$T/attack.sh" "$attack" >"$W/out" 2>&1
}

# Expect the attack to have failed and evil.test to be refused still.
held() {
	if grep -q ESCAPED "$W/out"; then
		fail "$MODE: $1: the sandbox's own rule took effect"
	elif grep -q ATTACK-WORKED "$W/out"; then
		fail "$MODE: $1: the attack's file operations went through"
	elif grep -q HELD "$W/out"; then
		ok "$MODE: $1: refused, the policy stays"
	else
		fail "$MODE: $1: $(tail -3 "$W/out")"
	fi
}

# A fresh work directory for the mode's user.
fresh() {
	W=$T/w/$MODE
	rm -rf "$W"
	mkdir -p "$W/home" "$W/xdg" "$W/p" "$W/q" "$W/log"
	printf 'allow evil.test:%s\nallow-private 127.0.0.0/8\n' "$HP" >"$W/home/evil.policy"
	printf 'allow good.test:%s\n' "$HP" >"$W/p/policy"
	chmod 700 "$W/xdg"
	[ "$MODE" = nobody ] && chown -R nobody:nogroup "$W"
	return 0
}

for MODE in root nobody; do
	# A symlinked policy path: the link swapped for one to the sandbox's file.
	fresh
	as_mode ln -s policy "$W/p/link"
	sandbox "ln -s $W/home/evil.policy $W/p/link.new && mv -T $W/p/link.new $W/p/link" \
	    --policy "$W/p/link"
	held "swapping a symlinked policy path"
	[ "$(readlink "$W/p/link")" = policy ] ||
	    fail "$MODE: the link now points at $(readlink "$W/p/link")"
	# ... and the link's target in another directory, written directly.
	fresh
	mv "$W/p/policy" "$W/q/real.policy" && as_mode ln -s "$W/q/real.policy" "$W/p/link"
	sandbox "cat $W/home/evil.policy >>$W/q/real.policy" --policy "$W/p/link"
	held "writing the target of a symlinked policy"
	sandbox "mv $W/q $W/q.old && mkdir $W/q && cp $W/home/evil.policy $W/q/real.policy" \
	    --policy "$W/p/link"
	held "renaming the directory of a symlinked policy's target"

	# Renaming the policy file's directory, or a parent of it.
	fresh
	mkdir "$W/p/cfg" && mv "$W/p/policy" "$W/p/cfg/policy"
	[ "$MODE" = nobody ] && chown -R nobody "$W/p"
	sandbox "mv $W/p/cfg $W/p/cfg.old && mkdir $W/p/cfg && cp $W/home/evil.policy $W/p/cfg/policy" \
	    --policy "$W/p/cfg/policy"
	held "renaming the policy's directory"
	sandbox "mv $W/p $W/p.old && mkdir -p $W/p/cfg && cp $W/home/evil.policy $W/p/cfg/policy" \
	    --policy "$W/p/cfg/policy"
	held "renaming a parent of the policy's directory"

	# The user's policy: a parent renamed, for this run and the next.
	fresh
	mkdir -p "$W/home/.config/pinhole" && cp "$W/p/policy" "$W/home/.config/pinhole/policy"
	[ "$MODE" = nobody ] && chown -R nobody "$W/home"
	sandbox "mv $W/home/.config $W/home/.config.old && mkdir -p $W/home/.config/pinhole && cp $W/home/evil.policy $W/home/.config/pinhole/policy"
	held "renaming ~/.config"
	sandbox none
	held "the next run, after renaming ~/.config"
	grep -q evil "$W/home/.config/pinhole/policy" &&
	    fail "$MODE: the user's policy is the sandbox's now"
	# The same through $XDG_CONFIG_HOME.
	mkdir -p "$W/xc/pinhole" && cp "$W/p/policy" "$W/xc/pinhole/policy"
	[ "$MODE" = nobody ] && chown -R nobody "$W/xc"
	XC=$W/xc
	sandbox "mv $W/xc $W/xc.old && mkdir -p $W/xc/pinhole && cp $W/home/evil.policy $W/xc/pinhole/policy"
	held "renaming \$XDG_CONFIG_HOME"
	sandbox none
	held "the next run, after renaming \$XDG_CONFIG_HOME"
	XC=
	# A dotfiles symlink: ~/.config/pinhole/policy -> ~/dot/policy.
	fresh
	mkdir -p "$W/home/.config/pinhole" "$W/home/dot"
	cp "$W/p/policy" "$W/home/dot/policy"
	ln -s ../../dot/policy "$W/home/.config/pinhole/policy"
	[ "$MODE" = nobody ] && chown -R -h nobody "$W/home"
	sandbox "cat $W/home/evil.policy >>$W/home/dot/policy"
	held "writing a dotfiles policy"
	sandbox "mv $W/home/dot $W/home/dot.old && mkdir $W/home/dot && cp $W/home/evil.policy $W/home/dot/policy"
	held "renaming the dotfiles directory"
	sandbox none
	held "the next run, after the dotfiles attacks"

	# A policy file replaced from outside while the command runs (as an
	# editor or `pinhole allow` does) stays read-only inside.
	fresh
	cat >"$W/p/inside.sh" <<EOF
touch $W/home/started
i=0; while [ ! -e $W/home/replaced ] && [ \$i -lt 600 ]; do sleep 0.1; i=\$((i+1)); done
i=0; until curl -sf -o /dev/null -m 5 http://other.test:$HP/hello.txt; do
	i=\$((i+1)); [ \$i -lt 300 ] || { echo "no reload"; break; }; sleep 0.1
done
cat $W/home/evil.policy >>$W/p/policy 2>/dev/null && echo ATTACK-WORKED
EOF
	[ "$MODE" = nobody ] && chown -R nobody "$W/p"
	as_mode "$T/pinhole" run --resolver "127.0.0.1:$DNSP" \
	    --allow 'allow-private 127.0.0.0/8' --policy "$W/p/policy" -- \
	    env HP="$HP" W="$W" sh -c "sh $W/p/inside.sh; sh $T/attack.sh none" \
	    >"$W/out" 2>&1 &
	runpid=$!
	# The command runs: its gateway watches the policy.
	i=0
	while [ ! -e "$W/home/started" ] && kill -0 $runpid 2>/dev/null &&
	    [ $i -lt 600 ]; do
		sleep 0.1; i=$((i + 1))
	done
	as_mode "$T/pinhole" allow --policy "$W/p/policy" "other.test:$HP" >/dev/null ||
	    fail "$MODE: pinhole allow from outside failed"
	as_mode touch "$W/home/replaced"
	wait $runpid
	grep -q "no reload" "$W/out" &&
	    fail "$MODE: the policy replaced from outside was not reloaded"
	held "writing a policy file replaced from outside"

	# The log key is hidden, and so are the decider's and the log
	# shipping's TLS keys; the log and its directory cannot be changed.
	fresh
	mkdir "$W/key" && head -c 32 /dev/urandom >"$W/key/k"
	echo decider-key >"$W/key/d" && echo ship-key >"$W/key/t"
	[ "$MODE" = nobody ] && chown -R nobody "$W/key" "$W/log"
	as_mode "$T/pinhole" run --resolver "127.0.0.1:$DNSP" --log "$W/log/audit.log" \
	    --log-key "$W/key/k" --decider-key "$W/key/d" \
	    --log-tls-key "$W/key/t" -- sh -c "
		[ -s $W/key/k ] && echo KEY-SEEN
		[ -s $W/key/d ] && echo DECIDER-KEY-SEEN
		[ -s $W/key/t ] && echo SHIP-KEY-SEEN
		true >$W/log/audit.log 2>/dev/null && echo LOG-EMPTIED
		mv $W/log $W/log.old 2>/dev/null && echo LOG-MOVED
		mv $W/key/k $W/key/k2 2>/dev/null && echo KEY-MOVED
		echo done" >"$W/out" 2>&1
	if grep -q "^done" "$W/out" && ! grep -q "SEEN\|EMPTIED\|MOVED" "$W/out"; then
		ok "$MODE: the log, decider and shipping keys are hidden, the log cannot be changed"
	else
		fail "$MODE: key and log: $(cat "$W/out")"
	fi
	"$T/pinhole" log verify --key "$W/key/k" "$W/log/audit.log" \
	    >"$W/out" 2>&1 || fail "$MODE: the log does not verify: $(cat "$W/out")"

	# /etc/hosts, which the gateway's resolver reads, cannot be changed
	# (root owns it: as root, the command would otherwise).
	as_mode "$T/pinhole" run -- sh -c 'echo "192.0.2.1 good.test" >>/etc/hosts' \
	    >"$W/out" 2>&1 && fail "$MODE: the sandbox wrote /etc/hosts" ||
	    ok "$MODE: /etc/hosts is read-only"

	# A reload that would read a file the sandbox can change waits.
	fresh
	cp "$W/home/evil.policy" "$W/q/x.policy"
	[ "$MODE" = nobody ] && chown -R nobody "$W/q"
	as_mode "$T/pinhole" run --resolver "127.0.0.1:$DNSP" \
	    --allow 'allow-private 127.0.0.0/8' --policy "$W/p/policy" \
	    --log "$W/log/audit.log" -- \
	    env HP="$HP" W="$W" sh -c "touch $W/started
		while [ ! -e $W/go ]; do sleep 0.1; done; sh $T/attack.sh none" \
	    >"$W/out" 2>&1 &
	runpid=$!
	# The gateway watches its files before the command starts; the
	# attack waits until the refused reload is logged (or 30 s).
	rm -f "$W/go"
	wait_file "$W/started"
	printf 'include %s\n' "$W/q/x.policy" >>"$W/p/policy"
	reload='"event":"reload","verdict":"deny","reason":"unguarded file"'
	i=0
	until loggrep "$W/log/audit.log" "$reload" || [ $i -ge 300 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	touch "$W/go"
	wait $runpid
	held "a reload that includes an unguarded file"
	loggrep "$W/log/audit.log" "$reload" &&
	    ok "$MODE: the refused reload is logged" ||
	    fail "$MODE: no refused reload in the log"

	# A policy or log in a directory that holds HOME or the working
	# directory is refused: that directory would be read-only.
	fresh
	cp "$W/p/policy" "$W/home/x.policy"
	[ "$MODE" = nobody ] && chown nobody "$W/home/x.policy"
	as_mode "$T/pinhole" run --policy "$W/home/x.policy" -- true >"$W/out" 2>&1
	st=$?
	[ $st = 125 ] && grep -q "holds HOME" "$W/out" &&
	    ok "$MODE: a policy in HOME is refused (125)" ||
	    fail "$MODE: policy in HOME: status $st: $(cat "$W/out")"
	as_mode "$T/pinhole" run --log ./log/../audit.log -- true >"$W/out" 2>&1
	st=$?
	[ $st = 125 ] && grep -qF "pinhole: $W/audit.log: the sandbox must not change it, so $W would be read-only there, and it holds the working directory ($W): keep the log in a directory of its own, such as ~/.local/state/pinhole (the default: leave out --log)" "$W/out" &&
	    ok "$MODE: a log in the working directory is refused (125), its path as found, the default directory named" ||
	    fail "$MODE: log in the working directory: status $st: $(cat "$W/out")"

	# AF_VSOCK: refused, unless the policy says allow-vsock.
	fresh
	VS='import socket; socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM)'
	as_mode "$T/pinhole" run -- $PY -c "$VS" >"$W/out" 2>&1 &&
	    fail "$MODE: an AF_VSOCK socket was created" ||
	    { grep -q "Address family not supported" "$W/out" &&
	    ok "$MODE: AF_VSOCK is refused" || fail "$MODE: vsock: $(tail -2 "$W/out")"; }
	if $PY -c "$VS" 2>/dev/null; then
		as_mode "$T/pinhole" run --allow allow-vsock -- $PY -c "$VS" >"$W/out" 2>&1 &&
		    ok "$MODE: allow-vsock lets it through" ||
		    fail "$MODE: allow-vsock: $(tail -2 "$W/out")"
	fi
done
finish
