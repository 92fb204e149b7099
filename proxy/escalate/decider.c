/*
 * The decider: each new request of the queue is one question, POSTed
 * as JSON on a connection of its own; the answer approves, denies or
 * leaves the request to a person.  Whatever goes wrong denies.
 */
#include "config.h"

#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "lib/json.h"
#include "lib/log.h"
#include "proxy/escalate/decider.h"
#include "proxy/escalate/escalate.h"
#include "proxy/wire/decider.h"
#include "proxy/wire/http.h"

struct decider_q {
	TAILQ_ENTRY(decider_q)	 entry;
	struct decider		*d;
	char			 id[ESCALATE_ID_LEN];
	struct bufferevent	*bev;		/* NULL: not started yet */
	struct event		*timer;
};

struct decider {
	struct event_base		*base;
	struct escalate			*esc;
	struct escalate_sub		*sub;
	struct decider_url		 url;
	char				 text[DECIDER_URL_MAX];
	struct sockaddr_storage		 ss;
	socklen_t			 sslen;
	int				 secs;
	TAILQ_HEAD(, decider_q)		 qs;
	size_t				 nq;
};

/* Forget a question: its connection and timer too. */
static void
decider_q_free(struct decider_q *q)
{
	if (q->bev != NULL)
		bufferevent_free(q->bev);
	if (q->timer != NULL)
		event_free(q->timer);
	TAILQ_REMOVE(&q->d->qs, q, entry);
	q->d->nq--;
	free(q);
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
	decider_q_free(q);
}

/* Act on an answer; the question is gone after. */
static void
decider_apply(struct decider_q *q, const struct decider_answer *a)
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
		decider_q_free(q);
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
	decider_q_free(q);
}

/* Read the answer's body once it is whole: 1 done, 0 wait for more. */
static int
decider_body(struct decider_q *q, const char *buf, size_t total,
    size_t head, const struct http_response *resp, int eof)
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
		len = resp->h.length;
	} else if (resp->h.body == HTTP_BODY_CLOSE && !eof)
		return (len > DECIDER_BODY_MAX ? (decider_fail(q, "an answer "
		    "of more than %d bytes", DECIDER_BODY_MAX), 1) : 0);
	if (decider_answer_parse(buf + head, len, &a, &errstr) == -1) {
		decider_fail(q, "a malformed answer: %s", errstr);
		return (1);
	}
	decider_apply(q, &a);
	return (1);
}

/* Read what arrived: 1 when the question is gone, 0 wait for more. */
static int
decider_read(struct decider_q *q, int eof)
{
	struct evbuffer		*in = bufferevent_get_input(q->bev);
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
		rv = decider_body(q, buf, total, head, resp, eof);
	free(resp);
	return (rv);
}

/* The answer's bytes arrive. */
static void
decider_read_cb(struct bufferevent *bev, void *arg)
{
	decider_read(arg, 0);
}

/* Write the question, as an HTTP POST. */
static void
decider_send(struct decider_q *q, struct escalate_request *r)
{
	struct decider			*d = q->d;
	const struct escalate_refusal	*f;
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
	evbuffer_add_printf(bufferevent_get_output(q->bev), "POST %s "
	    "HTTP/1.1\r\nHost: %s\r\nUser-Agent: pinhole\r\n"
	    "Content-Type: application/json\r\nContent-Length: %zu\r\n"
	    "Connection: close\r\n\r\n", d->url.path,
	    d->url.kind == DECIDER_TCP ? d->url.addr : "localhost", w.len);
	evbuffer_add(bufferevent_get_output(q->bev), w.buf, w.len);
	json_writer_free(&w);
}

/* Connected, closed, or failed. */
static void
decider_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct decider_q	*q = arg;
	struct escalate_request	*r;

	if (what & BEV_EVENT_CONNECTED) {
		if ((r = decider_request(q)) == NULL)
			decider_q_free(q);
		else
			decider_send(q, r);
		return;
	}
	if (what & BEV_EVENT_EOF) {
		decider_read(q, 1);
		return;
	}
	decider_fail(q, "connection: %s",
	    evutil_socket_error_to_string(EVUTIL_SOCKET_ERROR()));
}

