/*
 * The metrics listener: one bounded request head per connection,
 * parsed strictly, one answer, then the connection is closed once the
 * answer has drained.
 */
#include "config.h"

#include <sys/queue.h>
#include <sys/socket.h>

#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>

#include "lib/log.h"
#include "lib/metrics.h"
#include "proxy/scrape.h"
#include "proxy/wire/http.h"
#include "rules/rules.h"

struct scrape_client {
	struct scrape			*s;
	struct bufferevent		*bev;
	int				 answered;
	TAILQ_ENTRY(scrape_client)	 entry;
};

struct scrape {
	struct evconnlistener		*l;
	const struct metrics		*m;
	scrape_ships_fn			*ships;
	void				*ships_arg;
	size_t				 n;
	TAILQ_HEAD(, scrape_client)	 clients;
};

/* Close a client: the one way out. */
static void
scrape_client_free(struct scrape_client *sc)
{
	TAILQ_REMOVE(&sc->s->clients, sc, entry);
	sc->s->n--;
	bufferevent_free(sc->bev);
	free(sc);
}

/* Queue the answer: a status, and a body (NULL: the status's text). */
static void
scrape_answer(struct scrape_client *sc, int status, const char *type,
    const char *body, size_t len)
{
	struct evbuffer	*out = bufferevent_get_output(sc->bev);
	const char	*text = http_status_text(status);
	char		 line[128];

	if (body == NULL) {
		snprintf(line, sizeof line, "%d %s\n", status, text);
		body = line;
		len = strlen(line);
		type = "text/plain; charset=utf-8";
	}
	evbuffer_add_printf(out, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\n"
	    "Content-Length: %zu\r\n%sConnection: close\r\n\r\n", status, text,
	    type, len, status == 405 ? "Allow: GET\r\n" : "");
	evbuffer_add(out, body, len);
	sc->answered = 1;
	bufferevent_disable(sc->bev, EV_READ);
	bufferevent_enable(sc->bev, EV_WRITE);
}

/* Answer GET /metrics with the exposition. */
static void
scrape_metrics(struct scrape_client *sc)
{
	struct scrape		*s = sc->s;
	struct metrics_ship	 ships[METRICS_SHIPS_MAX];
	char			*text;
	size_t			 len, n = 0;

	if ((text = malloc(METRICS_TEXT_MAX)) == NULL) {
		scrape_answer(sc, 503, NULL, NULL, 0);
		return;
	}
	if (s->ships != NULL)
		n = s->ships(s->ships_arg, ships, METRICS_SHIPS_MAX);
	if ((len = metrics_write(s->m, ships, n, text, METRICS_TEXT_MAX)) >=
	    METRICS_TEXT_MAX) {
		log_warnx("%s: the metrics do not fit", __func__);
		scrape_answer(sc, 500, NULL, NULL, 0);
	} else
		scrape_answer(sc, 200, "text/plain; version=0.0.4; "
		    "charset=utf-8", text, len);
	free(text);
}

/* Decide what a whole request head asks for, and answer it. */
static void
scrape_request(struct scrape_client *sc, const char *head, size_t len)
{
	const struct http_limits	 lim = { SCRAPE_HEAD_MAX,
					    SCRAPE_HEADERS_MAX };
	struct http_request		*r;
	int				 st;

	if ((r = malloc(sizeof *r)) == NULL) {
		scrape_answer(sc, 503, NULL, NULL, 0);
		return;
	}
	if ((st = http_request_route(head, len, &lim, "/metrics", r)) != 200)
		scrape_answer(sc, st, NULL, NULL, 0);
	else
		scrape_metrics(sc);
	free(r);
}

