#!/bin/sh
# The documents' examples do what their text says.  Every code block of
# README.md, docs/*.md and the man pages carries a marker saying how it
# is tested (tests/doc-examples.py reads them); a block with none, or a
# run or output example with no ex_NAME below, fails this test.
# Policies are loaded as written (no error, no warning unless the text
# says so) and the outcomes the text claims of them are checked;
# transcripts ("$ pinhole ..." and the output shown) are run and
# compared; other commands are run, and their output compared with
# what the text shows.  As root and as nobody, each example in a home
# and runtime directory of its own.
#
# It all happens in a network and mount namespace of the test's own:
# the system policy directory is an empty tmpfs, /etc/resolv.conf names
# a dnsmasq on 127.0.0.1:53 that maps the names the examples use
# (pypi.org, github.com, ...) to 127.0.0.1, and the ports the examples
# name (3128, 1080, 9464) are the namespace's own.  Nothing leaves it.
: "${PINHOLE:?PINHOLE must name the built program}"
: "${top_srcdir:?}"

if [ "${1:-}" != --in-namespace ]; then
	[ "$(id -u)" = 0 ] ||
	    { echo "SKIP: needs root (to test as root and as nobody)" >&2; exit 77; }
	command -v unshare >/dev/null 2>&1 ||
	    { echo "SKIP: unshare is not installed" >&2; exit 77; }
	SYSDIR=$("$PINHOLE" check --help 2>/dev/null |
	    sed -n 's|^The system policy, \(/.*\)/policy and$|\1|p')
	case $SYSDIR in
	/?*/pinhole) ;;
	*) echo "FAIL: pinhole check --help names no system directory" >&2
	   exit 1 ;;
	esac
	# The mount point: made if missing, and removed again, up to the
	# first directory that was there.
	made=
	d=$SYSDIR
	while [ ! -d "$d" ]; do made=$d; d=$(dirname "$d"); done
	[ -z "$made" ] || mkdir -p "$SYSDIR"
	unshare --net --mount --propagation private sh "$0" --in-namespace \
	    "$SYSDIR"
	rc=$?
	d=$SYSDIR
	while [ -n "$made" ] && rmdir "$d" 2>/dev/null && [ "$d" != "$made" ]; do
		d=$(dirname "$d")
	done
	exit $rc
fi
SYSDIR=$2
. "$top_srcdir/tests/integration/lib.sh"

for t in python3 setpriv ip; do
	command -v $t >/dev/null 2>&1 || skip "$t is not installed"
done
ip link set lo up || skip "cannot bring up loopback in a network namespace"
mount -t tmpfs -o mode=755,size=1m pinhole-test "$SYSDIR" ||
    skip "cannot mount a tmpfs on $SYSDIR in a mount namespace"
export ASAN_OPTIONS=detect_leaks=0
mkdir -m 755 "$T/bin" && cp "$PINHOLE" "$T/bin/pinhole" &&
    chmod 755 "$T/bin/pinhole"
