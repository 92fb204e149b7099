/*
 * Shipping the audit log over syslog's TCP or TLS transport, or RELP
 * (ship.h).
 *
 * Lines go to the spool first; the connection sends them from there, in
 * order, as octet-counted RFC 5424 messages, or as RELP "syslog"
 * commands.  RELP answers each command once the collector has taken it:
 * a line is delivered when its answer comes (ship_relp_read()), and what
 * was not answered is sent again on the next connection, so a collector
 * that stops in the middle of traffic gets every line once.
 *
 * Syslog has no acknowledgement of its own, so delivery is taken from
 * TCP: each line
 * sent is remembered with the offset in the byte stream where its last
 * byte went (the TLS records' bytes, for TLS), and it is delivered once
 * the collector's kernel has acknowledged the stream that far
 * (TCP_INFO's tcpi_bytes_acked, which a reset connection keeps).  A
 * collector never speaks on this connection, so a readable socket means
 * it closed or reset: what is not acknowledged is sent again on the
 * next connection, from the first line not acknowledged.  After a reset,
 * and after any close of a TLS connection, what was acknowledged in the
 * last SHIP_REPLAY_MS goes again too (ship_event_cb()).
 *
 * The stream offset of a line is known once the layer above the socket
 * holds none of it: for TLS, once TLS has taken its last byte from the
 * filter's output (and put the records into the socket's output).  The
 * offset taken then is at or after the line's true end, never before.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>

#include <linux/tcp.h>
#include <netinet/in.h>

#include <errno.h>
#include <netdb.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>

#include <openssl/ssl.h>

#include "lib/clock.h"
#include "lib/log.h"
#include "proxy/audit/collector.h"
#include "proxy/audit/otlp.h"
#include "proxy/audit/relp.h"
#include "proxy/audit/ship.h"
#include "proxy/audit/sink.h"
#include "proxy/audit/spool.h"

#define SHIP_LINE_MAX	(256 * 1024)	/* longer than any audit line */
#define SHIP_HEAD	RELP_HEAD_MAX	/* room for a frame's head */
#define SHIP_MSG_MAX	(SHIP_LINE_MAX * 3 + SHIP_HEAD + 1)
#define SHIP_INFLIGHT	16384		/* lines sent, not yet forgotten */
#define SHIP_HIWAT	(256 * 1024)	/* bytes queued before waiting */
#define SHIP_POLL_MS	10		/* acknowledgements looked at */
#define SHIP_REPLAY_MS	250		/* sent again after a reset */
#define SHIP_BACKOFF_MIN_MS	250
#define SHIP_BACKOFF_MAX_MS	30000
#define SHIP_CONNECT_S	10		/* to connect and shake hands */
#define SHIP_UNKNOWN	UINT64_MAX	/* stream offset not known yet */

enum ship_state {
	SHIP_DOWN,		/* waiting to connect again */
	SHIP_CONNECTING,	/* TCP, then TLS */
	SHIP_OPENING,		/* RELP: "open" sent, its answer awaited */
	SHIP_UP,
	SHIP_CLOSING		/* RELP: "close" sent; the collector closes */
};

struct ship_sent {
	uint64_t	 spool_end;	/* spool offset after the line */
	uint64_t	 wire_end;	/* stream offset after it */
	uint64_t	 clear_end;	/* TLS: offset in the clear stream */
	uint64_t	 acked_at;	/* mono_ms() it was acknowledged, or 0 */
	uint32_t	 txnr;		/* RELP: its command's; 0 not sent */
};

struct ship {
	struct event_base	*base;
	struct collector	 col;
	int			 tls;
	int			 relp;
	uint32_t		 txnr;		/* RELP: the next command's */
	int			 stopping;	/* ship_stop() was called */
	struct addrinfo		*cur;		/* the address tried now */
	struct spool		*spool;
	char			 hostname[256];

	enum ship_state		 state;
	struct bufferevent	*sock;	/* the socket's */
	struct bufferevent	*bev;	/* what lines are written to */
	struct event		*tick;	/* reconnect, or look at acks */
	int			 backoff_ms;
	int			 failing;	/* said so; not yet delivering */
	char			 why[256];	/* the last failure */

