# The gateway, one folder a subsystem, lowest first (docs/architecture.md).
# wire/: pure parsers and builders of what clients send.
libpinhole_a_SOURCES += \
	proxy/wire/http.c proxy/wire/http.h \
	proxy/wire/sni.c proxy/wire/sni.h \
	proxy/wire/transparent.c proxy/wire/transparent.h \
	proxy/wire/socks5.c proxy/wire/socks5.h \
	proxy/wire/attachmsg.c proxy/wire/attachmsg.h \
	proxy/wire/dnsmsg.c proxy/wire/dnsmsg.h \
	proxy/wire/placeholder.c proxy/wire/placeholder.h \
	proxy/wire/scrub.c proxy/wire/scrub.h \
	proxy/wire/decidermsg.c proxy/wire/decidermsg.h \
	proxy/wire/upstreammsg.c proxy/wire/upstreammsg.h
# audit/: the chained log, its sinks and its verifier.
libpinhole_a_SOURCES += \
	proxy/audit/audit.c proxy/audit/audit.h proxy/audit/audit-int.h \
	proxy/audit/open.c \
	proxy/audit/budget.c proxy/audit/budget.h \
	proxy/audit/chain.c proxy/audit/chain.h \
	proxy/audit/line.c proxy/audit/line.h \
	proxy/audit/sink.c proxy/audit/sink.h \
	proxy/audit/spool.c proxy/audit/spool.h \
	proxy/audit/collector.c proxy/audit/collector.h \
	proxy/audit/ship.c proxy/audit/ship.h proxy/audit/transport.h \
	proxy/audit/relp.c proxy/audit/relp.h \
	proxy/audit/otlp.c proxy/audit/otlp.h proxy/audit/otlpship.c \
	proxy/audit/verify.c proxy/audit/verify.h
# tls/: TLS inspection's CA, leaves and SSL objects (OpenSSL).
libpinhole_a_SOURCES += proxy/tls/tls.c proxy/tls/tls.h
# resolver/: names to addresses upstream (c-ares).
libpinhole_a_SOURCES += proxy/resolver/resolver.c proxy/resolver/resolver.h
# sandbox/: a sandbox, who it is and what it keeps.
libpinhole_a_SOURCES += proxy/sandbox/sandbox.c proxy/sandbox/sandbox.h
# escalate/: the request queue, grants, the agent endpoint, the control
# socket and its JSON-lines protocol.
libpinhole_a_SOURCES += \
	proxy/escalate/queue.c proxy/escalate/escalate.h \
	proxy/escalate/queue.h proxy/escalate/filing.c \
	proxy/escalate/approve.c proxy/escalate/waiter.c \
	proxy/escalate/blocked.c proxy/escalate/text.c \
	proxy/escalate/refused.c proxy/escalate/refused.h \
	proxy/escalate/agent.c proxy/escalate/agent.h \
	proxy/escalate/control.c proxy/escalate/control.h \
	proxy/escalate/control-proto.c proxy/escalate/control-proto.h \
	proxy/escalate/decider.c proxy/escalate/decider.h
# dns/: the fake-address map and the DNS server.
libpinhole_a_SOURCES += \
	proxy/dns/fakeip.c proxy/dns/fakeip.h \
	proxy/dns/dns.h proxy/dns/dns-int.h \
	proxy/dns/server.c proxy/dns/answer.c proxy/dns/req.c proxy/dns/querylog.c
# capture/: UDP other than DNS, caught and logged.
libpinhole_a_SOURCES += proxy/capture/udpcatch.c proxy/capture/udpcatch.h
# conn/: one client connection, state by state.
libpinhole_a_SOURCES += \
	proxy/conn/pipebuf.c proxy/conn/pipebuf.h \
	proxy/conn/conn.h proxy/conn/conn-int.h \
	proxy/conn/core.c proxy/conn/reply.c proxy/conn/scrub-response.c \
	proxy/conn/tunnel.c \
	proxy/conn/forward.c proxy/conn/dial.c proxy/conn/decide.c \
	proxy/conn/endpoint.c proxy/conn/head.c proxy/conn/sniff.c \
	proxy/conn/socks-handshake.c proxy/conn/events.c proxy/conn/inspect.c \
	proxy/conn/secret-request.c proxy/conn/upstream-connect.c
