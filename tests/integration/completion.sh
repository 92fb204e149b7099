#!/bin/sh
# pinhole completion: the bash, zsh and fish scripts name every command
# `pinhole help` lists and, under it, every option its --help lists; and
# each shell really completes with them: commands, options, verbs, the
# words an option takes, files, sessions, and after run's options (or
# "--") the command run, never pinhole's options.
. "$top_srcdir/tests/integration/lib.sh"
export ASAN_OPTIONS=detect_leaks=0

BASH_COMPLETION=/usr/share/bash-completion/bash_completion
[ -r "$BASH_COMPLETION" ] || skip "bash-completion is not installed"
need bash zsh fish

# The scripts, as the build installs them when it has made them.
for sh in bash zsh fish; do
	"$PINHOLE" completion $sh >"$T/pinhole.$sh" ||
	    fail "pinhole completion $sh: status $?"
done
for f in bash/pinhole:bash zsh/_pinhole:zsh fish/pinhole.fish:fish; do
	built=${top_builddir:-/nonexistent}/completions/${f%:*}
	[ -f "$built" ] || continue
	if cmp -s "$built" "$T/pinhole.${f#*:}"; then
		ok "the build's ${f%:*} is current"
	else
		fail "completions/${f%:*} is not pinhole completion ${f#*:}"
	fi
done
"$PINHOLE" completion tcsh >/dev/null 2>"$T/err" && fail "completion tcsh"
grep -q "unknown shell 'tcsh'" "$T/err" && ok "an unknown shell is refused" ||
    fail "completion tcsh: $(cat "$T/err")"

# Every command and option --help shows is in each script, under its
# command (a verb's options under the verb: log --help shows verify's).
"$PINHOLE" help | awk '/^Commands:/ { on = 1; next } on && !NF { exit }
    on { print $1 }' >"$T/commands"
[ "$(wc -l <"$T/commands")" -gt 10 ] || fail "pinhole help lists no commands"
n=0
while read -r cmd; do
	grep -q "^_pinhole_commands='.*\b$cmd\b" "$T/pinhole.bash" ||
	    fail "bash: no command $cmd"
	grep -q "^		'$cmd:" "$T/pinhole.zsh" ||
	    fail "zsh: no command $cmd"
	grep -q "^	echo $cmd\\\\t" "$T/pinhole.fish" ||
	    fail "fish: no command $cmd"
	# Each script's part for the command and its verbs.
	awk -v q="'$cmd'" -v v="'$cmd " '/^	'"'"'/ { on = index($0, q) == 2 ||
	    index($0, v) == 2 } /^	\*\)/ { on = 0 } on' \
	    "$T/pinhole.bash" >"$T/bash.part"
	awk -v f="_pinhole_cmd_$cmd" '/^_pinhole_cmd_/ {
	    on = index($0, f "(") || index($0, f "_") } /^}/ { on = 0 } on' \
	    "$T/pinhole.zsh" >"$T/zsh.part"
	grep -e "__pinhole_is '$cmd'" -e "__pinhole_is '$cmd " \
	    "$T/pinhole.fish" >"$T/fish.part"
	"$PINHOLE" "$cmd" --help |
	    sed -n 's/^  \(-[A-Za-z]\), \(--[a-z0-9-]*\).*/\1 \2/p
		s/^      \(--[a-z][a-z0-9-]*\).*/\1/p' | tr ' ' '\n' >"$T/opts"
	while read -r opt; do
		n=$((n + 1))
		grep -qe " $opt\( \|'\)" "$T/bash.part" ||
		    fail "bash: pinhole $cmd has no $opt"
		grep -qe "'\*$opt[+=[-]" "$T/zsh.part" ||
		    fail "zsh: pinhole $cmd has no $opt"
		case $opt in
		--*)	grep -qe " -l ${opt#--} " "$T/fish.part" ;;
		*)	grep -qe " -s ${opt#-} " "$T/fish.part" ;;
		esac || fail "fish: pinhole $cmd has no $opt"
	done <"$T/opts"
done <"$T/commands"
[ "$n" -gt 100 ] && ok "the $n options of --help are in all three scripts" ||
    fail "only $n options found in --help"

# A running session, for the completion of session names.
mkdir "$T/bin" "$T/files"
ln -s "$PINHOLE" "$T/bin/pinhole"
PATH=$T/bin:$PATH
: >"$T/files/policy.txt"
"$PINHOLE" session start comptest --resolver 127.0.0.1:9 --allow x.test \
    --log "$T/audit.log" >/dev/null 2>&1 || fail "cannot start a session"

