/*
 * Shipping the audit log to an OpenTelemetry collector over OTLP/HTTP
 * with JSON, plain or over TLS (otlp.h): the second transport on the
 * shipping spool.
 *
 * Lines go to the spool first.  A batch is the lines from the spool's
 * head, up to OTLP_BATCH_LINES of them, sent once that many wait or
 * OTLP_BATCH_MS after the first; it leaves the spool when the collector
 * answers 2xx (records it rejected in a partial success are counted and
 * said, as it took them).  One request is in flight at a time, on one
 * kept-alive connection.  A failed connection, a timeout, 429, 502, 503
 * and 504 send the same batch again after a delay that doubles (to a
 * cap), or after the Retry-After the collector gave; any other answer
 * drops the batch from the spool, counted and said on stderr (the lines
 * stay in the local log).
 */
#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>


#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>

#include <openssl/ssl.h>

#include "lib/json.h"
#include "lib/log.h"
#include "proxy/audit/collector.h"
#include "proxy/audit/otlp.h"
#include "proxy/audit/spool.h"
#include "proxy/audit/transport.h"

#define OTLP_BATCH_LINES	512
#define OTLP_BATCH_MS		200
#define OTLP_READ_MAX		(1024 * 1024)	/* spool bytes a batch */
#define OTLP_REQ_MAX		(8 * 1024 * 1024)	/* its JSON; lines are
						   added below half of it */
#define OTLP_TIMEOUT_S		10
#define OTLP_BACKOFF_MIN_MS	250
#define OTLP_BACKOFF_MAX_MS	30000
#define OTLP_PATH_MAX		256

struct otlp_stats {
	uint64_t	delivered;	/* records the collector took */
	uint64_t	rejected;	/* it took but rejected (partialSuccess) */
	uint64_t	refused;	/* in requests it refused: 4xx, 5xx */
	uint64_t	retries;	/* requests sent again */
	uint64_t	connects;	/* connections made */
};

enum otlp_state {
	OTLP_DOWN,		/* no connection */
	OTLP_CONNECTING,
	OTLP_IDLE,		/* connected, nothing in flight */
	OTLP_WAITING		/* a request in flight */
};

struct otlp {
	struct event_base	*base;
	struct collector	 col;
	int			 tls;		/* otlp+https:// */
	char			 path[OTLP_PATH_MAX];
	struct addrinfo		*cur;		/* the address tried next */
	struct spool		*spool;
	char			 hostname[256];

	enum otlp_state		 state;
	struct bufferevent	*bev;
	struct event		*tick;		/* batch timer, or backoff */
	int			 backoff;	/* a retry is due at tick */
	int			 stopping;	/* otlp_stop(): send at once */
	int			 backoff_ms;
	int			 failing;	/* said so; not yet delivering */
	char			 why[256];

	uint64_t		 batch_end;	/* spool offset after the batch */
	size_t			 batch_lines;
	uint64_t		 waiting;	/* lines appended, not in a batch */

	struct otlp_stats	 st;
	char			*rbuf;
	char			*store;
	struct json_writer	 req;
};

static void	otlp_connect(struct otlp *);
static void	otlp_send(struct otlp *);
static void	otlp_tick_cb(evutil_socket_t, short, void *);

/* Tell whether a --log value names an OTLP collector. */
int
otlp_is_dest(const char *s)
{
	return (strncmp(s, "otlp+http://", 12) == 0 ||
	    strncmp(s, "otlp+https://", 13) == 0);
}

/* Split "HOST:PORT[/PATH]" ([v6]:PORT) and resolve it, once. */
static int
otlp_resolve(struct otlp *o, const char *dest, char *err, size_t errlen)
{
	const char	*hp, *slash, *p;
	const char	*usage = "otlp+http://HOST:PORT[/PATH] or "
			    "otlp+https://HOST:PORT[/PATH]";

	hp = dest + (o->tls ? 13 : 12);
	if ((slash = strchr(hp, '/')) == NULL)
		slash = hp + strlen(hp);
	snprintf(o->path, sizeof o->path, "%s", *slash ? slash : "/v1/logs");
	for (p = o->path; *p != '\0'; p++)
		if (*p <= ' ' || *p >= 0x7f)
			break;
	if (*p != '\0' || strlen(slash) >= sizeof o->path) {
		snprintf(err, errlen, "%s: give %s", dest, usage);
		return (-1);
	}
	if (collector_open(&o->col, dest, hp, slash - hp, usage, err,
	    errlen) == -1)
		return (-1);
	o->cur = o->col.ai;
	return (0);
}

