/*
 * Asynchronous name resolution: c-ares 1.18 driven by libevent.
 *
 * c-ares tells us which sockets to watch through its socket state
 * callback; each gets one persistent libevent event, and one timer follows
 * ares_timeout() after every processing step.  Lookups go through a cache
 * of our own (c-ares 1.18 has none), keyed by name, bounded, honouring the
 * answers' TTL within a floor and a ceiling, with a short negative cache;
 * identical lookups in flight share one upstream question.
 *
 * Callbacks are never called from inside c-ares or from inside
 * resolver_lookup(): every query owns a delivery event that is made
 * active when its answer is known, so a callback may cancel other queries
 * or free the resolver.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include <arpa/inet.h>
#include <arpa/nameser.h>
#include <netinet/in.h>

#include <ares.h>
#include <errno.h>
#include <event2/event.h>
#include <netdb.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/clock.h"
#include "lib/metrics.h"
#include "lib/log.h"
#include "proxy/resolver/resolver.h"

#define RESOLVER_CACHE_MAX	4096	/* answers kept */
#define RESOLVER_BUCKETS	1024
#define RESOLVER_TTL_MIN	1	/* seconds */
#define RESOLVER_TTL_MAX	3600
#define RESOLVER_TTL_NEGATIVE	5	/* no such host, no address */
#define RESOLVER_TTL_LOCAL	60	/* /etc/hosts, address literals */
#define RESOLVER_TIMEOUT_MS	2000
#define RESOLVER_TRIES		2

enum resolver_kind {
	RESOLVER_LOOKUP,
	RESOLVER_RAW
};

struct resolver_entry;

struct resolver_query {
	struct resolver		*r;
	enum resolver_kind	 kind;
	resolver_cb		 cb;
	resolver_raw_cb		 raw_cb;
	void			*arg;
	struct event		*ev;		/* delivery */
	struct resolver_entry	*entry;		/* lookup waiting on it */
	int			 inflight;	/* raw: c-ares holds it */
	uint64_t		 asked;		/* raw: when, us */
	int			 cancelled;
	int			 status;
	struct resolver_result	 res;
	uint8_t			*msg;
	size_t			 len;
	TAILQ_ENTRY(resolver_query) all;
	TAILQ_ENTRY(resolver_query) wait;
};
TAILQ_HEAD(resolver_queries, resolver_query);

/* One name: in flight (pending > 0) or cached (on the LRU list). */
struct resolver_entry {
	struct resolver		*r;
	char			*name;
	int			 pending;	/* questions outstanding */
	int			 cached;
	unsigned int		 gen;		/* the cache's, when asked */
	int			 err;		/* worst error so far */
	int			 status;
	struct resolver_result	 res;
	uint64_t		 expires;	/* ms, monotonic */
	uint64_t		 asked;		/* us, monotonic; 0: not asked */
	struct resolver_queries	 waiters;
	LIST_ENTRY(resolver_entry) hash;
	TAILQ_ENTRY(resolver_entry) lru;
};
LIST_HEAD(resolver_bucket, resolver_entry);

struct resolver_sock {
	ares_socket_t		 fd;
	short			 flags;
	struct event		*ev;
	LIST_ENTRY(resolver_sock) entry;
};

struct resolver {
	struct event_base	*base;
	ares_channel		 channel;
	char			*servers;	/* csv, or NULL */
	int			 timeout_ms;
	int			 tries;
	int			 flags;		/* ARES_FLAG_*, ours added */
	int			 used;
	struct event		*timer;
	LIST_HEAD(, resolver_sock) socks;
	struct resolver_queries	 queries;
	struct resolver_bucket	 buckets[RESOLVER_BUCKETS];
	TAILQ_HEAD(, resolver_entry) lru;
	size_t			 ncached;
	unsigned int		 gen;		/* flushes so far */
	struct metrics		*metrics;	/* or NULL */
};

static void	resolver_timer_update(struct resolver *);

/* Map a c-ares status to a short text. */
static const char *
resolver_strerror(int status)
{
	switch (status) {
	case ARES_ENOTFOUND:
		return ("no such host");
	case ARES_ENODATA:
		return ("no address");
	case ARES_ETIMEOUT:
		return ("timed out");
	case ARES_EREFUSED:
		return ("refused");
	case ARES_ENOMEM:
		return ("out of memory");
	case ARES_EBADNAME:
		return ("bad name");
	case ARES_ECONNREFUSED:
		return ("unreachable");
	default:
		return ("server failure");
	}
}

