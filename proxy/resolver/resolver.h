/*
 * Asynchronous name resolution with c-ares inside a libevent loop, with a
 * TTL-respecting cache of its own and /etc/hosts honoured.
 */
#ifndef RESOLVER_H
#define RESOLVER_H

#include <stddef.h>
#include <stdint.h>

struct event_base;
struct metrics;
struct resolver;
struct resolver_query;

#define RESOLVER_MAX_ADDRS	16

struct resolver_addr {
	int		family;		/* AF_INET or AF_INET6 */
	uint8_t		addr[16];
};

struct resolver_result {
	size_t			n;
	struct resolver_addr	a[RESOLVER_MAX_ADDRS];	/* v4 first */
	uint32_t		ttl;
};

/*
 * status 0: res holds at least one address.  Otherwise errstr says why:
 * "no such host", "no address", "timed out", "server failure", "refused",
 * "unreachable", "bad name" or "out of memory".  Called from the
 * event loop, never from inside resolver_lookup().
 */
typedef void (*resolver_cb)(int status, const char *errstr,
    const struct resolver_result *res, void *arg);

/*
 * A raw answer (the upstream's DNS message) for the DNS relay.  status is
 * 0 whenever the upstream answered, whatever its rcode (NXDOMAIN, NODATA);
 * otherwise no message came back and errstr says why.
 */
typedef void (*resolver_raw_cb)(int status, const char *errstr,
    const uint8_t *msg, size_t len, void *arg);

/*
 * servers: NULL for /etc/resolv.conf, or "ADDR[:PORT]" strings (IPv6 as
 * "[ADDR]:PORT") ending with NULL.  Returns NULL with err filled in.
 */
struct resolver	*resolver_create(struct event_base *, const char **,
		    char *, size_t);
void		 resolver_free(struct resolver *);

/*
 * Per-try timeout and number of tries (defaults 2000 ms, 2).  Only before
 * the first query; returns -1 after it.
 */
int		 resolver_set_timeouts(struct resolver *, int, int);
/*
 * Hand resolver_raw()'s callers the first answer whatever its rcode
 * (REFUSED, SERVFAIL, ...), which otherwise sends the question to the
 * next server and, the last one failing too, says only that none
 * answered: for pinhole doctor, to name the rcode.  Before any query;
 * 0, or -1.
 */
int		 resolver_every_answer(struct resolver *);

/*
 * Look up A and AAAA for a canonical name (no search domains; /etc/hosts
 * before upstream, its answers cached for a minute like upstream ones).
 * Returns NULL only when out of memory; the callback is then never
 * called.
 */
struct resolver_query *resolver_lookup(struct resolver *, const char *,
		    resolver_cb, void *);

/* Send one question upstream (class IN) and hand back the raw answer. */
struct resolver_query *resolver_raw(struct resolver *, const char *, int,
		    resolver_raw_cb, void *);

/*
 * Forget every cached answer (when the policy changed what may be
 * resolved, or how): each name is asked for again.  Answers already on
 * their way reach their queries but are not kept.
 */
void		 resolver_flush(struct resolver *);

/* Time upstream questions, count failures and cache hits in m (NULL: not). */
void		 resolver_set_metrics(struct resolver *, struct metrics *);

/* Forget a query: its callback will not be called. */
void		 resolver_cancel(struct resolver_query *);

#endif