/* Open a collector and its spool; send what an earlier run left. */
struct otlp *
otlp_open(struct event_base *base, const char *dest,
    const struct ship_config *cfg, char *err, size_t errlen)
{
	struct otlp	*o;
	char		 name[SPOOL_NAME_MAX];

	if (!otlp_is_dest(dest)) {
		snprintf(err, errlen, "%s: not otlp+http:// or otlp+https://",
		    dest);
		return (NULL);
	}
	if ((o = calloc(1, sizeof *o)) == NULL)
		goto nomem;
	o->base = base;
	o->backoff_ms = OTLP_BACKOFF_MIN_MS;
	json_writer_init(&o->req, OTLP_REQ_MAX);
	if ((o->rbuf = malloc(OTLP_READ_MAX)) == NULL ||
	    (o->store = malloc(OTLP_READ_MAX)) == NULL ||
	    (o->tick = evtimer_new(base, otlp_tick_cb, o)) == NULL)
		goto nomem;
	o->tls = strncmp(dest, "otlp+https://", 13) == 0;
	if (otlp_resolve(o, dest, err, errlen) == -1 || (o->tls &&
	    collector_tls(&o->col, cfg->ca, cfg->cert, cfg->key, err,
	    errlen) == -1))
		goto fail;
	spool_name(dest, name, sizeof name);
	if ((o->spool = spool_open(cfg->spool_dir, name, cfg->spool_max, err,
	    errlen)) == NULL)
		goto fail;
	if (gethostname(o->hostname, sizeof o->hostname) == -1)
		o->hostname[0] = '\0';
	o->hostname[sizeof o->hostname - 1] = '\0';
	if (spool_head(o->spool) != spool_tail(o->spool))
		otlp_connect(o);
	return (o);
nomem:
	snprintf(err, errlen, "%s: out of memory", dest);
fail:
	otlp_close(o);
	return (NULL);
}

/* Close a collector, saying what it delivered and what waits. */
void
otlp_close(struct otlp *o)
{
	struct spool_stats	st;

	if (o == NULL)
		return;
	if (o->spool != NULL) {
		spool_say_left(o->spool, o->col.dest, o->failing ? o->why :
		    NULL);
		spool_stats(o->spool, &st);
		log_info("audit shipping: %s: %llu record(s) delivered, %llu "
		    "rejected, %llu refused, %llu bytes wait in the spool, "
		    "%llu line(s) not kept (spool full)", o->col.dest,
		    (unsigned long long)o->st.delivered,
		    (unsigned long long)o->st.rejected,
		    (unsigned long long)o->st.refused,
		    (unsigned long long)st.pending,
		    (unsigned long long)st.dropped);
	}
	if (o->bev != NULL)
		bufferevent_free(o->bev);
	if (o->tick != NULL)
		event_free(o->tick);
	collector_close(&o->col);
	spool_close(o->spool);
	json_writer_free(&o->req);
	free(o->store);
	free(o->rbuf);
	free(o);
}

/* Arm the timer. */
static void
otlp_schedule(struct otlp *o, int ms)
{
	struct timeval	tv;

	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	evtimer_add(o->tick, &tv);
}

/* Wait before sending the batch again: Retry-After, or the backoff. */
static void
otlp_retry(struct otlp *o, const char *why, int retry_after)
{
	int	ms = retry_after >= 0 ? retry_after * 1000 : o->backoff_ms;

	if (o->stopping)
		ms = OTLP_BACKOFF_MIN_MS;	/* the time left is short */

	if (!o->failing || strcmp(why, o->why) != 0)
		log_warnx("audit shipping: %s: %s; lines wait in the spool, "
		    "sending again in %d ms", o->col.dest, why, ms);
	snprintf(o->why, sizeof o->why, "%s", why);
	o->failing = 1;
	o->st.retries++;
	o->backoff = 1;
	evtimer_del(o->tick);
	otlp_schedule(o, ms);
	o->backoff_ms *= 2;
	if (o->backoff_ms > OTLP_BACKOFF_MAX_MS)
		o->backoff_ms = OTLP_BACKOFF_MAX_MS;
}