/* Rank an error: the most telling one wins when A and AAAA disagree. */
static int
resolver_err_rank(int status)
{
	switch (status) {
	case ARES_SUCCESS:
		return (0);
	case ARES_ENODATA:
		return (1);
	case ARES_ENOTFOUND:
		return (3);
	default:
		return (2);
	}
}

/* Process what c-ares has to do on a socket. */
static void
resolver_sock_cb(evutil_socket_t fd, short what, void *arg)
{
	struct resolver	*r = arg;

	ares_process_fd(r->channel,
	    (what & EV_READ) ? fd : ARES_SOCKET_BAD,
	    (what & EV_WRITE) ? fd : ARES_SOCKET_BAD);
	resolver_timer_update(r);
}

/* Let c-ares handle its timeouts. */
static void
resolver_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct resolver	*r = arg;

	ares_process_fd(r->channel, ARES_SOCKET_BAD, ARES_SOCKET_BAD);
	resolver_timer_update(r);
}

/* Re-arm the timer for c-ares's next timeout. */
static void
resolver_timer_update(struct resolver *r)
{
	struct timeval	tv, *tvp;

	if ((tvp = ares_timeout(r->channel, NULL, &tv)) == NULL)
		evtimer_del(r->timer);
	else
		evtimer_add(r->timer, tvp);
}

/* Find the watcher of a c-ares socket. */
static struct resolver_sock *
resolver_sock_find(struct resolver *r, ares_socket_t fd)
{
	struct resolver_sock	*s;

	LIST_FOREACH(s, &r->socks, entry) {
		if (s->fd == fd)
			return (s);
	}
	return (NULL);
}

/* Stop watching a socket. */
static void
resolver_sock_free(struct resolver_sock *s)
{
	LIST_REMOVE(s, entry);
	if (s->ev != NULL)
		event_free(s->ev);
	free(s);
}

/* Watch a socket the way c-ares asks (called by c-ares). */
static void
resolver_sock_state_cb(void *data, ares_socket_t fd, int readable,
    int writable)
{
	struct resolver		*r = data;
	struct resolver_sock	*s;
	short			 flags;

	s = resolver_sock_find(r, fd);
	if (!readable && !writable) {
		if (s != NULL)
			resolver_sock_free(s);
		return;
	}
	flags = EV_PERSIST | (readable ? EV_READ : 0) |
	    (writable ? EV_WRITE : 0);
	if (s != NULL && s->flags == flags)
		return;
	if (s == NULL) {
		if ((s = calloc(1, sizeof *s)) == NULL) {
			log_warn("%s: calloc", __func__);
			return;
		}
		s->fd = fd;
		LIST_INSERT_HEAD(&r->socks, s, entry);
	}
	if (s->ev != NULL)
		event_free(s->ev);
	s->flags = flags;
	s->ev = event_new(r->base, fd, flags, resolver_sock_cb, r);
	if (s->ev == NULL || event_add(s->ev, NULL) == -1) {
		log_warnx("%s: cannot watch resolver socket", __func__);
		resolver_sock_free(s);
	}
}

/* Hash a name (FNV-1a). */
static size_t
resolver_hash(const char *name)
{
	uint32_t	h = 2166136261u;

	for (; *name != '\0'; name++)
		h = (h ^ (uint8_t)*name) * 16777619u;
	return (h % RESOLVER_BUCKETS);
}

/* Find the entry of a name. */
static struct resolver_entry *
resolver_entry_find(struct resolver *r, const char *name)
{
	struct resolver_entry	*e;

	LIST_FOREACH(e, &r->buckets[resolver_hash(name)], hash) {
		if (strcmp(e->name, name) == 0)
			return (e);
	}
	return (NULL);
}

/* Make an empty entry for a name. */
static struct resolver_entry *
resolver_entry_create(struct resolver *r, const char *name)
{
	struct resolver_entry	*e;

	if ((e = calloc(1, sizeof *e)) == NULL)
		return (NULL);
	if ((e->name = strdup(name)) == NULL) {
		free(e);
		return (NULL);
	}
	e->r = r;
	e->gen = r->gen;
	e->res.ttl = UINT32_MAX;
	TAILQ_INIT(&e->waiters);
	LIST_INSERT_HEAD(&r->buckets[resolver_hash(name)], e, hash);
	return (e);
}

