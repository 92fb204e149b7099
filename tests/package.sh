#!/bin/sh
# The Debian package end to end, on this machine, as root (CI's stage
# "package"; quickstart test runs it after make distcheck):
#
#   tests/package.sh [TARBALL]
#
# builds the package with dpkg-buildpackage -us -uc -b from a clean copy
# of the source (TARBALL, the dist tarball; without it the committed
# tree, git archive HEAD), checks it with lintian (no error, and no
# warning but those explained below), installs it with apt-get, checks
# what it installed, runs pinhole doctor and the demo with the installed
# program, purges it and checks that nothing of it is left.  A pinhole
# package installed before is purged first.  Needs dpkg-dev, debhelper,
# dh-apparmor, apparmor, lintian and fakeroot, and the build's and the
# demo's packages; for the units, systemd, libpam-systemd (a user's
# manager), dbus-user-session, and systemd-container where PID 1 is
# something else (quickstart installs them all).
set -eu
export DEBIAN_FRONTEND=noninteractive
src=$(cd "$(dirname "$0")/.." && pwd)
tarball=${1:-}

# lintian's warnings allowed, each with why: "TAG<TAB>why", one a line.
LINTIAN_ALLOWED=''

# Boot this machine's root in a container, on a copy-on-write overlay
# with no network but loopback; print the pid to enter.
boot_container() {
	mkdir -p "$T/ct/upper" "$T/ct/work" "$T/ct/root"
	mount -t overlay overlay -o "lowerdir=/,upperdir=$T/ct/upper,workdir=$T/ct/work" \
	    "$T/ct/root" || return 1
	setsid systemd-nspawn -q -D "$T/ct/root" -M pkgtest --boot \
	    --register=no --keep-unit --private-network --console=pipe \
	    </dev/null >"$T/ct.log" 2>&1 &
	echo $! >"$T/ct.pid"
	i=0
	while [ $i -lt 60 ]; do
		init=$(ps -o pid= --ppid "$(cat "$T/ct.pid")" 2>/dev/null | head -1)
		if [ -n "$init" ] && state=$(nsenter -t $init -a \
		    systemctl is-system-running 2>/dev/null); then
			case $state in running|degraded) echo $init; return 0 ;; esac
		fi
		sleep 1
		i=$((i + 1))
	done
	return 1
}
# Stop it, and take its overlay away.
stop_container() {
	[ -f "$T/ct.pid" ] || return 0
	kill "$(cat "$T/ct.pid")" 2>/dev/null || true
	i=0
	while kill -0 "$(cat "$T/ct.pid")" 2>/dev/null && [ $i -lt 30 ]; do
		sleep 1
		i=$((i + 1))
	done
	umount "$T/ct/root" 2>/dev/null || true
	rm -rf /run/systemd/nspawn/propagate/pkgtest "$T/ct" "$T/ct.pid"
}

[ "$(id -u)" -eq 0 ] || { echo "package: run as root" >&2; exit 1; }
T=$(mktemp -d /tmp/pinhole-package.XXXXXX)
chmod 755 "$T"
trap 'stop_container; rm -rf "$T"' EXIT
nfail=0
fail() { echo "FAIL: $*" >&2; nfail=$((nfail + 1)); }
ok() { echo "ok: $*"; }

# The machine as it was: every path named pinhole, to compare after
# (but man's cache of formatted pages, which systemd-analyze verify
# fills when it looks for the units' pages: man-db's to clean).
leftovers() {
	find /etc /usr /lib /var /opt /run -name '*pinhole*' \
	    -not -path '/var/cache/man/*' 2>/dev/null | sort
}
if dpkg-query -W -f='${Status}' pinhole 2>/dev/null | grep -q installed; then
	echo "package: purging the pinhole package installed before"
	apt-get purge -y -qq pinhole >/dev/null
fi
leftovers >"$T/before"

# A clean copy of the source.
mkdir "$T/src"
if [ -n "$tarball" ]; then
	tar -xzf "$tarball" -C "$T/src"
else
	git -C "$src" archive --prefix=pinhole/ HEAD | tar -xf - -C "$T/src"
