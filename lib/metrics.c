/*
 * The process's metrics: O(1) updates, and the Prometheus text
 * exposition (format 0.0.4) written from them, with no I/O.
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "lib/metrics.h"

static const char *const metrics_verdicts[METRICS_VERDICTS] = {
	"allow", "deny", "local"
};

static const char *const metrics_reasons[METRICS_REASONS] = {
	"none", "denied-by-policy", "ip-literal", "port", "constraint",
	"bad-path", "private-address", "resolve-failed", "connect-failed",
	"timeout", "upstream-tls", "inspect", "inspect-unavailable",
	"fronting", "secret-exfiltration", "secret-unscannable",
	"first-bytes", "unknown-fake-address", "malformed",
	"audit-log-unwritable",
	"tls-client-rejected", "tls-handshake-failed", "upgrade",
	"upstream-auth", "upstream-denied", "upstream-failed",
	"upstream-unreachable",
	"agent-endpoint", "info-page", "other"
};

static const char *const metrics_scopes[METRICS_SCOPES] = {
	"once", "session", "always"
};

/* The histogram's bounds: microseconds, and as its "le" labels. */
static const uint64_t metrics_bounds[METRICS_BUCKETS] = {
	500, 1000, 2500, 5000, 10000, 25000, 50000, 100000, 250000,
	500000, 1000000, 5000000
};
static const char *const metrics_le[METRICS_BUCKETS + 1] = {
	"0.0005", "0.001", "0.0025", "0.005", "0.01", "0.025", "0.05",
	"0.1", "0.25", "0.5", "1", "5", "+Inf"
};

/* The shipping destinations' families: a series per destination. */
static const struct metrics_ship_family {
	const char	*name;
	const char	*type;
	const char	*help;
	size_t		 off;		/* of its uint64_t in metrics_ship */
	int		 otlp;		/* OTLP destinations only */
} metrics_ship_families[] = {
	{ "pinhole_audit_ship_delivered_total", "counter", "Audit lines "
	    "the destination's collector has (OTLP: records it took), by "
	    "destination.", offsetof(struct metrics_ship, delivered), 0 },
	{ "pinhole_audit_ship_dropped_total", "counter", "Audit lines not "
	    "shipped because the destination's spool was full (they are in "
	    "the local log).", offsetof(struct metrics_ship, dropped), 0 },
	{ "pinhole_audit_ship_pending_bytes", "gauge", "Bytes of audit "
	    "lines waiting in the destination's spool.",
	    offsetof(struct metrics_ship, pending), 0 },
	{ "pinhole_audit_ship_connects_total", "counter", "Connections made "
	    "to the destination's collector.",
	    offsetof(struct metrics_ship, connects), 0 },
	{ "pinhole_audit_ship_rejected_total", "counter", "Records an OTLP "
	    "collector took but rejected (partial success).",
	    offsetof(struct metrics_ship, rejected), 1 },
	{ "pinhole_audit_ship_refused_total", "counter", "Records in "
	    "requests an OTLP collector refused, not sent again.",
	    offsetof(struct metrics_ship, refused), 1 }
};

/* Where the text goes: what fits, and the length it would have. */
struct metrics_out {
	char	*buf;
	size_t	 len;
	size_t	 off;
};

/* Start with nothing counted. */
void
metrics_init(struct metrics *m, time_t start)
{
	memset(m, 0, sizeof *m);
	m->start = start;
}

/* The index of a reason the gateway gives. */
enum metrics_reason
metrics_reason(const char *reason)
{
	size_t	i;

	if (reason == NULL)
		return (MR_NONE);
	for (i = MR_NONE + 1; i < MR_OTHER; i++) {
		if (strcmp(reason, metrics_reasons[i]) == 0)
			return (i);
	}
	return (MR_OTHER);
}

/* Count a decision on a connection or an HTTP request. */
void
metrics_decision(struct metrics *m, int request, const char *verdict,
    const char *reason)
{
	enum metrics_verdict	v = METRICS_LOCAL;

	if (m == NULL)
		return;
	if (verdict != NULL && strcmp(verdict, "allow") == 0)
		v = METRICS_ALLOW;
	else if (verdict != NULL && strcmp(verdict, "deny") == 0)
		v = METRICS_DENY;
	if (request)
		m->requests[v][metrics_reason(reason)]++;
	else
		m->conns[v][metrics_reason(reason)]++;
}

/* Count the bytes a tunnel or an exchange moved. */
void
metrics_bytes(struct metrics *m, int64_t up, int64_t down)
{
	if (m == NULL)
		return;
	if (up > 0)
		m->bytes_up += up;
	if (down > 0)
		m->bytes_down += down;
}

/* Count a DNS query's decision. */
void
metrics_dns(struct metrics *m, int allow)
{
	if (m != NULL)
		m->dns[allow ? 0 : 1]++;
}

/* Count a grant of a scope ("once", "session", "always"). */
void
metrics_grant(struct metrics *m, const char *scope)
{
	size_t	i;

	if (m == NULL || scope == NULL)
		return;
	for (i = 0; i < METRICS_SCOPES; i++) {
		if (strcmp(scope, metrics_scopes[i]) == 0)
			m->grants[i]++;
	}
}

