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

. "$top_srcdir/tests/integration/sysdir.sh"
[ "${1:-}" = --in-namespace ] || sysdir_reexec --net
SYSDIR=$2
. "$top_srcdir/tests/integration/lib.sh"

need python3 setpriv ip
ip link set lo up || skip "cannot bring up loopback in a network namespace"
mount -t tmpfs -o mode=755,size=1m pinhole-test "$SYSDIR" ||
    skip "cannot mount a tmpfs on $SYSDIR in a mount namespace"
export ASAN_OPTIONS=detect_leaks=0
mkdir -m 755 "$T/bin" && cp "$PINHOLE" "$T/bin/pinhole" &&
    chmod 755 "$T/bin/pinhole"
# The system's programs first (pip, python3), readable by nobody.
PATH=$T/bin:/usr/sbin:/usr/bin:/sbin:/bin:$PATH
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
# Commands and output, run in the namespace's own network: every name
# is 127.0.0.1 (dnsmasq on port 53, named by /etc/resolv.conf), and a
# TLS origin on 127.0.0.1:443 with a certificate of the test's CA for
# the names the examples use serves $T/www: hello.txt, and a simple
# index with one wheel of "requests" for pip.  The test's CA is the
# namespace's trust store (/etc/ssl/certs/ca-certificates.crt, which
# pinhole run gives the sandbox too); each example's policy lets
# pinhole dial loopback (allow-private 127.0.0.0/8): the only changes
# to what the examples assume.

start_net() {
	echo nameserver 127.0.0.1 >"$T/resolv.conf"
	mount --bind "$T/resolv.conf" /etc/resolv.conf ||
	    { fail "cannot name the test's resolver"; return 1; }
	bg dnsmasq -k -u root -p 53 --listen-address=127.0.0.1 \
	    --bind-interfaces --no-resolv --no-hosts --pid-file= \
	    --address=/#/127.0.0.1
	make_certs pypi.org files.pythonhosted.org github.com api.example.net \
	    api.test x.test
	mount --bind "$T/ca.pem" /etc/ssl/certs/ca-certificates.crt ||
	    { fail "cannot make the test CA the trust store"; return 1; }
	mkdir -p "$T/www/simple/requests" "$T/www/packages"
	echo hello from origin >"$T/www/hello.txt"
	python3 - "$T/www" <<'PY'
import sys, zipfile
d = sys.argv[1]
whl = "requests-2.0.0-py3-none-any.whl"
meta = "requests-2.0.0.dist-info/"
with zipfile.ZipFile(d + "/packages/" + whl, "w") as z:
    z.writestr("requests/__init__.py", "")
    z.writestr(meta + "METADATA", "Metadata-Version: 2.1\nName: requests\n"
               "Version: 2.0.0\n")
    z.writestr(meta + "WHEEL", "Wheel-Version: 1.0\nGenerator: test\n"
               "Root-Is-Purelib: true\nTag: py3-none-any\n")
    z.writestr(meta + "RECORD", "")
with open(d + "/simple/requests/index.html", "w") as f:
    f.write('<a href="https://files.pythonhosted.org/packages/%s">%s</a>\n'
            % (whl, whl))
PY
	chmod -R a+rX "$T/www"
	bg python3 -c '
import http.server, ssl, sys
class H(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *a):
        pass
s = http.server.ThreadingHTTPServer(("127.0.0.1", 443), lambda *a:
    H(*a, directory=sys.argv[3]))
c = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
c.load_cert_chain(sys.argv[1], sys.argv[2])
s.socket = c.wrap_socket(s.socket, server_side=True)
s.serve_forever()' "$T/leaf.pem" "$T/leaf.key" "$T/www"
	HP=$(free_port)
	bg python3 -m http.server "$HP" --bind 127.0.0.1 --directory "$T/www"
	wait_port 53 && wait_port 443 && wait_port "$HP"
}

# A sandbox for example $1 as $MODE's user: its policy (with the lines
# in $2), the command $3 run by sh in the sandbox, its output in $W/out,
# pinhole's own stderr in $W/err, the audit log in $L.
sandbox() {
	home "$1"
	L=$T/log/$1-$MODE.log
	rm -f "$L"
	printf 'allow-private 127.0.0.0/8\n%b' "$2" >"$W/.config/pinhole/policy"
	[ "$MODE" = root ] || chown -R nobody "$W"
	as_mode pinhole run --log "$L" -- \
	    sh -c "$3" >"$W/out" 2>"$W/err"
}

