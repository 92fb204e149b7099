# The running gateway, between cli/ and proxy/: its options and context,
# the policy in force and its reloads, the loop, the attach server and
# its client, a session's runtime, pinhole run's sandbox, the notices
# and the run guard.
libpinhole_a_SOURCES += \
	daemon/gwopts.c daemon/gwopts.h daemon/gwctx-int.h \
	daemon/gwctx.c daemon/reload.c daemon/gwlog.c \
	daemon/policywatch.c daemon/policywatch.h \
	daemon/gwloop.c daemon/gwloop.h \
	daemon/attach-server.c daemon/attach-server.h daemon/attach-int.h \
	daemon/attach-client.c daemon/attach-client.h \
	daemon/session.c daemon/session.h \
	daemon/run-sandbox.c daemon/run-sandbox.h \
	daemon/notice.c daemon/notice.h \
	daemon/notify.c daemon/notify.h \
	daemon/runguard.c daemon/runguard.h
# Live policy reload: inotify on the policy files, in the event loop.
UNIT_TESTS += tests/unit/test_policywatch
# What pinhole run says on its stderr, and how often.
UNIT_TESTS += tests/unit/test_notice
