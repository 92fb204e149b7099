#!/bin/sh
# Usage errors: ports out of range, missing option values and refused
# rules are one line naming what was given, and exit 2.
. "$top_srcdir/tests/integration/lib.sh"
export ASAN_OPTIONS=detect_leaks=0
unset PINHOLE_AGENT http_proxy HTTP_PROXY

# $1: what; $2: a regex for the one line of stderr; then the command.
usage() {
	desc=$1 want=$2; shift 2
	timeout 10 "$@" >"$T/out" 2>"$T/err"
	rc=$?
	if [ $rc != 2 ]; then
		fail "$desc: status $rc, want 2: $(cat "$T/err")"
	elif [ "$(wc -l <"$T/err")" != 1 ] || ! grep -Eq -- "$want" "$T/err"; then
		fail "$desc: message: $(cat "$T/err")"
	else
		ok "$desc"
	fi
}

BAD='invalid port \(1 to 65535\)'
for p in 99999 0 65536 -1 +80 ' 80' 0x50 '' 80x; do
	re=$(printf '%s' "$p" | sed 's/[+.]/\\&/g')
	usage "proxy --listen 127.0.0.1:$p" \
	    "^pinhole proxy: --listen '127\.0\.0\.1:$re': $BAD" \
	    "$PINHOLE" proxy --listen "127.0.0.1:$p" --allow x.test
done
usage "proxy --listen [::1]:65536" "--listen '\[::1\]:65536': $BAD" \
    "$PINHOLE" proxy --listen '[::1]:65536' --allow x.test
usage "proxy --listen without a port" "--listen '127\.0\.0\.1': no port" \
    "$PINHOLE" proxy --listen 127.0.0.1 --allow x.test
usage "proxy --listen a name" "--listen 'localhost:3128': not an IP address" \
    "$PINHOLE" proxy --listen localhost:3128 --allow x.test
usage "proxy --dns-listen 127.0.0.1:70000" "--dns-listen '127\.0\.0\.1:70000': $BAD" \
    "$PINHOLE" proxy --dns-listen 127.0.0.1:70000 --allow x.test
for cmd in proxy run; do
	usage "$cmd --resolver 127.0.0.1:99999" \
	    "^pinhole $cmd: --resolver '127\.0\.0\.1:99999': $BAD" \
	    "$PINHOLE" $cmd --resolver 127.0.0.1:99999 --allow x.test -- true
	usage "$cmd --resolver [::1]:0" "--resolver '\[::1\]:0': $BAD" \
	    "$PINHOLE" $cmd --resolver '[::1]:0' --allow x.test -- true
done
usage "check HOST:99999" "bad host 'x\.test:99999': $BAD" \
    "$PINHOLE" check --allow x.test x.test:99999
usage "check HOST:0" "bad host 'x\.test:0': $BAD" \
    "$PINHOLE" check --allow x.test x.test:0
usage "request HOST:65536" "^pinhole request: bad host 'x\.test:65536': $BAD" \
    "$PINHOLE" request x.test:65536
usage "--allow HOST:65536" "^pinhole check: --allow: bad port '65536'" \
    "$PINHOLE" check --allow x.test:65536 x.test
usage "--allow a range past 65535" "^pinhole check: --allow: bad port '1-70000'" \
    "$PINHOLE" check --allow x.test:1-70000 x.test
# A bad value on the command line is a usage error, not a refusal to
# start that sends the person to pinhole doctor.
for cmd in run proxy "session start s"; do
	usage "$cmd --allow 'bad!x'" "^pinhole ${cmd%% *}: --allow: bad host 'bad!x': invalid character in name \(try 'pinhole ${cmd%% *} --help'\)\$" \
	    "$PINHOLE" $cmd --allow 'bad!x' -- true
	usage "$cmd --fake-range 10.0.0.0/40" "^pinhole ${cmd%% *}: --fake-range: 10\.0\.0\.0/40: not an IPv4 prefix" \
	    "$PINHOLE" $cmd --fake-range 10.0.0.0/40 -- true
done
usage "doctor --allow https://x.test" "^pinhole doctor: --allow: bad host 'https://x\.test': write the host, not a URL: allow x\.test" \
    "$PINHOLE" doctor --allow https://x.test