	uint64_t		 next;		/* spool offset to send from */
	uint64_t		 wire;		/* stream bytes queued so far */
	uint64_t		 clear;		/* TLS: bytes written to the filter */
	uint64_t		 encrypted;	/* and taken from it by TLS */
	uint64_t		 ack_base;	/* tcpi_bytes_acked at connect */
	struct ship_sent	*ring;
	size_t			 ring_head;
	size_t			 ring_n;
	size_t			 nacked;	/* the first ring_n acknowledged */
	size_t			 unsettled;	/* last lines, offset unknown */

	uint64_t		 delivered;
	uint64_t		 connects;
	char			*rbuf;
	char			*store;
	char			*msg;
	struct otlp		*otlp;	/* or OTLP/HTTP (otlpship.c) */
};

static void	ship_connect(struct ship *);
static void	ship_fill(struct ship *);
static void	ship_tick_cb(evutil_socket_t, short, void *);
static void	ship_check_acks(struct ship *);
static void	ship_release(struct ship *, uint64_t);
static void	ship_delivering(struct ship *);
static void	ship_relp_open(struct ship *);
static void	ship_relp_close(struct ship *);

static const struct ship_scheme {
	const char	*prefix;
	int		 tls;
	int		 relp;
} ship_schemes[] = {
	{ "syslog+tcp://",	0, 0 },
	{ "syslog+tls://",	1, 0 },
	{ "syslog+relp://",	0, 1 },
	{ "syslog+relp+tls://",	1, 1 },
};

/* The syslog scheme a --log value starts with, or NULL. */
static const struct ship_scheme *
ship_scheme(const char *s)
{
	size_t	i;

	for (i = 0; i < sizeof ship_schemes / sizeof ship_schemes[0]; i++)
		if (strncmp(s, ship_schemes[i].prefix,
		    strlen(ship_schemes[i].prefix)) == 0)
			return (&ship_schemes[i]);
	return (NULL);
}

/* Tell whether a --log value names a shipping destination. */
int
ship_is_dest(const char *s)
{
	return (ship_scheme(s) != NULL || otlp_is_dest(s));
}

/* Open a destination and its spool; connect at once. */
struct ship *
ship_open(struct event_base *base, const char *dest,
    const struct ship_config *cfg, char *err, size_t errlen)
{
	const struct ship_scheme	*sc;
	struct ship			*s;
	const char			*hp;
	char				 name[SPOOL_NAME_MAX];

	if (!ship_is_dest(dest)) {
		snprintf(err, errlen, "%s: not syslog+tcp://, syslog+tls://, "
		    "syslog+relp:// or syslog+relp+tls://", dest);
		return (NULL);
	}
	if ((s = calloc(1, sizeof *s)) == NULL)
		goto nomem;
	if (otlp_is_dest(dest)) {
		if ((s->otlp = otlp_open(base, dest, cfg, err, errlen)) == NULL)
			goto fail;
		return (s);
	}
	sc = ship_scheme(dest);
	hp = dest + strlen(sc->prefix);
	s->base = base;
	s->tls = sc->tls;
	s->relp = sc->relp;
	s->backoff_ms = SHIP_BACKOFF_MIN_MS;
	if ((s->ring = calloc(SHIP_INFLIGHT, sizeof *s->ring)) == NULL ||
	    (s->rbuf = malloc(SHIP_LINE_MAX)) == NULL ||
	    (s->store = malloc(SHIP_LINE_MAX)) == NULL ||
	    (s->msg = malloc(SHIP_MSG_MAX)) == NULL ||
	    (s->tick = evtimer_new(base, ship_tick_cb, s)) == NULL)
		goto nomem;
	if (collector_open(&s->col, dest, hp, strlen(hp),
	    "HOST:PORT", err, errlen) == -1 || (s->tls &&
	    collector_tls(&s->col, cfg->ca, cfg->cert, cfg->key, err,
	    errlen) == -1))
		goto fail;
	spool_name(dest, name, sizeof name);
	if ((s->spool = spool_open(cfg->spool_dir, name, cfg->spool_max, err,
	    errlen)) == NULL)
		goto fail;
	if (gethostname(s->hostname, sizeof s->hostname) == -1)
		snprintf(s->hostname, sizeof s->hostname, "-");
	s->hostname[sizeof s->hostname - 1] = '\0';
	s->next = spool_head(s->spool);
	ship_connect(s);
	return (s);
nomem:
	snprintf(err, errlen, "%s: out of memory", dest);
fail:
	ship_close(s);
	return (NULL);
}