/* Put one upstream question's time in the histogram. */
void
metrics_resolved(struct metrics *m, uint64_t us, int failed)
{
	size_t	i;

	if (m == NULL)
		return;
	for (i = 0; i < METRICS_BUCKETS && us > metrics_bounds[i]; i++)
		;
	m->resolver_le[i]++;
	m->resolver_us += us;
	if (failed)
		m->resolver_errors++;
}

/* Sum every decision counted. */
uint64_t
metrics_decided(const struct metrics *m)
{
	uint64_t	n = m->dns[0] + m->dns[1];
	size_t		i, j;

	for (i = 0; i < METRICS_VERDICTS; i++)
		for (j = 0; j < METRICS_REASONS; j++)
			n += m->conns[i][j] + m->requests[i][j];
	return (n);
}

/* Count a look-up by whether the resolver's cache answered it. */
void
metrics_resolver_cache(struct metrics *m, int hit)
{
	if (m != NULL)
		m->resolver_cache[hit ? 0 : 1]++;
}

/* Count a policy reload. */
void
metrics_reload(struct metrics *m, int ok)
{
	if (m != NULL)
		m->reloads[ok ? 0 : 1]++;
}

/* Move a gauge. */
void
metrics_add(struct metrics *m, enum metrics_gauge g, int64_t d)
{
	if (m != NULL)
		m->gauges[g] += d;
}

/* Set a gauge. */
void
metrics_set(struct metrics *m, enum metrics_gauge g, int64_t v)
{
	if (m != NULL)
		m->gauges[g] = v;
}