# The completions each shell gives for a line (completed at its end):
# "LINE|WANT|NOT": WANT (a regex) must be among them, NOT not.
F=$T/files
cat >"$T/cases" <<EOF
pinhole ru|^run$|
pinhole |^completion$|^--policy$
pinhole -|^--version$|
pinhole run --pol|^--policy$|
pinhole run -|^--log-fail$|^--key$
pinhole log ver|^verify$|
pinhole log verify --|^--key$|^--blocked$
pinhole session st|^status$|
pinhole session stop |^comptest$|
pinhole run --session |^comptest$|
pinhole approve -s |^comptest$|
pinhole help ch|^check$|
pinhole completion |^fish$|
pinhole run --log-fail |^open$|
pinhole run --policy $F/po|policy\.txt$|
pinhole log verify --key $F/po|policy\.txt$|
pinhole run -p x -- ech|^echo$|^--policy$
pinhole run ech|^echo$|
pinhole run -- ls --|^--all$|^--policy$
pinhole run --allow x.test ls --al|^--all$|^--allow$
EOF

# bash: the words in COMPREPLY for each line.
cat >"$T/bash-complete" <<'EOF'
. "$BASH_COMPLETION"
. "$1"
while IFS='|' read -r line want not; do
	read -ra COMP_WORDS <<<"$line"
	[[ $line == *' ' ]] && COMP_WORDS+=('')
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMP_LINE=$line COMP_POINT=${#line} COMPREPLY=()
	_pinhole 2>/dev/null
	printf '%s\n' "<<$line>>" "${COMPREPLY[@]}"
done <"$2"
EOF
BASH_COMPLETION=$BASH_COMPLETION bash "$T/bash-complete" "$T/pinhole.bash" \
    "$T/cases" >"$T/bash.out" 2>&1

# fish: what `complete -C` prints, without the descriptions.
fish -c 'source $argv[1]
while read -l line
	set -l l (string split "|" -- $line)
	echo "<<$l[1]>>"
	complete -C "$l[1]" | string replace -r "\t.*" ""
end <$argv[2]' "$T/pinhole.fish" "$T/cases" >"$T/fish.out" 2>&1

# zsh: an interactive zsh on a pty (zpty), with compinit and the script
# in fpath, completes each line by a key bound to complete-word; every
# match compadd adds is written down.
mkdir "$T/zfunc"
cp "$T/pinhole.zsh" "$T/zfunc/_pinhole"
cat >"$T/zsh-complete" <<'EOF'
zmodload zsh/zpty || exit 1
fdir=$1 out=$2
: >$out
zpty z zsh -f -i
zpty -w z "fpath=($fdir \$fpath); autoload -Uz compinit; compinit -u -D"
zpty -w z "compadd() {
	if [[ \${@[1,(i)(-|--)]} == *-(O|A|D)\\ * ]]; then
		builtin compadd \"\$@\"; return
	fi
	local -a m
	builtin compadd -O m \"\$@\"
	((\$#m)) && print -rl -- \$m >>$out
	builtin compadd \"\$@\"
}"
zpty -w z "_t() { zle complete-word; print -r -- '<<end>>' >>$out; BUFFER=; }"
# No list, and no question before a long one: it would eat the next line.
zpty -w z "zle -N _t; bindkey '^T' _t; unsetopt autolist; LISTMAX=100000"
while IFS='|' read -r line want not; do
	print -r -- "<<$line>>" >>$out
	zpty -w -n z "$line"$'\C-t'
	for i in {1..200}; do
		[[ $(tail -n 1 $out) == '<<end>>' ]] && break
		sleep 0.05
	done
done <$3
zpty -d z
EOF
zsh -n "$T/pinhole.zsh" && ok "zsh: the script parses" ||
    fail "zsh -n: the script does not parse"
timeout 120 zsh -f "$T/zsh-complete" "$T/zfunc" "$T/zsh.out" "$T/cases" \
    </dev/null >/dev/null 2>&1 || fail "zsh: the completion run failed"

# The completions of line $2 in $1's output, one a line.
matches() {
	awk -v l="<<$2>>" '$0 == l { on = 1; next } /^<</ { on = 0 } on' "$1"
}
for sh in bash fish zsh; do
	while IFS='|' read -r line want not; do
		matches "$T/$sh.out" "$line" | sort -u >"$T/got"
		if ! grep -Eq -- "$want" "$T/got"; then
			fail "$sh: '$line' does not offer $want:" \
			    $(head -12 "$T/got")
		elif [ -n "$not" ] && grep -Eq -- "$not" "$T/got"; then
			fail "$sh: '$line' offers $not"
		else
			ok "$sh: '$line' offers $want${not:+, not $not}"
		fi
	done <"$T/cases"
done
"$PINHOLE" session stop comptest >/dev/null 2>&1
finish
