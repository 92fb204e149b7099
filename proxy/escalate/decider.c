/*
 * The decider: each new request of the queue is one question, POSTed
 * as JSON; the answer approves, denies or leaves the request to a
 * person.  Whatever goes wrong denies.  At most d->max questions are
 * out at once, each on a connection of its own (plain, a unix socket,
 * or TLS verified against the CA given, with our certificate when
 * given), which is kept for the next question when the decider keeps
 * it open; the others wait their turn, their time running.
 */
#include "config.h"

#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "lib/json.h"
#include "lib/log.h"
#include "lib/unixsock.h"
#include "proxy/audit/collector.h"
#include "proxy/escalate/decider.h"
#include "proxy/escalate/escalate.h"
#include "proxy/wire/decidermsg.h"
#include "proxy/wire/http.h"

struct decider_q;

/* A connection to the decider: carrying a question, or idle. */
struct decider_conn {
	TAILQ_ENTRY(decider_conn) entry;
	struct decider		*d;
	struct bufferevent	*bev;
	struct decider_q	*q;		/* NULL: idle */
	int			 connected;
	int			 used;		/* it carried an answer */
};

/* A question: waiting its turn, or out on a connection. */
struct decider_q {
	TAILQ_ENTRY(decider_q)	 entry;
	struct decider		*d;
	char			 id[ESCALATE_ID_LEN];
	struct decider_conn	*conn;		/* NULL: waiting */
	struct event		*timer;		/* its time is up */
	int			 retried;	/* on a fresh connection */
};

struct decider {
	struct event_base		*base;
	struct escalate			*esc;
	struct escalate_sub		*sub;
	struct decider_url		 url;
	char				 text[DECIDER_URL_MAX];
	struct sockaddr_storage		 ss;		/* where to connect */
	socklen_t			 sslen;
	struct collector		 peer;		/* TLS: its context */
	int				 secs;
	int				 have_cert;	/* we show one */
	size_t				 max;
	struct event			*kick;		/* start what waits */
	TAILQ_HEAD(, decider_q)		 qs;		/* in the order asked */
	size_t				 nq;
	size_t				 nout;		/* on a connection */
	TAILQ_HEAD(, decider_conn)	 conns;
	size_t				 nconns;
};

/* Close a connection. */
static void
decider_conn_free(struct decider_conn *c)
{
	if (c->q != NULL) {
		c->q->conn = NULL;
		c->d->nout--;
	}
	bufferevent_free(c->bev);
	TAILQ_REMOVE(&c->d->conns, c, entry);
	c->d->nconns--;
	free(c);
}

/*
 * Forget a question, its timer too; its connection is kept for the next
 * one when keep says the decider left it ready, else closed.  What
 * waits may start now.
 */
static void
decider_q_free(struct decider_q *q, int keep)
{
	struct decider		*d = q->d;
	struct decider_conn	*c = q->conn;

	if (c != NULL) {
		c->q = NULL;
		q->conn = NULL;
		d->nout--;
		if (keep)
			c->used = 1;
		else
			decider_conn_free(c);
	}
	if (q->timer != NULL)
		event_free(q->timer);
	TAILQ_REMOVE(&d->qs, q, entry);
	d->nq--;
	free(q);
	if (d->kick != NULL)
		event_active(d->kick, EV_TIMEOUT, 0);
}

/* The question's request, while it is still pending; else NULL. */
static struct escalate_request *
decider_request(struct decider_q *q)
{
	struct escalate_request	*r;

	r = escalate_find(q->d->esc, q->id);
	if (r == NULL || r->state != ESCALATE_PENDING)
		return (NULL);
	return (r);
}

