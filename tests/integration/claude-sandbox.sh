#!/bin/sh
# The real Claude Code in its own sandbox (bubblewrap), with a pinhole
# session as the sandbox's proxy, started by its SessionStart hook: the
# settings docs/agents.md gives; claude-code.sh --sandbox.
exec sh "$top_srcdir/tests/integration/claude-code.sh" --sandbox
