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
struct metrics_ship;
struct scrape;

/* Fill at most max shipping destinations' counts; how many. */
typedef size_t	scrape_ships_fn(void *, struct metrics_ship *, size_t);

#define SCRAPE_HEAD_MAX		4096	/* request-head bytes */
#define SCRAPE_HEADERS_MAX	32
#define SCRAPE_CLIENTS_MAX	16	/* at once; more are closed */
#define SCRAPE_TIMEOUT		5	/* s to send the head, take the answer */

/*
 * Listen on "ADDR:PORT" and serve m (the caller's).  NULL with err set.
 */
struct scrape	*scrape_start(struct event_base *, const char *,
		    const struct metrics *, char *, size_t);
/* Ask fn, at each scrape, for the shipping destinations' counts. */
void		 scrape_set_ships(struct scrape *, scrape_ships_fn *, void *);
void		 scrape_stop(struct scrape *);

#endif
