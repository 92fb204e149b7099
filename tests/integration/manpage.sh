#!/bin/sh
# The manual cannot drift from the program: every command `pinhole help`
# lists has its entry in pinhole(1), and every option its --help lists
# (from the option table the parser reads) is in pinhole(1) too.
. "$top_srcdir/tests/integration/lib.sh"
export ASAN_OPTIONS=detect_leaks=0
MAN=$top_srcdir/docs/pinhole.1

# The commands, as `pinhole help` lists them.
"$PINHOLE" help | awk '/^Commands:/ { on = 1; next } on && !NF { exit }
    on { print $1 }' \
    >"$T/commands"
[ -s "$T/commands" ] || fail "pinhole help lists no commands"
n=0
while read -r cmd; do
	# A command is named in bold (.B, .BR, .BI) in the manual.
	if grep -Eq "^\.B[IR]? .*\b$cmd\b" "$MAN"; then
		ok "pinhole(1) has $cmd"
	else
		fail "pinhole(1) has no entry for $cmd"
	fi
	# Its options and those of its verbs (help prints them all).
	"$PINHOLE" "$cmd" --help 2>/dev/null |
	    sed -n 's/^ *\(-[A-Za-z], \)\{0,1\}\(--[a-z][a-z0-9-]*\).*/\2/p' |
	    sort -u >"$T/opts"
	while read -r opt; do
		n=$((n + 1))
		# troff writes a hyphen as \-.
		lit=$(printf '%s' "$opt" | sed 's/-/\\-/g')
		grep -qF -- "$lit" "$MAN" ||
		    fail "pinhole(1) does not document $cmd $opt"
	done <"$T/opts"
done <"$T/commands"
[ "$n" -gt 50 ] && ok "$n options of --help are all in pinhole(1)" ||
    fail "only $n options found in --help"
finish