/* Bytes came: answer once the head is whole, or refuse a head too big. */
static void
scrape_read_cb(struct bufferevent *bev, void *arg)
{
	struct scrape_client	*sc = arg;
	struct evbuffer		*in = bufferevent_get_input(bev);
	struct http_scan	 scan;
	size_t			 len = evbuffer_get_length(in), end;
	char			*p;

	if (sc->answered)
		return;
	if (len > SCRAPE_HEAD_MAX)
		len = SCRAPE_HEAD_MAX;
	if ((p = (char *)evbuffer_pullup(in, len)) == NULL) {
		scrape_client_free(sc);
		return;
	}
	http_scan_init(&scan);
	if ((end = http_scan_feed(&scan, p, len)) != 0)
		scrape_request(sc, p, end);
	else if (len == SCRAPE_HEAD_MAX)
		scrape_answer(sc, 431, NULL, NULL, 0);
}

/* The answer has drained: close. */
static void
scrape_write_cb(struct bufferevent *bev, void *arg)
{
	struct scrape_client	*sc = arg;

	if (sc->answered)
		scrape_client_free(sc);
}

/* End of file, an error or a timeout: close. */
static void
scrape_event_cb(struct bufferevent *bev, short what, void *arg)
{
	scrape_client_free(arg);
}

/* A new scraper. */
static void
scrape_accept_cb(struct evconnlistener *l, evutil_socket_t fd,
    struct sockaddr *sa, int salen, void *arg)
{
	struct scrape		*s = arg;
	struct scrape_client	*sc;
	struct timeval		 tv = { SCRAPE_TIMEOUT, 0 };

	if (s->n >= SCRAPE_CLIENTS_MAX || (sc = calloc(1, sizeof *sc)) ==
	    NULL) {
		evutil_closesocket(fd);
		return;
	}
	sc->s = s;
	sc->bev = bufferevent_socket_new(evconnlistener_get_base(l), fd,
	    BEV_OPT_CLOSE_ON_FREE);
	if (sc->bev == NULL) {
		evutil_closesocket(fd);
		free(sc);
		return;
	}
	TAILQ_INSERT_TAIL(&s->clients, sc, entry);
	s->n++;
	bufferevent_setcb(sc->bev, scrape_read_cb, scrape_write_cb,
	    scrape_event_cb, sc);
	bufferevent_setwatermark(sc->bev, EV_READ, 0, SCRAPE_HEAD_MAX);
	bufferevent_set_timeouts(sc->bev, &tv, &tv);
	bufferevent_enable(sc->bev, EV_READ);
}

/* accept() failed: say so; the listener goes on. */
static void
scrape_error_cb(struct evconnlistener *l, void *arg)
{
	log_warn("%s: accept", __func__);
}

/* Listen for scrapers on "ADDR:PORT". */
struct scrape *
scrape_start(struct event_base *base, const char *spec,
    const struct metrics *m, char *err, size_t errlen)
{
	struct addrinfo	*ai;
	struct scrape	*s;

	if ((ai = addr_port_addrinfo(spec, SOCK_STREAM, err, errlen)) == NULL)
		return (NULL);
	if ((s = calloc(1, sizeof *s)) == NULL) {
		snprintf(err, errlen, "out of memory");
		freeaddrinfo(ai);
		return (NULL);
	}
	TAILQ_INIT(&s->clients);
	s->m = m;
	s->l = evconnlistener_new_bind(base, scrape_accept_cb, s,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC | LEV_OPT_REUSEABLE,
	    64, ai->ai_addr, ai->ai_addrlen);
	freeaddrinfo(ai);
	if (s->l == NULL) {
		snprintf(err, errlen, "%s: %s", spec, strerror(errno));
		free(s);
		return (NULL);
	}
	evconnlistener_set_error_cb(s->l, scrape_error_cb);
	return (s);
}

/* Ask fn, at each scrape, for the shipping destinations' counts. */
void
scrape_set_ships(struct scrape *s, scrape_ships_fn *fn, void *arg)
{
	s->ships = fn;
	s->ships_arg = arg;
}

/* Stop listening and close the scrapers. */
void
scrape_stop(struct scrape *s)
{
	if (s == NULL)
		return;
	while (!TAILQ_EMPTY(&s->clients))
		scrape_client_free(TAILQ_FIRST(&s->clients));
	evconnlistener_free(s->l);
	free(s);
}