/* Forget an entry (it has no waiters and no question in flight). */
static void
resolver_entry_free(struct resolver_entry *e)
{
	if (e->cached) {
		TAILQ_REMOVE(&e->r->lru, e, lru);
		e->r->ncached--;
	}
	LIST_REMOVE(e, hash);
	free(e->name);
	free(e);
}

/* Make a query, not yet anywhere but on the resolver's list. */
static struct resolver_query *
resolver_query_create(struct resolver *r, enum resolver_kind kind,
    void *arg)
{
	struct resolver_query	*q;

	if ((q = calloc(1, sizeof *q)) == NULL)
		return (NULL);
	q->r = r;
	q->kind = kind;
	q->arg = arg;
	return (q);
}

/* Free a query. */
static void
resolver_query_free(struct resolver_query *q)
{
	if (q->ev != NULL)
		event_free(q->ev);
	free(q->msg);
	free(q);
}

/* Call a query's callback, then free it. */
static void
resolver_deliver_cb(evutil_socket_t fd, short what, void *arg)
{
	struct resolver_query	*q = arg;
	const char		*errstr;

	TAILQ_REMOVE(&q->r->queries, q, all);
	errstr = q->status == 0 ? NULL : resolver_strerror(q->status);
	if (q->kind == RESOLVER_LOOKUP)
		q->cb(q->status, errstr, q->status == 0 ? &q->res : NULL,
		    q->arg);
	else
		q->raw_cb(q->status, errstr, q->msg, q->len, q->arg);
	resolver_query_free(q);
}

/* Register a new query and give it its delivery event. */
static int
resolver_query_start(struct resolver_query *q)
{
	q->ev = evtimer_new(q->r->base, resolver_deliver_cb, q);
	if (q->ev == NULL)
		return (-1);
	TAILQ_INSERT_TAIL(&q->r->queries, q, all);
	q->r->used = 1;
	return (0);
}

/* Schedule a lookup's answer. */
static void
resolver_query_ready(struct resolver_query *q, int status,
    const struct resolver_result *res)
{
	q->status = status;
	if (status == 0)
		q->res = *res;
	event_active(q->ev, EV_TIMEOUT, 1);
}

/* Merge addresses of one family into an entry, IPv4 first. */
static void
resolver_entry_merge(struct resolver_entry *e,
    const struct resolver_addr *in, size_t n, uint32_t ttl)
{
	struct resolver_result		 old = e->res;
	const struct resolver_addr	*src[2];
	size_t				 nsrc[2], i, j;

	if (n == 0)
		return;
	src[0] = in[0].family == AF_INET ? in : old.a;
	nsrc[0] = in[0].family == AF_INET ? n : old.n;
	src[1] = in[0].family == AF_INET ? old.a : in;
	nsrc[1] = in[0].family == AF_INET ? old.n : n;
	e->res.n = 0;
	for (i = 0; i < 2; i++) {
		for (j = 0; j < nsrc[i] && e->res.n < RESOLVER_MAX_ADDRS; j++)
			e->res.a[e->res.n++] = src[i][j];
	}
	if (ttl < e->res.ttl)
		e->res.ttl = ttl;
}

/* Parse an A or AAAA answer into addresses; return a c-ares status. */
static int
resolver_parse(int family, const uint8_t *abuf, int alen,
    struct resolver_addr *out, size_t *n, uint32_t *ttl)
{
	struct ares_addrttl	t4[RESOLVER_MAX_ADDRS];
	struct ares_addr6ttl	t6[RESOLVER_MAX_ADDRS];
	int			i, nt = RESOLVER_MAX_ADDRS, status, t;

