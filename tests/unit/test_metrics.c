/*
 * Unit tests for lib/metrics.c: the exposition, byte for byte, of
 * known counts and of shipping destinations; the reasons' fixed set; a
 * buffer too small.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "lib/metrics.h"

/* The exposition of test_count()'s counts. */
static const char expected[] =
	    "# HELP pinhole_build_info The version of pinhole running, as a label; always 1.\n"
	    "# TYPE pinhole_build_info gauge\n"
	    "pinhole_build_info{version=\"" PACKAGE_VERSION "\"} 1\n"
	    "# HELP process_start_time_seconds Start time of the process since the Unix epoch in seconds.\n"
	    "# TYPE process_start_time_seconds gauge\n"
	    "process_start_time_seconds 1700000000\n"
	    "# HELP pinhole_connections_total Client connections decided, by verdict and reason.\n"
	    "# TYPE pinhole_connections_total counter\n"
	    "pinhole_connections_total{verdict=\"allow\",reason=\"none\"} 2\n"
	    "pinhole_connections_total{verdict=\"allow\",reason=\"connect-failed\"} 1\n"
	    "pinhole_connections_total{verdict=\"deny\",reason=\"denied-by-policy\"} 1\n"
	    "# HELP pinhole_http_requests_total HTTP requests decided (forwarded or inspected), by verdict and reason.\n"
	    "# TYPE pinhole_http_requests_total counter\n"
	    "pinhole_http_requests_total{verdict=\"allow\",reason=\"none\"} 0\n"
	    "pinhole_http_requests_total{verdict=\"deny\",reason=\"denied-by-policy\"} 0\n"
	    "pinhole_http_requests_total{verdict=\"deny\",reason=\"other\"} 1\n"
	    "pinhole_http_requests_total{verdict=\"local\",reason=\"info-page\"} 1\n"
	    "# HELP pinhole_dns_queries_total DNS queries answered, by verdict.\n"
	    "# TYPE pinhole_dns_queries_total counter\n"
	    "pinhole_dns_queries_total{verdict=\"allow\"} 1\n"
	    "pinhole_dns_queries_total{verdict=\"deny\"} 2\n"
	    "# HELP pinhole_relayed_bytes_total Bytes relayed for clients once a tunnel or exchange ends: up to the server, down to the client.\n"
	    "# TYPE pinhole_relayed_bytes_total counter\n"
	    "pinhole_relayed_bytes_total{direction=\"up\"} 100\n"
	    "pinhole_relayed_bytes_total{direction=\"down\"} 2000\n"
	    "# HELP pinhole_tunnels Tunnels open now (CONNECT, SOCKS5, captured, upgraded).\n"
	    "# TYPE pinhole_tunnels gauge\n"
	    "pinhole_tunnels 1\n"
	    "# HELP pinhole_held_connections Connections held now while a person decides.\n"
	    "# TYPE pinhole_held_connections gauge\n"
	    "pinhole_held_connections 1\n"
	    "# HELP pinhole_escalation_pending Escalation requests waiting for a decision.\n"
	    "# TYPE pinhole_escalation_pending gauge\n"
	    "pinhole_escalation_pending 3\n"
	    "# HELP pinhole_sandboxes Sandboxes attached to this session now.\n"
	    "# TYPE pinhole_sandboxes gauge\n"
	    "pinhole_sandboxes 2\n"
	    "# HELP pinhole_grants_total Approvals turned into grants, by scope.\n"
	    "# TYPE pinhole_grants_total counter\n"
	    "pinhole_grants_total{scope=\"once\"} 0\n"
	    "pinhole_grants_total{scope=\"session\"} 1\n"
	    "pinhole_grants_total{scope=\"always\"} 0\n"
	    "# HELP pinhole_audit_write_errors_total Writes to the audit log that failed.\n"
	    "# TYPE pinhole_audit_write_errors_total counter\n"
	    "pinhole_audit_write_errors_total 4\n"
	    "# HELP pinhole_audit_lost_lines_total Audit lines lost because the log could not be written.\n"
	    "# TYPE pinhole_audit_lost_lines_total counter\n"
	    "pinhole_audit_lost_lines_total 5\n"
	    "# HELP pinhole_resolver_errors_total Upstream DNS questions that failed (no answer, server failure, refused); no such name is not an error.\n"
	    "# TYPE pinhole_resolver_errors_total counter\n"
	    "pinhole_resolver_errors_total 2\n"
	    "# HELP pinhole_resolver_duration_seconds Time the upstream DNS servers took to answer a question (or to fail).\n"
	    "# TYPE pinhole_resolver_duration_seconds histogram\n"
	    "pinhole_resolver_duration_seconds_bucket{le=\"0.0005\"} 2\n"
	    "pinhole_resolver_duration_seconds_bucket{le=\"0.001\"} 2\n"
	    "pinhole_resolver_duration_seconds_bucket{le=\"0.0025\"} 2\n"
	    "pinhole_resolver_duration_seconds_bucket{le=\"0.005\"} 2\n"
	    "pinhole_resolver_duration_seconds_bucket{le=\"0.01\"} 2\n"
	    "pinhole_resolver_duration_seconds_bucket{le=\"0.025\"} 2\n"
	    "pinhole_resolver_duration_seconds_bucket{le=\"0.05\"} 3\n"
	    "pinhole_resolver_duration_seconds_bucket{le=\"0.1\"} 3\n"
	    "pinhole_resolver_duration_seconds_bucket{le=\"0.25\"} 3\n"
	    "pinhole_resolver_duration_seconds_bucket{le=\"0.5\"} 3\n"
	    "pinhole_resolver_duration_seconds_bucket{le=\"1\"} 3\n"
	    "pinhole_resolver_duration_seconds_bucket{le=\"5\"} 3\n"
	    "pinhole_resolver_duration_seconds_bucket{le=\"+Inf\"} 4\n"
	    "pinhole_resolver_duration_seconds_sum 6.030900\n"
	    "pinhole_resolver_duration_seconds_count 4\n"
	    "# HELP pinhole_resolver_cache_lookups_total Name look-ups for connections and DNS answers, by whether the cache answered (hit: a cached answer, or one already asked for).\n"
	    "# TYPE pinhole_resolver_cache_lookups_total counter\n"
	    "pinhole_resolver_cache_lookups_total{result=\"hit\"} 2\n"
	    "pinhole_resolver_cache_lookups_total{result=\"miss\"} 1\n"
	    "# HELP pinhole_policy_reloads_total Policy reloads, by result.\n"
	    "# TYPE pinhole_policy_reloads_total counter\n"
	    "pinhole_policy_reloads_total{result=\"ok\"} 2\n"
	    "pinhole_policy_reloads_total{result=\"failed\"} 1\n";