/* Free the connection, if any. */
static void
ship_drop_conn(struct ship *s)
{
	if (s->bev != NULL && s->bev != s->sock)
		bufferevent_free(s->bev);	/* frees the socket's too */
	else if (s->sock != NULL)
		bufferevent_free(s->sock);
	s->bev = s->sock = NULL;
}

/* Close a destination, saying what it delivered and what waits. */
void
ship_close(struct ship *s)
{
	struct spool_stats	st;

	if (s == NULL)
		return;
	if (s->spool != NULL) {
		ship_check_acks(s);
		ship_release(s, UINT64_MAX);
		spool_say_left(s->spool, s->col.dest, s->failing ? s->why :
		    NULL);
		spool_stats(s->spool, &st);
		log_info("audit shipping: %s: %llu line(s) delivered, %llu "
		    "bytes wait in the spool, %llu line(s) not kept (spool "
		    "full)", s->col.dest, (unsigned long long)s->delivered,
		    (unsigned long long)st.pending,
		    (unsigned long long)st.dropped);
	}
	otlp_close(s->otlp);
	ship_drop_conn(s);
	if (s->tick != NULL)
		event_free(s->tick);
	collector_close(&s->col);
	spool_close(s->spool);
	free(s->msg);
	free(s->store);
	free(s->rbuf);
	free(s->ring);
	free(s);
}

/* Read how far the collector's kernel acknowledged the stream. */
static int
ship_acked(struct ship *s, uint64_t *acked)
{
	struct tcp_info	ti;
	socklen_t	len = sizeof ti;
	int		fd;

	if (s->sock == NULL || (fd = bufferevent_getfd(s->sock)) == -1)
		return (-1);
	memset(&ti, 0, sizeof ti);
	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) == -1 ||
	    len < offsetof(struct tcp_info, tcpi_bytes_acked) +
	    sizeof ti.tcpi_bytes_acked)
		return (-1);
	*acked = ti.tcpi_bytes_acked;
	return (0);
}

/*
 * Forget the lines acknowledged before cutoff (mono_ms()): out of the
 * ring, out of the spool.
 */
static void
ship_release(struct ship *s, uint64_t cutoff)
{
	struct ship_sent	*e;
	uint64_t		 done = 0;

	while (s->nacked > 0) {
		e = &s->ring[s->ring_head];
		if (e->acked_at > cutoff)
			break;
		done = e->spool_end;
		s->ring_head = (s->ring_head + 1) % SHIP_INFLIGHT;
		s->ring_n--;
		s->nacked--;
		s->delivered++;
	}
	if (done != 0 && spool_ack(s->spool, done) == -1)
		log_warn("audit shipping: %s: spool mark", s->col.dest);
}

/* Lines are delivered: connect soon again after a failure, and say so. */
static void
ship_delivering(struct ship *s)
{
	s->backoff_ms = SHIP_BACKOFF_MIN_MS;
	if (s->failing) {
		log_info("audit shipping: %s: delivering again", s->col.dest);
		s->failing = 0;
	}
}

/*
 * Note the lines the collector's kernel acknowledged up to their end.
 * They are forgotten SHIP_REPLAY_MS later: a collector that resets the
 * connection may have dropped what it had not read yet, and what was
 * acknowledged just before is sent again.
 */
