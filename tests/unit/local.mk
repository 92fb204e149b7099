# One connection through the gateway, state by state, on a real event
# loop: scripted origins on loopback, and a fake resolver the fixture
# defines in place of proxy/resolver/ (so resolver.o is never linked).
# A program per concern; conn-fixture.c is the set-up they share.
CONN_FIXTURE = tests/unit/conn-fixture.c tests/unit/conn-fixture.h
UNIT_TESTS += tests/unit/test_conn_head tests/unit/test_conn_tunnel \
	tests/unit/test_conn_forward tests/unit/test_conn_scrub \
	tests/unit/test_conn_escalate tests/unit/test_conn_capture \
	tests/unit/test_conn_upstream tests/unit/test_conn_teardown
tests_unit_test_conn_head_SOURCES = tests/unit/test_conn_head.c \
	$(CONN_FIXTURE)
tests_unit_test_conn_tunnel_SOURCES = tests/unit/test_conn_tunnel.c \
	$(CONN_FIXTURE)
tests_unit_test_conn_forward_SOURCES = tests/unit/test_conn_forward.c \
	$(CONN_FIXTURE)
tests_unit_test_conn_scrub_SOURCES = tests/unit/test_conn_scrub.c \
	$(CONN_FIXTURE)
tests_unit_test_conn_escalate_SOURCES = tests/unit/test_conn_escalate.c \
	$(CONN_FIXTURE)
tests_unit_test_conn_capture_SOURCES = tests/unit/test_conn_capture.c \
	$(CONN_FIXTURE)
tests_unit_test_conn_upstream_SOURCES = tests/unit/test_conn_upstream.c \
	$(CONN_FIXTURE)
tests_unit_test_conn_teardown_SOURCES = tests/unit/test_conn_teardown.c \
	$(CONN_FIXTURE)