/* Count a known set of events, unknown reasons and scopes among them. */
static void
test_count(struct metrics *m)
{
	metrics_init(m, 1700000000);
	metrics_decision(m, 0, "allow", NULL);
	metrics_decision(m, 0, "allow", NULL);
	metrics_decision(m, 0, "deny", "denied-by-policy");
	metrics_decision(m, 0, "allow", "connect-failed");
	metrics_decision(m, 1, "deny", "something sent by a sandbox");
	metrics_decision(m, 1, NULL, "info-page");
	metrics_bytes(m, 100, 2000);
	metrics_bytes(m, -1, -1);
	metrics_dns(m, 1);
	metrics_dns(m, 0);
	metrics_dns(m, 0);
	metrics_add(m, MG_TUNNELS, 2);
	metrics_add(m, MG_TUNNELS, -1);
	metrics_add(m, MG_HELD, 1);
	metrics_set(m, MG_PENDING, 3);
	metrics_set(m, MG_SANDBOXES, 2);
	metrics_grant(m, "session");
	metrics_grant(m, "bogus");
	m->audit_errors = 4;
	m->audit_lost = 5;
	metrics_resolved(m, 400, 0);
	metrics_resolved(m, 500, 0);		/* on a bound: in it */
	metrics_resolved(m, 30000, 1);
	metrics_resolved(m, 6000000, 1);	/* past the last: +Inf */
	metrics_resolver_cache(m, 1);
	metrics_resolver_cache(m, 0);
	metrics_resolver_cache(m, 1);
	metrics_reload(m, 1);
	metrics_reload(m, 0);
	metrics_reload(m, 1);
}

/* Known counts give exactly the expected text. */
static void
test_metrics_write(void **state)
{
	static char	buf[METRICS_TEXT_MAX];
	struct metrics	m;
	size_t		len;

	test_count(&m);
	len = metrics_write(&m, NULL, 0, buf, sizeof buf);
	assert_int_equal(len, strlen(expected));
	assert_string_equal(buf, expected);
}

/* A buffer too small says how much was needed, and stays a string. */
static void
test_metrics_short(void **state)
{
	char		small[64];
	struct metrics	m;

	test_count(&m);
	assert_int_equal(metrics_write(&m, NULL, 0, small, sizeof small),
	    strlen(expected));
	assert_int_equal(strlen(small), sizeof small - 1);
	assert_memory_equal(small, expected, sizeof small - 1);
	assert_int_equal(metrics_write(&m, NULL, 0, NULL, 0),
	    strlen(expected));
}