	if (family == AF_INET)
		status = ares_parse_a_reply(abuf, alen, NULL, t4, &nt);
	else
		status = ares_parse_aaaa_reply(abuf, alen, NULL, t6, &nt);
	if (status != ARES_SUCCESS)
		return (status);
	for (i = 0; i < nt; i++) {
		out[i].family = family;
		if (family == AF_INET)
			memcpy(out[i].addr, &t4[i].ipaddr, 4);
		else
			memcpy(out[i].addr, &t6[i].ip6addr, 16);
		t = family == AF_INET ? t4[i].ttl : t6[i].ttl;
		if ((uint32_t)t < *ttl && t >= 0)
			*ttl = t;
	}
	*n = nt;
	return (nt > 0 ? ARES_SUCCESS : ARES_ENODATA);
}

/* Keep the cache within its bound, dropping the least recently used. */
static void
resolver_cache_trim(struct resolver *r)
{
	while (r->ncached > RESOLVER_CACHE_MAX)
		resolver_entry_free(TAILQ_FIRST(&r->lru));
}

/* Choose how long an outcome is cached, in seconds (0: not at all). */
static uint32_t
resolver_cache_ttl(int status, uint32_t ttl)
{
	if (status == ARES_ENOTFOUND || status == ARES_ENODATA)
		return (RESOLVER_TTL_NEGATIVE);
	if (status != 0)
		return (0);
	if (ttl < RESOLVER_TTL_MIN)
		return (RESOLVER_TTL_MIN);
	if (ttl > RESOLVER_TTL_MAX)
		return (RESOLVER_TTL_MAX);
	return (ttl);
}

/* Both answers are in: hand them to the waiters and cache them. */
static void
resolver_entry_done(struct resolver_entry *e)
{
	struct resolver_query	*q;
	struct resolver		*r = e->r;
	uint32_t		 ttl;

	e->status = e->res.n > 0 ? 0 : e->err;
	if (e->asked != 0)
		metrics_resolved(r->metrics, mono_us() - e->asked,
		    e->status != 0 && e->status != ARES_ENOTFOUND &&
		    e->status != ARES_ENODATA);
	ttl = resolver_cache_ttl(e->status, e->res.ttl);
	e->res.ttl = ttl;
	while ((q = TAILQ_FIRST(&e->waiters)) != NULL) {
		TAILQ_REMOVE(&e->waiters, q, wait);
		q->entry = NULL;
		resolver_query_ready(q, e->status, &e->res);
	}
	if (ttl == 0 || e->gen != r->gen) {
		resolver_entry_free(e);
		return;
	}
	e->expires = mono_ms() + (uint64_t)ttl * 1000;
	e->cached = 1;
	TAILQ_INSERT_TAIL(&r->lru, e, lru);
	r->ncached++;
	resolver_cache_trim(r);
}

/* Take one family's answer for an entry (called by c-ares). */
static void
resolver_entry_answer(struct resolver_entry *e, int family, int status,
    const uint8_t *abuf, int alen)
{
	struct resolver_addr	a[RESOLVER_MAX_ADDRS];
	size_t			n = 0;
	uint32_t		ttl = UINT32_MAX;

	e->pending--;
	if (status == ARES_EDESTRUCTION)
		return;		/* resolver_free() frees the entry */
	if (status == ARES_SUCCESS)
		status = resolver_parse(family, abuf, alen, a, &n, &ttl);
	if (status == ARES_SUCCESS)
		resolver_entry_merge(e, a, n, ttl);
	else if (resolver_err_rank(status) > resolver_err_rank(e->err))
		e->err = status;
	if (e->pending == 0)
		resolver_entry_done(e);
}

/* Take an A answer. */
static void
resolver_a_cb(void *arg, int status, int timeouts, unsigned char *abuf,
    int alen)
{
	resolver_entry_answer(arg, AF_INET, status, abuf, alen);
}

/* Take an AAAA answer. */
static void
resolver_aaaa_cb(void *arg, int status, int timeouts, unsigned char *abuf,
    int alen)
{
	resolver_entry_answer(arg, AF_INET6, status, abuf, alen);
}

/*
 * Ask upstream for A and AAAA.  c-ares may answer at once (a bad name),
 * so the waiter is in place before, and the entry is not touched after.
 */
static void
resolver_entry_start(struct resolver_entry *e)
{
	struct resolver	*r = e->r;

	e->pending = 2;
	e->asked = mono_us();
	ares_query(r->channel, e->name, ns_c_in, ns_t_a, resolver_a_cb, e);
	ares_query(r->channel, e->name, ns_c_in, ns_t_aaaa, resolver_aaaa_cb,
	    e);
	resolver_timer_update(r);
}

