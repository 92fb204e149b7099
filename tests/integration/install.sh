#!/bin/sh
# The install is whole: `make install DESTDIR=...` puts the program, its
# manual, the documents the manual names (where it names them), the
# licence, the presets, systemd's units and the AppArmor profile (where
# configured); the units pass `systemd-analyze verify` with nothing to
# say, and `make uninstall` takes every file away again.
. "$top_srcdir/tests/integration/lib.sh"

D=$T/dest
# A make of its own: not the jobs of the make running the tests.
unset MAKEFLAGS MFLAGS MAKELEVEL
${MAKE:-make} -s -C "$top_builddir" install DESTDIR="$D" >"$T/out" 2>&1 ||
    { fail "make install: $(tail -5 "$T/out")"; finish; exit 1; }
ok "make install DESTDIR"

# Print the one installed file whose path ends in $1.
installed() {
	find "$D" -path "*$1" \( -type f -o -type l \) | head -1
}

bin=$(installed /bin/pinhole)
[ -x "$bin" ] && "$bin" version >/dev/null && ok "the program" ||
    fail "no program installed"
man1=$(installed /man1/pinhole.1)
man5=$(installed /man5/pinhole-policy.5)
[ -f "$man1" ] && [ -f "$man5" ] && ok "pinhole(1), pinhole-policy(5)" ||
    fail "manual pages: '$man1' '$man5'"
[ -f "$(installed /pinhole/presets/python)" ] && ok "presets" ||
    fail "no presets"

# Every document the pages name is installed where they name it, with
# the README, the licence and the examples beside them.
sed -n 's/\\-/-/g; s|.*[ (]\(/[^ ]*/doc/pinhole/[a-z-]*\.md\).*|\1|p' \
    "$man1" "$man5" | sort -u >"$T/docs"
[ "$(wc -l <"$T/docs")" -ge 5 ] && ok "the pages name $(wc -l <"$T/docs") documents" ||
    fail "the pages name too few documents: $(cat "$T/docs")"
# A document named by its place in a checkout is nowhere once installed.
sed 's/\\-/-/g' "$man1" "$man5" | grep -E '(^|[ (])docs/[a-z-]+\.md' \
    >"$T/relative" &&
    fail "the pages name documents as in a checkout: $(cat "$T/relative")"
docdir=
while read -r f; do
	[ -f "$D$f" ] || fail "the manual names $f, not installed"
	docdir=${f%/*}
done <"$T/docs"
for f in README.md LICENSE examples/example.policy; do
	[ -f "$D$docdir/$f" ] || fail "$docdir/$f not installed"
done
grep -q "^Copyright (c) 2026 The pinhole authors" "$D$docdir/LICENSE" &&
    ok "documents, licence and examples in $docdir" ||
    fail "no licence in $docdir"

# The units and the profile name the installed program.
proxy_unit=$(installed /system/pinhole-proxy.service)
session_unit=$(installed /user/pinhole-session@.service)
for u in "$proxy_unit" "$session_unit"; do
	[ -f "$u" ] || { fail "unit not installed: '$u'"; continue; }
	exe=$(sed -n 's/^ExecStart=\([^ ]*\).*/\1/p' "$u")
	[ "$D$exe" = "$bin" ] && ok "${u##*/} runs $exe" ||
	    fail "${u##*/} runs '$exe', installed: $bin"
done
profile=$(installed /apparmor.d/pinhole)
if [ -n "$profile" ]; then
	grep -q "^profile pinhole ${bin#"$D"} " "$profile" &&
	    ok "the AppArmor profile is for ${bin#"$D"}" ||
	    fail "the AppArmor profile: $(grep ^profile "$profile")"
fi

# systemd's own check, with nothing to say.  It looks for the program
# and the pages the units name on this system: the unit it reads names
# the program under DESTDIR, and MANPATH finds the pages there.
if command -v systemd-analyze >/dev/null; then
	mkdir -p "$T/units" "$T/run"
	for u in "$proxy_unit" "$session_unit"; do
		[ -f "$u" ] || continue
		exe=$(sed -n 's/^ExecStart=\([^ ]*\).*/\1/p' "$u")
		sed "s|^ExecStart=$exe|ExecStart=$D$exe|" "$u" >"$T/units/${u##*/}"
	done
	cp "$T/units/pinhole-session@.service" \
	    "$T/units/pinhole-session@work.service"
	man=${man1%/man1/*}
	MANPATH=$man systemd-analyze verify \
	    "$T/units/pinhole-proxy.service" >"$T/verify" 2>&1 ||
	    echo "(exit status $?)" >>"$T/verify"
	MANPATH=$man XDG_RUNTIME_DIR=$T/run systemd-analyze --user verify \
	    "$T/units/pinhole-session@work.service" >>"$T/verify" 2>&1 ||
	    echo "(exit status $?)" >>"$T/verify"
	[ -s "$T/verify" ] && fail "systemd-analyze verify: $(cat "$T/verify")" ||
	    ok "systemd-analyze verify: nothing to say"
	# Its hardening stays where it is: an exposure of 2.0 at most (the
	# threshold counts tenths).
	systemd-analyze security --offline=yes --threshold=20 \
	    "$T/units/pinhole-proxy.service" >"$T/security" 2>&1 &&
	    ok "pinhole-proxy.service: $(tail -1 "$T/security" |
	    sed 's/^→ //')" ||
	    fail "systemd-analyze security: $(tail -1 "$T/security")"
else
	fail "systemd-analyze is not installed: cannot verify the units"
fi

${MAKE:-make} -s -C "$top_builddir" uninstall DESTDIR="$D" >"$T/out" 2>&1 ||
    fail "make uninstall: $(tail -5 "$T/out")"
left=$(find "$D" -type f -o -type l)
[ -z "$left" ] && ok "make uninstall leaves no file" ||
    fail "make uninstall leaves: $left"

finish
