/*
 * The log budget (budget.h): a token bucket of lines and one of bytes
 * for each sandbox, kept in its struct sandbox (the gateway's own
 * clients have the budget's), refilled from the monotonic clock as
 * lines come.  A line within the budget costs one token bucket check
 * and is written; past it, the line is not built: it is counted by its
 * kind, and each kind counted is written as one line at the end of the
 * second.
 */
#include "config.h"

#include <sys/queue.h>

#include <event2/event.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/clock.h"
#include "proxy/audit/audit.h"
#include "proxy/audit/budget.h"

#define BUDGET_KINDS	1024		/* kinds summed up a second */
#define BUDGET_BUCKETS	256
#define BUDGET_KEY	(AUDIT_SANDBOX_ID_LEN + 300)

/* One kind of line summed up this second. */
struct budget_kind {
	char			*key;
	struct audit_ident	 who;		/* whose; id "": none */
	char			*event, *verdict, *session, *host, *method;
	char			*via;
	int			 port;
	uint64_t		 count;
	uint64_t		 up, down;	/* bytes of the traffic */
	uint64_t		 first, last;	/* ms since the epoch */
	struct budget_kind	*hnext;
	TAILQ_ENTRY(budget_kind) entry;
};

struct audit_budget {
	struct audit		*audit;
	uint64_t		 lines;		/* a second */
	uint64_t		 bytes;
	struct audit_bucket	 own;		/* no sandbox's */
	struct event		*timer;
	struct budget_kind	*buckets[BUDGET_BUCKETS];
	TAILQ_HEAD(, budget_kind) kinds;
	size_t			 n;
	uint64_t		 other;		/* past BUDGET_KINDS */
	char			 detail[128];
};

/* Write an absent number as 0. */
static uint64_t
budget_num(int64_t v)
{
	return (v > 0 ? (uint64_t)v : 0);
}

/* Milliseconds since the epoch. */
static uint64_t
budget_now(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ((uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}

/* Format ms since the epoch as a line's ts. */
static void
budget_ts(uint64_t ms, char *buf, size_t len)
{
	struct tm	tm;
	time_t		sec = ms / 1000;
	size_t		n;

	gmtime_r(&sec, &tm);
	n = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + n, len - n, ".%03uZ", (unsigned int)(ms % 1000));
}

/* Free a kind. */
static void
budget_kind_free(struct budget_kind *k)
{
	free(k->key);
	free(k->event);
	free(k->verdict);
	free(k->session);
	free(k->host);
	free(k->method);
	free(k->via);
	free(k);
}

/* Write the line that sums up a kind. */
static void
budget_kind_write(struct audit_budget *b, const struct budget_kind *k)
{
	struct audit_event	ev;
	char			first[32], last[32];

	audit_event_init(&ev);
	ev.event = k->event;
	ev.verdict = k->verdict;
	ev.session = k->session;
	audit_event_sandbox(&ev, k->who.id[0] != '\0' ? &k->who : NULL);
	ev.host = k->host;
	ev.port = k->port;
	ev.via = k->via;
	ev.method = k->method;
	ev.bytes_up = k->up;
	ev.bytes_down = k->down;
	ev.detail = b->detail;
	ev.count = k->count;
	budget_ts(k->first, first, sizeof first);
	budget_ts(k->last, last, sizeof last);
	ev.first = first;
	ev.last = last;
	audit_write(b->audit, &ev);
}

/* Write every kind summed up, and forget them. */
static void
budget_flush(struct audit_budget *b)
{
	struct audit_event	 ev;
	struct budget_kind	*k;
	char			 detail[160];

	while ((k = TAILQ_FIRST(&b->kinds)) != NULL) {
		TAILQ_REMOVE(&b->kinds, k, entry);
		budget_kind_write(b, k);
		budget_kind_free(k);
	}
	memset(b->buckets, 0, sizeof b->buckets);
	b->n = 0;
	if (b->other > 0) {
		audit_event_init(&ev);
		ev.event = "budget";
		snprintf(detail, sizeof detail, "%llu line(s) over the log "
		    "budget, of more than %d kinds in a second, not summed "
		    "up by kind", (unsigned long long)b->other, BUDGET_KINDS);
		ev.detail = detail;
		ev.count = b->other;
		audit_write(b->audit, &ev);
		b->other = 0;
	}
}

/* The end of a second: write what was summed up. */
static void
budget_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	budget_flush(arg);
}

/* A budget in front of an audit log. */
struct audit_budget *
audit_budget_create(struct event_base *base, struct audit *audit,
    uint64_t lines, uint64_t bytes)
{
	struct audit_budget	*b;
	struct timeval		 tv = { 1, 0 };

	if ((b = calloc(1, sizeof *b)) == NULL)
		return (NULL);
	b->audit = audit;
	b->lines = lines;
	b->bytes = bytes;
	TAILQ_INIT(&b->kinds);
	snprintf(b->detail, sizeof b->detail, "summed up: over the log budget "
	    "of %llu lines and %llu bytes a second", (unsigned long long)lines,
	    (unsigned long long)bytes);
	b->timer = event_new(base, -1, EV_PERSIST, budget_timer_cb, b);
	if (b->timer == NULL || event_add(b->timer, &tv) == -1) {
		audit_budget_free(b);
		return (NULL);
	}
	return (b);
}

/* Write what is summed up, and free the budget. */
void
audit_budget_free(struct audit_budget *b)
{
	if (b == NULL)
		return;
	budget_flush(b);
	if (b->timer != NULL)
		event_free(b->timer);
	free(b);
}

