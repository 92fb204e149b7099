# The gateway.
libpinhole_a_SOURCES += \
	proxy/audit.c proxy/audit.h \
	proxy/auditchain.c proxy/auditline.c proxy/auditsink.c \
	proxy/auditverify.c proxy/auditverify.h \
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
check_PROGRAMS += tests/unit/test_auditchain
TESTS += tests/unit/test_auditchain
tests_unit_test_auditchain_LDADD = $(UNIT_LIBS)
tests_unit_test_auditchain_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
check_PROGRAMS += tests/unit/test_auditline
TESTS += tests/unit/test_auditline
tests_unit_test_auditline_LDADD = $(UNIT_LIBS)
tests_unit_test_auditline_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
endif

libpinhole_a_SOURCES += \
	proxy/http.c proxy/http.h \
	proxy/gateway.c proxy/gateway.h \
	proxy/pipebuf.c proxy/pipebuf.h \
	proxy/session.c proxy/session.h

if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_http
TESTS += tests/unit/test_http
endif
tests_unit_test_http_SOURCES = tests/unit/test_http.c
tests_unit_test_http_LDADD = $(UNIT_LIBS)
tests_unit_test_http_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)

FUZZ_TARGETS += tests/fuzz/fuzz_http
tests_fuzz_fuzz_http_SOURCES = tests/fuzz/fuzz_http.c $(FUZZ_MAIN)
tests_fuzz_fuzz_http_LDADD = $(FUZZ_LIBS)
tests_fuzz_fuzz_http_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_LINK)
EXTRA_DIST += tests/fuzz/http

TESTS += tests/integration/proxy.sh
EXTRA_DIST += tests/integration/proxy.sh tests/integration/origin.py \
	tests/integration/rawhttp.py
TESTS += tests/integration/proxy-limits.sh
EXTRA_DIST += tests/integration/proxy-limits.sh

# The audit log: reader fuzz target, verify benchmark (built, not run).
FUZZ_TARGETS += tests/fuzz/fuzz_auditline
tests_fuzz_fuzz_auditline_SOURCES = tests/fuzz/fuzz_auditline.c $(FUZZ_MAIN)
tests_fuzz_fuzz_auditline_LDADD = $(FUZZ_LIBS)
tests_fuzz_fuzz_auditline_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_LINK)
EXTRA_DIST += tests/fuzz/auditline
check_PROGRAMS += tests/bench/bench_auditverify
tests_bench_bench_auditverify_LDADD = $(UNIT_LIBS)
TESTS += tests/integration/log.sh
EXTRA_DIST += tests/integration/log.sh
TESTS += tests/integration/log-full.sh
EXTRA_DIST += tests/integration/log-full.sh
TESTS += tests/integration/log-default.sh
EXTRA_DIST += tests/integration/log-default.sh

# Sniffers for transparent capture: TLS ClientHello SNI, HTTP Host.
libpinhole_a_SOURCES += proxy/sni.c proxy/sni.h

if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_sni
TESTS += tests/unit/test_sni
tests_unit_test_sni_SOURCES = tests/unit/test_sni.c
tests_unit_test_sni_LDADD = $(UNIT_LIBS)
tests_unit_test_sni_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
endif
EXTRA_DIST += tests/unit/data/capture-hellos.py \
	tests/unit/data/hello-curl.bin tests/unit/data/hello-curl-iplit.bin \
	tests/unit/data/hello-openssl-iplit.bin \
	tests/unit/data/hello-openssl-nosni.bin \
	tests/unit/data/hello-openssl-tls12.bin \
	tests/unit/data/hello-openssl-tls13.bin \
	tests/unit/data/hello-openssl-upper.bin tests/unit/data/hello-python.bin

FUZZ_TARGETS += tests/fuzz/fuzz_sni
tests_fuzz_fuzz_sni_SOURCES = tests/fuzz/fuzz_sni.c $(FUZZ_MAIN)
tests_fuzz_fuzz_sni_LDADD = $(FUZZ_LIBS)
tests_fuzz_fuzz_sni_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_LINK)
EXTRA_DIST += tests/fuzz/sni

# Transparent capture: which ports wait for the first bytes, and whether
# SNI or Host names the host of the fake address.
libpinhole_a_SOURCES += proxy/transparent.c proxy/transparent.h \
	proxy/udpcatch.c proxy/udpcatch.h
if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_transparent
TESTS += tests/unit/test_transparent
tests_unit_test_transparent_LDADD = $(UNIT_LIBS)
tests_unit_test_transparent_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
endif
TESTS += tests/integration/transparent.sh
EXTRA_DIST += tests/integration/transparent.sh
# Transparent beside CONNECT with the benchmark's programs; by hand.
EXTRA_DIST += tests/bench/transparent.sh

# Live policy reload: inotify on the policy files, in the event loop.
libpinhole_a_SOURCES += proxy/policywatch.c proxy/policywatch.h
if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_policywatch
TESTS += tests/unit/test_policywatch
tests_unit_test_policywatch_LDADD = $(UNIT_LIBS)
tests_unit_test_policywatch_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
endif

