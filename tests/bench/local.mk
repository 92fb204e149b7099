# Benchmarks against a direct connection, squid, tinyproxy and (TLS
# inspection) mitmproxy; run by hand
# (tests/bench/README.md), never by `make check`.  `make check` builds the
# load generator and the origin so they keep compiling; `make
# bench-programs` builds them and pinhole; `make bench` runs the scaling
# report (tests/bench/report.py) and writes docs/performance.md and
# docs/performance/; `make bench-short` runs it with small counts into a
# temporary directory and fails only when a figure or a plot is missing.  They are built without sanitizers in every
# configuration so that they are never what limits a measurement.
check_PROGRAMS += tests/bench/loadgen tests/bench/origin \
	tests/bench/tlsload tests/bench/tlsorigin
tests_bench_loadgen_SOURCES = tests/bench/loadgen.c \
	tests/bench/bench.c tests/bench/bench.h
tests_bench_loadgen_CFLAGS = $(WARN_CFLAGS)
tests_bench_loadgen_LDFLAGS =
tests_bench_loadgen_LDADD =
tests_bench_origin_SOURCES = tests/bench/origin.c \
	tests/bench/bench.c tests/bench/bench.h
tests_bench_origin_CFLAGS = $(WARN_CFLAGS)
tests_bench_origin_LDFLAGS =
tests_bench_origin_LDADD =
# The TLS inspection benchmark's two ends (inspect.sh): OpenSSL, which
# pinhole links already.
tests_bench_tlsload_SOURCES = tests/bench/tlsload.c \
	tests/bench/bench.c tests/bench/bench.h
tests_bench_tlsload_CFLAGS = $(WARN_CFLAGS) $(OPENSSL_CFLAGS)
tests_bench_tlsload_LDFLAGS =
tests_bench_tlsload_LDADD = $(OPENSSL_LIBS)
tests_bench_tlsorigin_SOURCES = tests/bench/tlsorigin.c \
	tests/bench/bench.c tests/bench/bench.h
tests_bench_tlsorigin_CFLAGS = $(WARN_CFLAGS) $(OPENSSL_CFLAGS)
tests_bench_tlsorigin_LDFLAGS =
tests_bench_tlsorigin_LDADD = $(OPENSSL_LIBS)
EXTRA_DIST += tests/bench/run.sh tests/bench/session.py tests/bench/dns.sh tests/bench/table.awk tests/bench/README.md \
	tests/bench/instructions.sh tests/bench/inspect.sh tests/bench/report.py

bench-programs: pinhole$(EXEEXT) tests/bench/loadgen$(EXEEXT) \
	tests/bench/origin$(EXEEXT) tests/bench/tlsload$(EXEEXT) \
	tests/bench/tlsorigin$(EXEEXT) tests/bench/bench_rules$(EXEEXT) \
	tests/bench/bench_auditverify$(EXEEXT)
bench: bench-programs
	python3 $(srcdir)/tests/bench/report.py $(abs_builddir) $(srcdir)/docs
bench-short: bench-programs
	@d=$$(mktemp -d "$${TMPDIR:-/tmp}/pinhole-bench-short.XXXXXX") && \
	python3 $(srcdir)/tests/bench/report.py --short $(abs_builddir) "$$d"; \
	rc=$$?; rm -rf "$$d"; exit $$rc
.PHONY: bench bench-programs bench-short
# The cost of a --metrics scrape with no tunnel and with 10,000; by hand.
EXTRA_DIST += tests/bench/metrics.sh tests/bench/ship.sh
# pinhole through squid as its upstream, against squid alone; by hand.
EXTRA_DIST += tests/bench/upstream.sh tests/bench/ports.sh

# The regression guard (tests/bench/guard.sh, in `make check`): counts
# instructions under callgrind and so needs a pinhole without
# sanitizers (valgrind cannot run ASan's).  Where the build has them,
# the guard builds this one first, from the same sources with the
# sanitizers left out; it is built only then (EXTRA_), so no other
# `make check` pays for it.
EXTRA_LIBRARIES = tests/bench/libpinhole-plain.a
tests_bench_libpinhole_plain_a_SOURCES = $(libpinhole_a_SOURCES)
tests_bench_libpinhole_plain_a_CFLAGS = $(WARN_CFLAGS) \
	$(LIBEVENT_CFLAGS) $(CARES_CFLAGS) $(LIBNL_CFLAGS) $(OPENSSL_CFLAGS) \
	$(PSL_CFLAGS)
EXTRA_PROGRAMS = tests/bench/pinhole-plain
tests_bench_pinhole_plain_SOURCES = cli/main.c
tests_bench_pinhole_plain_CFLAGS = $(tests_bench_libpinhole_plain_a_CFLAGS)
tests_bench_pinhole_plain_LDFLAGS =
tests_bench_pinhole_plain_LDADD = tests/bench/libpinhole-plain.a $(DEP_LIBS)
CLEANFILES += tests/bench/pinhole-plain$(EXEEXT) \
	tests/bench/libpinhole-plain.a
TESTS += tests/bench/guard.sh
EXTRA_DIST += tests/bench/guard.sh tests/bench/baseline
AM_TESTS_ENVIRONMENT += \
	PINHOLE_SANITIZED='$(SAN_CFLAGS)$(FUZZ_CFLAGS)'; \
	export PINHOLE_SANITIZED; \
	PINHOLE_CFLAGS='$(CFLAGS)'; export PINHOLE_CFLAGS; \
	PINHOLE_CC='$(CC)'; export PINHOLE_CC;