/* Deny the question's request for why; the question is gone after. */
static void
decider_fail(struct decider_q *q, const char *fmt, ...)
{
	struct decider		*d = q->d;
	struct escalate_request	*r;
	va_list			 ap;
	char			 why[256], err[256];

	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	log_warnx("decider %s: request %s denied: %s", d->text, q->id, why);
	if ((r = decider_request(q)) != NULL) {
		snprintf(r->decider, sizeof r->decider, "%s", d->text);
		if (escalate_deny(d->esc, q->id, why, "decider", err,
		    sizeof err) == -1)
			log_warnx("decider: %s", err);
	}
	decider_q_free(q, 0);
}

/* Act on an answer; the question is gone after. */
static void
decider_apply(struct decider_q *q, const struct decider_answer *a, int keep)
{
	static const enum escalate_scope scopes[] = {
		ESCALATE_SCOPE_ONCE, ESCALATE_SCOPE_SESSION,
		ESCALATE_SCOPE_ALWAYS
	};
	struct decider		*d = q->d;
	struct escalate_request	*r;
	char			 by[ESCALATE_BY_LEN], err[256];
	int			 rv = 0;

	if ((r = decider_request(q)) == NULL) {
		log_info("decider %s: request %s was decided meanwhile",
		    d->text, q->id);
		decider_q_free(q, keep);
		return;
	}
	if (a->approver[0] != '\0')
		snprintf(by, sizeof by, "%s via decider", a->approver);
	else
		snprintf(by, sizeof by, "decider");
	log_info("decider %s: request %s: %s by %s", d->text, q->id,
	    decider_decision_name(a->decision), by);
	snprintf(r->decider, sizeof r->decider, "%s", d->text);
	if (a->decision == DECIDER_ALLOW)
		rv = escalate_approve(d->esc, q->id, scopes[a->scope], a->ttl,
		    NULL, by, err, sizeof err);
	else if (a->decision == DECIDER_DENY)
		rv = escalate_deny(d->esc, q->id, a->note[0] != '\0' ?
		    a->note : NULL, by, err, sizeof err);
	else
		r->decider[0] = '\0';	/* a person decides */
	if (rv == -1) {
		decider_fail(q, "its answer could not be applied: %s", err);
		return;
	}
	decider_q_free(q, keep);
}

/*
 * Read the answer's body once it is whole: 1 done, 0 wait for more.
 * keep says the connection may carry the next question once it is read.
 */
static int
decider_body(struct decider_q *q, const char *buf, size_t total,
    size_t head, const struct http_response *resp, int eof, int keep)
{
	struct decider_answer	 a;
	const char		*errstr;
	size_t			 len = total - head;

	if (resp->h.body == HTTP_BODY_CHUNKED) {
		decider_fail(q, "a chunked answer (send Content-Length)");
		return (1);
	}
	if (resp->h.body == HTTP_BODY_LENGTH) {
		if (resp->h.length > DECIDER_BODY_MAX) {
			decider_fail(q, "an answer of %llu bytes, more than "
			    "%d", (unsigned long long)resp->h.length,
			    DECIDER_BODY_MAX);
			return (1);
		}
		if (len < resp->h.length && !eof)
			return (0);
		if (len < resp->h.length) {
			decider_fail(q, "the answer was cut short");
			return (1);
		}
		keep = keep && len == resp->h.length;
		len = resp->h.length;
	} else if (resp->h.body == HTTP_BODY_CLOSE && !eof)
		return (len > DECIDER_BODY_MAX ? (decider_fail(q, "an answer "
		    "of more than %d bytes", DECIDER_BODY_MAX), 1) : 0);
	else
		keep = 0;
	if (decider_answer_parse(buf + head, len, &a, &errstr) == -1) {
		decider_fail(q, "a malformed answer: %s", errstr);
		return (1);
	}
	if (keep)
		evbuffer_drain(bufferevent_get_input(q->conn->bev), total);
	decider_apply(q, &a, keep);
	return (1);
}

