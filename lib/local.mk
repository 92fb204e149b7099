# The bottom: what every folder above may use, and nothing of ours below.
libpinhole_a_SOURCES += \
	lib/clock.c lib/clock.h \
	lib/log.c lib/log.h \
	lib/json.c lib/json.h \
	lib/digits.c lib/digits.h \
	lib/base64.c lib/base64.h \
	lib/fdpass.c lib/fdpass.h \
	lib/io.c lib/io.h \
	lib/sdnotify.c lib/sdnotify.h \
	lib/metrics.c lib/metrics.h \
	lib/namesock.c lib/namesock.h \
	lib/unixsock.c lib/unixsock.h

UNIT_TESTS += tests/unit/test_json tests/unit/test_metrics
# Diagnostics on a terminal, a file and the journal; telling a service
# manager that the service is ready.
UNIT_TESTS += tests/unit/test_log tests/unit/test_sdnotify
# The proxy and a session under a service manager (Type=notify), and
# their diagnostics on the journal's stream.
TESTS += tests/integration/notify.sh
EXTRA_DIST += tests/integration/notify.sh