/* Add the /etc/hosts addresses of one family. */
static void
resolver_hosts_add(struct resolver *r, const char *name, int family,
    struct resolver_result *res)
{
	struct hostent	*he = NULL;
	size_t		 len = family == AF_INET ? 4 : 16;
	char		**ap;

	if (ares_gethostbyname_file(r->channel, name, family, &he) !=
	    ARES_SUCCESS || he == NULL)
		return;
	if (he->h_addrtype == family && (size_t)he->h_length == len) {
		for (ap = he->h_addr_list; *ap != NULL &&
		    res->n < RESOLVER_MAX_ADDRS; ap++) {
			res->a[res->n].family = family;
			memcpy(res->a[res->n].addr, *ap, len);
			res->n++;
		}
	}
	ares_free_hostent(he);
}

/* Answer from an address literal; return -1 if the name is not one. */
static int
resolver_lookup_literal(const char *name, struct resolver_result *res)
{
	memset(res, 0, sizeof *res);
	res->ttl = RESOLVER_TTL_LOCAL;
	if (inet_pton(AF_INET, name, res->a[0].addr) == 1) {
		res->a[0].family = AF_INET;
		res->n = 1;
		return (0);
	}
	if (inet_pton(AF_INET6, name, res->a[0].addr) == 1) {
		res->a[0].family = AF_INET6;
		res->n = 1;
		return (0);
	}
	return (-1);
}

/*
 * Answer a new entry from /etc/hosts, cached for RESOLVER_TTL_LOCAL
 * like an upstream answer (the file is read once per name and TTL, not
 * once per lookup).  Returns -1 when the file does not have the name.
 */
static int
resolver_entry_hosts(struct resolver_entry *e)
{
	resolver_hosts_add(e->r, e->name, AF_INET, &e->res);
	resolver_hosts_add(e->r, e->name, AF_INET6, &e->res);
	if (e->res.n == 0)
		return (-1);
	e->res.ttl = RESOLVER_TTL_LOCAL;
	resolver_entry_done(e);
	return (0);
}

/* Answer from a fresh cache entry. */
static void
resolver_lookup_hit(struct resolver_entry *e, struct resolver_query *q,
    uint64_t now)
{
	struct resolver_result	res;

	TAILQ_REMOVE(&e->r->lru, e, lru);
	TAILQ_INSERT_TAIL(&e->r->lru, e, lru);
	res = e->res;
	res.ttl = (uint32_t)((e->expires - now + 999) / 1000);
	resolver_query_ready(q, e->status, &res);
}

/* Make a query wait for an entry's answer. */
static void
resolver_lookup_wait(struct resolver_entry *e, struct resolver_query *q)
{
	TAILQ_INSERT_TAIL(&e->waiters, q, wait);
	q->entry = e;
}

/* Look up A and AAAA for a name. */
struct resolver_query *
resolver_lookup(struct resolver *r, const char *name, resolver_cb cb,
    void *arg)
{
	struct resolver_query	*q;
	struct resolver_entry	*e;
	struct resolver_result	 res;
	uint64_t		 now = mono_ms();

	if ((q = resolver_query_create(r, RESOLVER_LOOKUP, arg)) == NULL)
		return (NULL);
	q->cb = cb;
	if (resolver_query_start(q) == -1) {
		resolver_query_free(q);
		return (NULL);
	}
	if (resolver_lookup_literal(name, &res) == 0) {
		resolver_query_ready(q, 0, &res);
		return (q);
	}
	e = resolver_entry_find(r, name);
	if (e != NULL && e->cached && e->expires <= now) {
		resolver_entry_free(e);
		e = NULL;
	}
	/* Asked before a flush: its answer is not for this query. */
	if (e != NULL && e->gen != r->gen)
		e = NULL;
	metrics_resolver_cache(r->metrics, e != NULL);
	if (e != NULL && e->cached)
		resolver_lookup_hit(e, q, now);
	else if (e != NULL)
		resolver_lookup_wait(e, q);
	else if ((e = resolver_entry_create(r, name)) == NULL)
		resolver_query_ready(q, ARES_ENOMEM, NULL);
	else {
		resolver_lookup_wait(e, q);
		if (resolver_entry_hosts(e) == -1)
			resolver_entry_start(e);
	}
	return (q);
}