/*
 * Take a line from a bucket, refilled for the time gone by (in
 * thousandths of a line and of a byte, so a millisecond's refill is
 * whole); a bucket never used starts full.  Returns 0 when there was no
 * token left.
 */
static int
budget_take(const struct audit_budget *b, struct audit_bucket *k)
{
	uint64_t	now = mono_ms();
	int64_t		max_l = b->lines * 1000 * AUDIT_BUDGET_BURST;
	int64_t		max_b = b->bytes * 1000 * AUDIT_BUDGET_BURST;

	if (k->at == 0) {
		k->lines = max_l;
		k->bytes = max_b;
	} else if (now > k->at) {
		k->lines += (int64_t)((now - k->at) * b->lines);
		k->bytes += (int64_t)((now - k->at) * b->bytes);
		if (k->lines > max_l)
			k->lines = max_l;
		if (k->bytes > max_b)
			k->bytes = max_b;
	}
	k->at = now;
	return (k->lines > 0 && k->bytes > 0);
}

/* The key of a line's kind, in buf; 0 when it does not fit. */
static int
budget_key(char *buf, size_t len, const struct audit_ident *sb,
    const struct audit_event *ev)
{
	int	n;

	n = snprintf(buf, len, "%s %s %s %s %d %s", sb != NULL ? sb->id : "",
	    ev->event, ev->verdict != NULL ? ev->verdict : "-",
	    ev->host != NULL ? ev->host : "-", ev->port,
	    ev->method != NULL ? ev->method : "-");
	return (n > 0 && (size_t)n < len);
}

/* Copy a string that may be NULL; -1 when out of memory. */
static int
budget_strdup(char **dst, const char *src)
{
	*dst = NULL;
	return (src == NULL || (*dst = strdup(src)) != NULL ? 0 : -1);
}

/* A new kind, its strings copied; NULL when out of memory. */
static struct budget_kind *
budget_kind_new(const char *key, const struct audit_ident *sb,
    const struct audit_event *ev)
{
	struct budget_kind	*k;

	if ((k = calloc(1, sizeof *k)) == NULL)
		return (NULL);
	if (budget_strdup(&k->key, key) == -1 ||
	    budget_strdup(&k->event, ev->event) == -1 ||
	    budget_strdup(&k->verdict, ev->verdict) == -1 ||
	    budget_strdup(&k->session, ev->session) == -1 ||
	    budget_strdup(&k->host, ev->host) == -1 ||
	    budget_strdup(&k->method, ev->method) == -1 ||
	    budget_strdup(&k->via, ev->via) == -1) {
		budget_kind_free(k);
		return (NULL);
	}
	if (sb != NULL)
		k->who = *sb;
	k->port = ev->port;
	return (k);
}

/* Find a line's kind, or add it; NULL past BUDGET_KINDS. */
static struct budget_kind *
budget_kind_get(struct audit_budget *b, const struct audit_ident *sb,
    const struct audit_event *ev)
{
	struct budget_kind	**bucket, *k;
	char			  key[BUDGET_KEY];
	uint32_t		  h = 2166136261U;
	const char		 *p;

	if (!budget_key(key, sizeof key, sb, ev))
		return (NULL);
	for (p = key; *p != '\0'; p++)
		h = (h ^ (uint8_t)*p) * 16777619U;
	bucket = &b->buckets[h % BUDGET_BUCKETS];
	for (k = *bucket; k != NULL; k = k->hnext)
		if (strcmp(k->key, key) == 0)
			return (k);
	if (b->n >= BUDGET_KINDS || (k = budget_kind_new(key, sb, ev)) == NULL)
		return (NULL);
	k->hnext = *bucket;
	*bucket = k;
	TAILQ_INSERT_TAIL(&b->kinds, k, entry);
	b->n++;
	return (k);
}

/* Count a line past the budget by its kind. */
static void
budget_count(struct audit_budget *b, const struct audit_ident *sb,
    const struct audit_event *ev)
{
	struct budget_kind	*k;
	uint64_t		 now = budget_now();

	if ((k = budget_kind_get(b, sb, ev)) == NULL) {
		b->other++;
		return;
	}
	if (k->count++ == 0)
		k->first = now;
	k->last = now;
	k->up += budget_num(ev->bytes_up);
	k->down += budget_num(ev->bytes_down);
}

/* Write an allowed traffic line, or sum it up past the budget. */
void
audit_budget_write(struct audit_budget *b, const struct audit_ident *sb,
    struct audit_bucket *k, const struct audit_event *ev)
{
	size_t	len;

	if (k == NULL)
		k = &b->own;
	if (!budget_take(b, k)) {
		budget_count(b, sb, ev);
		return;
	}
	len = audit_write(b->audit, ev);
	k->lines -= 1000;
	k->bytes -= (int64_t)len * 1000;
}

/* Parse --log-budget: LINES,BYTES, or 0. */
int
audit_budget_parse(const char *s, uint64_t *lines, uint64_t *bytes)
{
	const char	*comma;
	char		*end, num[32];
	long long	 v;

	if (strcmp(s, "0") == 0) {
		*lines = *bytes = 0;
		return (0);
	}
	if ((comma = strchr(s, ',')) == NULL ||
	    (size_t)(comma - s) >= sizeof num || comma == s)
		return (-1);
	memcpy(num, s, comma - s);
	num[comma - s] = '\0';
	v = strtoll(num, &end, 10);
	if (*end != '\0' || num[0] < '1' || num[0] > '9' || v > 1000000)
		return (-1);
	*lines = v;
	if (audit_parse_size(comma + 1, &v) == -1 || v < 1024 ||
	    v > 1024LL * 1024 * 1024)
		return (-1);
	*bytes = v;
	return (0);
}