static void
ship_check_acks(struct ship *s)
{
	struct ship_sent	*e;
	uint64_t		 acked, now = mono_ms();
	int			 any = 0;

	if (s->relp)
		return;		/* the collector's answers say it */
	if (s->ring_n > s->nacked && ship_acked(s, &acked) == 0) {
		acked -= s->ack_base;
		while (s->nacked < s->ring_n) {
			e = &s->ring[(s->ring_head + s->nacked) %
			    SHIP_INFLIGHT];
			if (e->wire_end == SHIP_UNKNOWN || e->wire_end > acked)
				break;
			e->acked_at = now;
			s->nacked++;
			any = 1;
		}
	}
	ship_release(s, now > SHIP_REPLAY_MS ? now - SHIP_REPLAY_MS : 0);
	if (any)
		ship_delivering(s);
}

/* Give the lines TLS has wholly encrypted their stream offset. */
static void
ship_settle(struct ship *s)
{
	struct ship_sent	*e;

	while (s->unsettled > 0) {
		e = &s->ring[(s->ring_head + s->ring_n - s->unsettled) %
		    SHIP_INFLIGHT];
		if (e->clear_end > s->encrypted)
			break;
		e->wire_end = s->wire;
		s->unsettled--;
	}
}

/*
 * TLS took bytes from the filter's output: they are in the socket's
 * output now, encrypted, so the lines they end have their stream offset.
 */
static void
ship_clear_cb(struct evbuffer *buf, const struct evbuffer_cb_info *info,
    void *arg)
{
	struct ship	*s = arg;

	(void)buf;
	s->encrypted += info->n_deleted;
	ship_settle(s);
}

/* Wait for acknowledgements, or to connect again. */
static void
ship_schedule(struct ship *s, int ms)
{
	struct timeval	tv;

	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	evtimer_add(s->tick, &tv);
}

/* Say why the connection failed: once until lines are delivered again. */
static void
ship_fail(struct ship *s, const char *why)
{
	if (!s->failing || strcmp(why, s->why) != 0)
		log_warnx("audit shipping: %s: %s; lines wait in the spool, "
		    "connecting again in %d ms", s->col.dest, why,
		    s->backoff_ms);
	snprintf(s->why, sizeof s->why, "%s", why);
	s->failing = 1;
}

/*
 * The connection is gone: forget what the collector acknowledged (all of
 * it when clean, it read it all; otherwise but what it acknowledged in
 * the last SHIP_REPLAY_MS), send the rest again on the next connection,
 * after a delay that doubles (to a cap) until a line is delivered.
 */
static void
ship_down(struct ship *s, const char *why, int clean)
{
	ship_check_acks(s);
	if (clean)
		ship_release(s, UINT64_MAX);
	if (s->state == SHIP_CONNECTING && s->cur != NULL)
		s->cur = s->cur->ai_next;	/* the next address next time */
	ship_drop_conn(s);
	ship_fail(s, why);
	s->state = SHIP_DOWN;
	s->ring_n = s->ring_head = s->nacked = s->unsettled = 0;
	s->next = spool_head(s->spool);
	evtimer_del(s->tick);
	ship_schedule(s, s->backoff_ms);
	if (!s->stopping)
		s->backoff_ms *= 2;
	if (s->backoff_ms > SHIP_BACKOFF_MAX_MS)
		s->backoff_ms = SHIP_BACKOFF_MAX_MS;
}

/* The timer: connect again, or look at acknowledgements and send more. */
static void
ship_tick_cb(evutil_socket_t fd, short what, void *arg)
{
	struct ship	*s = arg;

	(void)fd;
	(void)what;
	if (s->state == SHIP_DOWN) {
		ship_connect(s);
		return;
	}
	if (s->state != SHIP_UP)
		return;
	ship_check_acks(s);
	ship_fill(s);
}

/* Count the stream's bytes as they are queued on the socket. */
static void
ship_wire_cb(struct evbuffer *buf, const struct evbuffer_cb_info *info,
    void *arg)
{
	struct ship	*s = arg;

	(void)buf;
	s->wire += info->n_added;
}

/*
 * RELP: the lines at the head the collector answered (answered of them),
 * and after them those that could not be framed, for which no answer
 * comes, are delivered.
 */
