#!/bin/sh
# pinhole doctor, as root and as nobody: with a good policy and a local
# resolver every check is ok and it exits 0; a policy with a syntax
# error, a resolver that does not answer, a log that cannot be written,
# a control directory open to others, a policy's directory that holds
# the working directory (which the sandbox would get read-only) and user
# namespaces turned off
# each fail it with a fix: naming the problem, and pinhole run refuses
# to start for the same reason with a line ending "run `pinhole doctor`".
. "$top_srcdir/tests/integration/lib.sh"

need root dnsmasq jq setpriv unshare nsenter python3
export ASAN_OPTIONS=detect_leaks=0

# nobody must be able to run it, wherever the build dir is.
cp "$PINHOLE" "$T/pinhole" && chmod 755 "$T/pinhole"
start_origin
# A port where no DNS server listens: its questions are refused at once.
DEAD=$(free_port)
printf 'allow doctor.test\nallow *.wild.test\n' >"$T/cfg/policy"
printf 'allow doctor.test\nalow typo.test\n' >"$T/cfg/bad"
chmod 644 "$T/cfg/policy" "$T/cfg/bad"
mkdir -m 755 "$T/rootonly" "$T/isdir" "$T/isdir/log" "$T/w"
HINT='run `pinhole doctor`'
HOST_MAX=$(cat /proc/sys/user/max_user_namespaces)

# Run a command as the mode's user (root, or nobody); "$NS": in the user
# namespace $NSPID.
as_mode() {
	if [ "$MODE" = nobody ]; then
		set -- env XDG_RUNTIME_DIR="${XDG:-$T/xdg-nobody}" \
		    HOME="$T/home-nobody" setpriv --reuid=nobody \
		    --regid=nogroup --clear-groups -- "$@"
	else
		set -- env XDG_RUNTIME_DIR="${XDG:-$T/xdg}" HOME="$T/home" "$@"
	fi
	if [ -n "${NS:-}" ]; then
		set -- nsenter -t "$NSPID" -U -- "$@"
	fi
	"$@"
}

# pinhole doctor as the mode's user with the test's resolver (nothing
# else is ever asked) and the options given: $rc, $T/out.
doctor() {
	as_mode "$T/pinhole" doctor --resolver "127.0.0.1:$DNSP" "$@" \
	    >"$T/out" 2>"$T/err"
	rc=$?
}

# pinhole run as the mode's user with the options given: $rc, $T/run.
run() {
	as_mode "$T/pinhole" run --resolver "127.0.0.1:$DNSP" "$@" -- true \
	    >"$T/run" 2>&1
	rc=$?
}

# $1 the check, $2 its verdict, $3 a regex for its detail.
has_line() {
	grep -Eq -- "^$1 +$2 +$3" "$T/out"
}

# $1 what; $2 a regex for the fix; then the arguments.  The check named
# in $3 fails (and no other needed one, or $NFAILED in all), status 1.
doctor_fails() {
	desc=$1 fix=$2 check=$3; shift 3
	doctor "$@"
	n=${NFAILED:-1}
	[ "$n" = 1 ] && n="1 check" || n="$n checks"
	if [ $rc = 1 ] && grep -q "^$check  *FAIL " "$T/out" &&
	    grep -Eq -- "^ +fix: $fix" "$T/out" &&
	    tail -1 "$T/out" | grep -q "^pinhole run will not work: $n failed\$"; then
		ok "$MODE: $desc: status 1, FAIL with the fix"
	else
		fail "$MODE: $desc: status $rc: $(cat "$T/out" "$T/err")"
	fi
}

# $1 what; then run's arguments: refused (125), the line naming doctor.
run_refused() {
	desc=$1; shift
	run "$@"
	if [ $rc = 125 ] && [ "$(wc -l <"$T/run")" = 1 ] &&
	    grep -q "^pinhole: .*; $HINT\$" "$T/run"; then
		ok "$MODE: $desc: pinhole run refuses, naming pinhole doctor"
	else
		fail "$MODE: $desc: run: status $rc: $(cat "$T/run")"
	fi
}

