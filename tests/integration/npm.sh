# Sourced by the tests that install a pinned npm package.

# npm ci into $1 (its package.json and lock file there), trusting the
# system's certificate authorities: npm keeps a list of its own, which
# lacks those a network that inspects TLS has its machines trust.
npm_ci() {
	set -- "$1" /etc/ssl/certs/ca-certificates.crt
	if [ -f "$2" ]; then
		npm ci --prefix "$1" --cafile "$2" --no-audit --no-fund
	else
		npm ci --prefix "$1" --no-audit --no-fund
	fi
}

# The agent harnesses tests/package.json pins, in $mods (the build
# directory's tests/harness), installed again only when the lock file
# changed or program $1 is missing; npm's output in $mods/npm.out.
harness_ci() {
	mods="$top_builddir/tests/harness"
	if ! cmp -s "$top_srcdir/tests/package-lock.json" \
	    "$mods/package-lock.json" || [ ! -x "$mods/node_modules/.bin/$1" ]
	then
		mkdir -p "$mods"
		cp "$top_srcdir/tests/package.json" \
		    "$top_srcdir/tests/package-lock.json" "$mods/"
		npm_ci "$mods" >"$mods/npm.out" 2>&1 || return 1
	fi
	chmod -R a+rX "$mods"
}

# The person of a harness test (as_mode's $MODE, $W): wait (90 s at
# most) for the agent's request, then approve it for the session by the
# name `pending` gives.  The name lands in $W/sid, the time of approving
# in $W/approved-at, what approve said in $W/approve.
harness_person() {
	i=0
	while [ $i -lt 900 ]; do
		as_mode "$PINHOLE" pending --json >"$W/pending" 2>&1
		grep -q '"kind":"request"' "$W/pending" && break
		sleep 0.1
		i=$((i + 1))
	done
	set -- $(grep '"kind":"request"' "$W/pending" | sed -n \
	    's/.*"id":"\(r[0-9a-f]*\)".*"session":"\([^"]*\)".*/\2 \1/p' |
	    head -n 1)
	echo "${1:-}" >"$W/sid"
	date +%s.%N >"$W/approved-at"
	as_mode "$PINHOLE" approve "${1:-}/${2:-}" --session >"$W/approve" 2>&1
}

# A harness test cannot run here: a local run skips, a CI run fails (77
# and 1 alike after the test's network namespace is made).
harness_need() {
	echo "${CI:+FAIL: }${CI:-SKIP: }$*" >&2
	[ "${CI:-}" = true ] && exit 1
	exit 77
}

# Count the verdicts a harness test's checker wrote to $1 ("ok: ..."
# and "FAIL: ..." lines), naming $MODE; a checker that crashed fails.
harness_verdicts() {
	sed -n 's/^ok: /ok: '"$MODE"': /p' "$1"
	grep "^FAIL: " "$1" | while read -r l; do
		echo "FAIL: $MODE: ${l#FAIL: }"
	done
	grep -q "^Traceback" "$1" && fail "$MODE: $(cat "$1")"
	NFAIL=$((NFAIL + $(grep -c "^FAIL: " "$1")))
	NPASS=$((NPASS + $(grep -c "^ok: " "$1")))
}

# After the harness exited: its SessionEnd hook stopped session $1, the
# session's log (into $W/log) has the person's grant under $1, and the
# log verifies.
harness_log() {
	[ -z "$(as_mode "$PINHOLE" session list)" ] &&
	    ok "$MODE: the SessionEnd hook stopped session $1" ||
	    fail "$MODE: sessions left: $(as_mode "$PINHOLE" session list)"
	as_mode "$PINHOLE" log --json --session "$1" >"$W/log" 2>&1
	grep '"event":"grant"' "$W/log" | grep -q "\"session\":\"$1\"" &&
	    ok "$MODE: the grant is in the log under $1" ||
	    fail "$MODE: no grant line for $1"
	as_mode "$PINHOLE" log verify >"$W/verify" 2>&1 &&
	    ok "$MODE: the log verifies" ||
	    fail "$MODE: log verify: $(cat "$W/verify")"
}