/* Read what arrived: 1 when the question is gone, 0 wait for more. */
static int
decider_read(struct decider_q *q, int eof)
{
	struct evbuffer		*in = bufferevent_get_input(q->conn->bev);
	struct http_response	*resp;
	struct http_limits	 lim = { DECIDER_HEAD_MAX, 64 };
	const char		*buf, *end;
	size_t			 total = evbuffer_get_length(in), head;
	int			 rv = 1;

	if (total > DECIDER_HEAD_MAX + DECIDER_BODY_MAX) {
		decider_fail(q, "an answer of more than %d bytes",
		    DECIDER_HEAD_MAX + DECIDER_BODY_MAX);
		return (1);
	}
	buf = (const char *)evbuffer_pullup(in, -1);
	if (buf == NULL || (end = memmem(buf, total, "\r\n\r\n", 4)) == NULL) {
		if (total > DECIDER_HEAD_MAX || eof) {
			decider_fail(q, eof ? "the connection closed before "
			    "an answer" : "an answer's head too long");
			return (1);
		}
		return (0);
	}
	head = end + 4 - buf;
	if ((resp = malloc(sizeof *resp)) == NULL) {
		decider_fail(q, "out of memory");
		return (1);
	}
	if (http_response_parse(buf, head, &lim, 0, resp) == -1)
		decider_fail(q, "a malformed HTTP answer");
	else if (resp->status < 200 || resp->status > 299)
		decider_fail(q, "status %d", resp->status);
	else
		rv = decider_body(q, buf, total, head, resp, eof,
		    resp->h.keep_alive && !eof);
	free(resp);
	return (rv);
}

/* Write the question, as an HTTP POST. */
static void
decider_send(struct decider_q *q, struct escalate_request *r)
{
	struct decider			*d = q->d;
	const struct sandbox_refusal	*f;
	struct decider_question		 qq;
	struct json_writer		 w;
	char				 what[ESCALATE_WHAT_LEN], *sp;
	const char			*why = r->why;

	snprintf(what, sizeof what, "%s", r->what);
	if (what[0] == '\0' && (f = escalate_refused_find(d->esc, r->sandbox,
	    &r->host, r->port)) != NULL) {
		snprintf(what, sizeof what, "%s", f->what);
		why = why[0] != '\0' ? why : f->why;
	}
	memset(&qq, 0, sizeof qq);
	qq.request = r->id;
	qq.session = escalate_session(d->esc);
	qq.sandbox = r->sandbox[0] != '\0' ? r->sandbox : NULL;
	qq.cmd = r->sandbox[0] != '\0' ? r->cmd : NULL;
	qq.pid = r->sandbox[0] != '\0' ? r->pid : -1;
	qq.host = r->host.text;
	qq.port = r->port;
	qq.via = r->via;
	if ((sp = strchr(what, ' ')) != NULL) {
		*sp = '\0';
		qq.method = what;
		qq.path = sp + 1;
	}
	qq.refused = why[0] != '\0' ? why : NULL;
	qq.reason = r->reason[0] != '\0' ? r->reason : NULL;
	qq.timeout = d->secs;
	json_writer_init(&w, DECIDER_BODY_MAX);
	decider_question_write(&w, &qq);
	if (w.failed) {
		json_writer_free(&w);
		decider_fail(q, "the question does not fit");
		return;
	}
	evbuffer_add_printf(bufferevent_get_output(q->conn->bev), "POST %s "
	    "HTTP/1.1\r\nHost: %s\r\nUser-Agent: pinhole\r\n"
	    "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n",
	    d->url.path, d->url.kind != DECIDER_UNIX ? d->peer.hostport :
	    "localhost", w.len);
	evbuffer_add(bufferevent_get_output(q->conn->bev), w.buf, w.len);
	json_writer_free(&w);
}

/* Send the question now, or forget it when it was decided meanwhile. */
static void
decider_go(struct decider_q *q)
{
	struct escalate_request	*r;

	if ((r = decider_request(q)) == NULL)
		decider_q_free(q, 1);
	else
		decider_send(q, r);
}