/* The connection is gone; a request in flight is sent again later. */
static void
otlp_down(struct otlp *o, const char *why)
{
	enum otlp_state	was = o->state;

	if (o->bev != NULL)
		bufferevent_free(o->bev);
	o->bev = NULL;
	o->state = OTLP_DOWN;
	if (was == OTLP_IDLE)
		return;		/* a kept connection closed while unused */
	if (was == OTLP_CONNECTING)
		o->cur = o->cur->ai_next != NULL ? o->cur->ai_next : o->col.ai;
	otlp_retry(o, why, -1);
}

/*
 * The batch is done with: forget it from the spool; send the next at
 * once when a backlog waits, else when the batch timer says.
 */
static void
otlp_done(struct otlp *o)
{
	int	full = o->batch_lines == OTLP_BATCH_LINES;

	if (spool_ack(o->spool, o->batch_end) == -1)
		log_warn("audit shipping: %s: spool mark", o->col.dest);
	o->batch_lines = 0;
	if (spool_head(o->spool) != spool_tail(o->spool) &&
	    (full || o->waiting >= OTLP_BATCH_LINES || o->stopping))
		otlp_send(o);
	else if (spool_head(o->spool) != spool_tail(o->spool) &&
	    !evtimer_pending(o->tick, NULL))
		otlp_schedule(o, OTLP_BATCH_MS);
}

/* The collector took the batch. */
static void
otlp_took(struct otlp *o, const char *body, size_t len)
{
	char		 msg[256];
	long long	 rej;

	rej = otlp_resp_rejected(body, len, msg, sizeof msg);
	if (rej == -1)
		log_warnx("audit shipping: %s: the collector's answer is not "
		    "an ExportLogsServiceResponse; taken as delivered",
		    o->col.dest);
	else if (rej > 0) {
		o->st.rejected += rej;
		log_warnx("audit shipping: %s: the collector rejected %lld "
		    "of %zu record(s): %s (they are in the local log)",
		    o->col.dest, rej, o->batch_lines,
		    msg[0] ? msg : "no reason");
	}
	o->st.delivered += o->batch_lines - (rej > 0 ? rej : 0);
	o->backoff_ms = OTLP_BACKOFF_MIN_MS;
	if (o->failing) {
		log_info("audit shipping: %s: delivering again", o->col.dest);
		o->failing = 0;
	}
	otlp_done(o);
}

/* Act on the collector's answer to the batch. */
static void
otlp_answer(struct otlp *o, const struct otlp_resp *r, const char *body,
    size_t len)
{
	char	why[64];

	if (r->status >= 200 && r->status <= 299) {
		otlp_took(o, body, len);
		return;
	}
	if (r->status == 429 || r->status == 502 || r->status == 503 ||
	    r->status == 504) {
		snprintf(why, sizeof why, "the collector answered %d",
		    r->status);
		otlp_retry(o, why, r->retry_after);
		return;
	}
	o->st.refused += o->batch_lines;
	log_warnx("audit shipping: %s: the collector answered %d: %zu "
	    "record(s) not sent again, %llu so far (they are in the local "
	    "log)", o->col.dest, r->status, o->batch_lines,
	    (unsigned long long)o->st.refused);
	otlp_done(o);
}

/* Tell whether a connection can carry the next request after this answer. */
static int
otlp_keep(const struct otlp_resp *r)
{
	if (r->close || r->chunked)
		return (0);
	return (r->length >= 0 || r->status == 204);
}

