/*
 * Audit lines for DNS queries, at most one per (verdict, type, name)
 * every window seconds: the first query is written at once, the repeats
 * are counted and written as one line ("repeated N times") when the
 * window closes.  On top of that, at most DNS_LOG_RATE first lines a
 * second; past it, one line a second says how many were not written.
 * A sandbox looping on a name, or flooding random names, cannot flood
 * the log.
 */
#include "config.h"

#include <event2/event.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/clock.h"
#include "proxy/audit/audit.h"
#include "proxy/dns/dns-int.h"
#include "proxy/sandbox/sandbox.h"

#define DNS_LOG_MAX		4096	/* (verdict, type, name) remembered */
#define DNS_LOG_BUCKETS		4096
#define DNS_LOG_RATE		200	/* first lines a second */
/* A key: sandbox id, verdict, type, name, and their separators. */
#define DNS_LOG_KEY		(AUDIT_SANDBOX_ID_LEN + 8 + 12 + DNS_NAME_TEXT + 4)

struct dns_log_entry {
	char			*key;		/* "sandbox verdict type name" */
	struct sandbox	*sandbox;	/* whose queries, or NULL */
	const char		*qname;		/* its tail */
	char			 verdict[8];
	char			 qtype[12];
	char			*rule;
	char			*reason;
	char			*answer;
	uint64_t		 first;
	unsigned long		 repeats;
	struct dns_log_entry	*hnext;
	TAILQ_ENTRY(dns_log_entry) entry;	/* oldest first */
};

struct dns_log {
	struct audit			*audit;
	const char			*session;
	unsigned int			 window;
	struct event			*timer;
	struct dns_log_entry		*buckets[DNS_LOG_BUCKETS];
	TAILQ_HEAD(, dns_log_entry)	 entries;
	size_t				 n;
	unsigned int			 written;	/* this second */
	unsigned long			 dropped;	/* this second */
};

/* FNV-1a of the key: the table is bounded, so are its chains. */
static struct dns_log_entry **
dns_log_bucket(struct dns_log *l, const char *key)
{
	uint32_t	h = 2166136261U;

	for (; *key != '\0'; key++)
		h = (h ^ (uint8_t)*key) * 16777619U;
	return (&l->buckets[h % DNS_LOG_BUCKETS]);
}

/* Write the line that sums up an entry's repeats. */
static void
dns_log_repeats(struct dns_log *l, const struct dns_log_entry *e)
{
	struct audit_event	ev;
	char			detail[64];

	audit_event_init(&ev);
	ev.event = "dns";
	ev.verdict = e->verdict;
	ev.session = l->session;
	audit_event_sandbox(&ev, sandbox_ident(e->sandbox));
	ev.via = "dns";
	ev.qname = e->qname;
	ev.qtype = e->qtype;
	ev.answer = e->answer;
	ev.rule = e->rule;
	ev.reason = e->reason;
	snprintf(detail, sizeof detail, "repeated %lu times", e->repeats);
	ev.detail = detail;
	audit_write(l->audit, &ev);
}

/* Free an entry's memory. */
static void
dns_log_entry_free(struct dns_log_entry *e)
{
	free(e->key);
	sandbox_unref(e->sandbox);
	free(e->rule);
	free(e->reason);
	free(e->answer);
	free(e);
}

/* Write what an entry counted, and forget it. */
static void
dns_log_retire(struct dns_log *l, struct dns_log_entry *e)
{
	struct dns_log_entry	**pp;

	if (e->repeats != 0)
		dns_log_repeats(l, e);
	for (pp = dns_log_bucket(l, e->key); *pp != NULL; pp = &(*pp)->hnext) {
		if (*pp == e) {
			*pp = e->hnext;
			break;
		}
	}
	TAILQ_REMOVE(&l->entries, e, entry);
	l->n--;
	dns_log_entry_free(e);
}

/* Say how many first lines the rate limit kept out this second. */
static void
dns_log_dropped(struct dns_log *l)
{
	struct audit_event	ev;
	char			detail[96];

	if (l->dropped != 0) {
		audit_event_init(&ev);
		ev.event = "dns";
		ev.session = l->session;
		ev.via = "dns";
		snprintf(detail, sizeof detail, "%lu queries not logged one "
		    "by one: over %d names a second", l->dropped,
		    DNS_LOG_RATE);
		ev.detail = detail;
		audit_write(l->audit, &ev);
	}
	l->dropped = 0;
	l->written = 0;
}

/* Every second: close the windows that have passed. */
static void
dns_log_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct dns_log		*l = arg;
	struct dns_log_entry	*e;
	uint64_t		 now = mono_sec();

	dns_log_dropped(l);
	while ((e = TAILQ_FIRST(&l->entries)) != NULL &&
	    e->first + l->window <= now)
		dns_log_retire(l, e);
}