/* Append formatted text, or only count it once the buffer is full. */
static void
metrics_printf(struct metrics_out *o, const char *fmt, ...)
{
	va_list	ap;
	size_t	room = o->off < o->len ? o->len - o->off : 0;
	int	n;

	va_start(ap, fmt);
	n = vsnprintf(room > 0 ? o->buf + o->off : NULL, room, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->off += n;
}

/* The HELP and TYPE lines of a family. */
static void
metrics_family(struct metrics_out *o, const char *name, const char *type,
    const char *help)
{
	metrics_printf(o, "# HELP %s %s\n# TYPE %s %s\n", name, help, name,
	    type);
}

/* A counter with one series and no labels. */
static void
metrics_one(struct metrics_out *o, const char *name, const char *help,
    unsigned long long v)
{
	metrics_family(o, name, "counter", help);
	metrics_printf(o, "%s %llu\n", name, v);
}

/* A gauge with one series and no labels. */
static void
metrics_gauge(struct metrics_out *o, const char *name, const char *help,
    int64_t v)
{
	metrics_family(o, name, "gauge", help);
	metrics_printf(o, "%s %lld\n", name, (long long)v);
}

/* A family with one series per value of one label. */
static void
metrics_labelled(struct metrics_out *o, const char *name, const char *help,
    const char *label, const char *const *values, const uint64_t *v,
    size_t n)
{
	size_t	i;

	metrics_family(o, name, "counter", help);
	for (i = 0; i < n; i++)
		metrics_printf(o, "%s{%s=\"%s\"} %llu\n", name, label,
		    values[i], (unsigned long long)v[i]);
}

/*
 * Decisions by verdict and reason: a series for each pair met so far,
 * and allow/none and deny/denied-by-policy always.
 */
static void
metrics_decisions(struct metrics_out *o, const char *name, const char *help,
    const uint64_t v[METRICS_VERDICTS][METRICS_REASONS])
{
	size_t	i, j;

	metrics_family(o, name, "counter", help);
	for (i = 0; i < METRICS_VERDICTS; i++) {
		for (j = 0; j < METRICS_REASONS; j++) {
			if (v[i][j] == 0 && !(i == METRICS_ALLOW &&
			    j == MR_NONE) && !(i == METRICS_DENY &&
			    j == MR_DENIED_BY_POLICY))
				continue;
			metrics_printf(o, "%s{verdict=\"%s\",reason=\"%s\"} "
			    "%llu\n", name, metrics_verdicts[i],
			    metrics_reasons[j], (unsigned long long)v[i][j]);
		}
	}
}

/* The resolver's histogram: cumulative buckets, sum and count. */
static void
metrics_histogram(struct metrics_out *o, const struct metrics *m)
{
	const char		*name = "pinhole_resolver_duration_seconds";
	unsigned long long	 n = 0;
	size_t			 i;

	metrics_family(o, name, "histogram", "Time the upstream DNS servers "
	    "took to answer a question (or to fail).");
	for (i = 0; i <= METRICS_BUCKETS; i++) {
		n += m->resolver_le[i];
		metrics_printf(o, "%s_bucket{le=\"%s\"} %llu\n", name,
		    metrics_le[i], n);
	}
	metrics_printf(o, "%s_sum %llu.%06llu\n%s_count %llu\n", name,
	    (unsigned long long)(m->resolver_us / 1000000),
	    (unsigned long long)(m->resolver_us % 1000000), name, n);
}

/* The gauges. */
static void
metrics_gauges(struct metrics_out *o, const struct metrics *m)
{
	metrics_gauge(o, "pinhole_tunnels", "Tunnels open now (CONNECT, "
	    "SOCKS5, captured, upgraded).", m->gauges[MG_TUNNELS]);
	metrics_gauge(o, "pinhole_held_connections", "Connections held now "
	    "while a person decides.", m->gauges[MG_HELD]);
	metrics_gauge(o, "pinhole_escalation_pending", "Escalation requests "
	    "waiting for a decision.", m->gauges[MG_PENDING]);
	metrics_gauge(o, "pinhole_sandboxes", "Sandboxes attached to this "
	    "session now.", m->gauges[MG_SANDBOXES]);
}

/* A label's value, with \\, \" and \n escaped as the format says. */
static void
metrics_label_value(struct metrics_out *o, const char *v)
{
	size_t	n;

	for (;;) {
		n = strcspn(v, "\\\"\n");
		metrics_printf(o, "%.*s", (int)n, v);
		if (v[n] == '\0')
			break;
		metrics_printf(o, "\\%c", v[n] == '\n' ? 'n' : v[n]);
		v += n + 1;
	}
}

/* The shipping destinations: each family written when it has a series. */
static void
metrics_ships(struct metrics_out *o, const struct metrics_ship *sh,
    size_t n)
{
	const struct metrics_ship_family	*f;
	size_t					 i, j, any;

	for (i = 0; i < sizeof metrics_ship_families /
	    sizeof metrics_ship_families[0]; i++) {
		f = &metrics_ship_families[i];
		for (any = 0, j = 0; j < n; j++)
			any += !f->otlp || sh[j].otlp;
		if (any == 0)
			continue;
		metrics_family(o, f->name, f->type, f->help);
		for (j = 0; j < n; j++) {
			if (f->otlp && !sh[j].otlp)
				continue;
			metrics_printf(o, "%s{destination=\"", f->name);
			metrics_label_value(o, sh[j].dest);
			metrics_printf(o, "\"} %llu\n", (unsigned long long)
			    *(const uint64_t *)(const void *)
			    ((const char *)&sh[j] + f->off));
		}
	}
}

/* Write the whole exposition. */
size_t
metrics_write(const struct metrics *m, const struct metrics_ship *ships,
    size_t nships, char *buf, size_t len)
{
	static const char *const dnsv[] = { "allow", "deny" };
	static const char *const reloadv[] = { "ok", "failed" };
	static const char *const dirv[] = { "up", "down" };
	static const char *const cachev[] = { "hit", "miss" };
	struct metrics_out	 o = { buf, len, 0 };
	uint64_t		 bytes[2] = { m->bytes_up, m->bytes_down };

	if (len > 0)
		buf[0] = '\0';
	metrics_family(&o, "pinhole_build_info", "gauge", "The version of "
	    "pinhole running, as a label; always 1.");
	metrics_printf(&o, "pinhole_build_info{version=\"%s\"} 1\n",
	    PACKAGE_VERSION);
	metrics_gauge(&o, "process_start_time_seconds", "Start time of the "
	    "process since the Unix epoch in seconds.", m->start);
	metrics_decisions(&o, "pinhole_connections_total", "Client "
	    "connections decided, by verdict and reason.", m->conns);
	metrics_decisions(&o, "pinhole_http_requests_total", "HTTP requests "
	    "decided (forwarded or inspected), by verdict and reason.",
	    m->requests);
	metrics_labelled(&o, "pinhole_dns_queries_total", "DNS queries "
	    "answered, by verdict.", "verdict", dnsv, m->dns, 2);
	metrics_labelled(&o, "pinhole_relayed_bytes_total", "Bytes relayed "
	    "for clients once a tunnel or exchange ends: up to the server, down "
	    "to the client.", "direction", dirv, bytes, 2);
	metrics_gauges(&o, m);
	metrics_labelled(&o, "pinhole_grants_total", "Approvals turned "
	    "into grants, by scope.", "scope", metrics_scopes, m->grants,
	    METRICS_SCOPES);
	metrics_one(&o, "pinhole_audit_write_errors_total", "Writes to the "
	    "audit log that failed.", m->audit_errors);
	metrics_one(&o, "pinhole_audit_lost_lines_total", "Audit lines lost "
	    "because the log could not be written.", m->audit_lost);
	metrics_one(&o, "pinhole_resolver_errors_total", "Upstream DNS "
	    "questions that failed (no answer, server failure, refused); no "
	    "such name is not an error.", m->resolver_errors);
	metrics_histogram(&o, m);
	metrics_labelled(&o, "pinhole_resolver_cache_lookups_total", "Name "
	    "look-ups for connections and DNS answers, by whether the cache "
	    "answered (hit: a cached answer, or one already asked for).",
	    "result", cachev, m->resolver_cache, 2);
	metrics_labelled(&o, "pinhole_policy_reloads_total", "Policy "
	    "reloads, by result.", "result", reloadv, m->reloads, 2);
	metrics_ships(&o, ships, nships);
	return (o.off);
}