/*
 * Why a TLS connection failed: the certificate's verdict, or the first
 * error TLS named (they come back last first, after the bare SSL_get_error()
 * code libevent keeps too): "tlsv13 alert certificate required" from a
 * decider that wants ours.
 */
static void
decider_tls_why(struct bufferevent *bev, char *buf, size_t len)
{
	SSL		*ssl = bufferevent_openssl_get_ssl(bev);
	const char	*reason = NULL, *r;
	unsigned long	 e;
	long		 v;

	while ((e = bufferevent_get_openssl_error(bev)) != 0)
		if ((r = ERR_reason_error_string(e)) != NULL)
			reason = r;
	if (ssl != NULL && (v = SSL_get_verify_result(ssl)) != X509_V_OK)
		snprintf(buf, len, "TLS: the decider's certificate: %s",
		    X509_verify_cert_error_string(v));
	else if (reason != NULL)
		snprintf(buf, len, "TLS: %s", reason);
}

/*
 * A connection failed or closed while it carried a question: a kept one
 * the decider had closed meanwhile is tried again once, afresh; else the
 * question is denied (a close may also end an answer).
 */
static void
decider_conn_lost(struct decider_conn *c, short what)
{
	struct decider_q	*q = c->q;
	char			 why[256];
	int			 e = EVUTIL_SOCKET_ERROR();

	if (c->used && !q->retried && evbuffer_get_length(
	    bufferevent_get_input(c->bev)) == 0) {
		q->retried = 1;
		decider_conn_free(c);
		event_active(q->d->kick, EV_TIMEOUT, 0);
		return;
	}
	if (what & BEV_EVENT_EOF) {
		decider_read(q, 1);
		return;
	}
	snprintf(why, sizeof why, "connection: %s%s", e != 0 ?
	    evutil_socket_error_to_string(e) : "failed",
	    q->d->url.kind == DECIDER_TLS && !q->d->have_cert ? " (does the "
	    "decider want a client certificate? --decider-cert)" : "");
	if (q->d->url.kind == DECIDER_TLS)
		decider_tls_why(c->bev, why, sizeof why);
	decider_fail(q, "%s", why);
}

/*
 * Is the listener of a unix socket on the host, not in a sandbox?  A
 * command that renames the socket's directory and binds a socket of its
 * own at the same path would answer the questions about its own
 * requests; its network namespace gives it away.  A decider of another
 * user's, whose namespace we may not look at, is asked: a sandbox runs
 * as the gateway's user, who may always look (one that made itself
 * undumpable is not asked).
 */
static int
decider_peer_ok(struct decider_conn *c)
{
	uid_t	uid = getuid();
	int	local;

	if (c->d->url.kind != DECIDER_UNIX)
		return (1);
	local = unixsock_peer_local(bufferevent_getfd(c->bev), &uid);
	return (local == 1 || (local == -1 && uid != getuid()));
}

/* Connected (its TLS handshake done), closed, or failed. */
static void
decider_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct decider_conn	*c = arg;

	if ((what & BEV_EVENT_CONNECTED) && !decider_peer_ok(c)) {
		/* The question goes with its connection. */
		if (c->q != NULL)
			decider_fail(c->q, "%s answers from another network "
			    "namespace (a sandbox's?): not the decider, not "
			    "asked", c->d->url.sock);
		else
			decider_conn_free(c);
		return;
	}
	if (what & BEV_EVENT_CONNECTED) {
		c->connected = 1;
		if (c->q != NULL)
			decider_go(c->q);
		return;
	}
	if (c->q == NULL) {
		decider_conn_free(c);	/* an idle one closed */
		return;
	}
	decider_conn_lost(c, what);
}

/* The answer's bytes arrive (an idle connection must say nothing). */
static void
decider_read_cb(struct bufferevent *bev, void *arg)
{
	struct decider_conn	*c = arg;

	if (c->q == NULL)
		decider_conn_free(c);
	else
		decider_read(c->q, 0);
}