# Does file $1 have the line $2 (exactly)?  Say so as check $3.
has_line() {
	if grep -qxF -- "$2" "$1"; then
		ok "$MODE: $3"
	else
		fail "$MODE: $3: no line '$2' in: $(cat "$1")"
	fi
}

# The lines of output example $1 that match the extended regex $2.
shown() {
	grep -E -- "$2" "$T/ex/$1"
}

# README: a refusal, and its repeats counted in one line.
ex_readme_refusals() {
	sandbox readme-refusals '' \
	    'i=0; while [ $i -lt 31 ]; do curl -s https://pypi.org/; i=$((i + 1)); done'
	has_line "$W/err" "$(shown readme-refusals 'deny\); ask')" \
	    "readme-refusals: the refusal"
	# The repeats of each 10 s are one line: on a slow machine the 30
	# take more than one.
	again=$(shown readme-refusals again)
	pre=${again%%again, 30 times*} post=${again#*again, 30 times}
	n=$(grep -F -- "$pre" "$W/err" | grep -F -- "$post" |
	    sed -n 's/.* again, \([0-9]*\) times* .*/\1/p' |
	    awk '{ n += $1 } END { print n + 0 }')
	if [ "$n" = 30 ]; then
		ok "$MODE: readme-refusals: 30 repeats, said as the README shows"
	else
		fail "$MODE: readme-refusals: $n repeats said, not 30: $(cat "$W/err")"
	fi
}

# The refusals of the manual and docs/agents.md, each made for real in a
# sandbox of its own (what a line says of a host is not said again
# soon): a connection, a name the DNS refused, a deny rule (line 3 of
# the user's policy), a request a read-only rule refused.
refusals() {
	while read -r line; do
		h=$(echo "$line" | sed -n 's/^pinhole: refused \(the name \)*\(POST [^ ]* on \)*\([^: ]*\).*/\3/p')
		case $line in
		*"refused the name"*) cmd="getent hosts $h" ;;
		*"refused POST"*) cmd="curl -s -d x https://$h/upload" ;;
		*) cmd="curl -s https://$h/" ;;
		esac
		sandbox "$1" "allow $2 read-only\ndeny x.test\n" "$cmd"
		sed -n 's/^pinhole: refused/&/p' "$W/err" |
		    sed "s|$W|/home/u|g" >"$T/refused"
		has_line "$T/refused" "$line" "$1: $cmd"
		rm -rf "$W"
	done <"$T/ex/$1"
}
ex_man_refusals() { refusals man-refusals api.test; }
ex_agents_refusals() { refusals agents-refusals api.example.net; }

# docs/audit-log.md's jq recipes, on a log a run wrote: allowed, a
# refused connection, refused names (one long), a torn line.
jq_log() {
	[ -s "$T/jq-$MODE/audit.log" ] && return 0
	long=$(printf '%040d' 0 | tr 0 a).$(printf '%030d' 0 | tr 0 b).test
	sandbox jq-log "allow github.com\n" "
	    curl -s https://github.com/hello.txt; curl -s https://pypi.org/
	    getent hosts blocked.test; getent hosts $long"
	mkdir -p "$T/jq-$MODE"
	cp "$L" "$T/jq-$MODE/audit.log"
	grep -v github.com "$L" >"$T/jq-$MODE/audit.log.1"
	grep -q '"event":"close".*"host":"github.com"' "$L" ||
	    fail "$MODE: jq-log: no connection to github.com: $(cat "$W/out" "$W/err")"
	SESSION=$(sed -n 's/.*"session":"\([^"]*\)".*/\1/p' "$L" |
	    head -1)
}
# Run recipe $1 (its session id made the log's); its output must match
# the extended regex $2 ("" for none).
jq_run() {
	jq_log
	sed "s/s1f3/$SESSION/" "$T/ex/$1" >"$T/jq-$MODE/recipe"
	(cd "$T/jq-$MODE" && sh recipe) >"$T/out" 2>&1
	rc=$?
	if [ $rc -ne 0 ]; then
		fail "$MODE: $1: exit $rc: $(cat "$T/out")"
	elif [ -z "$2" ] && [ -s "$T/out" ]; then
		fail "$MODE: $1: printed $(cat "$T/out")"
	elif [ -n "$2" ] && ! grep -Eq -- "$2" "$T/out"; then
		fail "$MODE: $1: no '$2' in: $(cat "$T/out")"
	else
		ok "$MODE: $1"
	fi
}
ex_jq_blocked() { jq_run jq-blocked '^ *[0-9]+ pypi\.org$'; }
ex_jq_bytes() { jq_run jq-bytes '"host": "github\.com"'; }
ex_jq_session() { jq_run jq-session '"verdict":"deny"'; }
ex_jq_dns_hour() { jq_run jq-dns-hour '"qname":"blocked\.test'; }
ex_jq_per_session() { jq_run jq-per-session "^ *[0-9]+ $SESSION	pypi\.org\$"; }
ex_jq_first_time() { jq_run jq-first-time '^github\.com$'; }
ex_jq_large() { jq_run jq-large ''; }
ex_jq_exfil() { jq_run jq-exfil '"qname":"a{40}\.b{30}\.test'; }
ex_jq_seq() { jq_run jq-seq '^"continuous"$'; }
ex_jq_torn() {
	jq_log
	printf '{"schema":2,"ts":"2026-12' >>"$T/jq-$MODE/audit.log"
	jq_run jq-torn '"verdict": "deny"'
	grep -v '"ts":"2026-12$' "$T/jq-$MODE/audit.log" >"$T/jq-$MODE/a" &&
	    mv "$T/jq-$MODE/a" "$T/jq-$MODE/audit.log"
}

