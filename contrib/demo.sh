#!/bin/sh
# The quick-start demo: ask `pinhole check` about a few hosts under the
# example policy.  $1 is the pinhole program to run.
set -eu
pinhole=${1:-pinhole}
here=$(cd "$(dirname "$0")" && pwd)

# Use the source tree's presets when the installed ones are not there.
probe=$(mktemp)
trap 'rm -f "$probe"' EXIT
echo 'include preset:python' >"$probe"
if [ -z "${PINHOLE_PRESETDIR:-}" ] &&
    ! "$pinhole" check --policy "$probe" pypi.org >/dev/null 2>&1; then
	PINHOLE_PRESETDIR=$here/presets
	export PINHOLE_PRESETDIR
fi

"$pinhole" --version
echo "policy: $here/example.policy"
for target in pypi.org evilpypi.org files.pythonhosted.org \
    upload.pypi.org github.com:22 github.com:80 api.example.com:8080 \
    203.0.113.7 3405803783 index.crates.io; do
	printf '\n$ pinhole check %s\n' "$target"
	"$pinhole" check --policy "$here/example.policy" "$target" || true
done
