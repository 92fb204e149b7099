# Policy parser and matcher: pure C.
libpinhole_a_SOURCES += \
	rules/rules.h rules/rules-int.h rules/parse-int.h \
	rules/host.c \
	rules/addr.c \
	rules/store.c \
	rules/match.c \
	rules/dead.c \
	rules/target.c \
	rules/parse.c \
	rules/load.c \
	rules/request.c \
	rules/near.c \
	rules/url.c \
	rules/hostport.c \
	rules/preset.c \
	rules/args.c \
	rules/upstream.c

UNIT_TESTS += tests/unit/test_host tests/unit/test_addr tests/unit/test_rules \
	tests/unit/test_request

# `pinhole check` end to end.
TESTS += tests/integration/check.sh
EXTRA_DIST += tests/integration/check.sh

# Fuzz targets; make check replays their corpora.
FUZZ_TARGETS += tests/fuzz/fuzz_policy tests/fuzz/fuzz_host tests/fuzz/fuzz_path
tests_fuzz_fuzz_path_SOURCES = tests/fuzz/fuzz_path.c $(FUZZ_MAIN)
tests_fuzz_fuzz_path_LDADD = $(FUZZ_LIBS)
tests_fuzz_fuzz_path_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_LINK)
EXTRA_DIST += tests/fuzz/path
tests_fuzz_fuzz_policy_SOURCES = tests/fuzz/fuzz_policy.c $(FUZZ_MAIN)
tests_fuzz_fuzz_policy_LDADD = $(FUZZ_LIBS)
tests_fuzz_fuzz_policy_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_LINK)
tests_fuzz_fuzz_host_SOURCES = tests/fuzz/fuzz_host.c $(FUZZ_MAIN)
tests_fuzz_fuzz_host_LDADD = $(FUZZ_LIBS)
tests_fuzz_fuzz_host_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_LINK)
EXTRA_DIST += tests/fuzz/policy tests/fuzz/host

# Matching speed with 100,000 rules: built by make check, run by hand.
check_PROGRAMS += tests/bench/bench_rules
tests_bench_bench_rules_LDADD = $(UNIT_LIBS)

# Editing the policy: pure text edits, and the atomic file writer.
libpinhole_a_SOURCES += rules/edit.c rules/file.c
UNIT_TESTS += tests/unit/test_edit

# The policy in force: rules, runtime grants on top, and the one decision
# combining both.
libpinhole_a_SOURCES += rules/grants.c rules/grants.h \
	rules/policy.c rules/policy.h
UNIT_TESTS += tests/unit/test_grants

# The system layer: its precedence, policy.d, glob includes; end to end.
UNIT_TESTS += tests/unit/test_layer
TESTS += tests/integration/system-policy.sh
EXTRA_DIST += tests/integration/system-policy.sh

# `pinhole allow` / `pinhole disallow` end to end.
TESTS += tests/integration/allow.sh
EXTRA_DIST += tests/integration/allow.sh

# Fuzz policy editing.
FUZZ_TARGETS += tests/fuzz/fuzz_edit
tests_fuzz_fuzz_edit_SOURCES = tests/fuzz/fuzz_edit.c $(FUZZ_MAIN)
tests_fuzz_fuzz_edit_LDADD = $(FUZZ_LIBS)
tests_fuzz_fuzz_edit_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_LINK)
EXTRA_DIST += tests/fuzz/edit