static void
ship_relp_deliver(struct ship *s, int answered)
{
	s->nacked += answered;
	while (s->nacked < s->ring_n && s->ring[(s->ring_head + s->nacked) %
	    SHIP_INFLIGHT].txnr == 0)
		s->nacked++;
	ship_release(s, UINT64_MAX);
}

/* RELP: say what the collector refused, with its answer. */
static const char *
ship_refused(char *msg, size_t len, const char *what, int code,
    const char *text, size_t tlen)
{
	snprintf(msg, len, "the collector refused %s: %d %.*s", what, code,
	    (int)(tlen > 160 ? 160 : tlen), text);
	return (msg);
}

/*
 * RELP: take one frame from the collector.  -1 when it took the
 * connection down.
 */
static int
ship_relp_frame(struct ship *s, const struct relp_frame *f)
{
	const char	*text, *offers, *why;
	size_t		 tlen, olen;
	char		 msg[256];
	int		 code;

	if (s->state == SHIP_CLOSING)
		return (0);	/* close's answer: the collector closes next */
	if (f->txnr == 0) {	/* a hint; the one known says it closes */
		if (strcmp(f->cmd, "serverclose") != 0)
			return (0);
		ship_down(s, "the collector closed the session", 1);
		return (-1);
	}
	if (strcmp(f->cmd, "rsp") != 0 || relp_rsp_parse(f->data, f->len,
	    &code, &text, &tlen, &offers, &olen) == -1) {
		ship_down(s, "RELP: the collector sent what is not an "
		    "answer", 0);
		return (-1);
	}
	if (s->state == SHIP_OPENING) {
		if (f->txnr != 1 || code != 200 ||
		    relp_offers_ok(offers, olen, &why) == -1) {
			if (f->txnr != 1)
				why = "RELP: an answer to no command sent";
			else if (code != 200)
				why = ship_refused(msg, sizeof msg, "the session",
				    code, text, tlen);
			ship_down(s, why, 0);
			return (-1);
		}
		s->state = SHIP_UP;
		bufferevent_set_timeouts(s->bev, NULL, NULL);
		return (0);
	}
	if (s->nacked == s->ring_n || s->ring[(s->ring_head + s->nacked) %
	    SHIP_INFLIGHT].txnr != f->txnr) {
		ship_down(s, "RELP: an answer to no line sent", 0);
		return (-1);
	}
	if (code != 200) {
		ship_down(s, ship_refused(msg, sizeof msg, "a line", code, text,
		    tlen), 0);
		return (-1);
	}
	ship_relp_deliver(s, 1);
	ship_delivering(s);
	return (0);
}

/* RELP: read the collector's answers; then send what they make room for. */
static void
ship_relp_read(struct ship *s, struct evbuffer *in)
{
	struct relp_frame	 f;
	const char		*why = NULL;
	char			*buf;
	size_t			 len;
	ssize_t			 n;
	char			 msg[256];

	while ((len = evbuffer_get_length(in)) > 0) {
		if (len > RELP_FRAME_MAX)
			len = RELP_FRAME_MAX;
		if ((buf = (char *)evbuffer_pullup(in, len)) == NULL) {
			ship_down(s, "out of memory", 0);
			return;
		}
		if ((n = relp_frame_parse(buf, len, &f, &why)) == 0)
			break;	/* the rest is still to come */
		if (n == -1) {
			snprintf(msg, sizeof msg, "RELP: %s", why);
			ship_down(s, msg, 0);
			return;
		}
		if (ship_relp_frame(s, &f) == -1)
			return;
		evbuffer_drain(in, n);
	}
	ship_fill(s);
	ship_relp_close(s);
}

/*
 * RELP, stopping: once every line sent is answered and nothing more is
 * sent, end the session with "close"; the collector answers and closes,
 * so neither side sees a broken session.
 */