/* Open a connection to the decider; NULL after denying q. */
static struct decider_conn *
decider_conn_open(struct decider_q *q)
{
	struct decider		*d = q->d;
	struct decider_conn	*c;
	SSL			*ssl;
	int			 flags = BEV_OPT_CLOSE_ON_FREE |
				    BEV_OPT_DEFER_CALLBACKS;

	if ((c = calloc(1, sizeof *c)) == NULL) {
		decider_fail(q, "out of memory");
		return (NULL);
	}
	c->d = d;
	if (d->url.kind != DECIDER_TLS)
		c->bev = bufferevent_socket_new(d->base, -1, flags);
	else if ((ssl = collector_ssl(&d->peer)) != NULL)
		c->bev = bufferevent_openssl_socket_new(d->base, -1, ssl,
		    BUFFEREVENT_SSL_CONNECTING, flags);
	if (c->bev == NULL) {
		free(c);
		decider_fail(q, "out of memory");
		return (NULL);
	}
	TAILQ_INSERT_TAIL(&d->conns, c, entry);
	d->nconns++;
	bufferevent_setcb(c->bev, decider_read_cb, NULL, decider_event_cb, c);
	bufferevent_enable(c->bev, EV_READ | EV_WRITE);
	if (bufferevent_socket_connect(c->bev, (struct sockaddr *)&d->ss,
	    d->sslen) == -1) {
		decider_conn_free(c);
		decider_fail(q, "cannot connect: %s", strerror(errno));
		return (NULL);
	}
	return (c);
}

/* Put a question out: on an idle connection, or a new one. */
static void
decider_start(struct decider_q *q)
{
	struct decider		*d = q->d;
	struct decider_conn	*c;

	TAILQ_FOREACH(c, &d->conns, entry) {
		if (c->q == NULL && c->connected)
			break;
	}
	if (c == NULL && (c = decider_conn_open(q)) == NULL)
		return;
	c->q = q;
	q->conn = c;
	d->nout++;
	if (c->connected)
		decider_go(q);
}

/* Start the questions that wait, as far as d->max allows. */
static void
decider_kick_cb(evutil_socket_t fd, short what, void *arg)
{
	struct decider		*d = arg;
	struct decider_q	*q, *next;

	for (q = TAILQ_FIRST(&d->qs); q != NULL && d->nout < d->max;
	    q = next) {
		next = TAILQ_NEXT(q, entry);
		if (q->conn == NULL)
			decider_start(q);
	}
}

/* A question's time is up. */
static void
decider_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct decider_q	*q = arg;

	decider_fail(q, "no answer in %d s", q->d->secs);
}

/* Ask about a new request, from the event loop (never while filing). */
static void
decider_ask(struct decider *d, const struct escalate_request *r)
{
	struct decider_q	*q;
	struct timeval		 tv = { d->secs, 0 };

	TAILQ_FOREACH(q, &d->qs, entry) {
		if (strcmp(q->id, r->id) == 0)
			return;
	}
	if (d->nq >= DECIDER_WAITING_MAX) {
		log_warnx("decider %s: %zu questions wait; request %s is left "
		    "to a person", d->text, d->nq, r->id);
		return;
	}
	if ((q = calloc(1, sizeof *q)) == NULL)
		return;
	q->d = d;
	snprintf(q->id, sizeof q->id, "%s", r->id);
	TAILQ_INSERT_TAIL(&d->qs, q, entry);
	d->nq++;
	if ((q->timer = evtimer_new(d->base, decider_timer_cb, q)) == NULL ||
	    evtimer_add(q->timer, &tv) == -1) {
		log_warnx("decider %s: out of memory", d->text);
		decider_q_free(q, 0);
		return;
	}
	event_active(d->kick, EV_TIMEOUT, 0);
}