/* The shipping families after the rest: OTLP's only for OTLP. */
static const char expected_ships[] =
	    "# HELP pinhole_audit_ship_delivered_total Audit lines the destination's collector has (OTLP: records it took), by destination.\n"
	    "# TYPE pinhole_audit_ship_delivered_total counter\n"
	    "pinhole_audit_ship_delivered_total{destination=\"syslog+tls://c.test:6514\"} 7\n"
	    "pinhole_audit_ship_delivered_total{destination=\"otlp+http://[::1]:4318/a\\\\b\\\"c\\n\"} 9\n"
	    "# HELP pinhole_audit_ship_dropped_total Audit lines not shipped because the destination's spool was full (they are in the local log).\n"
	    "# TYPE pinhole_audit_ship_dropped_total counter\n"
	    "pinhole_audit_ship_dropped_total{destination=\"syslog+tls://c.test:6514\"} 3\n"
	    "pinhole_audit_ship_dropped_total{destination=\"otlp+http://[::1]:4318/a\\\\b\\\"c\\n\"} 0\n"
	    "# HELP pinhole_audit_ship_pending_bytes Bytes of audit lines waiting in the destination's spool.\n"
	    "# TYPE pinhole_audit_ship_pending_bytes gauge\n"
	    "pinhole_audit_ship_pending_bytes{destination=\"syslog+tls://c.test:6514\"} 4096\n"
	    "pinhole_audit_ship_pending_bytes{destination=\"otlp+http://[::1]:4318/a\\\\b\\\"c\\n\"} 0\n"
	    "# HELP pinhole_audit_ship_connects_total Connections made to the destination's collector.\n"
	    "# TYPE pinhole_audit_ship_connects_total counter\n"
	    "pinhole_audit_ship_connects_total{destination=\"syslog+tls://c.test:6514\"} 2\n"
	    "pinhole_audit_ship_connects_total{destination=\"otlp+http://[::1]:4318/a\\\\b\\\"c\\n\"} 1\n"
	    "# HELP pinhole_audit_ship_rejected_total Records an OTLP collector took but rejected (partial success).\n"
	    "# TYPE pinhole_audit_ship_rejected_total counter\n"
	    "pinhole_audit_ship_rejected_total{destination=\"otlp+http://[::1]:4318/a\\\\b\\\"c\\n\"} 5\n"
	    "# HELP pinhole_audit_ship_refused_total Records in requests an OTLP collector refused, not sent again.\n"
	    "# TYPE pinhole_audit_ship_refused_total counter\n"
	    "pinhole_audit_ship_refused_total{destination=\"otlp+http://[::1]:4318/a\\\\b\\\"c\\n\"} 6\n";

/*
 * Shipping destinations come after the other families, their label
 * escaped; with syslog destinations only, the OTLP families are left out.
 */
static void
test_metrics_ships(void **state)
{
	static char		buf[METRICS_TEXT_MAX];
	struct metrics		m;
	struct metrics_ship	sh[2];
	size_t			len, base;

	memset(sh, 0, sizeof sh);
	sh[0].dest = "syslog+tls://c.test:6514";
	sh[0].delivered = 7;
	sh[0].dropped = 3;
	sh[0].pending = 4096;
	sh[0].connects = 2;
	sh[1].dest = "otlp+http://[::1]:4318/a\\b\"c\n";
	sh[1].delivered = 9;
	sh[1].connects = 1;
	sh[1].otlp = 1;
	sh[1].rejected = 5;
	sh[1].refused = 6;
	test_count(&m);
	base = strlen(expected);
	len = metrics_write(&m, sh, 2, buf, sizeof buf);
	assert_int_equal(len, base + strlen(expected_ships));
	assert_memory_equal(buf, expected, base);
	assert_string_equal(buf + base, expected_ships);

	len = metrics_write(&m, sh, 1, buf, sizeof buf);
	assert_non_null(strstr(buf, "pinhole_audit_ship_connects_total{"
	    "destination=\"syslog+tls://c.test:6514\"} 2\n"));
	assert_null(strstr(buf, "_rejected_total"));
	assert_null(strstr(buf, "_refused_total"));
	assert_int_equal(len, strlen(buf));
}

/* Reasons: the fixed set, anything else "other", none "none". */
static void
test_metrics_reason(void **state)
{
	assert_int_equal(metrics_reason(NULL), MR_NONE);
	assert_int_equal(metrics_reason("denied-by-policy"),
	    MR_DENIED_BY_POLICY);
	assert_int_equal(metrics_reason("info-page"), MR_INFO_PAGE);
	assert_int_equal(metrics_reason("secret-unscannable"),
	    MR_SECRET_UNSCANNABLE);
	assert_int_equal(metrics_reason("none"), MR_OTHER);
	assert_int_equal(metrics_reason("other"), MR_OTHER);
	assert_int_equal(metrics_reason("evil.example\"} 1"), MR_OTHER);
	assert_int_equal(metrics_reason(""), MR_OTHER);
}

/* A NULL struct counts nothing, and nothing breaks. */
static void
test_metrics_null(void **state)
{
	metrics_decision(NULL, 0, "allow", NULL);
	metrics_bytes(NULL, 1, 1);
	metrics_dns(NULL, 1);
	metrics_grant(NULL, "once");
	metrics_resolved(NULL, 1, 1);
	metrics_reload(NULL, 1);
	metrics_add(NULL, MG_TUNNELS, 1);
	metrics_set(NULL, MG_HELD, 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_metrics_write),
		cmocka_unit_test(test_metrics_short),
		cmocka_unit_test(test_metrics_ships),
		cmocka_unit_test(test_metrics_reason),
		cmocka_unit_test(test_metrics_null),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