# Run example $1 as $MODE's user in a fresh home: its first $2 command
# lines in the background (a trailing & dropped), stopped at the end;
# wait for the ports $3 (space-separated); then the other lines, their
# output in $T/out.  The home's policy lets pinhole dial loopback.
run_block() {
	name=$1 nbg=$2 ports=$3
	home "$name"
	echo 'allow-private 127.0.0.0/8' >"$W/.config/pinhole/policy"
	# pinhole proxy --allow reads no user policy: the system's, then.
	echo 'allow-private 127.0.0.0/8' >"$SYSDIR/policy.d/00-loopback.policy"
	chmod 644 "$SYSDIR/policy.d/00-loopback.policy"
	[ "$MODE" = root ] || chown -R nobody "$W"
	sed -e ':a' -e '/\\$/{N;s/\\\n//;ba' -e '}' "$T/ex/$name" |
	    grep -v '^ *$' >"$T/lines"
	head -n "$nbg" "$T/lines" | sed 's/ *& *$//' >"$T/bg"
	tail -n +"$((nbg + 1))" "$T/lines" >"$T/fg"
	mine=
	while read -r line; do
		bg_mode sh -c "cd \"\$HOME\" && exec $line" 2>"$T/bg.err"
		mine="$mine $!"
	done <"$T/bg"
	for p in $ports; do wait_port "$p" || cat "$T/bg.err" >&2; done
	(cd "$W" && as_mode sh "$T/fg") >"$T/out" 2>&1
	rc=$?
	for p in $mine; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	rm -f "$SYSDIR/policy.d/00-loopback.policy"
	return $rc
}

# Did the last run_block exit 0 with output matching the extended regex
# $2?  Say so as check $1.
block_says() {
	if [ "$rc" -eq 0 ] && grep -Eq -- "$2" "$T/out"; then
		ok "$MODE: $1"
	else
		fail "$MODE: $1: exit $rc, no '$2' in: $(tail -5 "$T/out")"
		return 1
	fi
}