/* Create the limiter in front of an audit log (NULL: log nothing). */
struct dns_log *
dns_log_create(struct event_base *base, struct audit *audit,
    unsigned int window)
{
	struct dns_log	*l;
	struct timeval	 tv = { 1, 0 };

	if ((l = calloc(1, sizeof *l)) == NULL)
		return (NULL);
	l->audit = audit;
	l->window = window;
	TAILQ_INIT(&l->entries);
	l->timer = event_new(base, -1, EV_PERSIST, dns_log_timer_cb, l);
	if (l->timer == NULL || event_add(l->timer, &tv) == -1) {
		dns_log_free(l);
		return (NULL);
	}
	return (l);
}

/* Write what is still counted, and free the limiter. */
void
dns_log_free(struct dns_log *l)
{
	struct dns_log_entry	*e;

	if (l == NULL)
		return;
	while ((e = TAILQ_FIRST(&l->entries)) != NULL)
		dns_log_retire(l, e);
	if (l->audit != NULL)
		dns_log_dropped(l);
	if (l->timer != NULL)
		event_free(l->timer);
	free(l);
}

/* Find the entry for a key. */
static struct dns_log_entry *
dns_log_find(struct dns_log *l, const char *key)
{
	struct dns_log_entry	*e;

	for (e = *dns_log_bucket(l, key); e != NULL; e = e->hnext) {
		if (strcmp(e->key, key) == 0)
			return (e);
	}
	return (NULL);
}

/* Copy a string that may be NULL. */
static int
dns_log_strdup(char **dst, const char *src)
{
	*dst = NULL;
	return (src == NULL || (*dst = strdup(src)) != NULL ? 0 : -1);
}

/* Remember that ev, from sb, was written now, under key. */
static void
dns_log_remember(struct dns_log *l, char *key, const struct audit_event *ev,
    struct sandbox *sb)
{
	struct dns_log_entry	**bucket, *e;

	if (l->n >= DNS_LOG_MAX)
		dns_log_retire(l, TAILQ_FIRST(&l->entries));
	if ((e = calloc(1, sizeof *e)) == NULL ||
	    dns_log_strdup(&e->rule, ev->rule) == -1 ||
	    dns_log_strdup(&e->reason, ev->reason) == -1 ||
	    dns_log_strdup(&e->answer, ev->answer) == -1) {
		free(key);
		if (e != NULL)
			dns_log_entry_free(e);
		return;
	}
	e->key = key;
	e->sandbox = sandbox_ref(sb);
	e->qname = strchr(strchr(strchr(key, ' ') + 1, ' ') + 1, ' ') + 1;
	snprintf(e->verdict, sizeof e->verdict, "%s", ev->verdict);
	snprintf(e->qtype, sizeof e->qtype, "%s", ev->qtype);
	e->first = mono_sec();
	bucket = dns_log_bucket(l, key);
	e->hnext = *bucket;
	*bucket = e;
	TAILQ_INSERT_TAIL(&l->entries, e, entry);
	l->n++;
}

/*
 * Write the key "sandbox verdict type name" of an event into buf (ids
 * and verdicts have no blank, types are numbers or words).  Per query:
 * no printf, no allocation.  Returns its length, or 0 when it does not
 * fit.
 */
static size_t
dns_log_key(char *buf, size_t size, struct sandbox *sb,
    const char *verdict, const char *qtype, const char *qname)
{
	const char	*part[4];
	size_t		 len, i, n = 0;

	part[0] = sandbox_id(sb);
	part[1] = verdict;
	part[2] = qtype;
	part[3] = qname;
	for (i = 0; i < 4; i++) {
		len = strlen(part[i]);
		if (len + 1 > size - n)
			return (0);
		memcpy(buf + n, part[i], len);
		n += len;
		buf[n++] = i < 3 ? ' ' : '\0';
	}
	return (n - 1);
}

/*
 * Is a dns event from sb kept out of the log: a repeat in its window
 * (counted), or over the rate (counted as dropped)?  Asked first, so a
 * query whose line is not written builds no line.
 */
int
dns_log_counted(struct dns_log *l, struct sandbox *sb,
    const char *verdict, const char *qtype, const char *qname)
{
	struct dns_log_entry	*e;
	char			 key[DNS_LOG_KEY];

	if (l == NULL || l->audit == NULL)
		return (1);
	if (dns_log_key(key, sizeof key, sb, verdict, qtype, qname) == 0)
		return (0);
	if ((e = dns_log_find(l, key)) != NULL) {
		e->repeats++;
		return (1);
	}
	if (l->written >= DNS_LOG_RATE) {
		l->dropped++;
		return (1);
	}
	return (0);
}

/*
 * Write a dns event from a sandbox (or NULL), or count it when its
 * window is open: one per sandbox, verdict, type and name.
 */
void
dns_log_write(struct dns_log *l, const struct audit_event *ev,
    struct sandbox *sb)
{
	char	 key[DNS_LOG_KEY], *dup;
	size_t	 n;

	if (dns_log_counted(l, sb, ev->verdict, ev->qtype, ev->qname))
		return;
	l->session = ev->session;
	l->written++;
	audit_write(l->audit, ev);
	n = dns_log_key(key, sizeof key, sb, ev->verdict, ev->qtype,
	    ev->qname);
	if (n != 0 && (dup = malloc(n + 1)) != NULL) {
		memcpy(dup, key, n + 1);
		dns_log_remember(l, dup, ev, sb);
	}
}