static void
ship_relp_close(struct ship *s)
{
	char	buf[SHIP_HEAD + 1];
	size_t	n;

	if (!s->relp || !s->stopping || s->state != SHIP_UP ||
	    s->nacked != s->ring_n)
		return;
	n = relp_frame(buf, s->txnr, "close", 0);
	s->txnr = relp_txnr_next(s->txnr);
	s->state = SHIP_CLOSING;
	if (bufferevent_write(s->bev, buf, n) == -1)
		ship_down(s, "out of memory", 0);
}

/*
 * Stop: send what waits now, connecting at once if the connection is
 * down (and again every SHIP_BACKOFF_MIN_MS while it fails); end a RELP
 * session once its lines are answered.  ship_busy() says when it is done.
 */
void
ship_stop(struct ship *s)
{
	if (s->otlp != NULL) {
		otlp_stop(s->otlp);
		return;
	}
	s->stopping = 1;
	s->backoff_ms = SHIP_BACKOFF_MIN_MS;
	if (s->state == SHIP_DOWN && spool_head(s->spool) !=
	    spool_tail(s->spool)) {
		evtimer_del(s->tick);
		ship_connect(s);
		return;
	}
	ship_fill(s);
	ship_relp_close(s);
}

/* The collector spoke: over syslog it never should; drop what it said. */
static void
ship_read_cb(struct bufferevent *bev, void *arg)
{
	struct ship	*s = arg;
	struct evbuffer	*in = bufferevent_get_input(bev);

	if (s->relp)
		ship_relp_read(s, in);
	else
		evbuffer_drain(in, evbuffer_get_length(in));
}

/* Everything written has left the layer above the socket. */
static void
ship_write_cb(struct bufferevent *bev, void *arg)
{
	struct ship	*s = arg;

	(void)bev;
	ship_check_acks(s);
	ship_fill(s);
}

/* The connection is up, closed or failed. */
static void
ship_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct ship	*s = arg;
	char		 why[256];
	int		 e = EVUTIL_SOCKET_ERROR();

	(void)bev;
	if (s->state == SHIP_CLOSING) {	/* the session ended as asked */
		ship_drop_conn(s);
		s->state = SHIP_DOWN;
		return;
	}
	if (what & BEV_EVENT_CONNECTED) {
		s->state = SHIP_UP;
		s->connects++;
		bufferevent_set_timeouts(s->bev, NULL, NULL);
		if (s->relp)
			ship_relp_open(s);
		else
			ship_fill(s);
		return;
	}
	if (what & BEV_EVENT_EOF)
		snprintf(why, sizeof why, "the collector closed the "
		    "connection");
	else if (what & BEV_EVENT_TIMEOUT)
		snprintf(why, sizeof why, "no %s after %d s", s->state ==
		    SHIP_OPENING ? "answer to RELP's open" : "connection",
		    SHIP_CONNECT_S);
	else
		snprintf(why, sizeof why, "%s", e != 0 ?
		    evutil_socket_error_to_string(e) : "connection failed");
	if (s->bev != NULL && s->bev != s->sock && !(what & BEV_EVENT_EOF))
		collector_tls_why(s->bev, why, sizeof why);
	/*
	 * A clean TCP close says the collector read all it acknowledged;
	 * over TLS it does not: to finish its close_notify a TLS collector
	 * may read on and throw away what it reads (rsyslog's ossl driver
	 * does), so the lines of the last moments go again, as on a reset.
	 */
	ship_down(s, why, (what & BEV_EVENT_EOF) != 0 && !s->tls);
}

/*
 * RELP: open the session, and wait for its answer before sending lines.
 * Each connection numbers its commands from 1.
 */
static void
ship_relp_open(struct ship *s)
{
	char		 buf[SHIP_HEAD + sizeof RELP_OPEN_OFFERS];
	struct timeval	 tv = { SHIP_CONNECT_S, 0 };
	size_t		 n;

	n = sizeof RELP_OPEN_OFFERS - 1;
	memcpy(buf + SHIP_HEAD, RELP_OPEN_OFFERS, n);
	n = relp_frame(buf, 1, "open", n);
	s->txnr = 2;
	s->state = SHIP_OPENING;
	bufferevent_set_timeouts(s->bev, &tv, NULL);
	if (bufferevent_write(s->bev, buf, n) == -1)
		ship_down(s, "out of memory", 0);
}