# docs/metrics.md: a proxy with --metrics, scraped by curl; promtool
# takes the PromQL examples, and the names they use are among those a
# proxy that ships its log serves.
ex_metrics_scrape() {
	run_block metrics-scrape 1 '3128 9464'
	block_says "metrics-scrape: the proxy serves its counters" \
	    '^pinhole_connections_total'
}
ex_metrics_promql() {
	grep -v '^#' "$T/ex/metrics-promql" | grep -v '^ *$' |
	    awk 'BEGIN { print "groups:\n  - name: docs\n    rules:" }
	    { gsub(/"/, "\\\""); n++
	      print "      - record: docs:example" n "\n        expr: \"" $0 "\"" }' \
	    >"$T/rules.yml"
	if ! command -v promtool >/dev/null; then
		fail "$MODE: metrics-promql: promtool is not installed"
	elif promtool check rules "$T/rules.yml" >"$T/out" 2>&1; then
		ok "$MODE: metrics-promql: promtool takes every expression"
	else
		fail "$MODE: metrics-promql: $(cat "$T/out")"
	fi
	# The shipping ones are there with a shipping destination.
	home metrics-promql
	bg_mode pinhole proxy --listen 127.0.0.1:3129 --metrics 127.0.0.1:9465 \
	    --log "$W/audit.log" --log otlp+http://127.0.0.1:9 2>"$T/err"
	mine=$!
	: >"$T/scrape"
	wait_port 9465 && curl -s http://127.0.0.1:9465/metrics >"$T/scrape"
	kill $mine; wait $mine 2>/dev/null
	missing=
	for m in $(grep -o 'pinhole_[a-z_]*' "$T/ex/metrics-promql" | sort -u); do
		grep -q "^$m[{ ]" "$T/scrape" || missing="$missing $m"
	done
	[ -z "$missing" ] &&
	    ok "$MODE: metrics-promql: the metrics the examples use are served" ||
	    fail "$MODE: metrics-promql: not served:$missing $(cat "$T/err")"
}

# pinhole(1): the SOCKS5 listener takes curl to the allowed host.
ex_man_proxy_socks() {
	run_block man-proxy-socks 1 '3128 1080'
	block_says "man-proxy-socks: curl through SOCKS5 reaches github.com" \
	    'hello\.txt' ||
	    tail -3 "$W/.local/state/pinhole/audit.log" >&2
}

# pinhole(1): the proxy says what it is, on its own port.
ex_man_proxy_ask() {
	echo 'pinhole proxy &' >"$T/ex/man-proxy-ask.bg"
	cat "$T/ex/man-proxy-ask.bg" "$T/ex/man-proxy-ask" >"$T/ex/man-proxy-ask2"
	mv "$T/ex/man-proxy-ask2" "$T/ex/man-proxy-ask"
	run_block man-proxy-ask 1 3128
	block_says "man-proxy-ask: the proxy answers what it is" 'pinhole'
}

# docs/agents.md: a session listening like pinhole proxy: refuses what
# its policy does not allow, and stops.
ex_agents_session_listen() {
	run_block agents-session-listen 0 ''
	block_says "agents-session-listen: starts" 'S'
	wait_port 3128 && wait_port 1080 &&
	    as_mode curl -s -o /dev/null -w '%{http_code}' \
	    -x http://127.0.0.1:3128 http://pypi.org/ >"$T/out" 2>&1
	grep -qx 403 "$T/out" &&
	    ok "$MODE: agents-session-listen: its proxy decides" ||
	    fail "$MODE: agents-session-listen: its proxy: $(cat "$T/out")"
	as_mode pinhole session stop S >"$T/out" 2>&1 ||
	    fail "$MODE: agents-session-listen: stop: $(cat "$T/out")"
}

# README, pinhole(1): pip download, allowed, through the gateway.
pip_run() {
	run_block "$1" 0 ''
	if [ "$rc" -eq 0 ] && [ -f "$W/requests-2.0.0-py3-none-any.whl" ]; then
		ok "$MODE: $1: pip downloads requests"
	else
		fail "$MODE: $1: exit $rc: $(tail -5 "$T/out")"
	fi
}
ex_readme_run_pip() { pip_run readme-run-pip; }
ex_man_run_pip() { pip_run man-run-pip; }