fi
dir=$(echo "$T"/src/*)
version=$(sed -n 's/^AC_INIT(\[pinhole\], \[\([^]]*\)\].*/\1/p' \
    "$dir/configure.ac")
changelog=$(cd "$dir" && dpkg-parsechangelog -SVersion)
[ "$version" = "$changelog" ] &&
    ok "debian/changelog's version is configure.ac's, $version" ||
    fail "debian/changelog says $changelog, configure.ac $version"
chown -R nobody "$T/src"

# Build as an ordinary user, as a build daemon does (Rules-Requires-Root:
# no): a build that needs root is a bug.
start=$(date +%s)
if setpriv --reuid=nobody --regid=nogroup --clear-groups \
    env HOME="$T/src" DEB_BUILD_OPTIONS="parallel=$(nproc)" \
    sh -c 'cd "$1" && dpkg-buildpackage -us -uc -b' sh "$dir" \
    >"$T/build.log" 2>&1; then
	ok "dpkg-buildpackage -us -uc -b ($(($(date +%s) - start)) s)"
else
	tail -40 "$T/build.log"
	echo "FAIL: dpkg-buildpackage"
	exit 1
fi
grep -E '^# (TOTAL|PASS|FAIL|ERROR):' "$T/build.log" | tr '\n' ' '
echo
arch=$(dpkg-architecture -qDEB_HOST_ARCH)
deb=$T/src/pinhole_${version}_$arch.deb
changes=$T/src/pinhole_${version}_$arch.changes
[ -f "$deb" ] || { echo "FAIL: no $deb"; exit 1; }

# lintian, as an ordinary user too: every tag it prints is shown.
setpriv --reuid=nobody --regid=nogroup --clear-groups env HOME="$T/src" \
    lintian --info --display-info --pedantic "$changes" >"$T/lintian" 2>&1 ||
    true
echo "lintian:"
sed 's/^/  /' "$T/lintian"
grep -q '^E: ' "$T/lintian" && fail "lintian: errors"
grep '^W: ' "$T/lintian" | while read -r _ _ tag _; do
	printf '%s\n' "$LINTIAN_ALLOWED" | cut -f1 | grep -qxF "$tag" ||
	    echo "$tag"
done >"$T/warnings"
[ -s "$T/warnings" ] && fail "lintian warnings: $(tr '\n' ' ' <"$T/warnings")"
grep -qE '^(E|W): ' "$T/lintian" || ok "lintian: no error, no warning"

# Install it as a user would.
apt-get install -y -qq "$deb" >"$T/install.log" 2>&1 ||
    { cat "$T/install.log"; echo "FAIL: apt-get install"; exit 1; }
ok "apt-get install $(basename "$deb")"
dpkg -L pinhole | sort >"$T/files"

# What it installed.
for f in /usr/bin/pinhole /usr/bin/pinhole-bash /etc/pinhole/proxy.policy \
    /usr/share/pinhole/presets/python \
    /usr/share/doc/pinhole/copyright /usr/share/doc/pinhole/README.md \
    /usr/share/doc/pinhole/examples/example.policy \
    /lib/systemd/system/pinhole-proxy.service \
    /usr/lib/systemd/user/pinhole-session@.service \
    /etc/apparmor.d/pinhole; do
	[ -e "$f" ] || fail "not installed: $f"
done
/usr/bin/pinhole version >/dev/null || fail "pinhole version"
man -w pinhole >/dev/null 2>&1 && man -w 5 pinhole-policy >/dev/null 2>&1 &&
    man -w pinhole-bash >/dev/null 2>&1 ||
    fail "man cannot find pinhole(1), pinhole-policy(5) and pinhole-bash(1)"
zcat "$(man -w pinhole)" "$(man -w 5 pinhole-policy)" "$(man -w pinhole-bash)" |
    sed -n 's/\\-/-/g; s|.*[ (]\(/usr/share/doc/pinhole/[a-z-]*\.md\).*|\1|p' |
    sort -u >"$T/docs"
[ -s "$T/docs" ] || fail "the manual names no documents"
while read -r f; do
	[ -f "$f" ] || fail "the manual names $f, not installed"
done <"$T/docs"
# The completions.
for f in /usr/share/bash-completion/completions/pinhole \
    /usr/share/zsh/vendor-completions/_pinhole \
    /usr/share/fish/vendor_completions.d/pinhole.fish; do
	[ -f "$f" ] || fail "no completion: $f"
done
ok "$(grep -c . "$T/files") paths installed: program, manual, documents, presets, units, profile"

# The profile parses as installed, and is loaded where AppArmor runs.
apparmor_parser -Q -K -T /etc/apparmor.d/pinhole >"$T/out" 2>&1 &&
    ok "apparmor_parser takes /etc/apparmor.d/pinhole" ||
    fail "apparmor_parser: $(cat "$T/out")"
if aa-enabled --quiet 2>/dev/null; then
	grep -q '^pinhole (unconfined)$' \
	    /sys/kernel/security/apparmor/profiles &&
	    ok "the profile is loaded" || fail "the profile is not loaded"
else
	ok "the profile is not loaded: AppArmor is not enabled here"
fi

# The units as installed: systemd-analyze verify has nothing to say.
mkdir -m 700 "$T/run"
{
	systemd-analyze verify /lib/systemd/system/pinhole-proxy.service ||
	    echo "(exit status $?)"
	cp /usr/lib/systemd/user/pinhole-session@.service \
	    "$T/pinhole-session@work.service"
	XDG_RUNTIME_DIR=$T/run systemd-analyze --user verify \
	    "$T/pinhole-session@work.service" || echo "(exit status $?)"
} >"$T/verify" 2>&1
echo "systemd-analyze verify:"
sed 's/^/  /' "$T/verify"
[ -s "$T/verify" ] && fail "systemd-analyze verify" ||
    ok "systemd-analyze verify: nothing to say"
[ -L /etc/systemd/system/multi-user.target.wants/pinhole-proxy.service ] &&
    fail "pinhole-proxy.service is enabled on install"

# The units under systemd: this machine's, or where PID 1 is something
# else, this machine's own root booted in a container (systemd-nspawn).
# $1 runs a command there.
units_live() {
	in=$1
	# The proxy, on a port of its own, as an administrator would set it.
	$in sh -c 'mkdir -p /run/systemd/system/pinhole-proxy.service.d &&
	    printf "[Service]\nExecStart=\nExecStart=/usr/bin/pinhole proxy --listen 127.0.0.1:39128 --policy /etc/pinhole/proxy.policy --log /var/log/pinhole/audit.log\n" \
	    >/run/systemd/system/pinhole-proxy.service.d/test.conf &&
	    cp /etc/pinhole/proxy.policy /run/proxy.policy.saved &&
	    echo "allow example.invalid" >/etc/pinhole/proxy.policy &&
	    systemctl daemon-reload' || fail "cannot set the proxy's port"
	$in systemctl start pinhole-proxy.service &&
	    $in systemctl show -p StatusText --value pinhole-proxy.service |
	    grep -q 'serving on 127.0.0.1:39128' &&
	    ok "pinhole-proxy.service: started, and says what it serves" ||
	    fail "pinhole-proxy.service: $($in systemctl status pinhole-proxy)"
	code=$($in curl -s -o /dev/null -w '%{http_code}' -m 5 \
	    -x http://127.0.0.1:39128 http://blocked.invalid/ || true)
	[ "$code" = 403 ] && $in grep -q '"host":"blocked.invalid"' \
	    /var/log/pinhole/audit.log &&
	    ok "pinhole-proxy.service: refuses, and logs it in /var/log/pinhole" ||
	    fail "pinhole-proxy.service: answered '$code'"
	$in journalctl -u pinhole-proxy -p warning -o cat | grep -q '^CA certificate' &&
	    ok "pinhole-proxy.service: its warnings are warnings in the journal" ||
	    fail "pinhole-proxy.service: no warning in the journal"
	$in systemctl reload pinhole-proxy.service &&
	    $in systemctl stop pinhole-proxy.service &&
	    [ "$($in systemctl show -p Result --value pinhole-proxy)" = success ] &&
	    ok "pinhole-proxy.service: reloads and stops cleanly" ||
	    fail "pinhole-proxy.service: $($in systemctl status pinhole-proxy)"
	$in sh -c 'rm -rf /run/systemd/system/pinhole-proxy.service.d &&
	    mv /run/proxy.policy.saved /etc/pinhole/proxy.policy &&
	    systemctl daemon-reload' || fail "cannot put the proxy back"
	# A user's session, and a command attached to it.
	user="env XDG_RUNTIME_DIR=/run/user/0 DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/0/bus"
	had_user=0
	$in systemctl is-active --quiet user@0.service && had_user=1
	$in systemctl start user@0.service || fail "no user manager for root"
	$in $user systemctl --user start pinhole-session@pkgtest &&
	    $in $user systemctl --user show -p StatusText --value \
	    pinhole-session@pkgtest | grep -q 'session pkgtest: serving' &&
	    ok "pinhole-session@pkgtest: started" ||
	    fail "pinhole-session@pkgtest: $($in $user systemctl --user status pinhole-session@pkgtest)"
	code=$($in $user pinhole run --session pkgtest -- curl -s -o /dev/null \
	    -w '%{http_code}' -m 5 http://blocked.invalid/ || true)
	[ "$code" = 403 ] && ok "pinhole run --session pkgtest: attached" ||
	    fail "pinhole run --session pkgtest: '$code'"
	$in $user systemctl --user stop pinhole-session@pkgtest &&
	    ! $in $user pinhole session list | grep -q pkgtest &&
	    ok "pinhole-session@pkgtest: stops cleanly" ||
	    fail "pinhole-session@pkgtest: still listed after stop"
	[ $had_user = 1 ] || $in systemctl stop user@0.service || true
}

if [ "$(cat /proc/1/comm)" = systemd ]; then
	units_live ""
elif ! command -v systemd-nspawn >/dev/null; then
	ok "units not run: PID 1 is not systemd, and no systemd-nspawn"
elif init=$(boot_container); then
	ok "booted this machine's root in a container (PID 1 here is $(cat /proc/1/comm))"
	units_live "nsenter -t $init -a"
	stop_container
else
	tail -5 "$T/ct.log"
	stop_container
	ok "units not run: PID 1 is not systemd, and no container would boot"
fi

# pinhole doctor with the installed program, asking a DNS server of
# its own on loopback (never the machine's), then the demo.
dnsport=$(python3 "$src/tests/free-port.py")
dnsmasq -k -u root -p "$dnsport" --listen-address=127.0.0.1 \
    --bind-interfaces --no-resolv --no-hosts --pid-file= \
    --address=/test/127.0.0.1 &
dnspid=$!
sleep 0.5
/usr/bin/pinhole doctor --resolver "127.0.0.1:$dnsport" \
    --allow allowed.test >"$T/doctor" 2>&1 && ok "pinhole doctor" ||
    { cat "$T/doctor"; fail "pinhole doctor"; }
kill "$dnspid" 2>/dev/null
wait "$dnspid" 2>/dev/null
"$dir/contrib/demo.sh" /usr/bin/pinhole >"$T/demo" 2>&1 || true
grep -q 'hello from the allowed origin' "$T/demo" &&
    grep -q 'blocked.test:[0-9]* is not allowed' "$T/demo" &&
    ok "the demo, with the installed program" ||
    { cat "$T/demo"; fail "the demo"; }

# Purge it: nothing it installed or made is left.
apt-get purge -y -qq pinhole >"$T/purge.log" 2>&1 ||
    { cat "$T/purge.log"; fail "apt-get purge"; }
while read -r f; do
	[ "$f" != /. ] || continue
	[ -e "$f" ] || [ -L "$f" ] || continue
	[ -d "$f" ] && dpkg -S "$f" >/dev/null 2>&1 && continue
	echo "$f"
done <"$T/files" >"$T/left"
leftovers >"$T/after"
comm -13 "$T/before" "$T/after" >>"$T/left"
[ -s "$T/left" ] && fail "left after purge: $(sort -u "$T/left" | tr '\n' ' ')" ||
    ok "apt-get purge leaves nothing"

[ "$nfail" -eq 0 ] && echo "package: all passed" ||
    { echo "package: $nfail failed"; exit 1; }
