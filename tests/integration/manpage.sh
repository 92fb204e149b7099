#!/bin/sh
# The manual cannot drift from the program, either way.  Every command
# `pinhole help` lists has its entry in pinhole(1)'s COMMANDS, and the
# sections it points to exist; every option its --help lists (from the
# option table the parser reads) is named in the manual where that
# command is described; and every option pinhole(1) and pinhole-policy(5)
# name, \-\-name in troff, is one of the command the text is about.
#
# Which command a mention is about: the command a "pinhole CMD" before it
# on the same line names; else, in a section not named after a command,
# the command of the paragraph (a line starting .B pinhole CMD, or in
# COMMANDS the commands an entry's tag names); else the section's own
# (RUN is run's); else any command's (DESCRIPTION, EXIT STATUS, ...).
. "$top_srcdir/tests/integration/lib.sh"
export ASAN_OPTIONS=detect_leaks=0
MAN=$top_srcdir/docs/pinhole.1
MAN5=$top_srcdir/docs/pinhole-policy.5

# Options of other programs the manual names, as "PROGRAM --option":
# allowed on a line that names PROGRAM before the option.
cat >"$T/others" <<'EOF'
curl --socks5-hostname
EOF
# Options a command's section documents by pointing to another's, as
# "COMMAND OTHER": session start takes every option of proxy, and the
# hook every option of session start.
cat >"$T/byref" <<'EOF'
session proxy
hook session
hook proxy
EOF

# The commands, as `pinhole help` lists them.
"$PINHOLE" help | awk '/^Commands:/ { on = 1; next } on && !NF { exit }
    on { print $1 }' \
    >"$T/commands"
[ -s "$T/commands" ] || fail "pinhole help lists no commands"
# Their options and those of their verbs (help prints them all), as
# "COMMAND OPTION PRIMARY": the option a second name is the same as.
while read -r cmd; do
	"$PINHOLE" "$cmd" --help 2>/dev/null | awk -v c="$cmd" '
	    match($0, /^ *(-[A-Za-z], )?--[a-z][a-z0-9-]*/) {
		o = substr($0, RSTART, RLENGTH); sub(/.*--/, "", o)
		opt[o] = o; last = o
	    }
	    / the same as --/ { p = $0; sub(/.* the same as --/, "", p)
		opt[last] = p }
	    END { for (o in opt) print c, o, opt[o] }'
done <"$T/commands" | sort >"$T/opts"
[ "$(wc -l <"$T/opts")" -gt 50 ] ||
    fail "only $(wc -l <"$T/opts") options found in --help"