/* Read the answer once it is whole; act on it. */
static void
otlp_read_cb(struct bufferevent *bev, void *arg)
{
	struct otlp		*o = arg;
	struct evbuffer		*in = bufferevent_get_input(bev);
	struct otlp_resp	 r;
	char			 body[OTLP_BODY_MAX], *p;
	size_t			 have = evbuffer_get_length(in), n, blen;
	ssize_t			 head;

	if (o->state != OTLP_WAITING) {
		otlp_down(o, "the collector spoke unasked");
		return;
	}
	n = have < OTLP_HEAD_MAX ? have : OTLP_HEAD_MAX;
	p = (char *)evbuffer_pullup(in, n);
	if ((head = otlp_resp_parse(p, n, &r)) == -1) {
		otlp_down(o, "the collector's answer is not HTTP/1.1");
		return;
	}
	if (head == 0)
		return;
	blen = r.length > 0 ? (size_t)r.length : 0;
	if (have < (size_t)head + blen)
		return;
	p = (char *)evbuffer_pullup(in, head + blen);
	memcpy(body, p + head, blen);
	evbuffer_drain(in, head + blen);
	if (!otlp_keep(&r) || evbuffer_get_length(in) != 0) {
		bufferevent_free(o->bev);
		o->bev = NULL;
		o->state = OTLP_DOWN;
	} else {
		o->state = OTLP_IDLE;
		bufferevent_set_timeouts(bev, NULL, NULL);
	}
	otlp_answer(o, &r, body, blen);
}

/* The connection is up, closed or failed. */
static void
otlp_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct otlp	*o = arg;
	char		 why[256];
	int		 e = EVUTIL_SOCKET_ERROR();

	(void)bev;
	if (what & BEV_EVENT_CONNECTED) {
		o->state = OTLP_IDLE;
		o->st.connects++;
		otlp_send(o);
		return;
	}
	if (what & BEV_EVENT_EOF)
		snprintf(why, sizeof why, "the collector closed the "
		    "connection");
	else if (what & BEV_EVENT_TIMEOUT)
		snprintf(why, sizeof why, "no answer in %d s", OTLP_TIMEOUT_S);
	else
		snprintf(why, sizeof why, "%s", e != 0 ?
		    evutil_socket_error_to_string(e) : "connection failed");
	if (o->tls && !(what & (BEV_EVENT_EOF | BEV_EVENT_TIMEOUT)))
		collector_tls_why(o->bev, why, sizeof why);
	otlp_down(o, why);
}

/* Connect to the collector. */
static void
otlp_connect(struct otlp *o)
{
	struct timeval	 tv = { OTLP_TIMEOUT_S, 0 };
	SSL		*ssl;

	o->state = OTLP_CONNECTING;
	if (!o->tls)
		o->bev = bufferevent_socket_new(o->base, -1,
		    BEV_OPT_CLOSE_ON_FREE);
	else if ((ssl = collector_ssl(&o->col)) != NULL) {
		/* On failure libevent has freed ssl (BEV_OPT_CLOSE_ON_FREE). */
		o->bev = bufferevent_openssl_socket_new(o->base, -1, ssl,
		    BUFFEREVENT_SSL_CONNECTING, BEV_OPT_CLOSE_ON_FREE);
		if (o->bev != NULL)
			bufferevent_openssl_set_allow_dirty_shutdown(o->bev, 1);
	}
	if (o->bev == NULL) {
		otlp_down(o, "out of memory");
		return;
	}
	bufferevent_setcb(o->bev, otlp_read_cb, NULL, otlp_event_cb, o);
	bufferevent_set_timeouts(o->bev, &tv, &tv);
	bufferevent_enable(o->bev, EV_READ | EV_WRITE);
	if (bufferevent_socket_connect(o->bev, o->cur->ai_addr,
	    o->cur->ai_addrlen) == -1)
		otlp_down(o, strerror(errno));
}

