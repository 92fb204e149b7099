#!/bin/sh
# The real Claude Code interactively, in a tmux pane, with its permission
# prompts counted against the same story without pinhole: claude-code.sh
# --tui.
exec sh "$top_srcdir/tests/integration/claude-code.sh" --tui