usage "request https://x.test/a" "^pinhole request: bad host 'https://x\.test/a': write the host, not a URL: x\.test \(paths go in 'path /a/\*\*' on an allow rule\)" \
    "$PINHOLE" request https://x.test/a

# Did you mean: a command or an option a letter or two away.
usage "pinhole alow" "^pinhole: unknown command 'alow' \(did you mean 'allow'\?\)\$" \
    "$PINHOLE" alow x.test
usage "pinhole zzzzz" "^pinhole: unknown command 'zzzzz' \(try 'pinhole help'\)\$" \
    "$PINHOLE" zzzzz
usage "allow --polcy" "^pinhole allow: unknown option '--polcy' \(did you mean '--policy'\?\)" \
    "$PINHOLE" allow --polcy x x.test
usage "run --alow" "^pinhole run: unknown option '--alow' \(did you mean '--allow'\?\)" \
    "$PINHOLE" run --alow x.test -- true
printf 'allow a.test\nallow b.test:99999\n' >"$T/policy"
usage "a policy file's port: FILE:LINE" "^$T/policy:2: bad port '99999'" \
    "$PINHOLE" check --policy "$T/policy" a.test
usage "allow HOST:99999" "^pinhole allow: bad port '99999'" \
    "$PINHOLE" allow --policy "$T/new.policy" x.test:99999
# The agent endpoint's port must be a port too.
PINHOLE_AGENT=http://127.0.0.1:99999 "$PINHOLE" request x.test >"$T/out" 2>&1
rc=$?
[ $rc = 4 ] && grep -q "no agent endpoint" "$T/out" &&
    ok "PINHOLE_AGENT with port 99999 is no endpoint" ||
    fail "PINHOLE_AGENT port 99999: rc $rc $(cat "$T/out")"

# A missing value names the option as it was typed, in every command.
usage "run --allow" "^pinhole run: option '--allow' needs a value" \
    "$PINHOLE" run --allow
usage "run -a" "^pinhole run: option '-a' needs a value" "$PINHOLE" run -a
usage "run -va" "^pinhole run: option '-a' needs a value" "$PINHOLE" run -va
usage "run --all (abbreviated)" "^pinhole run: option '--all' needs a value" \
    "$PINHOLE" run --all
usage "run --dns-real=1" "^pinhole run: option '--dns-real' takes no value" \
    "$PINHOLE" run --dns-real=1 -- true
usage "run --nope=1" "^pinhole run: unknown option '--nope'" \
    "$PINHOLE" run --nope=1 -- true