# Make a user namespace whose own user.max_user_namespaces is 0: the real
# knob, but this namespace's (it holds for the namespaces made in it), so
# the host's setting is never touched and nothing needs restoring.
# Inside it every id is itself.
no_userns() {
	unshare -U sleep 600 &
	NSPID=$!
	PIDS="$PIDS $NSPID"
	i=0
	while [ "$(readlink /proc/$NSPID/ns/user)" = \
	    "$(readlink /proc/self/ns/user)" ] && [ $i -lt 100 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	echo '0 0 4294967295' >/proc/$NSPID/uid_map &&
	    echo '0 0 4294967295' >/proc/$NSPID/gid_map &&
	    nsenter -t "$NSPID" -U -- sh -c \
	    'echo 0 >/proc/sys/user/max_user_namespaces' ||
	    fail "cannot make a user namespace without user namespaces"
}

for MODE in root nobody; do
	# All is well: every check ok, status 0.
	doctor --policy "$T/cfg/policy"
	if [ $rc = 0 ] && [ "$(grep -Ec '^[a-z]+ +ok +' "$T/out")" = 11 ] &&
	    [ "$(tail -1 "$T/out")" = "pinhole run will work" ]; then
		ok "$MODE: all 11 checks ok, status 0"
	else
		fail "$MODE: status $rc: $(cat "$T/out" "$T/err")"
	fi
	has_line resolver ok "127\.0\.0\.1:$DNSP answered doctor\.test A in [0-9]+ ms \(NOERROR\)" &&
	    has_line policy ok "$T/cfg/policy parses" &&
	    has_line veth ok "the namespaces and the veth link gw0-ph0 were made, true ran in the sandbox with the guards" &&
	    has_line guard ok "the sandbox can be kept from [0-9]+ paths" &&
	    has_line tproxy ok "nftables took the tproxy capture rule" &&
	    has_line sockets ok "[0-9]+ bound on the host; a sandbox reaches none by these names" &&
	    has_line upstream ok "none: hosts are dialed directly" &&
	    ok "$MODE: it says what it tried" ||
	    fail "$MODE: details: $(cat "$T/out")"
	H=$T/home
	[ "$MODE" = root ] || H=$T/home-nobody
	[ ! -e "$H/.local/state/pinhole/audit.log" ] &&
	    has_line log ok "$H/\.local/state/pinhole/audit\.log can be written, [0-9.]+ [KMG]iB free" &&
	    ok "$MODE: the default log is tried, and not left behind" ||
	    fail "$MODE: log: $(grep '^log' "$T/out"); $(ls -la "$H/.local/state/pinhole" 2>&1)"

	# --json: one object, ok and the checks.
	doctor --policy "$T/cfg/policy" --json
	[ $rc = 0 ] && jq -e '.ok == true and ([.checks[].name] ==
	    ["userns","apparmor","policy","resolver","upstream","log","control",
	    "guard","sockets","veth","tproxy"]) and all(.checks[]; .verdict == "ok" and
	    .fix == null and (.detail | length) > 0)' "$T/out" >/dev/null &&
	    ok "$MODE: --json: ok and 11 checks" ||
	    fail "$MODE: --json: status $rc: $(cat "$T/out" "$T/err")"
	doctor --policy "$T/cfg/bad" --json
	[ $rc = 1 ] && jq -e '.ok == false and (.checks[] |
	    select(.name == "policy") | .verdict == "fail" and .required
	    and (.fix | test("^edit line 2 of ")))' "$T/out" >/dev/null &&
	    ok "$MODE: --json: a failed check, its fix" ||
	    fail "$MODE: --json, bad policy: status $rc: $(cat "$T/out")"

	# A policy with a syntax error: FILE:LINE, and that line to edit.
	# With no name of the policy to ask for, the resolver is asked
	# ". NS", which the test's dnsmasq refuses: it fails too, said as
	# the REFUSED it is; the guards, which need the policy, are not
	# tried.
	NFAILED=3
	doctor_fails "policy with a syntax error" "edit line 2 of $T/cfg/bad\$" \
	    policy --policy "$T/cfg/bad"
	NFAILED=
	has_line resolver FAIL "127\.0\.0\.1:$DNSP answered \. NS in [0-9]+ ms \(REFUSED\): it does not resolve for this host" &&
	    has_line guard skip "not tried: it needs the policy" ||
	    fail "$MODE: resolver and guard, no policy: $(cat "$T/out")"
	has_line policy FAIL "$T/cfg/bad:2: unknown directive 'alow'" ||
	    fail "$MODE: policy: $(grep -A1 '^policy' "$T/out")"
	run_refused "policy with a syntax error" --policy "$T/cfg/bad" \
	    --log "$T/log/audit-$MODE.log"

	# A resolver that does not answer: how long it waited.
	as_mode "$T/pinhole" doctor --resolver "127.0.0.1:$DEAD" \
	    --policy "$T/cfg/policy" >"$T/out" 2>&1
	rc=$?
	[ $rc = 1 ] && has_line resolver FAIL "no answer from 127\.0\.0\.1:$DEAD for doctor\.test A in [0-9]+ ms: " &&
	    grep -q '^ *fix: name a DNS server that answers: --resolver ADDR' "$T/out" &&
	    ok "$MODE: a resolver that does not answer: FAIL, in how long, the fix" ||
	    fail "$MODE: dead resolver: status $rc: $(cat "$T/out")"

	# A log that cannot be written.
	# (A directory for root, whom permissions do not stop.)
	if [ "$MODE" = root ]; then LOG=$T/isdir/log; else LOG=$T/rootonly/audit.log; fi
	doctor_fails "log that cannot be written" "give --log a file" log \
	    --policy "$T/cfg/policy" --log "$LOG"
	run_refused "log that cannot be written" --policy "$T/cfg/policy" \
	    --log "$LOG"

	# Run from the policy's directory, which the sandbox would get
	# read-only: refused, as run refuses it.
	mkdir -m 755 "$T/w/pol-$MODE"
	cp "$T/cfg/policy" "$T/w/pol-$MODE/policy"
	[ "$MODE" = root ] || chown -R nobody "$T/w/pol-$MODE"
	cd "$T/w/pol-$MODE" || fail "cd"
	doctor_fails "working directory in the policy's" \
	    "keep the policy and the log in directories of their own" guard \
	    --policy "$T/w/pol-$MODE/policy"
	has_line guard FAIL ".*holds the working directory \($T/w/pol-$MODE\)" ||
	    fail "$MODE: guard: $(grep '^guard' "$T/out")"
	run_refused "working directory in the policy's" \
	    --policy "$T/w/pol-$MODE/policy" --log "$T/log/audit-$MODE.log"
	cd "$OLDPWD" || fail "cd back"

	# A control directory open to others; the fix given makes it right.
	X=$T/w/xdg-$MODE
	mkdir -m 700 "$X" && mkdir -m 755 "$X/pinhole"
	[ "$MODE" = root ] || chown -R nobody "$X"
	XDG=$X
	doctor_fails "control directory of mode 0755" \
	    "chmod 700 $X/pinhole\$" control --policy "$T/cfg/policy"
	has_line control FAIL "XDG_RUNTIME_DIR=$X: $X/pinhole is not a directory of ours with mode 0700" ||
	    fail "$MODE: control: $(grep '^control' "$T/out")"
	fix=$(sed -n 's/^ *fix: \(chmod .*\)/\1/p' "$T/out")
	run_refused "control directory of mode 0755" \
	    --policy "$T/cfg/policy" --log "$T/log/audit-$MODE.log"
	as_mode $fix
	doctor --policy "$T/cfg/policy"
	XDG=
	[ $rc = 0 ] && has_line control ok "$X/pinhole: a directory of uid [0-9]+, mode 0700" &&
	    ok "$MODE: '$fix' fixes it" ||
	    fail "$MODE: after '$fix': status $rc: $(cat "$T/out")"
