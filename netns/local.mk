# Namespaces, links and the sandboxed child.
libpinhole_a_SOURCES += \
	netns/netns.h netns/netns-int.h \
	netns/net.c \
	netns/link.c \
	netns/sandbox-open.c \
	netns/exec.c \
	netns/guard.c \
	netns/hostsock.c \
	netns/seccomp.c \
	netns/landlock.c \
	netns/child.c \
	netns/init.c \
	netns/nft.c \
	netns/probe.c

UNIT_TESTS += tests/unit/test_netns
# The reader of the host's /proc/net/unix, whose names users choose.
FUZZ_TARGETS += tests/fuzz/fuzz_unixlist
tests_fuzz_fuzz_unixlist_SOURCES = tests/fuzz/fuzz_unixlist.c $(FUZZ_MAIN)
tests_fuzz_fuzz_unixlist_LDADD = $(FUZZ_LIBS)
tests_fuzz_fuzz_unixlist_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_LINK)
EXTRA_DIST += tests/fuzz/unixlist

# A test-only program: open the sandbox, serve an echo on its listeners,
# run a command in it.  Exercises the plumbing without the gateway.
check_PROGRAMS += tests/integration/netns-probe
tests_integration_netns_probe_LDADD = libpinhole.a $(DEP_LIBS)

TESTS += \
	tests/integration/run-status.sh \
	tests/integration/run-escape.sh \
	tests/integration/run-guard.sh \
	tests/integration/host-sockets.sh
EXTRA_DIST += \
	tests/integration/run-status.sh \
	tests/integration/run-escape.sh \
	tests/integration/run-guard.sh \
	tests/integration/host-sockets.sh \
	tests/integration/unixprobe.py
EXTRA_DIST += docs/sandbox.md

# pinhole run with real clients (curl, wget, python, git, pip) and escapes.
TESTS += tests/integration/run-clients.sh
EXTRA_DIST += tests/integration/run-clients.sh
# The host's own loopback, as host.pinhole.internal.
TESTS += tests/integration/host-loopback.sh
EXTRA_DIST += tests/integration/host-loopback.sh
# What pinhole run says on its stderr: refusals, held connections.
TESTS += tests/integration/run-stderr.sh
EXTRA_DIST += tests/integration/run-stderr.sh
# Start-up, throughput and connection rate of pinhole run; by hand.
EXTRA_DIST += tests/bench/run-startup.sh
