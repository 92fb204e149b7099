#!/bin/sh
# The AppArmor profile the build writes: apparmor_parser takes it on
# every system (parsing only), with the userns rule where the parser
# knows it; where the kernel runs AppArmor, it loads, as root, under a
# name of the test's own (an installed profile is left alone).
. "$top_srcdir/tests/integration/lib.sh"

P=$top_builddir/contrib/apparmor/pinhole
parser=$(PATH=$PATH:/usr/sbin:/sbin command -v apparmor_parser) ||
    skip "apparmor_parser is not installed (Debian: apparmor)"
[ -f "$P" ] || { fail "the build wrote no profile"; finish; exit 1; }

# -Q: no kernel; -K, -T: no cache.
"$parser" -Q -K -T "$P" >"$T/out" 2>&1 &&
    ok "apparmor_parser takes the profile" ||
    fail "apparmor_parser: $(grep -v '^Cache read/write disabled' "$T/out")"

# The userns rule where the parser knows it, and then only.
printf 'abi <abi/4.0>,\nprofile t flags=(unconfined) {\n  userns,\n}\n' \
    >"$T/userns"
if "$parser" -Q -K -T "$T/userns" >/dev/null 2>&1; then
	grep -q '^abi <abi/4.0>,$' "$P" && grep -q '^  userns,$' "$P" &&
	    ok "AppArmor 4: ABI 4.0, userns granted" ||
	    fail "AppArmor 4 here, but the profile grants no userns"
else
	grep -q '^abi <abi/3.0>,$' "$P" && ! grep -q '^ *userns' "$P" &&
	    ok "AppArmor 3: ABI 3.0, no userns rule" ||
	    fail "AppArmor 3 here, but the profile is not for it"
fi

if [ ! -d /sys/kernel/security/apparmor ]; then
	ok "not loaded: this kernel runs no AppArmor"
elif [ "$(id -u)" -ne 0 ]; then
	ok "not loaded: loading needs root"
else
	name=pinhole-test-$$
	sed "s/^profile pinhole /profile $name /" "$P" >"$T/profile"
	if "$parser" -r -K "$T/profile" >"$T/out" 2>&1; then
		grep -q "^$name (unconfined)$" \
		    /sys/kernel/security/apparmor/profiles &&
		    ok "loaded, unconfined" ||
		    fail "loaded, but not listed as unconfined"
		"$parser" -R "$T/profile" >/dev/null 2>&1 ||
		    fail "cannot unload $name"
	else
		fail "apparmor_parser -r: $(cat "$T/out")"
	fi
fi

finish