# The top: listeners, and the metrics' listener.
libpinhole_a_SOURCES += \
	proxy/gateway.c proxy/gateway.h \
	proxy/scrape.c proxy/scrape.h

UNIT_TESTS += tests/unit/test_resolver
UNIT_TESTS += tests/unit/test_audit
UNIT_TESTS += tests/unit/test_auditchain
UNIT_TESTS += tests/unit/test_auditline
UNIT_TESTS += tests/unit/test_spool
UNIT_TESTS += tests/unit/test_otlp
UNIT_TESTS += tests/unit/test_ship
UNIT_TESTS += tests/unit/test_relp

UNIT_TESTS += tests/unit/test_http
UNIT_TESTS += tests/unit/test_upstream
UNIT_TESTS += tests/unit/test_secret
UNIT_TESTS += tests/unit/test_scrub
UNIT_TESTS += tests/unit/test_tls
# Request rules over inspected TLS with real clients and TLS origins.
TESTS += tests/integration/inspect.sh
EXTRA_DIST += tests/integration/inspect.sh tests/integration/tls-origin.py
# Upgrades and method overrides on read-only hosts, with a real WebSocket.
TESTS += tests/integration/read-only.sh
EXTRA_DIST += tests/integration/read-only.sh tests/integration/websocket.py
# Secrets' values kept out of what comes back, against a reflecting origin.
TESTS += tests/integration/secret.sh
EXTRA_DIST += tests/integration/secret.sh tests/integration/secret-leak.py

FUZZ_TARGETS += tests/fuzz/fuzz_http
tests_fuzz_fuzz_http_SOURCES = tests/fuzz/fuzz_http.c $(FUZZ_MAIN)
tests_fuzz_fuzz_http_LDADD = $(FUZZ_LIBS)
tests_fuzz_fuzz_http_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_LINK)
EXTRA_DIST += tests/fuzz/http

TESTS += tests/integration/proxy.sh
# Through an upstream proxy: a real squid with Basic authentication.
TESTS += tests/integration/upstream.sh
EXTRA_DIST += tests/integration/upstream.sh
EXTRA_DIST += tests/integration/proxy.sh tests/integration/origin.py \
	tests/integration/rawhttp.py
TESTS += tests/integration/proxy-limits.sh
EXTRA_DIST += tests/integration/proxy-limits.sh

# The audit log: reader, OTLP and RELP fuzz targets, verify benchmark (built, not run).
FUZZ_TARGETS += tests/fuzz/fuzz_auditline
tests_fuzz_fuzz_auditline_SOURCES = tests/fuzz/fuzz_auditline.c $(FUZZ_MAIN)
tests_fuzz_fuzz_auditline_LDADD = $(FUZZ_LIBS)
tests_fuzz_fuzz_auditline_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_LINK)
EXTRA_DIST += tests/fuzz/auditline
FUZZ_TARGETS += tests/fuzz/fuzz_otlp
tests_fuzz_fuzz_otlp_SOURCES = tests/fuzz/fuzz_otlp.c $(FUZZ_MAIN)
tests_fuzz_fuzz_otlp_LDADD = $(FUZZ_LIBS)
tests_fuzz_fuzz_otlp_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_LINK)
EXTRA_DIST += tests/fuzz/otlp
FUZZ_TARGETS += tests/fuzz/fuzz_relp
tests_fuzz_fuzz_relp_SOURCES = tests/fuzz/fuzz_relp.c $(FUZZ_MAIN)
tests_fuzz_fuzz_relp_LDADD = $(FUZZ_LIBS)
tests_fuzz_fuzz_relp_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_LINK)
EXTRA_DIST += tests/fuzz/relp
check_PROGRAMS += tests/bench/bench_auditverify
tests_bench_bench_auditverify_LDADD = $(UNIT_LIBS)
TESTS += tests/integration/log.sh
EXTRA_DIST += tests/integration/log.sh
# From a first blocked run to a policy: pinhole log --propose.
TESTS += tests/integration/propose.sh
EXTRA_DIST += tests/integration/propose.sh
TESTS += tests/integration/otlp.sh
EXTRA_DIST += tests/integration/otlp.sh tests/integration/otlp-receiver.py \
	tests/integration/otlp-check.py tests/integration/otlp-logs.schema.json