/* Encode the lines at the spool's head; their count. */
static size_t
otlp_encode(struct otlp *o)
{
	struct otlp_resource	 res = { PACKAGE_VERSION, o->hostname };
	uint64_t		 off = spool_head(o->spool);
	ssize_t			 n;
	size_t			 lines = 0, left;
	char			*p, *nl;

	json_writer_free(&o->req);
	json_writer_init(&o->req, OTLP_REQ_MAX);
	otlp_batch_begin(&o->req, &res);
	if ((n = spool_read(o->spool, off, o->rbuf, OTLP_READ_MAX)) <= 0)
		return (0);
	for (p = o->rbuf, left = n; left > 0 && lines < OTLP_BATCH_LINES &&
	    o->req.len < OTLP_REQ_MAX / 2 &&
	    (nl = memchr(p, '\n', left)) != NULL; lines++) {
		otlp_record(&o->req, p, nl - p + 1, o->store, OTLP_READ_MAX);
		left -= nl - p + 1;
		p = nl + 1;
	}
	otlp_batch_end(&o->req);
	o->batch_end = off + (p - o->rbuf);
	return (o->req.failed ? 0 : lines);
}

/* Send the batch at the spool's head, connecting first if need be. */
static void
otlp_send(struct otlp *o)
{
	struct timeval	 tv = { OTLP_TIMEOUT_S, 0 };
	struct evbuffer	*out;

	evtimer_del(o->tick);
	o->backoff = 0;
	if (o->state == OTLP_DOWN) {
		otlp_connect(o);
		return;
	}
	if (o->state != OTLP_IDLE || spool_head(o->spool) ==
	    spool_tail(o->spool))
		return;
	if ((o->batch_lines = otlp_encode(o)) == 0) {
		log_warnx("audit shipping: %s: the spool cannot be read or "
		    "encoded", o->col.dest);
		otlp_retry(o, "spool", -1);
		return;
	}
	o->waiting = o->waiting > o->batch_lines ?
	    o->waiting - o->batch_lines : 0;
	out = bufferevent_get_output(o->bev);
	evbuffer_add_printf(out, "POST %s HTTP/1.1\r\nHost: %s\r\n"
	    "User-Agent: pinhole/%s\r\nContent-Type: application/json\r\n"
	    "Content-Length: %zu\r\n\r\n", o->path, o->col.hostport,
	    PACKAGE_VERSION, o->req.len);
	evbuffer_add(out, o->req.buf, o->req.len);
	bufferevent_set_timeouts(o->bev, &tv, &tv);
	o->state = OTLP_WAITING;
}

/* The timer: a batch is due, or a retry. */
static void
otlp_tick_cb(evutil_socket_t fd, short what, void *arg)
{
	struct otlp	*o = arg;

	(void)fd;
	(void)what;
	otlp_send(o);
}

/* Hand on finished lines: spool them; send a full batch at once. */
void
otlp_lines(struct otlp *o, const char *lines, size_t len)
{
	uint64_t	kept;

	if ((kept = spool_take(o->spool, o->col.dest, lines, len)) == 0)
		return;
	o->waiting += kept;
	if (o->backoff || o->state == OTLP_WAITING ||
	    o->state == OTLP_CONNECTING)
		return;
	if (o->waiting >= OTLP_BATCH_LINES)
		otlp_send(o);
	else if (!evtimer_pending(o->tick, NULL))
		otlp_schedule(o, OTLP_BATCH_MS);
}

/*
 * The gateway stops: send what waits at once, without waiting for the
 * batch timer, connecting if need be; a failure is tried again after
 * OTLP_BACKOFF_MIN_MS.
 */
void
otlp_stop(struct otlp *o)
{
	o->stopping = 1;
	o->backoff_ms = OTLP_BACKOFF_MIN_MS;
	if (spool_head(o->spool) == spool_tail(o->spool) ||
	    o->state == OTLP_WAITING || o->state == OTLP_CONNECTING)
		return;
	otlp_send(o);
}

/* Tell whether lines wait to be delivered. */
int
otlp_busy(const struct otlp *o)
{
	return (spool_head(o->spool) != spool_tail(o->spool));
}

/* Read its counts, and its spool's. */
void
otlp_stats(const struct otlp *o, struct ship_stats *st)
{
	struct spool_stats	sp;

	spool_stats(o->spool, &sp);
	memset(st, 0, sizeof *st);
	st->delivered = o->st.delivered;
	st->pending = sp.pending;
	st->dropped = sp.dropped;
	st->connects = o->st.connects;
	st->otlp = 1;
	st->rejected = o->st.rejected;
	st->refused = o->st.refused;
}
