/*
 * The metrics listener: GET /metrics answered with the exposition of a
 * struct metrics (lib/metrics.h), on the gateway's event base.  One
 * request per connection, its head bounded and parsed by
 * http_request_parse(); the answer is written from the counters as
 * they are, so a scrape costs the same however many connections run.
 */
#ifndef SCRAPE_H
#define SCRAPE_H

#include <stddef.h>

struct event_base;
struct metrics;
struct scrape;

#define SCRAPE_HEAD_MAX		4096	/* request-head bytes */
#define SCRAPE_HEADERS_MAX	32
#define SCRAPE_CLIENTS_MAX	16	/* at once; more are closed */
#define SCRAPE_TIMEOUT		5	/* s to send the head, take the answer */

/*
 * Listen on "ADDR:PORT" and serve m (the caller's).  NULL with err set.
 */
struct scrape	*scrape_start(struct event_base *, const char *,
		    const struct metrics *, char *, size_t);
void		 scrape_stop(struct scrape *);

#endif
