# Command line: main() and one file per subcommand.
libpinhole_a_SOURCES += \
	cli/pinhole.h \
	cli/cmd.c \
	cli/cmd-version.c \
	cli/cmd-check.c \
	cli/gwopts.c cli/gwopts.h \
	cli/cmd-proxy.c cli/proxy.h \
	cli/cmd-run.c \
	cli/runguard.c cli/runguard.h \
	cli/attach.c cli/attach.h
libpinhole_a_SOURCES += cli/cmd-allow.c
libpinhole_a_SOURCES += cli/cmd-log.c
# Escalation: the agent's and the person's commands.
libpinhole_a_SOURCES += \
	cli/ctl.c cli/ctl.h \
	cli/cmd-request.c \
	cli/cmd-pending.c \
	cli/cmd-approve.c \
	cli/cmd-deny.c \
	cli/cmd-watch.c \
	cli/cmd-session.c
# Usage errors of every command, and the manual against --help.
TESTS += tests/integration/usage.sh tests/integration/manpage.sh
EXTRA_DIST += tests/integration/usage.sh tests/integration/manpage.sh
# Named long-lived gateways: start, list, status, stop.
TESTS += tests/integration/session.sh
EXTRA_DIST += tests/integration/session.sh
TESTS += tests/integration/attach.sh
EXTRA_DIST += tests/integration/attach.sh tests/integration/attach-cycle.py
TESTS += tests/integration/attach-hostile.sh
EXTRA_DIST += tests/integration/attach-hostile.sh \
	tests/integration/attach-hostile.py
