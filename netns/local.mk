# Namespaces, links and the sandboxed child.
libpinhole_a_SOURCES += \
	netns/netns.h netns/netns-int.h \
	netns/net.c \
	netns/link.c \
	netns/sandbox.c \
	netns/exec.c \
	netns/guard.c \
	netns/seccomp.c \
	netns/child.c \
	netns/init.c \
	netns/nft.c \
	netns/probe.c

UNIT_TESTS += tests/unit/test_netns

# A test-only program: open the sandbox, serve an echo on its listeners,
# run a command in it.  Exercises the plumbing without the gateway.
check_PROGRAMS += tests/integration/netns-probe
tests_integration_netns_probe_LDADD = libpinhole.a $(DEP_LIBS)

TESTS += \
	tests/integration/run-status.sh \
	tests/integration/run-escape.sh \
	tests/integration/run-guard.sh
EXTRA_DIST += \
	tests/integration/run-status.sh \
	tests/integration/run-escape.sh \
	tests/integration/run-guard.sh
EXTRA_DIST += docs/sandbox.md

# pinhole run with real clients (curl, wget, python, git, pip) and escapes.
TESTS += tests/integration/run-clients.sh
EXTRA_DIST += tests/integration/run-clients.sh
# What pinhole run says on its stderr: refusals, held connections.
TESTS += tests/integration/run-stderr.sh
EXTRA_DIST += tests/integration/run-stderr.sh
# Start-up, throughput and connection rate of pinhole run; by hand.
EXTRA_DIST += tests/bench/run-startup.sh