# The hook's rewritten command, as docs/agents.md and pinhole(1) show it.
hook_command() {
	home "$1"
	printf '{"session_id":"work","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"echo hi"}}' |
	    as_mode pinhole hook >"$T/out" 2>"$T/err"
	got=$(python3 -c 'import json, sys
print(json.load(sys.stdin)["hookSpecificOutput"]["updatedInput"]["command"])' \
	    <"$T/out" 2>&1)
	want=$(sed -e "s|$2|'$T/bin/pinhole'|; s/'$3'/'work'/; s/'COMMAND'/'echo hi'/" \
	    "$T/ex/$1")
	[ "$got" = "$want" ] && ok "$MODE: $1: $got" ||
	    fail "$MODE: $1: got '$got' ($(cat "$T/err")), want '$want'"
	as_mode pinhole session stop work >/dev/null 2>&1
}
ex_agents_hook_command() {
	hook_command agents-hook-command "'/usr/bin/pinhole'" SESSION
}
ex_man_hook_command() { hook_command man-hook-command "'PINHOLE'" NAME; }

# README: the demo prints what the README shows (ports, temporary
# directory and timing aside).  As root, as the README says.
ex_readme_demo() {
	[ "$MODE" = root ] || return 0
	sh "$top_srcdir/contrib/demo.sh" "$T/bin/pinhole" >"$T/demo" 2>&1
	norm='s/after [0-9]* ms/after N ms/; s/[0-9][0-9][0-9][0-9]*/N/g
	    s|/tmp/pinhole-demo\.[A-Za-z0-9]*|DIR|g; s/ *$//'
	sed -n '/^A web server listens/,/^The audit log/p' "$T/demo" |
	    sed "$norm" | grep -v '^$' | grep -v '^The audit log' >"$T/got"
	sed "$norm" "$T/ex/readme-demo" | grep -v '^$' >"$T/want"
	if cmp -s "$T/got" "$T/want"; then
		ok "$MODE: readme-demo: the demo prints what the README shows"
	else
		fail "$MODE: readme-demo: $(diff "$T/want" "$T/got")"
	fi
}

# From a first blocked run to a policy (README, pinhole(1)): pip is
# refused, the log proposes the rule (the README's first line, then a
# rule with its count), pinhole allow takes it as printed.
propose() {
	home "$1"
	as_mode pinhole run -- pip download requests >"$T/out" 2>&1
	log=$W/.local/state/pinhole/audit.log
	sess=$(sed -n 's/.*"event":"start","session":"\([^"]*\)".*/\1/p' \
	    "$log" | tail -1)
	as_mode pinhole log --propose --session "$sess" >"$T/prop" 2>&1
	head -1 "$T/prop" >"$T/head"
	has_line "$T/head" "$(grep '^# The rules' "$T/ex/readme-propose")" \
	    "$1: log --propose says what it prints"
	if grep -Eq '^allow pypi\.org:443 +# [0-9]+ refused$' "$T/prop"; then
		ok "$MODE: $1: log --propose proposes pypi.org:443"
	else
		fail "$MODE: $1: log --propose: $(cat "$T/prop" "$T/out")"
	fi
	as_mode pinhole allow allow pypi.org:443 >"$T/out" 2>&1 &&
	    as_mode pinhole check pypi.org >"$T/out" 2>&1 &&
	    ok "$MODE: $1: the proposed rule, allowed, lets pip's host through" ||
	    fail "$MODE: $1: pinhole allow: $(cat "$T/out")"
}
ex_readme_propose() { propose readme-propose; }
# The manual's are the same commands, without their output.
ex_man_propose() {
	grep '^\$ pinhole' "$T/ex/readme-propose" |
	    sed 's/^\$ //; s/ *#.*//; s/ && .*//' >"$T/readme-cmds"
	if cmp -s "$T/readme-cmds" "$T/ex/man-propose"; then
		propose man-propose
	else
		fail "man-propose: not the README's commands: $(diff "$T/readme-cmds" "$T/ex/man-propose")"
	fi
}

# pinhole(1): pip through pinhole proxy, the log on standard output.
ex_man_proxy_pip() {
	run_block man-proxy-pip 1 3128
	if [ "$rc" -eq 0 ] && [ -f "$W/requests-2.0.0-py3-none-any.whl" ]; then
		ok "$MODE: man-proxy-pip: pip downloads requests"
	else
		fail "$MODE: man-proxy-pip: exit $rc: $(tail -5 "$T/out")"
	fi
}

# docs/sandbox.md: bwrap inside the sandbox keeps the filtered network.
# bwrap's own user namespace needs an unprivileged user here.
ex_sandbox_bwrap() {
	[ "$MODE" = nobody ] || return 0
	command -v bwrap >/dev/null ||
	    { fail "sandbox-bwrap: bwrap is not installed"; return; }
	pip_run sandbox-bwrap
}

# docs/audit-log.md: a keyed log, rotated five times, verified whole.
ex_log_verify_rotated() {
	home log-verify-rotated
	head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$W/log.key"
	chmod 600 "$W/log.key"
	[ "$MODE" = root ] || chown -R nobody "$W"
	bg_mode pinhole proxy --listen 127.0.0.1:3129 --log "$W/audit.log" \
	    --log-key "$W/log.key" --log-max-size 1k --log-keep 5 2>"$T/err"
	mine=$!
	wait_port 3129
	i=0
	while [ ! -e "$W/audit.log.5" ] && [ $i -lt 100 ]; do
		curl -s -o /dev/null -x http://127.0.0.1:3129 \
		    "http://refused$i.test/" >/dev/null 2>&1
		i=$((i + 1))
	done
	kill $mine; wait $mine 2>/dev/null
	sed "s|/etc/pinhole/log.key|$W/log.key|" "$T/ex/log-verify-rotated" \
	    >"$T/cmd"
	(cd "$W" && as_mode sh "$T/cmd") >"$T/out" 2>&1 &&
	    grep -q '^intact: [0-9]* lines in 6 file(s)' "$T/out" &&
	    ok "$MODE: log-verify-rotated: $(grep '^intact' "$T/out")" ||
	    fail "$MODE: log-verify-rotated: $(cat "$T/out" "$T/err")"
}

# docs/agents.md: the person's answers to a request from a session's
# sandbox, each to a fresh request in a fresh session s1, and what each
# says (docs/agents.md's words; a sandbox's number is its own).  The
# user's policy has six lines, so that --always adds the seventh.
ex_agents_answer() {
	home agents-answer
	printf 'allow-private 127.0.0.0/8\n#\n#\n#\n#\n#\n' \
	    >"$W/.config/pinhole/policy"
	[ "$MODE" = root ] || chown -R nobody "$W"
	for how in --session --once deny --always; do
		as_mode pinhole session start s1 >"$T/out" 2>&1 ||
		    { fail "$MODE: agents-answer: session start: $(cat "$T/out")"; continue; }
		bg_mode pinhole run --session s1 -- sh -c \
		    'pinhole request pypi.org:443 --reason x; sleep 30' \
		    >/dev/null 2>&1
		mine=$!
		id=$(wait_pending pypi.org as_mode pinhole)
		[ "$how" != --session ] || {
			as_mode pinhole pending >"$T/out" 2>&1 &&
			    grep -q "$id" "$T/out" &&
			    ok "$MODE: agents-answer: pinhole pending lists it" ||
			    fail "$MODE: agents-answer: pinhole pending: $(cat "$T/out")"
		}
		case $how in
		deny)
			want=$(grep '^denied' "$T/ex/agents-said")
			cmd=$(grep '^pinhole deny' "$T/ex/agents-answer" |
			    sed 's/ *#.*//') ;;
		*)
			want=$(grep "^approved.* ${how#--}" "$T/ex/agents-said")
			cmd=$(grep "^pinhole approve .* $how" "$T/ex/agents-answer" |
			    sed 's/ *#.*//')
			[ -n "$cmd" ] ||
			    cmd="pinhole approve r3f2a8e61b07c94d5 $how" ;;
		esac
		cmd=$(echo "$cmd" | sed "s/r3f2a8e61b07c94d5/$id/")
		(cd "$W" && as_mode sh -c "$cmd") 2>&1 |
		    sed "s/$id/r3f2a8e61b07c94d5/; s|$W|/home/u|; s/sandbox [0-9]*/sandbox N/" \
		    >"$T/said"
		has_line "$T/said" "$(echo "$want" | sed 's/sandbox [0-9]*/sandbox N/')" \
		    "agents-answer: $cmd"
		kill $mine 2>/dev/null; wait $mine 2>/dev/null
		as_mode pinhole session stop s1 >/dev/null 2>&1
	done
}
ex_agents_said() { :; }	# checked by ex_agents_answer