TESTS += tests/integration/log-full.sh
EXTRA_DIST += tests/integration/log-full.sh
TESTS += tests/integration/log-rotate.sh
EXTRA_DIST += tests/integration/log-rotate.sh
# Shipping to a real rsyslog over TCP and TLS.
TESTS += tests/integration/ship.sh
EXTRA_DIST += tests/integration/ship.sh tests/integration/relp-collector.py
# What waits is shipped when a gateway stops.
TESTS += tests/integration/ship-stop.sh
EXTRA_DIST += tests/integration/ship-stop.sh
TESTS += tests/integration/log-default.sh
EXTRA_DIST += tests/integration/log-default.sh
TESTS += tests/integration/log-crash.sh
EXTRA_DIST += tests/integration/log-crash.sh

# Sniffers for transparent capture: TLS ClientHello SNI, HTTP Host.

UNIT_TESTS += tests/unit/test_sni
EXTRA_DIST += tests/unit/data/capture-hellos.py \
	tests/unit/data/hello-curl.bin tests/unit/data/hello-curl-iplit.bin \
	tests/unit/data/hello-openssl-iplit.bin \
	tests/unit/data/hello-openssl-nosni.bin \
	tests/unit/data/hello-openssl-tls12.bin \
	tests/unit/data/hello-openssl-tls13.bin \
	tests/unit/data/hello-openssl-upper.bin tests/unit/data/hello-python.bin

FUZZ_TARGETS += tests/fuzz/fuzz_secret
tests_fuzz_fuzz_secret_SOURCES = tests/fuzz/fuzz_secret.c $(FUZZ_MAIN)
tests_fuzz_fuzz_secret_LDADD = $(FUZZ_LIBS)
tests_fuzz_fuzz_secret_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_LINK)
EXTRA_DIST += tests/fuzz/secret
FUZZ_TARGETS += tests/fuzz/fuzz_scrub
tests_fuzz_fuzz_scrub_SOURCES = tests/fuzz/fuzz_scrub.c $(FUZZ_MAIN)
tests_fuzz_fuzz_scrub_LDADD = $(FUZZ_LIBS)
tests_fuzz_fuzz_scrub_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_LINK)
EXTRA_DIST += tests/fuzz/scrub

FUZZ_TARGETS += tests/fuzz/fuzz_sni
tests_fuzz_fuzz_sni_SOURCES = tests/fuzz/fuzz_sni.c $(FUZZ_MAIN)
tests_fuzz_fuzz_sni_LDADD = $(FUZZ_LIBS)
tests_fuzz_fuzz_sni_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_LINK)
EXTRA_DIST += tests/fuzz/sni

