# Command line: main() and one file per subcommand.
libpinhole_a_SOURCES += \
	cli/pinhole.h \
	cli/cmd.c \
	cli/cmd-version.c \
	cli/cmd-completion.c \
	cli/cmd-check.c \
	cli/cmd-doctor.c cli/doctor.c cli/doctor.h \
	cli/gwopts-argv.c cli/gwopts-argv.h \
	cli/cmd-proxy.c cli/proxy.h \
	cli/cmd-run.c
libpinhole_a_SOURCES += cli/cmd-allow.c
libpinhole_a_SOURCES += cli/cmd-log.c cli/logverify.c cli/logverify.h \
	cli/propose.c cli/propose.h
# Escalation: the agent's and the person's commands.
libpinhole_a_SOURCES += \
	cli/ctl.c cli/ctl.h \
	cli/inside.c cli/inside.h \
	cli/cmd-request.c \
	cli/cmd-pending.c \
	cli/cmd-approve.c \
	cli/cmd-deny.c \
	cli/cmd-watch.c \
	cli/cmd-session.c
# The agent harness's hook.
libpinhole_a_SOURCES += cli/hook.c cli/hook.h cli/cmd-hook.c
UNIT_TESTS += tests/unit/test_hook tests/unit/test_doctor
FUZZ_TARGETS += tests/fuzz/fuzz_hook
tests_fuzz_fuzz_hook_SOURCES = tests/fuzz/fuzz_hook.c $(FUZZ_MAIN)
tests_fuzz_fuzz_hook_LDADD = $(FUZZ_LIBS)
tests_fuzz_fuzz_hook_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_LINK)
EXTRA_DIST += tests/fuzz/hook
# The harness's shell (CLAUDE_CODE_SHELL): pinhole hook --exec.
bin_SCRIPTS = pinhole-bash
pinhole-bash: cli/pinhole-bash.in Makefile
	$(AM_V_GEN)sed 's|@bindir[@]|$(bindir)|g' $(srcdir)/cli/pinhole-bash.in >$@.tmp && \
	    chmod +x $@.tmp && mv $@.tmp $@
CLEANFILES += pinhole-bash
EXTRA_DIST += cli/pinhole-bash.in
# The real Claude Code (tests/package.json) against a scripted model.
TESTS += tests/integration/claude-code.sh
EXTRA_DIST += tests/integration/claude-code.sh \
	tests/integration/modelserver.py tests/package.json \
	tests/package-lock.json
TESTS += tests/integration/hook.sh tests/integration/bridge.sh
EXTRA_DIST += tests/integration/hook.sh tests/integration/bridge.sh
# pinhole doctor, for real, as root and as nobody.
TESTS += tests/integration/doctor.sh
EXTRA_DIST += tests/integration/doctor.sh
# Usage errors of every command, and the manual against --help.
TESTS += tests/integration/usage.sh tests/integration/manpage.sh
EXTRA_DIST += tests/integration/usage.sh tests/integration/manpage.sh
# The completion scripts against --help, and each shell completing.
TESTS += tests/integration/completion.sh
EXTRA_DIST += tests/integration/completion.sh
# Named long-lived gateways: start, list, status, stop.
TESTS += tests/integration/session.sh tests/integration/session-uuid.sh
EXTRA_DIST += tests/integration/session.sh tests/integration/session-uuid.sh
TESTS += tests/integration/attach.sh
EXTRA_DIST += tests/integration/attach.sh tests/integration/attach-cycle.py
# Inside the sandbox the person's commands say so, and how to ask.
TESTS += tests/integration/inside.sh
EXTRA_DIST += tests/integration/inside.sh
# A session's sandboxes: each sees its own, a once grant is one's.
TESTS += tests/integration/session-once.sh
EXTRA_DIST += tests/integration/session-once.sh
# ... and nothing of another's: requests, fake addresses, refusals.
TESTS += tests/integration/session-private.sh
EXTRA_DIST += tests/integration/session-private.sh
TESTS += tests/integration/impostor.sh
EXTRA_DIST += tests/integration/impostor.sh
TESTS += tests/integration/attach-hostile.sh
EXTRA_DIST += tests/integration/attach-hostile.sh \
	tests/integration/attach-hostile.py
# Shell completions: the built program prints them from its command
# table, into the build directory; installed where each shell looks for
# a command's completion (Debian's directories: set bashcompletiondir,
# zshcompletiondir or fishcompletiondir to put them elsewhere).
bashcompletiondir = $(datadir)/bash-completion/completions
zshcompletiondir = $(datadir)/zsh/vendor-completions
fishcompletiondir = $(datadir)/fish/vendor_completions.d
bashcompletion_DATA = completions/bash/pinhole
zshcompletion_DATA = completions/zsh/_pinhole
fishcompletion_DATA = completions/fish/pinhole.fish
CLEANFILES += $(bashcompletion_DATA) $(zshcompletion_DATA) \
	$(fishcompletion_DATA)
COMPLETION_GEN = $(AM_V_GEN)$(MKDIR_P) $(@D) && ./pinhole$(EXEEXT) completion
completions/bash/pinhole: pinhole$(EXEEXT)
	$(COMPLETION_GEN) bash >$@.tmp && mv $@.tmp $@
completions/zsh/_pinhole: pinhole$(EXEEXT)
	$(COMPLETION_GEN) zsh >$@.tmp && mv $@.tmp $@
completions/fish/pinhole.fish: pinhole$(EXEEXT)
	$(COMPLETION_GEN) fish >$@.tmp && mv $@.tmp $@