# A connection held by --ask, approved once from outside with the
# command the line gives: pinhole run's lines, with the session, the
# request id and the uid written as example $1 writes them ($2, $3).
held() {
	home "$1"
	echo 'allow-private 127.0.0.0/8' >"$W/.config/pinhole/policy"
	[ "$MODE" = root ] || chown -R nobody "$W"
	bg_mode pinhole run --ask -- curl -s https://pypi.org/hello.txt \
	    >"$W/out" 2>"$W/err"
	mine=$!
	i=0
	while ! grep -q 'approve [^ ]*/r' "$W/err" && [ $i -lt 300 ]; do
		sleep 0.1; i=$((i + 1))
	done
	ref=$(sed -n 's/.*: pinhole approve \([^ ]*\/r[0-9a-f]*\) .*/\1/p' \
	    "$W/err" | head -1)
	as_mode pinhole approve "$ref" >"$T/out" 2>&1 ||
	    fail "$MODE: $1: pinhole approve $ref: $(cat "$T/out")"
	wait $mine
	grep -q 'hello from origin' "$W/out" &&
	    ok "$MODE: $1: the held connection goes through once approved" ||
	    fail "$MODE: $1: curl: $(cat "$W/out" "$W/err")"
	sed "s|${ref%/*}|$2|; s|${ref#*/}|$3|; s/uid [0-9]*/uid 1000/" \
	    "$W/err" >"$T/said"
	while read -r line; do
		has_line "$T/said" "$line" "$1: $(echo "$line" | cut -c1-50)"
	done <"$T/ex/$1"
}
ex_agents_held() { held agents-held SESSION r3f2a8e61b07c94d5; }
ex_man_held() { held man-held run-0f3a9c21b7d4 r7f3a09c41e2b5d86; }