/* A request was filed: a new one is a question. */
static void
decider_note_cb(const struct escalate_event *ev, void *arg)
{
	const struct escalate_request	*r = ev->request;

	if (ev->note == ESCALATE_NOTE_REQUEST && r != NULL &&
	    r->state == ESCALATE_PENDING && r->count == 1)
		decider_ask(arg, r);
}

/*
 * Where to connect: the unix socket, or the address of "HOST:PORT" the
 * host's resolver gives (the first), with the TLS context for https.
 */
static int
decider_addr(struct decider *d, const struct decider_config *cfg, char *err,
    size_t errlen)
{
	struct sockaddr_un	*un = (struct sockaddr_un *)&d->ss;
	char			 hp[sizeof d->url.addr + 16];

	memset(&d->ss, 0, sizeof d->ss);
	if (d->url.kind == DECIDER_UNIX) {
		un->sun_family = AF_UNIX;
		snprintf(un->sun_path, sizeof un->sun_path, "%s", d->url.sock);
		d->sslen = sizeof *un;
		return (0);
	}
	snprintf(hp, sizeof hp, strchr(d->url.addr, ':') != NULL ?
	    "[%s]:%u" : "%s:%u", d->url.addr, d->url.port);
	if (collector_open(&d->peer, d->text, hp, strlen(hp), "HOST:PORT",
	    err, errlen) == -1)
		return (-1);
	memcpy(&d->ss, d->peer.ai->ai_addr, d->peer.ai->ai_addrlen);
	d->sslen = d->peer.ai->ai_addrlen;
	if (d->url.kind != DECIDER_TLS)
		return (0);
	d->have_cert = cfg->cert != NULL;
	if ((cfg->cert == NULL) != (cfg->key == NULL)) {
		snprintf(err, errlen, "--decider-cert and --decider-key go "
		    "together");
		return (-1);
	}
	return (collector_tls(&d->peer, cfg->ca, cfg->cert, cfg->key, err,
	    errlen));
}

/* Ask the decider at cfg->url about each new request. */
struct decider *
decider_create(struct event_base *base, struct escalate *esc,
    const struct decider_config *cfg, char *err, size_t errlen)
{
	struct decider	*d;
	const char	*errstr;

	if ((d = calloc(1, sizeof *d)) == NULL) {
		snprintf(err, errlen, "out of memory");
		return (NULL);
	}
	d->base = base;
	d->esc = esc;
	/* A second less than a held connection waits, so that it is
	   refused with the decider's reason rather than its own. */
	d->secs = cfg->secs > 0 ? cfg->secs : DECIDER_WAIT_DEFAULT;
	if (d->secs > 2)
		d->secs--;
	d->max = cfg->max > 0 ? (size_t)cfg->max : DECIDER_QUESTIONS_MAX;
	TAILQ_INIT(&d->qs);
	TAILQ_INIT(&d->conns);
	snprintf(d->text, sizeof d->text, "%s", cfg->url);
	if (decider_url_parse(cfg->url, &d->url, &errstr) == -1) {
		snprintf(err, errlen, "--decider '%s': %s", cfg->url, errstr);
		goto fail;
	}
	if (decider_addr(d, cfg, err, errlen) == -1)
		goto fail;
	if ((d->kick = event_new(base, -1, 0, decider_kick_cb, d)) == NULL ||
	    (d->sub = escalate_subscribe(esc, decider_note_cb, d)) == NULL) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	return (d);
fail:
	decider_free(d);
	return (NULL);
}

/* Stop asking; open questions are dropped (their requests stay). */
void
decider_free(struct decider *d)
{
	if (d == NULL)
		return;
	if (d->kick != NULL)
		event_free(d->kick);
	d->kick = NULL;
	while (!TAILQ_EMPTY(&d->qs))
		decider_q_free(TAILQ_FIRST(&d->qs), 0);
	while (!TAILQ_EMPTY(&d->conns))
		decider_conn_free(TAILQ_FIRST(&d->conns));
	escalate_unsubscribe(d->sub);
	collector_close(&d->peer);
	free(d);
}