/* Connect, with the answer's time running. */
static void
decider_start(struct decider_q *q)
{
	struct decider	*d = q->d;
	struct timeval	 tv = { d->secs, 0 };

	q->bev = bufferevent_socket_new(d->base, -1,
	    BEV_OPT_CLOSE_ON_FREE | BEV_OPT_DEFER_CALLBACKS);
	if (q->bev == NULL || evtimer_add(q->timer, &tv) == -1) {
		decider_fail(q, "out of memory");
		return;
	}
	bufferevent_setcb(q->bev, decider_read_cb, NULL, decider_event_cb, q);
	bufferevent_enable(q->bev, EV_READ | EV_WRITE);
	if (bufferevent_socket_connect(q->bev, (struct sockaddr *)&d->ss,
	    d->sslen) == -1)
		decider_fail(q, "cannot connect: %s", strerror(errno));
}

/* Start the question, or its time is up. */
static void
decider_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct decider_q	*q = arg;

	if (q->bev == NULL)
		decider_start(q);
	else
		decider_fail(q, "no answer in %d s", q->d->secs);
}

/* Ask about a new request, from the event loop (never while filing). */
static void
decider_ask(struct decider *d, const struct escalate_request *r)
{
	struct decider_q	*q;
	struct timeval		 now = { 0, 0 };

	TAILQ_FOREACH(q, &d->qs, entry) {
		if (strcmp(q->id, r->id) == 0)
			return;
	}
	if (d->nq >= DECIDER_QUESTIONS_MAX) {
		log_warnx("decider %s: %zu questions open; request %s is left "
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
	    evtimer_add(q->timer, &now) == -1) {
		log_warnx("decider %s: out of memory", d->text);
		decider_q_free(q);
	}
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

/* Where to connect. */
static int
decider_addr(struct decider *d)
{
	struct sockaddr_in	*in = (struct sockaddr_in *)&d->ss;
	struct sockaddr_in6	*in6 = (struct sockaddr_in6 *)&d->ss;
	struct sockaddr_un	*un = (struct sockaddr_un *)&d->ss;

	memset(&d->ss, 0, sizeof d->ss);
	if (d->url.kind == DECIDER_UNIX) {
		un->sun_family = AF_UNIX;
		snprintf(un->sun_path, sizeof un->sun_path, "%s", d->url.sock);
		d->sslen = sizeof *un;
	} else if (inet_pton(AF_INET, d->url.addr, &in->sin_addr) == 1) {
		in->sin_family = AF_INET;
		in->sin_port = htons(d->url.port);
		d->sslen = sizeof *in;
	} else if (inet_pton(AF_INET6, d->url.addr, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(d->url.port);
		d->sslen = sizeof *in6;
	} else
		return (-1);
	return (0);
}

/* Ask the decider at url about each new request. */
struct decider *
decider_create(struct event_base *base, struct escalate *esc,
    const char *url, int secs, char *err, size_t errlen)
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
	d->secs = secs > 0 ? secs : DECIDER_WAIT_DEFAULT;
	if (d->secs > 2)
		d->secs--;
	TAILQ_INIT(&d->qs);
	snprintf(d->text, sizeof d->text, "%s", url);
	if (decider_url_parse(url, &d->url, &errstr) == -1 ||
	    decider_addr(d) == -1) {
		snprintf(err, errlen, "--decider '%s': %s", url,
		    errstr != NULL ? errstr : "not an address");
		free(d);
		return (NULL);
	}
	if ((d->sub = escalate_subscribe(esc, decider_note_cb, d)) == NULL) {
		snprintf(err, errlen, "out of memory");
		free(d);
		return (NULL);
	}
	return (d);
}

/* Stop asking; open questions are dropped (their requests stay). */
void
decider_free(struct decider *d)
{
	if (d == NULL)
		return;
	while (!TAILQ_EMPTY(&d->qs))
		decider_q_free(TAILQ_FIRST(&d->qs));
	escalate_unsubscribe(d->sub);
	free(d);
}
