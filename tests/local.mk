# Shared test helpers.
EXTRA_DIST += tests/integration/lib.sh tests/integration/npm.sh \
	tests/integration/sysdir.sh tests/free-port.py tests/unit/tmpdir.h
# The connection tests and their fixture.
include $(top_srcdir)/tests/unit/local.mk

# sandbox-runtime (srt) behind pinhole proxy; the npm package it pins.
TESTS += tests/integration/srt.sh
EXTRA_DIST += tests/integration/srt.sh tests/integration/srt/package.json \
	tests/integration/srt/package-lock.json
# The real Claude Code interactively, in tmux (claude-code.sh --tui).
# In its own sandbox, pinhole as its proxy (claude-code.sh --sandbox).
TESTS += tests/integration/claude-code-tui.sh \
	tests/integration/claude-sandbox.sh
EXTRA_DIST += tests/integration/claude-code-tui.sh \
	tests/integration/claude-sandbox.sh \
	tests/integration/tuidrive.py
# The real Codex CLI, its commands put in pinhole by its PreToolUse hook.
TESTS += tests/integration/codex.sh
EXTRA_DIST += tests/integration/codex.sh
# --metrics: exact counts after known traffic, promtool, a real Prometheus.
TESTS += tests/integration/metrics.sh
EXTRA_DIST += tests/integration/metrics.sh
