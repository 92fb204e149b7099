#!/bin/sh
# Replay every fuzz corpus through its target (built with or without
# libFuzzer): tests/fuzz/NAME/ is the corpus of the program fuzz_NAME.
set -eu
: "${top_srcdir:?}" "${top_builddir:?}"
n=0
for dir in "$top_srcdir"/tests/fuzz/*/; do
	[ -d "$dir" ] || continue	# no corpus yet: the glob stays literal
	name=$(basename "$dir")
	target="$top_builddir/tests/fuzz/fuzz_$name"
	if [ ! -x "$target" ]; then
		echo "no target for corpus $name: $target" >&2
		exit 1
	fi
	# libFuzzer takes files as inputs to run once; the replay driver too.
	find "$dir" -type f -print0 | xargs -0 -r "$target" >/dev/null 2>&1 || {
		echo "fuzz_$name failed on its corpus" >&2
		find "$dir" -type f -print0 | xargs -0 -r "$target" 2>&1 | tail -20 >&2
		exit 1
	}
	n=$((n + 1))
done
echo "replayed $n corpora"
[ "$n" -gt 0 ] || exit 77