# docs/control-protocol.md's exchanges, against a fresh session s1 with
# one refused host (files.example.net) and one open request (pypi.org,
# from its sandbox): what is sent in $2, what comes back as $3 shows it
# (tests/integration/docs-proto.py: the members, and the values that do
# not vary); $4, a command run after the first reply.
proto() {
	home "$1"
	echo 'allow-private 127.0.0.0/8' >"$W/.config/pinhole/policy"
	[ "$MODE" = root ] || chown -R nobody "$W"
	as_mode pinhole session start s1 >"$T/out" 2>&1 ||
	    { fail "$MODE: $1: session start: $(cat "$T/out")"; return; }
	bg_mode pinhole run --session s1 -- sh -c 'curl -s https://files.example.net/
	    pinhole request pypi.org:443 --reason "pip install requests"
	    sleep 30' >/dev/null 2>&1
	mine=$!
	id=$(wait_pending pypi.org as_mode pinhole)
	sock=$(ls "$W"/xdg/pinhole/*.sock | head -1)
	ID=$id as_mode python3 "$top_srcdir/tests/integration/docs-proto.py" \
	    "$sock" "$id" "$2" "$3" "${4:-}" >"$T/out" 2>&1 &&
	    ok "$MODE: $1: $(grep -c '^ok' "$T/out") lines as shown" ||
	    fail "$MODE: $1: $(cat "$T/out")"
	kill $mine 2>/dev/null; wait $mine 2>/dev/null
	as_mode pinhole session stop s1 >/dev/null 2>&1
}
ex_proto_hello() { proto proto-hello "$T/ex/proto-hello" "$T/ex/proto-hello"; }
ex_proto_status() { proto proto-status "$T/ex/proto-status" "$T/ex/proto-status"; }
ex_proto_pending() { proto proto-pending "$T/ex/proto-pending" "$T/ex/proto-pending"; }
ex_proto_approve() { proto proto-approve "$T/ex/proto-approve" "$T/ex/proto-approve"; }
ex_proto_deny() { proto proto-deny "$T/ex/proto-deny" "$T/ex/proto-deny"; }
ex_proto_subscribe() {
	proto proto-subscribe "$T/ex/proto-subscribe" "$T/ex/proto-subscribe" \
	    "pinhole run --session s1 -- curl -s https://files.example.net/ >/dev/null 2>&1;
	    pinhole approve \$ID --once >/dev/null"
}
# A request, and the replies to it and to one for no such request.
ex_proto_send() {
	cp "$T/ex/proto-send" "$T/sends"
	echo '{"op":"approve","id":2,"request":"r0000000000000000"}' >>"$T/sends"
	proto proto-send "$T/sends" "$T/ex/proto-reply"
}
ex_proto_reply() { :; }	# checked by ex_proto_send

# docs/decider.md: contrib's list decider with the page's rules answers
# as the page says: the first matching line, as ops-list; no match, ask.
ex_decider_rules() {
	home decider-rules
	cp "$T/ex/decider-rules" "$W/rules" && chmod 644 "$W/rules"
	p=$(free_port)
	bg_mode python3 "$top_srcdir/contrib/decider/decider-list.py" \
	    "$W/rules" "127.0.0.1:$p" 2>/dev/null
	mine=$!
	wait_port "$p" || return
	for q in 'files.pythonhosted.org allow session' 'pypi.org allow session' \
	    'x.pastebin.com deny no paste sites' 'example.org ask'; do
		set -- $q
		h=$1; shift
		python3 - "$p" "$h" <<'PY' >"$T/out" 2>&1
import json, sys, urllib.request
q = {"request": "r3f2a8e61b07c94d5", "session": "run-0a1b2c3d4e5f",
     "sandbox": "s1", "cmd": "pip install requests", "pid": 4242,
     "host": sys.argv[2], "port": 443, "via": "connect",
     "refused": "no rule matches: default deny", "timeout": 30}
r = urllib.request.urlopen(urllib.request.Request(
    "http://127.0.0.1:%s/decide" % sys.argv[1], json.dumps(q).encode(),
    {"Content-Type": "application/json"}), timeout=10)
a = json.load(r)
print(" ".join([a["decision"]] + [str(a[k]) for k in ("scope", "note")
                                  if k in a]), a.get("approver", "-"))
PY
		want="$* ops-list"
		[ "$1" = ask ] && want="ask -"
		has_line "$T/out" "$want" "decider-rules: $h: $want"
	done
	kill $mine; wait $mine 2>/dev/null
}

# docs/control-protocol.md's harness in a few lines: run as written,
# answering "y" to the one open request, which is then approved.
ex_proto_harness() {
	home proto-harness
	echo 'allow-private 127.0.0.0/8' >"$W/.config/pinhole/policy"
	[ "$MODE" = root ] || chown -R nobody "$W"
	as_mode pinhole session start s1 >"$T/out" 2>&1 ||
	    { fail "$MODE: proto-harness: session start: $(cat "$T/out")"; return; }
	bg_mode pinhole run --session s1 -- sh -c \
	    'pinhole request pypi.org:443 --reason x; sleep 30' >/dev/null 2>&1
	mine=$!
	id=$(wait_pending pypi.org as_mode pinhole)
	echo y >"$T/y"
	# (stdin given inside: a command put in the background reads
	# /dev/null otherwise)
	bg_mode sh -c 'exec python3 "$1" <"$2"' sh "$T/ex/proto-harness" \
	    "$T/y" >"$T/out" 2>&1
	harness=$!
	i=0
	until as_mode pinhole pending --all --json 2>/dev/null |
	    grep "\"id\":\"$id\"" | grep -q '"state":"approved"'; do
		i=$((i + 1))
		[ $i -lt 100 ] || break
		sleep 0.1
	done
	[ $i -lt 100 ] && ok "$MODE: proto-harness: its y approves the request" ||
	    fail "$MODE: proto-harness: not approved: $(cat "$T/out")"
	kill $harness $mine 2>/dev/null
	wait $harness $mine 2>/dev/null
	as_mode pinhole session stop s1 >/dev/null 2>&1
}

# docs/control-protocol.md: pinhole request in a sandbox refused a POST
# by a read-only rule (line 4 of the user's policy); what it prints, the
# id, the time and the home written as the page writes them.
ex_proto_request() {
	sandbox proto-request '#\n#\nallow api.example.net read-only\n' "
	    curl -s -d x https://api.example.net/upload >/dev/null
	    $(sed -n 's/^\$ //p' "$T/ex/proto-request")"
	id=$(head -1 "$W/out")
	{ cat "$W/out"; grep '^pinhole request:' "$W/err"; } |
	    sed "s/$id/r5c0e7a19d2b4f863/g; s|$W|/home/u|g
	    s/at [0-9T:-]*Z:/at 2026-12-02T12:59:01Z:/" >"$T/said"
	sed '1d' "$T/ex/proto-request" >"$T/want"
	if cmp -s "$T/want" "$T/said"; then
		ok "$MODE: proto-request: pinhole request says what the page shows"
	else
		fail "$MODE: proto-request: $(diff "$T/want" "$T/said")"
	fi
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
start_net || { finish; exit 1; }
for MODE in root nobody; do
	while read -r where kind name args; do
		[ -z "${DOCS_ONLY:-}" ] || case " $DOCS_ONLY " in
		*" $name "*) ;;
		*) continue ;;
		esac
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
		run|output)
			"ex_$(echo "$name" | tr - _)"
			;;
		esac
	done <"$T/ex/index"
done
finish