# DNS: message parser/builder, fake-address map, the server.
libpinhole_a_SOURCES += \
	proxy/dns.h \
	proxy/dns-parse.c \
	proxy/fakeip.c \
	proxy/dns-server.h \
	proxy/dns.c \
	proxy/dns-answer.c \
	proxy/dns-log.c

if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_dns tests/unit/test_fakeip \
	tests/unit/test_name_allowed
TESTS += tests/unit/test_dns tests/unit/test_fakeip \
	tests/unit/test_name_allowed
check_PROGRAMS += tests/unit/test_dnsserver
TESTS += tests/unit/test_dnsserver
tests_unit_test_dnsserver_LDADD = $(UNIT_LIBS)
tests_unit_test_dnsserver_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_name_allowed_LDADD = $(UNIT_LIBS)
tests_unit_test_name_allowed_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_dns_LDADD = $(UNIT_LIBS)
tests_unit_test_dns_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_fakeip_LDADD = $(UNIT_LIBS)
tests_unit_test_fakeip_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
endif

FUZZ_TARGETS += tests/fuzz/fuzz_dns tests/fuzz/fuzz_dnsbuild
tests_fuzz_fuzz_dns_SOURCES = tests/fuzz/fuzz_dns.c $(FUZZ_MAIN)
tests_fuzz_fuzz_dns_LDADD = $(FUZZ_LIBS)
tests_fuzz_fuzz_dns_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_LINK)
tests_fuzz_fuzz_dnsbuild_SOURCES = tests/fuzz/fuzz_dnsbuild.c $(FUZZ_MAIN)
tests_fuzz_fuzz_dnsbuild_LDADD = $(FUZZ_LIBS)
tests_fuzz_fuzz_dnsbuild_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_LINK)
EXTRA_DIST += tests/fuzz/dns tests/fuzz/dnsbuild
# The server whole, over sockets: dns.c, dns-answer.c, dns-log.c.
FUZZ_TARGETS += tests/fuzz/fuzz_dnsserver
tests_fuzz_fuzz_dnsserver_SOURCES = tests/fuzz/fuzz_dnsserver.c $(FUZZ_MAIN)
tests_fuzz_fuzz_dnsserver_LDADD = $(FUZZ_LIBS)
tests_fuzz_fuzz_dnsserver_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_LINK)
EXTRA_DIST += tests/fuzz/dnsserver

# DNS end to end: dig, getaddrinfo, no exfiltration.
TESTS += tests/integration/dns.sh
EXTRA_DIST += tests/integration/dns.sh tests/integration/dns-upstream.py \
	tests/integration/dns-client.py
# Escalation: the request queue, the control socket and its JSON-lines
# protocol, the agent endpoint.
libpinhole_a_SOURCES += \
	proxy/json.c proxy/json.h \
	proxy/escalate.c proxy/escalate.h \
	proxy/control.c proxy/control-proto.c proxy/control.h \
	proxy/agent.c proxy/agent.h \
	proxy/escalate-grants.c proxy/escalate-grants.h

# A test-only host for escalation without the gateway: the queue, the
# control socket, the agent endpoint over evhttp.
check_PROGRAMS += tests/integration/escalate-probe
tests_integration_escalate_probe_LDADD = libpinhole.a $(DEP_LIBS)

if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_escalate tests/unit/test_control
TESTS += tests/unit/test_escalate tests/unit/test_control
tests_unit_test_escalate_LDADD = $(UNIT_LIBS)
tests_unit_test_escalate_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_control_LDADD = $(UNIT_LIBS)
tests_unit_test_control_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
endif

FUZZ_TARGETS += tests/fuzz/fuzz_control tests/fuzz/fuzz_agent
tests_fuzz_fuzz_control_SOURCES = tests/fuzz/fuzz_control.c $(FUZZ_MAIN)
tests_fuzz_fuzz_control_LDADD = $(FUZZ_LIBS)
tests_fuzz_fuzz_control_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_LINK)
tests_fuzz_fuzz_agent_SOURCES = tests/fuzz/fuzz_agent.c $(FUZZ_MAIN)
tests_fuzz_fuzz_agent_LDADD = $(FUZZ_LIBS)
tests_fuzz_fuzz_agent_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_LINK)
EXTRA_DIST += tests/fuzz/control tests/fuzz/agent
TESTS += tests/integration/escalate.sh
EXTRA_DIST += tests/integration/escalate.sh
EXTRA_DIST += docs/control-protocol.md
TESTS += tests/integration/escalate-proxy.sh
EXTRA_DIST += tests/integration/escalate-proxy.sh
TESTS += tests/integration/escalate-run.sh
EXTRA_DIST += tests/integration/escalate-run.sh
TESTS += tests/integration/escalate-ask.sh
EXTRA_DIST += tests/integration/escalate-ask.sh
TESTS += tests/integration/escalate-fixed.sh
EXTRA_DIST += tests/integration/escalate-fixed.sh
TESTS += tests/integration/escalate-watch.sh
EXTRA_DIST += tests/integration/escalate-watch.sh
EXTRA_DIST += tests/integration/ptydrive.py