/* The socket connected: note the acknowledgement count, start TLS. */
static void
ship_sock_cb(struct bufferevent *bev, short what, void *arg)
{
	struct ship	*s = arg;
	struct timeval	 tv = { SHIP_CONNECT_S, 0 };
	uint64_t	 acked;
	SSL		*ssl;

	if (!(what & BEV_EVENT_CONNECTED) || !s->tls) {
		ship_event_cb(bev, what, arg);
		return;
	}
	if (ship_acked(s, &acked) == 0)
		s->ack_base = acked;
	bufferevent_set_timeouts(s->sock, NULL, NULL);
	/* On failure libevent has freed ssl (BEV_OPT_CLOSE_ON_FREE). */
	if ((ssl = collector_ssl(&s->col)) == NULL ||
	    (s->bev = bufferevent_openssl_filter_new(s->base, s->sock, ssl,
	    BUFFEREVENT_SSL_CONNECTING, BEV_OPT_CLOSE_ON_FREE)) == NULL) {
		ship_down(s, "TLS: cannot start", 0);
		return;
	}
	bufferevent_setcb(s->bev, ship_read_cb, ship_write_cb, ship_event_cb,
	    s);
	evbuffer_add_cb(bufferevent_get_output(s->bev), ship_clear_cb, s);
	bufferevent_set_timeouts(s->bev, &tv, &tv);
	bufferevent_enable(s->bev, EV_READ | EV_WRITE);
}

/* The plain socket connected: note the acknowledgement count. */
static void
ship_plain_cb(struct bufferevent *bev, short what, void *arg)
{
	struct ship	*s = arg;
	uint64_t	 acked;

	if ((what & BEV_EVENT_CONNECTED) && ship_acked(s, &acked) == 0)
		s->ack_base = acked;
	ship_event_cb(bev, what, arg);
}

/* Connect to the collector's address, the next one after a failure. */
static void
ship_connect(struct ship *s)
{
	struct timeval	 tv = { SHIP_CONNECT_S, 0 };
	struct addrinfo	*ai;

	if (s->cur == NULL)
		s->cur = s->col.ai;
	ai = s->cur;
	s->state = SHIP_CONNECTING;
	s->wire = s->clear = s->encrypted = 0;
	s->ack_base = 0;
	s->sock = bufferevent_socket_new(s->base, -1, BEV_OPT_CLOSE_ON_FREE);
	if (s->sock == NULL) {
		ship_down(s, "out of memory", 0);
		return;
	}
	evbuffer_add_cb(bufferevent_get_output(s->sock), ship_wire_cb, s);
	bufferevent_set_timeouts(s->sock, &tv, &tv);
	if (s->tls)
		bufferevent_setcb(s->sock, NULL, NULL, ship_sock_cb, s);
	else {
		s->bev = s->sock;
		bufferevent_setcb(s->sock, ship_read_cb, ship_write_cb,
		    ship_plain_cb, s);
	}
	bufferevent_enable(s->sock, EV_READ | EV_WRITE);
	if (bufferevent_socket_connect(s->sock, ai->ai_addr,
	    ai->ai_addrlen) == -1)
		ship_down(s, strerror(errno), 0);
}

/*
 * Frame one line as an RFC 5424 message, octet-counted or as a RELP
 * command; 0 when it cannot be.
 */
static size_t
ship_frame(struct ship *s, const char *line, size_t len)
{
	struct audit_rec	rec;
	size_t			n, head;

	head = s->relp ? SHIP_HEAD : AUDIT_FRAME_HEAD;
	if (audit_rec_parse(line, len, s->store, SHIP_LINE_MAX, &rec) == -1)
		return (0);
	n = audit_syslog_format(s->msg + head, SHIP_MSG_MAX - head - 1, line,
	    len, &rec, s->hostname, (long)getpid());
	if (n == 0)
		return (0);
	if (s->relp)
		return (relp_frame(s->msg, s->txnr, "syslog", n));
	return (audit_frame(s->msg, n));
}