done

# No user namespaces: the real knob, in a user namespace of the test's own.
no_userns
NS=1
MODE=nobody
doctor --policy "$T/cfg/policy"
[ $rc = 1 ] &&
    has_line userns FAIL "create a user namespace: No space left on device: user namespaces are off" &&
    grep -q '^ *fix: sysctl -w user.max_user_namespaces=15000$' "$T/out" &&
    has_line veth FAIL "cannot make the sandbox: create a user namespace" &&
    has_line tproxy skip "not tried" &&
    ok "nobody: no user namespaces: FAIL, and the sysctl that fixes it" ||
    fail "nobody: no user namespaces: status $rc: $(cat "$T/out" "$T/err")"
run_refused "no user namespaces" --policy "$T/cfg/policy" \
    --log "$T/log/audit-$MODE.log"
grep -q 'create a user namespace: No space left on device (user namespaces are off: sysctl -w user.max_user_namespaces=15000)' "$T/run" ||
    fail "nobody: run does not say why: $(cat "$T/run")"
# Root needs none: pinhole run will work all the same.
MODE=root
doctor --policy "$T/cfg/policy"
[ $rc = 0 ] && has_line userns warn "create a user namespace: .*\(pinhole run works without it\)" &&
    has_line veth ok "the namespaces" &&
    ok "root: no user namespaces: a warning, and status 0" ||
    fail "root: no user namespaces: status $rc: $(cat "$T/out" "$T/err")"
NS=
[ "$(cat /proc/sys/user/max_user_namespaces)" = "$HOST_MAX" ] &&
    ok "the host's user.max_user_namespaces is untouched" ||
    fail "the host's user.max_user_namespaces changed"

# Usage.
"$T/pinhole" doctor extra >"$T/out" 2>&1
[ $? = 2 ] && grep -q "^pinhole doctor: takes no arguments" "$T/out" &&
    ok "an argument is a usage error" || fail "usage: $(cat "$T/out")"
finish
