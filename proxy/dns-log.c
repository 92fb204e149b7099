/*
 * Audit lines for DNS queries, at most one per (verdict, name, type)
 * every window seconds: the first query is written at once, the repeats
 * are counted and written as one line ("repeated N times") when the
 * window closes.  A sandbox looping on a blocked name cannot flood the log.
 */
#include "config.h"

#include <event2/event.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/audit.h"
#include "proxy/dns-server.h"

#define DNS_LOG_MAX		1024	/* (name, type) pairs remembered */
#define DNS_LOG_BUCKETS		512

struct dns_log_entry {
	char			 key[DNS_NAME_TEXT + 32];
	char			 qname[DNS_NAME_TEXT];
	char			 qtype[12];
	char			 verdict[8];
	char			 rule[300];
	char			 answer[64];
	char			 reason[128];
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
};

/* FNV-1a of the key: entries are few and bounded, chains stay short. */
static struct dns_log_entry **
dns_log_bucket(struct dns_log *l, const char *key)
{
	uint32_t	h = 2166136261U;

	for (; *key != '\0'; key++)
		h = (h ^ (uint8_t)*key) * 16777619U;
	return (&l->buckets[h % DNS_LOG_BUCKETS]);
}

/* Write the line that sums up an entry's repeats, and forget it. */
static void
dns_log_retire(struct dns_log *l, struct dns_log_entry *e)
{
	struct dns_log_entry	**pp;
	struct audit_event	  ev;
	char			  detail[64];

	if (e->repeats != 0) {
		audit_event_init(&ev);
		ev.event = "dns";
		ev.verdict = e->verdict;
		ev.session = l->session;
		ev.via = "dns";
		ev.qname = e->qname;
		ev.qtype = e->qtype;
		ev.answer = e->answer[0] != '\0' ? e->answer : NULL;
		ev.rule = e->rule[0] != '\0' ? e->rule : NULL;
		ev.reason = e->reason[0] != '\0' ? e->reason : NULL;
		snprintf(detail, sizeof detail, "repeated %lu times",
		    e->repeats);
		ev.detail = detail;
		audit_write(l->audit, &ev);
	}
	for (pp = dns_log_bucket(l, e->key); *pp != NULL; pp = &(*pp)->hnext) {
		if (*pp == e) {
			*pp = e->hnext;
			break;
		}
	}
	TAILQ_REMOVE(&l->entries, e, entry);
	l->n--;
	free(e);
}

/* Close the windows that have passed. */
static void
dns_log_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct dns_log		*l = arg;
	struct dns_log_entry	*e;
	uint64_t		 now = dns_now();

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

/* Remember that ev was written now. */
static void
dns_log_remember(struct dns_log *l, const char *key,
    const struct audit_event *ev)
{
	struct dns_log_entry	**bucket, *e;

	if (l->n >= DNS_LOG_MAX)
		dns_log_retire(l, TAILQ_FIRST(&l->entries));
	if ((e = calloc(1, sizeof *e)) == NULL)
		return;
	snprintf(e->key, sizeof e->key, "%s", key);
	snprintf(e->qname, sizeof e->qname, "%s", ev->qname);
	snprintf(e->qtype, sizeof e->qtype, "%s", ev->qtype);
	snprintf(e->verdict, sizeof e->verdict, "%s", ev->verdict);
	snprintf(e->rule, sizeof e->rule, "%s", ev->rule ? ev->rule : "");
	snprintf(e->answer, sizeof e->answer, "%s",
	    ev->answer ? ev->answer : "");
	snprintf(e->reason, sizeof e->reason, "%s",
	    ev->reason ? ev->reason : "");
	e->first = dns_now();
	bucket = dns_log_bucket(l, key);
	e->hnext = *bucket;
	*bucket = e;
	TAILQ_INSERT_TAIL(&l->entries, e, entry);
	l->n++;
}

/* Write a dns event, or count it when its window is open. */
void
dns_log_write(struct dns_log *l, const struct audit_event *ev)
{
	struct dns_log_entry	*e;
	char			 key[DNS_NAME_TEXT + 32];

	if (l == NULL || l->audit == NULL)
		return;
	l->session = ev->session;
	snprintf(key, sizeof key, "%s %s %s", ev->verdict, ev->qtype,
	    ev->qname);
	if ((e = dns_log_find(l, key)) != NULL) {
		e->repeats++;
		return;
	}
	audit_write(l->audit, ev);
	dns_log_remember(l, key, ev);
}