/*
 * Send one line; remember where it ends.  The ring entry is made first:
 * TLS may encrypt the line within bufferevent_write().
 */
static int
ship_send(struct ship *s, const char *line, size_t len)
{
	struct ship_sent	*e;
	size_t			 n;

	if ((n = ship_frame(s, line, len - 1)) == 0)
		log_warnx("audit shipping: %s: a line that cannot be framed "
		    "is skipped (seq in the local log)", s->col.dest);
	e = &s->ring[(s->ring_head + s->ring_n) % SHIP_INFLIGHT];
	s->ring_n++;
	s->next += len;
	e->spool_end = s->next;
	e->acked_at = 0;
	e->wire_end = SHIP_UNKNOWN;
	e->txnr = 0;
	if (s->relp) {
		if (n == 0) {
			ship_relp_deliver(s, 0);
			return (0);
		}
		e->txnr = s->txnr;
		s->txnr = relp_txnr_next(s->txnr);
		return (bufferevent_write(s->bev, s->msg, n));
	}
	if (s->tls) {
		s->clear += n;
		e->clear_end = s->clear;
		s->unsettled++;
	}
	if (n > 0 && bufferevent_write(s->bev, s->msg, n) == -1)
		return (-1);
	if (s->state != SHIP_UP)
		return (0);
	if (!s->tls)
		e->wire_end = s->wire;	/* queued on the socket */
	else
		ship_settle(s);
	return (0);
}

/*
 * Send lines from the spool while there is room: in the window of
 * lines not acknowledged, and below the high-water mark of the output.
 */
static void
ship_fill(struct ship *s)
{
	struct evbuffer	*out;
	ssize_t		 n;
	char		*p, *nl;
	size_t		 left;

	/* A write may fail at once and take the connection down. */
	while (s->state == SHIP_UP && s->ring_n < SHIP_INFLIGHT &&
	    s->next < spool_tail(s->spool) &&
	    evbuffer_get_length(out = bufferevent_get_output(s->sock)) <
	    SHIP_HIWAT) {
		n = spool_read(s->spool, s->next, s->rbuf, SHIP_LINE_MAX);
		if (n <= 0) {
			log_warn("audit shipping: %s: spool read", s->col.dest);
			break;
		}
		for (p = s->rbuf, left = n; left > 0 && s->state == SHIP_UP &&
		    s->ring_n < SHIP_INFLIGHT &&
		    (nl = memchr(p, '\n', left)) != NULL; ) {
			if (ship_send(s, p, nl - p + 1) == -1) {
				ship_down(s, "out of memory", 0);
				return;
			}
			left -= nl - p + 1;
			p = nl + 1;
		}
		if (left == (size_t)n)
			break;	/* a line longer than any audit line */
	}
	if (s->state != SHIP_UP || s->relp)
		return;
	if (s->ring_n > 0 && !evtimer_pending(s->tick, NULL))
		ship_schedule(s, SHIP_POLL_MS);
}

/* Hand on finished lines: spool them, send what there is room for. */
void
ship_lines(struct ship *s, const char *lines, size_t len)
{
	if (s->otlp != NULL)
		otlp_lines(s->otlp, lines, len);
	else if (spool_take(s->spool, s->col.dest, lines, len) > 0)
		ship_fill(s);
}

/* Tell whether lines wait to be delivered, or a RELP session closes. */
int
ship_busy(const struct ship *s)
{
	if (s->otlp != NULL)
		return (otlp_busy(s->otlp));
	return (s->state == SHIP_CLOSING ||
	    spool_head(s->spool) != spool_tail(s->spool));
}

/* Read its counts, and its spool's. */
void
ship_stats(const struct ship *s, struct ship_stats *st)
{
	struct spool_stats	sp;

	if (s->otlp != NULL) {
		otlp_stats(s->otlp, st);
		return;
	}
	spool_stats(s->spool, &sp);
	memset(st, 0, sizeof *st);
	st->delivered = s->delivered;
	st->pending = sp.pending;
	st->dropped = sp.dropped;
	st->connects = s->connects;
}
