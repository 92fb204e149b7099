# Sourced by the tests that put a system policy directory of their own
# over pinhole's, in a mount namespace that tests running beside them
# never see.

# Re-run this test ("$0") in a mount namespace of its own (and those
# unshare's options "$@" add) as "$0 --in-namespace SYSDIR", SYSDIR the
# directory pinhole reads the system policy from; a directory made as
# the mount point is removed at the end.  Exits with the test's status.
sysdir_reexec() {
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
	unshare "$@" --mount --propagation private sh "$0" --in-namespace \
	    "$SYSDIR"
	rc=$?
	d=$SYSDIR
	while [ -n "$made" ] && rmdir "$d" 2>/dev/null && [ "$d" != "$made" ]; do
		d=$(dirname "$d")
	done
	exit $rc
}
