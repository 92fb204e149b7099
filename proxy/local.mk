# The gateway.
libpinhole_a_SOURCES += \
	proxy/audit.c proxy/audit.h \
	proxy/resolver.c proxy/resolver.h

if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_resolver
TESTS += tests/unit/test_resolver
tests_unit_test_resolver_LDADD = $(UNIT_LIBS)
tests_unit_test_resolver_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
check_PROGRAMS += tests/unit/test_audit
TESTS += tests/unit/test_audit
tests_unit_test_audit_LDADD = $(UNIT_LIBS)
tests_unit_test_audit_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
endif