# Transparent capture: which ports wait for the first bytes, and whether
# SNI or Host names the host of the fake address.
UNIT_TESTS += tests/unit/test_transparent
FUZZ_TARGETS += tests/fuzz/fuzz_transparent
tests_fuzz_fuzz_transparent_SOURCES = tests/fuzz/fuzz_transparent.c $(FUZZ_MAIN)
tests_fuzz_fuzz_transparent_LDADD = $(FUZZ_LIBS)
tests_fuzz_fuzz_transparent_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_LINK)
EXTRA_DIST += tests/fuzz/transparent
TESTS += tests/integration/transparent.sh
EXTRA_DIST += tests/integration/transparent.sh
# SOCKS5 (RFC 1928, 1929): the parsers of a client's messages.
UNIT_TESTS += tests/unit/test_socks
FUZZ_TARGETS += tests/fuzz/fuzz_socks
tests_fuzz_fuzz_socks_SOURCES = tests/fuzz/fuzz_socks.c $(FUZZ_MAIN)
tests_fuzz_fuzz_socks_LDADD = $(FUZZ_LIBS)
tests_fuzz_fuzz_socks_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_LINK)
EXTRA_DIST += tests/fuzz/socks
UNIT_TESTS += tests/unit/test_decider
FUZZ_TARGETS += tests/fuzz/fuzz_decider
tests_fuzz_fuzz_decider_SOURCES = tests/fuzz/fuzz_decider.c $(FUZZ_MAIN)
tests_fuzz_fuzz_decider_LDADD = $(FUZZ_LIBS)
tests_fuzz_fuzz_decider_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_LINK)
EXTRA_DIST += tests/fuzz/decider
TESTS += tests/integration/decider.sh
EXTRA_DIST += tests/integration/decider.sh tests/integration/decider.py \
	tests/integration/chat-webhook.py
TESTS += tests/integration/decider-tls.sh
EXTRA_DIST += tests/integration/decider-tls.sh tests/integration/decider-tls.py
TESTS += tests/integration/socks.sh
EXTRA_DIST += tests/integration/socks.sh tests/integration/socksraw.py
# Transparent beside CONNECT with the benchmark's programs; by hand.
EXTRA_DIST += tests/bench/transparent.sh

# DNS: message parser/builder, fake-address map, the server.
UNIT_TESTS += tests/unit/test_dns tests/unit/test_fakeip \
	tests/unit/test_name_allowed tests/unit/test_dnsserver

FUZZ_TARGETS += tests/fuzz/fuzz_dns tests/fuzz/fuzz_dnsbuild
tests_fuzz_fuzz_dns_SOURCES = tests/fuzz/fuzz_dns.c $(FUZZ_MAIN)
tests_fuzz_fuzz_dns_LDADD = $(FUZZ_LIBS)
tests_fuzz_fuzz_dns_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_LINK)
tests_fuzz_fuzz_dnsbuild_SOURCES = tests/fuzz/fuzz_dnsbuild.c $(FUZZ_MAIN)
tests_fuzz_fuzz_dnsbuild_LDADD = $(FUZZ_LIBS)
tests_fuzz_fuzz_dnsbuild_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_LINK)
EXTRA_DIST += tests/fuzz/dns tests/fuzz/dnsbuild
# The server whole, over sockets: server.c, answer.c, querylog.c.
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
# A test-only host for escalation without the gateway: the queue, the
# control socket, the agent endpoint over evhttp.
check_PROGRAMS += tests/integration/escalate-probe
tests_integration_escalate_probe_LDADD = libpinhole.a $(DEP_LIBS)

UNIT_TESTS += tests/unit/test_escalate tests/unit/test_control

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

# Each sandbox's recent refusals.
UNIT_TESTS += tests/unit/test_refused
# The attach protocol between run --session and a session.
UNIT_TESTS += tests/unit/test_attach
FUZZ_TARGETS += tests/fuzz/fuzz_attach
tests_fuzz_fuzz_attach_SOURCES = tests/fuzz/fuzz_attach.c $(FUZZ_MAIN)
tests_fuzz_fuzz_attach_LDADD = $(FUZZ_LIBS)
tests_fuzz_fuzz_attach_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_LINK)
EXTRA_DIST += tests/fuzz/attach

# The metrics listener: finding and deciding a request head.
FUZZ_TARGETS += tests/fuzz/fuzz_scrape
tests_fuzz_fuzz_scrape_SOURCES = tests/fuzz/fuzz_scrape.c $(FUZZ_MAIN)
tests_fuzz_fuzz_scrape_LDADD = $(FUZZ_LIBS)
tests_fuzz_fuzz_scrape_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_LINK)
EXTRA_DIST += tests/fuzz/scrape