usage "run -vX" "^pinhole run: unknown option '-X'" "$PINHOLE" run -vX -- true
for c in "run --net" "run --log" "run --max-clients" "proxy --listen" \
    "proxy --dns-listen" "proxy -p" "check --policy" "check -a" \
    "allow --for" "allow -p" "disallow --policy" "log --host" "log -s" \
    "log verify -k" "request --reason" "request --status" "pending -s" \
    "approve --ttl" "approve -s" "deny --reason" "deny -s" "watch --session"; do
	set -- $c
	opt=$(eval echo \${$#})
	usage "$c" "^pinhole $1: option '$opt' needs a value" "$PINHOLE" $c
done

# A refused rule is blamed, not a line of a file that does not exist.
usage "allow 'bad!x'" "^pinhole allow: bad host 'bad!x': invalid character" \
    "$PINHOLE" allow --policy "$T/new.policy" 'bad!x'
printf 'allow a.test\n' >"$T/one.policy"
usage "allow 'bad!x' to a file of one line" "^pinhole allow: bad host 'bad!x'" \
    "$PINHOLE" allow --policy "$T/one.policy" 'bad!x'
[ ! -e "$T/new.policy" ] && ok "no file made for refused rules" ||
    fail "a refused rule made $T/new.policy"
# The options --help lists are the options the parser takes, no more and
# no fewer, and a short letter means the same option in every command.
# Each line of $T/opts: command (and verb), letter, name, none|required|
# optional, and the option it is another name for.
for cmd in $("$PINHOLE" help | sed -n 's/^  \([a-z]*\)  .*/\1/p'); do
	"$PINHOLE" $cmd --help
done | awk '
/^usage: pinhole / { sec = $3; if ($4 ~ /^[a-z]+$/) sec = sec " " $4 }
/^  (-[A-Za-z], |    )--[a-z]/ {
	letter = substr($0, 3, 1) == "-" ? substr($0, 4, 1) : ""
	line = substr($0, 9); label = line; sub(/  .*/, "", label)
	help = substr(line, length(label) + 1); sub(/^ +/, "", help)
	name = label; sub(/[ [].*/, "", name)
	arg = label ~ /\[=/ ? "optional" : label ~ / / ? "required" : "none"
	same = help ~ /^the same as --/ ? substr(help, 15) : ""
	printf "%s\t%s\t%s\t%s\t%s\n", sec, letter, name, arg, same
}' >"$T/opts"
[ "$(wc -l <"$T/opts")" -gt 40 ] && ok "--help lists $(wc -l <"$T/opts") options" ||
    fail "--help lists few options: $(cat "$T/opts")"
# $1: command and verb; then its options.  Fails when the parser blames
# $2, the option (as typed) tried.
taken() {
	sec=$1 opt=$2; shift 2
	timeout 10 "$PINHOLE" $sec "$@" --zz-no-such-option </dev/null \
	    >/dev/null 2>"$T/err"
	rc=$?
	if [ $rc != 2 ] || grep -q -- "option '$opt'" "$T/err"; then
		echo "$sec $*: rc $rc $(cat "$T/err")"
	fi
}
tab=$(printf '\t')
while IFS=$tab read -r sec letter name arg same; do
	case $arg in
	none) taken "$sec" "--$name" "--$name" ;;
	optional) taken "$sec" "--$name" "--$name=1"
		taken "$sec" "--$name" "--$name" ;;
	required) taken "$sec" "--$name" "--$name=1"
		taken "$sec" "--$name" "--$name" 1 ;;
	esac
	[ -z "$letter" ] && continue
	if [ "$arg" = required ]; then
		taken "$sec" "-$letter" "-$letter" 1
	else
		taken "$sec" "-$letter" "-$letter"
	fi
done <"$T/opts" >"$T/refused"
[ ! -s "$T/refused" ] && ok "the parser takes every option --help lists" ||
    fail "listed but refused: $(cat "$T/refused")"
# Every name of another command, unless it abbreviates one of this one.
cut -f3 "$T/opts" | sort -u >"$T/names"
cut -f1 "$T/opts" | sort -u | while read -r sec; do
	awk -F'\t' -v sec="$sec" '$1 == sec { print $3 }' "$T/opts" >"$T/own"
	while read -r name; do
		grep -q "^$name" "$T/own" && continue
		timeout 10 "$PINHOLE" $sec "--$name" --zz-no-such-option \
		    </dev/null >/dev/null 2>"$T/err"
		grep -q "unknown option '--$name'" "$T/err" ||
			echo "$sec --$name: $(cat "$T/err")"
	done <"$T/names"
done >"$T/unlisted"
[ ! -s "$T/unlisted" ] && ok "the parser takes no option --help leaves out" ||
    fail "taken but not listed: $(cat "$T/unlisted")"
# A letter stands for one option: the commands that have it share a name
# for it (its own or another it has).
awk -F'\t' '
$5 != "" { alias[$1 SUBSEP $5] = alias[$1 SUBSEP $5] " " $3 }
$2 != "" { long[$1 SUBSEP $2] = $3; arg[$1 SUBSEP $2] = $4 }
END {
	for (k in long) {
		split(k, a, SUBSEP)
		n = split(long[k] alias[a[1] SUBSEP long[k]], w, " ")
		ncmds[a[2]]++
		seen[a[2]] = seen[a[2]] " " a[1] ": -" a[2] " --" long[k] ";"
		kinds[a[2] SUBSEP arg[k]] = 1
		for (i = 1; i <= n; i++)
			count[a[2] SUBSEP w[i]]++
	}
	for (l in ncmds) {
		one = 0
		for (k in count) {
			split(k, a, SUBSEP)
			if (a[1] == l && count[k] == ncmds[l])
				one = 1
		}
		nk = 0
		for (k in kinds) {
			split(k, a, SUBSEP)
			nk += a[1] == l
		}
		if (!one || nk != 1)
			print "-" l " means different options:" seen[l]
	}
}' "$T/opts" >"$T/letters"
[ ! -s "$T/letters" ] && ok "a short letter means one option in every command" ||
    fail "$(cat "$T/letters")"
finish