/* Take a raw answer (called by c-ares). */
static void
resolver_raw_answer_cb(void *arg, int status, int timeouts,
    unsigned char *abuf, int alen)
{
	struct resolver_query	*q = arg;

	q->inflight = 0;
	if (status != ARES_EDESTRUCTION && status != ARES_ECANCELLED)
		metrics_resolved(q->r->metrics, mono_us() - q->asked,
		    abuf == NULL || alen <= 0);
	if (q->cancelled) {
		resolver_query_free(q);
		return;
	}
	if (abuf != NULL && alen > 0) {
		if ((q->msg = malloc(alen)) == NULL)
			status = ARES_ENOMEM;
		else {
			memcpy(q->msg, abuf, alen);
			q->len = alen;
			status = 0;
		}
	}
	q->status = status;
	event_active(q->ev, EV_TIMEOUT, 1);
}

/* Send one question upstream and hand back the raw answer. */
struct resolver_query *
resolver_raw(struct resolver *r, const char *name, int qtype,
    resolver_raw_cb cb, void *arg)
{
	struct resolver_query	*q;

	if ((q = resolver_query_create(r, RESOLVER_RAW, arg)) == NULL)
		return (NULL);
	q->raw_cb = cb;
	if (resolver_query_start(q) == -1) {
		resolver_query_free(q);
		return (NULL);
	}
	q->inflight = 1;
	q->asked = mono_us();
	ares_query(r->channel, name, ns_c_in, qtype, resolver_raw_answer_cb,
	    q);
	resolver_timer_update(r);
	return (q);
}

/*
 * Forget every cached answer; those asked for before now are handed to
 * their waiters but not kept.
 */
void
resolver_flush(struct resolver *r)
{
	r->gen++;
	while (!TAILQ_EMPTY(&r->lru))
		resolver_entry_free(TAILQ_FIRST(&r->lru));
}

/* Time upstream questions into m. */
void
resolver_set_metrics(struct resolver *r, struct metrics *m)
{
	r->metrics = m;
}

/* Forget a query: its callback will not be called. */
void
resolver_cancel(struct resolver_query *q)
{
	if (q == NULL)
		return;
	TAILQ_REMOVE(&q->r->queries, q, all);
	if (q->entry != NULL) {
		TAILQ_REMOVE(&q->entry->waiters, q, wait);
		q->entry = NULL;
	}
	event_free(q->ev);
	q->ev = NULL;
	if (q->inflight) {
		q->cancelled = 1;	/* c-ares frees it when done */
		return;
	}
	resolver_query_free(q);
}

/* Join the server list into the csv form c-ares takes. */
static char *
resolver_servers_csv(const char **servers, char *err, size_t errlen)
{
	size_t	 len = 1, i;
	char	*csv;

	for (i = 0; servers[i] != NULL; i++) {
		if (*servers[i] == '\0' || strchr(servers[i], ',') != NULL) {
			snprintf(err, errlen, "bad resolver address '%s'",
			    servers[i]);
			return (NULL);
		}
		len += strlen(servers[i]) + 1;
	}
	if (i == 0) {
		snprintf(err, errlen, "no resolver address given");
		return (NULL);
	}
	if ((csv = calloc(1, len)) == NULL) {
		snprintf(err, errlen, "out of memory");
		return (NULL);
	}
	for (i = 0; servers[i] != NULL; i++) {
		if (i > 0)
			strcat(csv, ",");
		strcat(csv, servers[i]);
	}
	return (csv);
}

/*
 * Open the c-ares channel.  Names are looked up with ares_query(), which
 * never applies search domains.
 */