# Read the pages: "bad FILE:LINE OPTION [COMMANDS]" for an option that
# none of the commands has, "doc COMMAND OPTION" for each mention,
# "entry COMMAND" for COMMANDS' entries, "see COMMAND SECTION" for their
# "see SECTION below", "section TITLE" for each section.
awk -v cmds="$T/commands" -v opts="$T/opts" -v others="$T/others" '
# The commands named in a line of troff.
function named(s,    n, i, w, out) {
	gsub(/\\f[BIRP]|\\&|"/, "", s)
	n = split(s, w, /[] ,|[]+/)
	for (i = 1; i <= n; i++)
		if (w[i] in iscmd)
			out = out " " w[i]
	return out
}
# The last command "pinhole CMD" names in s, or "".
function pinhole_cmd(s,    w, out) {
	s = tolower(s)
	while (match(s, /pinhole'"'"'? +[a-z]+/)) {
		w = substr(s, RSTART, RLENGTH)
		sub(/.* /, "", w)
		if (w in iscmd)
			out = w
		s = substr(s, RSTART + RLENGTH)
	}
	return out
}
# Is opt an option of the commands in scope (of any, for "")?  Note it.
function known(opt, scope, pre,    n, i, c, ok) {
	if (opt == "help" || opt == "version")
		return 1
	if ((opt in other) && index(pre, other[opt]))
		return 1
	if (scope == "")
		return opt in any
	n = split(scope, c, " ")
	for (i = 1; i <= n; i++) {
		print "doc", c[i], opt
		if ((c[i], opt) in has)
			ok = 1
	}
	return ok
}
BEGIN {
	while ((getline l <cmds) > 0)
		iscmd[l] = 1
	while ((getline l <opts) > 0) {
		split(l, a, " ")
		has[a[1], a[2]] = any[a[2]] = 1
	}
	while ((getline l <others) > 0) {
		split(l, a, " --")
		other[a[2]] = a[1]
	}
}
FNR == 1 { title = sec = para = ""; tag = 0 }
/^\.SH / {
	title = $0
	sub(/^\.SH +"?/, "", title)
	sub(/"$/, "", title)
	print "section", title
	sec = (tolower(title) in iscmd) ? tolower(title) : ""
}
/^\.(SH|SS|TP|PP|LP|IP|P)( |$)/ {
	para = ""
	tag = $1 == ".TP"
	next
}
tag && title == "COMMANDS" {
	para = named($0)
	n = split(para, c, " ")
	for (i = 1; i <= n; i++)
		print "entry", c[i]
}
{ tag = 0 }
sec == "" && /^\.B[IR]? +"?pinhole [a-z]/ && pinhole_cmd($0) != "" {
	para = pinhole_cmd($0)
}
title == "COMMANDS" && match($0, /see [A-Z][A-Z ]*[A-Z] below/) {
	s = substr($0, RSTART + 4, RLENGTH - 10)
	n = split(para, c, " ")
	for (i = 1; i <= n; i++)
		print "see", c[i], s
}
{
	rest = $0
	pre = ""
	while (match(rest, /\\-\\-[a-z0-9]+(\\-[a-z0-9]+)*/)) {
		pre = pre substr(rest, 1, RSTART - 1)
		opt = substr(rest, RSTART + 4, RLENGTH - 4)
		gsub(/\\-/, "-", opt)
		rest = substr(rest, RSTART + RLENGTH)
		if ((scope = pinhole_cmd(pre)) == "")
			scope = para != "" ? para : sec
		if (!known(opt, scope, pre))
			print "bad", FILENAME ":" FNR, "--" opt, "[" scope "]"
		pre = pre "--" opt
	}
}' "$MAN" "$MAN5" | sort -u >"$T/read"

# Each command has its entry in COMMANDS; the sections it points to exist.
while read -r cmd; do
	if grep -qx "entry $cmd" "$T/read"; then
		ok "pinhole(1) has an entry for $cmd"
	else
		fail "pinhole(1) has no entry for $cmd in COMMANDS"
	fi
	sed -n "s/^see $cmd //p" "$T/read" >"$T/see"
	while read -r s; do
		grep -qx "section $s" "$T/read" ||
		    fail "pinhole(1): $cmd's entry points to $s: not there"
	done <"$T/see"
done <"$T/commands"

# Every option is named where its command is described (a second name
# where its first is, an option of another command where that one is).
n=0
while read -r cmd opt primary; do
	n=$((n + 1))
	found=
	grep -qx "doc $cmd $opt" "$T/read" ||
	    grep -qx "doc $cmd $primary" "$T/read" && found=1
	for ref in $(sed -n "s/^$cmd //p" "$T/byref"); do
		grep -qx "$ref $opt $opt" "$T/opts" &&
		    grep -qx "doc $ref $opt" "$T/read" && found=1
	done
	[ -n "$found" ] ||
	    fail "the manual does not name $cmd --$opt where $cmd is described"
done <"$T/opts"
ok "the manual documents the $n options of --help, each under its command"

# Every option the manual names is one of the command it is said of.
sed -n 's/^bad //p' "$T/read" >"$T/bad"
while read -r where opt scope; do
	scope=${scope#[}
	scope=${scope%]}
	fail "$where: $opt is not an option of ${scope:-any command}"
done <"$T/bad"
[ -s "$T/bad" ] || ok "every option the manual names is its command's"
finish