PATH=$T/bin:$PATH
export PATH
EX=$top_srcdir/tests/doc-examples.py
DOCS="$top_srcdir/README.md $(ls "$top_srcdir"/docs/*.md)
    $(ls "$top_srcdir"/docs/*.[158] 2>/dev/null)"
mkdir -m 755 "$T/ex" "$T/w"

# A fresh home and runtime directory for example $1 as $MODE's user, in
# $W; as_mode runs a command there.
home() {
	W=$T/w/$1-$MODE
	mkdir -p "$W/xdg" "$W/.config/pinhole"
	chmod 700 "$W/xdg"
	[ "$MODE" = root ] || chown -R nobody "$W"
}

# ---------------------------------------------------------------------
# Policies: each is loaded in a directory of its own (with the files it
# includes), as the user who would; "check NAME RC LINE ARGS" compares
# the exit status and first line of `pinhole check --policy` on it.

policy_dir() {
	D=$T/p/$1
	mkdir -p "$D"
	cp "$T/ex/$1" "$D/policy"
	: >"$D/other.policy"
	chmod -R a+rX "$T/p"
}

check() {
	name=$1 want_rc=$2 want=$3
	shift 3
	out=$(cd "$T/p/$name" && as_mode pinhole check --policy policy "$@" \
	    2>"$T/check.err")
	rc=$?
	[ -z "$out" ] && out=$(cat "$T/check.err")
	if [ "$rc" -eq "$want_rc" ] &&
	    [ "$(echo "$out" | head -1)" = "$want" ]; then
		ok "$MODE: $name: check $*: $want"
	else
		fail "$MODE: $name: check $*: got $rc '$out', want $want_rc '$want'"
	fi
}

policy_loads() {
	name=$1 args=$2
	policy_dir "$name"
	home "$name"
	(cd "$D" && as_mode pinhole check --policy policy load.invalid) \
	    >"$T/out" 2>"$T/err"
	rc=$?
	if [ "$rc" -gt 1 ]; then
		fail "$MODE: policy $name does not load: $(cat "$T/err")"
	elif [ -s "$T/err" ] && [ "$args" != warn ]; then
		fail "$MODE: policy $name loads with warnings: $(cat "$T/err")"
	else
		ok "$MODE: policy $name loads"
	fi
}

# README: the rules, with what their comments say; an allow without
# constraints beside the read-only rule is said when the policy loads.
ex_readme_policy() {
	n=readme-policy
	p="p $n:"
	check $n 0 "allow pypi.org:80 (policy:1: allow pypi.org)" pypi.org:80
	check $n 1 "deny pypi.org:8080 (no rule allows this port: default deny)" pypi.org:8080
	check $n 0 "allow a.b.files.pythonhosted.org:443 (policy:2: allow *.pythonhosted.org)" a.b.files.pythonhosted.org
	check $n 1 "deny pythonhosted.org:443 (no rule matches: default deny)" pythonhosted.org
	check $n 0 "allow git.example.com:22 (policy:3: allow git.example.com:22,443)" git.example.com:22
	check $n 1 "deny git.example.com:80 (no rule allows this port: default deny)" git.example.com:80
	check $n 0 "allow api.example.com:8100 (policy:4: allow api.example.com:8000-8100)" api.example.com:8100
	check $n 1 "deny upload.pypi.org:443 (policy:5: deny  upload.pypi.org)" upload.pypi.org
	check $n 1 "deny upload.pypi.org:443 (policy:5: deny  upload.pypi.org)" --allow upload.pypi.org upload.pypi.org
	check $n 0 "allow GET /myorg/r.git/info/refs?service=git-upload-pack on github.com:443 (policy:10: allow github.com read-only path /myorg/**)" github.com GET '/myorg/r.git/info/refs?service=git-upload-pack'
	check $n 1 "deny POST /myorg/r.git/git-receive-pack on github.com:443 (policy:10: allow github.com read-only path /myorg/**)" github.com POST /myorg/r.git/git-receive-pack
	check $n 1 "deny GET /other/r.git/info/refs on github.com:443 (policy:10: allow github.com read-only path /myorg/**)" github.com GET /other/r.git/info/refs
	# "allow github.com would leave the constraints ... nothing to check":
	# said when the policy loads.
	echo 'allow github.com' >>"$T/p/$n/policy"
	(cd "$T/p/$n" && as_mode pinhole check --policy policy github.com) \
	    >"$T/out" 2>"$T/err"
	policy_dir $n
	grep -q "the constraints of 'allow github.com read-only path /myorg/\*\*' never apply on any of its ports: " \
	    "$T/err" &&
	    ok "$MODE: $n: an allow beside the read-only rule is said" ||
	    fail "$MODE: $n: an allow beside the read-only rule: $(cat "$T/err")"
}

# pinhole-policy(5) EXAMPLE: what its comments say.
ex_policy5_example() {
	n=policy5-example
	check $n 1 "deny pythonhosted.org:443 (no rule matches: default deny)" pythonhosted.org
	check $n 0 "allow github.com:22 (policy:3: allow github.com:22,443)" github.com:22
	check $n 1 "deny upload.pypi.org:443 (policy:5: deny  upload.pypi.org)" upload.pypi.org
	check $n 1 "deny POST /o/r.git/git-receive-pack on codeload.github.com:443 (policy:9: allow codeload.github.com read-only)" codeload.github.com POST /o/r.git/git-receive-pack
	check $n 1 "deny DELETE /v1/x on api.example.org:443 (policy:10: allow api.example.org methods GET path /v1/**)" api.example.org DELETE /v1/x
	check $n 0 "allow GET /v1/x on api.example.org:443 (policy:10: allow api.example.org methods GET path /v1/**)" api.example.org GET /v1/x
	check $n 0 "allow GET /live/x on chat.example.org:443 (policy:11: allow chat.example.org read-only websocket path /live/**)" chat.example.org GET /live/x --header 'Connection: upgrade' --header 'Upgrade: websocket'
}

# host.pinhole.internal: the rule opens that port, a wildcard never does.
ex_policy5_host_internal() {
	n=policy5-host-internal
	check $n 0 "allow host.pinhole.internal:5000 (policy:1: allow host.pinhole.internal:5000)" host.pinhole.internal:5000
	check $n 1 "deny host.pinhole.internal:5001 (no rule allows this port: default deny)" host.pinhole.internal:5001
}

# ---------------------------------------------------------------------
# Transcripts: each "$ " line run as $MODE's user, its output compared.

play() {
	name=$1 args=$2
	home "$name"
	tohome=
	case $args in home=*) tohome=${args#home=} ;; esac
	set -- "$W=${tohome:-$W}" "$SYSDIR=/etc/pinhole"
	pre="env HOME=$W XDG_RUNTIME_DIR=$W/xdg PATH=$PATH"
	[ "$MODE" = root ] ||
	    pre="setpriv --reuid=nobody --regid=nogroup --clear-groups $pre"
	fn=ex_$(echo "$name" | tr - _)
	if command -v "$fn" >/dev/null; then "$fn" || return; fi
	if (cd "$W" && python3 "$EX" play "$T/ex/$name" "$@" -- $pre) \
	    >"$T/play" 2>&1; then
		ok "$MODE: transcript $name"
	else
		fail "$MODE: transcript $name: $(grep -v '^ok:' "$T/play")"
	fi
}

# pinhole-policy(5): a user's policy with one rule, and a system deny.
ex_policy5_check() {
	printf '# the site\n# no tunnels, no example hosts\ndeny *.example.com\n' \
	    >"$SYSDIR/policy.d/10-deny.policy" &&
	echo 'allow api.example.org methods GET path /v1/**' \
	    >"$W/.config/pinhole/policy" &&
	chmod -R a+r "$SYSDIR/policy.d" "$W/.config/pinhole/policy"
}

# ---------------------------------------------------------------------
# The run.

# Coverage: every block marked, every run and output example tested
# here, every ex_ function here an example's.
if python3 "$EX" dump "$T/ex" $DOCS >"$T/dump" 2>&1; then
	ok "every example of the documents is marked: $(wc -l <"$T/ex/index") blocks"
else
	fail "examples not marked, or marked wrong: $(cat "$T/dump")
$(grep ' unmarked\| bad: ' "$T/ex/index")"
fi
awk '$2 == "run" || $2 == "output" { print $3 }' "$T/ex/index" >"$T/named"
while read -r name; do
	command -v "ex_$(echo "$name" | tr - _)" >/dev/null ||
	    fail "$name (a $(awk -v n="$name" '$3 == n { print $2 }' \
	    "$T/ex/index") example) has no test: ex_$(echo "$name" |
	    tr - _) in $0"
done <"$T/named"
awk '$2 != "none" && $2 != "untested" { print $3 }' "$T/ex/index" |
    tr - _ >"$T/names"
sed -n 's/^\(ex_[a-z0-9_]*\)() {$/\1/p' "$0" | sed 's/^ex_//' |
    while read -r f; do
	grep -qx "$f" "$T/names" || fail "ex_$f: no example is named so"
done
awk '$2 == "untested" { print "untested:", $0 }' "$T/ex/index"

mkdir "$SYSDIR/policy.d"
for MODE in root nobody; do
	while read -r where kind name args; do
		case $kind in
		policy)
			policy_loads "$name" "$args"
			fn=ex_$(echo "$name" | tr - _)
			! command -v "$fn" >/dev/null || "$fn"
			;;
		transcript)
			play "$name" "$args"
			rm -f "$SYSDIR"/policy.d/*
			;;
		esac
	done <"$T/ex/index"
done
finish