static int
resolver_channel_open(struct resolver *r, char *err, size_t errlen)
{
	struct ares_options	opts;
	int			mask, rc;

	memset(&opts, 0, sizeof opts);
	mask = ARES_OPT_SOCK_STATE_CB | ARES_OPT_TIMEOUTMS | ARES_OPT_TRIES |
	    ARES_OPT_FLAGS;
	opts.sock_state_cb = resolver_sock_state_cb;
	opts.sock_state_cb_data = r;
	opts.timeout = r->timeout_ms;
	opts.tries = r->tries;
	opts.flags = ARES_FLAG_NOSEARCH | r->flags;
	if ((rc = ares_init_options(&r->channel, &opts, mask)) != ARES_SUCCESS) {
		snprintf(err, errlen, "resolver: %s", ares_strerror(rc));
		r->channel = NULL;
		return (-1);
	}
	if (r->servers != NULL &&
	    (rc = ares_set_servers_ports_csv(r->channel, r->servers)) !=
	    ARES_SUCCESS) {
		snprintf(err, errlen, "bad resolver address '%s': %s",
		    r->servers, ares_strerror(rc));
		ares_destroy(r->channel);
		r->channel = NULL;
		return (-1);
	}
	return (0);
}

/* Make a resolver for an event loop. */
struct resolver *
resolver_create(struct event_base *base, const char **servers, char *err,
    size_t errlen)
{
	struct resolver	*r;
	size_t		 i;
	int		 rc;

	if ((rc = ares_library_init(ARES_LIB_INIT_ALL)) != ARES_SUCCESS) {
		snprintf(err, errlen, "resolver: %s", ares_strerror(rc));
		return (NULL);
	}
	if ((r = calloc(1, sizeof *r)) == NULL) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	r->base = base;
	r->timeout_ms = RESOLVER_TIMEOUT_MS;
	r->tries = RESOLVER_TRIES;
	LIST_INIT(&r->socks);
	TAILQ_INIT(&r->queries);
	TAILQ_INIT(&r->lru);
	for (i = 0; i < RESOLVER_BUCKETS; i++)
		LIST_INIT(&r->buckets[i]);
	if (servers != NULL &&
	    (r->servers = resolver_servers_csv(servers, err, errlen)) == NULL)
		goto fail;
	if ((r->timer = evtimer_new(base, resolver_timer_cb, r)) == NULL) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	if (resolver_channel_open(r, err, errlen) == -1)
		goto fail;
	return (r);

fail:
	if (r != NULL) {
		if (r->timer != NULL)
			event_free(r->timer);
		free(r->servers);
		free(r);
	}
	ares_library_cleanup();
	return (NULL);
}

/*
 * Open the channel again with the timeout, tries and flags asked for
 * (before any query); on failure the old channel and settings stay.
 */
static int
resolver_reopen(struct resolver *r, int timeout_ms, int tries, int flags)
{
	ares_channel	old = r->channel;
	int		old_ms = r->timeout_ms, old_tries = r->tries;
	int		old_flags = r->flags;
	char		err[256];

	if (r->used || timeout_ms <= 0 || tries <= 0)
		return (-1);
	r->timeout_ms = timeout_ms;
	r->tries = tries;
	r->flags = flags;
	if (resolver_channel_open(r, err, sizeof err) == -1) {
		log_warnx("%s: %s", __func__, err);
		r->channel = old;
		r->timeout_ms = old_ms;
		r->tries = old_tries;
		r->flags = old_flags;
		return (-1);
	}
	ares_destroy(old);
	return (0);
}

/* Set the per-try timeout and the number of tries. */
int
resolver_set_timeouts(struct resolver *r, int timeout_ms, int tries)
{
	return (resolver_reopen(r, timeout_ms, tries, r->flags));
}

/* Hand raw answers back whatever their rcode (pinhole doctor). */
int
resolver_every_answer(struct resolver *r)
{
	return (resolver_reopen(r, r->timeout_ms, r->tries,
	    r->flags | ARES_FLAG_NOCHECKRESP));
}

/* Free a resolver; pending queries are dropped, their callbacks unsaid. */
void
resolver_free(struct resolver *r)
{
	struct resolver_query	*q;
	struct resolver_entry	*e;
	struct resolver_sock	*s;
	size_t			 i;

	if (r == NULL)
		return;
	while ((q = TAILQ_FIRST(&r->queries)) != NULL)
		resolver_cancel(q);
	ares_destroy(r->channel);
	for (i = 0; i < RESOLVER_BUCKETS; i++) {
		while ((e = LIST_FIRST(&r->buckets[i])) != NULL)
			resolver_entry_free(e);
	}
	while ((s = LIST_FIRST(&r->socks)) != NULL)
		resolver_sock_free(s);
	event_free(r->timer);
	free(r->servers);
	free(r);
	ares_library_cleanup();
}
