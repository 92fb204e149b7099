# Benchmark against a direct connection, squid and tinyproxy; run by hand
# (tests/bench/README.md), never by `make check`.  `make check` builds the
# load generator and the origin so they keep compiling; `make bench` builds
# them and pinhole.  They are built without sanitizers in every
# configuration so that they are never what limits a measurement.
check_PROGRAMS += tests/bench/loadgen tests/bench/origin
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
EXTRA_DIST += tests/bench/run.sh tests/bench/session.py tests/bench/dns.sh tests/bench/table.awk tests/bench/README.md \
	tests/bench/instructions.sh

bench: pinhole$(EXEEXT) tests/bench/loadgen$(EXEEXT) tests/bench/origin$(EXEEXT)
.PHONY: bench
