# The bottom: what every folder above may use, and nothing of ours below.
libpinhole_a_SOURCES += \
	lib/clock.c lib/clock.h \
	lib/log.c lib/log.h \
	lib/json.c lib/json.h \
	lib/fdpass.c lib/fdpass.h \
	lib/io.c lib/io.h

UNIT_TESTS += tests/unit/test_json
# Diagnostics on a terminal, a file and the journal.
UNIT_TESTS += tests/unit/test_log
