/*
 * The connection tests' fixture: see conn-fixture.h.
 */
#include "config.h"

#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <event2/event.h>

#include "proxy/audit/audit.h"
#include "proxy/dns/fakeip.h"
#include "proxy/escalate/escalate.h"
#include "proxy/gateway.h"
#include "proxy/resolver/resolver.h"
#include "rules/rules.h"
#include "tests/unit/conn-fixture.h"

struct resolver {
	struct event_base	*base;
};

struct resolver_query {
	struct event		 *ev;
	const struct fake_answer *a;
	resolver_cb		  cb;
	void			 *arg;
};

static const struct fake_answer	 fake_nohost = { NULL, NULL, "no such host" };
static const char		 fake_fail[] = "";	/* lookup gives NULL */
static const struct fake_answer	*fake_script;
struct resolver_query		*fake_held;
int				 fake_open;	/* still pending */
int				 fake_cancels;

/* Answer a query from the event loop. */
static void
fake_deliver(evutil_socket_t fd, short what, void *arg)
{
	struct resolver_query	*q = arg;
	struct resolver_result	 res;
	const struct fake_answer *a = q->a;
	resolver_cb		 cb = q->cb;
	void			*cbarg = q->arg;

	memset(&res, 0, sizeof res);
	if (a->addr != NULL) {
		res.n = 1;
		res.ttl = 60;
		res.a[0].family = strchr(a->addr, ':') != NULL ? AF_INET6 :
		    AF_INET;
		assert_int_equal(inet_pton(res.a[0].family, a->addr,
		    res.a[0].addr), 1);
	}
	event_free(q->ev);
	free(q);
	fake_open--;
	if (a->addr != NULL)
		cb(0, NULL, &res, cbarg);
	else
		cb(-1, a->error, NULL, cbarg);
}

/* The fake resolver. */
struct resolver *
resolver_create(struct event_base *base, const char **servers, char *err,
    size_t errlen)
{
	struct resolver	*r;

	if ((r = calloc(1, sizeof *r)) == NULL) {
		snprintf(err, errlen, "out of memory");
		return (NULL);
	}
	r->base = base;
	return (r);
}

/* Free the fake resolver. */
void
resolver_free(struct resolver *r)
{
	free(r);
}

/* Timeouts mean nothing to the fake. */
int
resolver_set_timeouts(struct resolver *r, int ms, int tries)
{
	return (0);
}

/* Look a name up in the script; answer later, or hold the query. */
struct resolver_query *
resolver_lookup(struct resolver *r, const char *name, resolver_cb cb,
    void *arg)
{
	struct resolver_query	*q;
	const struct fake_answer *a;

	if ((q = calloc(1, sizeof *q)) == NULL)
		return (NULL);
	q->a = &fake_nohost;
	for (a = fake_script; a != NULL && a->name != NULL; a++) {
		if (strcmp(a->name, name) == 0) {
			q->a = a;
			break;
		}
	}
	if (q->a->error == fake_fail) {
		free(q);
		return (NULL);
	}
	q->cb = cb;
	q->arg = arg;
	assert_non_null(q->ev = event_new(r->base, -1, 0, fake_deliver, q));
	fake_open++;
	if (q->a->addr == NULL && q->a->error == NULL)
		fake_held = q;
	else
		event_active(q->ev, EV_TIMEOUT, 0);
	return (q);
}

/* The gateway never asks for raw answers. */
struct resolver_query *
resolver_raw(struct resolver *r, const char *name, int type,
    resolver_raw_cb cb, void *arg)
{
	fail_msg("resolver_raw called");
	return (NULL);
}

/* Forget a query. */
void
resolver_cancel(struct resolver_query *q)
{
	if (q == NULL)
		return;
	if (fake_held == q)
		fake_held = NULL;
	event_free(q->ev);
	free(q);
	fake_open--;
	fake_cancels++;
}

/* Let the held query have its answer. */
void
fake_release(const struct fake_answer *a)
{
	struct resolver_query	*q = fake_held;

	assert_non_null(q);
	fake_held = NULL;
	q->a = a;
	event_active(q->ev, EV_TIMEOUT, 0);
}

/* A TCP socket bound to addr:port (port 0: any), listening; -1 if busy. */
int
listen_on(const char *addr, uint16_t port, struct sockaddr_in *sin)
{
	socklen_t	len = sizeof *sin;
	int		fd, one = 1;

	memset(sin, 0, sizeof *sin);
	sin->sin_family = AF_INET;
	sin->sin_port = htons(port);
	assert_int_equal(inet_pton(AF_INET, addr, &sin->sin_addr), 1);
	assert_true((fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0)) >=
	    0);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (bind(fd, (struct sockaddr *)sin, sizeof *sin) == -1) {
		assert_int_equal(errno, EADDRINUSE);
		close(fd);
		return (-1);
	}
	assert_int_equal(getsockname(fd, (struct sockaddr *)sin, &len), 0);
	assert_int_equal(listen(fd, 8), 0);
	return (fd);
}

/* Send all of a short message on a loopback socket. */
void
put(int fd, const void *p, size_t len)
{
	assert_int_equal(send(fd, p, len, MSG_NOSIGNAL), (ssize_t)len);
}

/* The length of the whole request at the front of the origin's input. */
static size_t
origin_request_len(const struct origin *o, int *chunked)
{
	const char	*end, *last;

	if ((end = memmem(o->in, o->inlen, "\r\n\r\n", 4)) == NULL)
		return (0);
	end += 4;
	*chunked = memmem(o->in, end - o->in, "chunked", 7) != NULL;
	if (!*chunked)
		return (end - o->in);
	last = memmem(end, o->inlen - (end - o->in), "0\r\n\r\n", 5);
	return (last == NULL ? 0 : (size_t)(last + 5 - o->in));
}

/* Answer the whole requests the origin has. */
static void
origin_http(struct origin *o)
{
	static const char ok[] =
	    "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
	static const char chunked[] = "HTTP/1.1 200 OK\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n";
	static const char bad[] = "garbage\r\n\r\n";
	static const char up[] = "HTTP/1.1 101 Switching Protocols\r\n"
	    "Connection: upgrade\r\nUpgrade: x\r\n\r\n";
	size_t	n;
	int	ch;

	while ((n = origin_request_len(o, &ch)) > 0) {
		o->requests++;
		snprintf(o->head, sizeof o->head, "%.*s", (int)n, o->in);
		memmove(o->in, o->in + n, o->inlen - n);
		o->inlen -= n;
		switch (o->mode) {
		case O_HTTP:
			if (ch)
				put(o->fd, chunked, sizeof chunked - 1);
			else
				put(o->fd, ok, sizeof ok - 1);
			break;
		case O_BAD:
			put(o->fd, bad, sizeof bad - 1);
			break;
		case O_UPGRADE:
			put(o->fd, up, sizeof up - 1);
			o->mode = O_ECHO;
			return;
		case O_REPLY:
			put(o->fd, o->reply, strlen(o->reply));
			if (!o->close_after)
				break;
			event_free(o->ev);
			o->ev = NULL;
			close(o->fd);
			o->fd = -1;
			return;
		case O_SHUT:
			event_free(o->ev);
			o->ev = NULL;
			close(o->fd);
			o->fd = -1;
			return;
		default:
			break;
		}
	}
}

/*
 * As an upstream proxy: keep each head, answer it; a 200 to a CONNECT
 * opens the tunnel, which echoes from then on.
 */
static void
origin_proxy(struct origin *o)
{
	const char	*end;
	size_t		 n, have;
	int		 connect;

	while ((end = memmem(o->in, o->inlen, "\r\n\r\n", 4)) != NULL) {
		n = end + 4 - o->in;
		o->requests++;
		connect = strncmp(o->in, "CONNECT ", 8) == 0;
		have = strlen(o->heads);
		assert_true(have + n < sizeof o->heads);
		memcpy(o->heads + have, o->in, n);
		o->heads[have + n] = '\0';
		memmove(o->in, o->in + n, o->inlen - n);
		o->inlen -= n;
		put(o->fd, o->proxy_reply, strlen(o->proxy_reply));
		if (connect && strncmp(o->proxy_reply, "HTTP/1.1 200", 12) == 0) {
			o->mode = O_ECHO;
			if (o->inlen > 0)
				put(o->fd, o->in, o->inlen);
			return;
		}
	}
}

/* The origin's connection is readable. */
static void
origin_read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct origin	*o = arg;
	char		 buf[4096];
	ssize_t		 n;

	if ((n = recv(fd, buf, sizeof buf, 0)) == -1 && errno == EAGAIN)
		return;
	if (n <= 0) {
		o->eof = 1;
		if (o->mode == O_ECHO)
			put(fd, "bye", 3);
		event_free(o->ev);
		o->ev = NULL;
		close(o->fd);
		o->fd = -1;
		return;
	}
	assert_true(o->inlen + n < sizeof o->in);
	memcpy(o->in + o->inlen, buf, n);
	o->inlen += n;
	if (o->mode == O_ECHO)
		put(fd, buf, n);
	else if (o->mode == O_PROXY)
		origin_proxy(o);
	else
		origin_http(o);
}

/* Drop the origin's connection. */
void
origin_drop(struct origin *o)
{
	if (o->ev != NULL)
		event_free(o->ev);
	if (o->fd != -1)
		close(o->fd);
	o->ev = NULL;
	o->fd = -1;
}

/* A connection to the origin (the last one is the one answered). */
static void
origin_accept_cb(evutil_socket_t lfd, short what, void *arg)
{
	struct fx	*f = arg;
	struct origin	*o = &f->o;
	int		 fd;

	if ((fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK)) == -1)
		return;
	origin_drop(o);
	o->accepts++;
	o->fd = fd;
	o->inlen = 0;
	o->eof = 0;
	assert_non_null(o->ev = event_new(f->base, fd, EV_READ | EV_PERSIST,
	    origin_read_cb, o));
	event_add(o->ev, NULL);
}

/* Start the origin on addr:port. */
int
origin_start(struct fx *f, const char *addr, uint16_t port)
{
	struct origin	*o = &f->o;

	o->fd = -1;
	if ((o->lfd = listen_on(addr, port, &o->sin)) == -1)
		return (-1);
	snprintf(f->otext, sizeof f->otext, "%s", addr);
	assert_non_null(o->lev = event_new(f->base, o->lfd,
	    EV_READ | EV_PERSIST, origin_accept_cb, f));
	event_add(o->lev, NULL);
	return (0);
}

/* Stop the origin. */
void
origin_stop(struct origin *o)
{
	origin_drop(o);
	if (o->lev != NULL)
		event_free(o->lev);
	if (o->lfd != -1)
		close(o->lfd);
	o->lev = NULL;
	o->lfd = -1;
}

/* The origin's port. */
int
oport(struct fx *f)
{
	return (ntohs(f->o.sin.sin_port));
}

/* Put the policy in force: text with up to two %u for port. */
void
use_policy_port(struct fx *f, const char *fmt, int port)
{
	struct rules	*r;
	char		 text[1024], err[256];

	snprintf(text, sizeof text, fmt, port, port);
	assert_non_null(r = rules_create());
	if (rules_load_text(r, "test", text, strlen(text), err,
	    sizeof err) == -1)
		fail_msg("%s", err);
	gateway_set_rules(f->gw, r);
}

/* Put the policy in force: text with %u for the origin's port. */
void
use_policy(struct fx *f, const char *fmt)
{
	use_policy_port(f, fmt, ntohs(f->o.sin.sin_port));
}

/* Add a line to the resolver's script. */
void
script(struct fx *f, const char *name, const char *addr, const char *error)
{
	assert_true(f->nscript < SCRIPT_MAX - 1);
	f->script[f->nscript].name = name;
	f->script[f->nscript].addr = addr;
	f->script[f->nscript].error = error;
	f->nscript++;
}

const char default_policy[] =
    "allow origin.test:%u\n"
    "allow-private 127.0.0.0/8\n";

/* Escalation on, with ask seconds (0: refuse at once). */
void
use_escalate(struct fx *f, int ask)
{
	assert_non_null(f->esc = escalate_create(f->base, "test", f->audit));
	assert_int_equal(gateway_set_escalate(f->gw, f->esc, NULL, ask), 0);
}

/* A fake address map over 127.77.0.0/16, with origin.test in it. */
void
use_fakeip(struct fx *f, uint8_t *addr)
{
	char	err[256];

	assert_non_null(f->fakeip = fakeip_create("127.77.0.0/16", 0, 0, err,
	    sizeof err));
	assert_int_equal(fakeip_assign(f->fakeip, "origin.test", "",
	    (uint64_t)time(NULL), 60, addr), 0);
	gateway_set_fakeip(f->gw, f->fakeip);
}

/* An address in the fake map's prefix that origin.test (at a) is not. */
const char *
fake_unused(const uint8_t *a)
{
	return (a[2] == 255 && a[3] == 254 ? "127.77.255.253" :
	    "127.77.255.254");
}

/* As pinhole does (gwctx_setup()): a client gone is an EPIPE. */
int
conn_group_setup(void **state)
{
	signal(SIGPIPE, SIG_IGN);
	return (0);
}

/* A gateway on a fresh loop, an origin, an audit log, a policy. */
int
fx_setup(void **state)
{
	struct fx	*f;
	char		 err[256];
	int		 fd, i;

	assert_non_null(f = calloc(1, sizeof *f));
	f->which = *state != NULL ? *(int *)*state : -1;
	f->c = f->idle = f->bh = -1;
	for (i = 0; i < FILL; i++)
		f->fill[i] = -1;
	assert_non_null(f->base = event_base_new());
	assert_non_null(f->res = resolver_create(f->base, NULL, err,
	    sizeof err));
	snprintf(f->dir, sizeof f->dir, "/tmp/test_conn.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->log, sizeof f->log, "%s/audit.log", f->dir);
	assert_non_null(f->audit = audit_open(f->log, err, sizeof err));
	gateway_config_defaults(&f->cfg);
	f->cfg.max_head = 4096;
	f->cfg.handshake_timeout = 1;
	f->cfg.idle_timeout = 1;
	f->cfg.connect_timeout = 1;
	f->cfg.session = "test";
	assert_non_null(f->gw = gateway_create(f->base, &f->cfg, f->res,
	    f->audit));
	assert_int_equal(origin_start(f, "127.0.0.1", 0), 0);
	assert_true((fd = listen_on("127.0.0.1", 0, &f->gwsin)) >= 0);
	assert_int_equal(gateway_listen_fd(f->gw, fd, CONN_PROXY, NULL, err,
	    sizeof err), 0);
	use_policy(f, default_policy);
	script(f, "origin.test", f->otext, NULL);
	script(f, "private.test", "10.1.2.3", NULL);
	script(f, "gone.test", NULL, "no such host");
	script(f, "slow.test", NULL, "timed out");
	script(f, "held.test", NULL, NULL);
	script(f, "nomem.test", NULL, fake_fail);
	fake_script = f->script;
	fake_held = NULL;
	fake_open = fake_cancels = 0;
	*state = f;
	return (0);
}

/*
 * A listener whose accept queue is full, so that the kernel drops the
 * SYNs to it: dialing it hangs.  origin.test goes to its port.
 */
void
blackhole(struct fx *f)
{
	struct sockaddr_in	sin;
	int			i;

	assert_true((f->bh = listen_on("127.0.0.1", 0, &sin)) >= 0);
	assert_int_equal(listen(f->bh, 0), 0);
	for (i = 0; i < FILL; i++) {
		assert_true((f->fill[i] = socket(AF_INET,
		    SOCK_STREAM | SOCK_NONBLOCK, 0)) >= 0);
		connect(f->fill[i], (struct sockaddr *)&sin, sizeof sin);
	}
	use_policy_port(f, default_policy, ntohs(sin.sin_port));
	f->bhport = ntohs(sin.sin_port);
}

/* Close the blackhole and what fills its queue. */
void
blackhole_stop(struct fx *f)
{
	int	i;

	if (f->bh != -1)
		close(f->bh);
	f->bh = -1;
	for (i = 0; i < FILL; i++) {
		if (f->fill[i] != -1)
			close(f->fill[i]);
		f->fill[i] = -1;
	}
}

/* Everything freed; no query left open. */
int
fx_teardown(void **state)
{
	struct fx	*f = *state;

	if (f->cev != NULL)
		event_free(f->cev);
	if (f->c != -1)
		close(f->c);
	gateway_free(f->gw);
	escalate_free(f->esc);
	fakeip_free(f->fakeip);
	origin_stop(&f->o);
	blackhole_stop(f);
	event_base_loop(f->base, EVLOOP_NONBLOCK);
	assert_int_equal(fake_open, 0);
	fake_script = NULL;
	audit_close(f->audit);
	resolver_free(f->res);
	event_base_free(f->base);
	unlink(f->log);
	rmdir(f->dir);
	free(f);
	return (0);
}

/* The client's socket is readable. */
static void
client_read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct fx	*f = arg;
	ssize_t		 n;

	n = recv(fd, f->cbuf + f->clen, sizeof f->cbuf - 1 - f->clen, 0);
	if (n == -1 && errno == EAGAIN)
		return;
	if (n <= 0) {
		f->ceof = 1;
		f->creset = n == -1 && errno == ECONNRESET;
		event_del(f->cev);
		return;
	}
	f->clen += n;
	f->cbuf[f->clen] = '\0';
}

/* Connect a client to sin. */
void
client_to(struct fx *f, const struct sockaddr_in *sin)
{
	assert_true((f->c = socket(AF_INET, SOCK_STREAM, 0)) >= 0);
	if (f->rcvbuf > 0)
		setsockopt(f->c, SOL_SOCKET, SO_RCVBUF, &f->rcvbuf,
		    sizeof f->rcvbuf);
	assert_int_equal(connect(f->c, (const struct sockaddr *)sin,
	    sizeof *sin), 0);
	evutil_make_socket_nonblocking(f->c);
	assert_non_null(f->cev = event_new(f->base, f->c,
	    EV_READ | EV_PERSIST, client_read_cb, f));
	event_add(f->cev, NULL);
}

/* Send the client's text to the proxy. */
void
say(struct fx *f, const char *text)
{
	put(f->c, text, strlen(text));
}

/* Connect a client to the proxy and send it text. */
void
client(struct fx *f, const char *text)
{
	client_to(f, &f->gwsin);
	if (text != NULL)
		say(f, text);
}

/* Close the client. */
void
client_close(struct fx *f)
{
	if (f->cev != NULL)
		event_free(f->cev);
	if (f->c != -1)
		close(f->c);
	f->cev = NULL;
	f->c = -1;
	f->clen = 0;
	f->cbuf[0] = '\0';
	f->ceof = f->creset = 0;
}

/* Forget what the client has received so far. */
void
client_clear(struct fx *f)
{
	f->clen = 0;
	f->cbuf[0] = '\0';
}

/* A CONNECT request for host:port. */
const char *
connect_to(struct fx *f, const char *host, int port)
{
	static char	buf[256];

	snprintf(buf, sizeof buf, "CONNECT %s:%d HTTP/1.1\r\n"
	    "Host: %s:%d\r\n\r\n", host, port, host, port);
	return (buf);
}

/* A deadline passed. */
static void
expired_cb(evutil_socket_t fd, short what, void *arg)
{
	*(int *)arg = 1;
}

/* Run the loop until pred holds, or ms pass.  Returns pred. */
int
run_until(struct fx *f, int (*pred)(struct fx *), int ms)
{
	struct timeval	 tv = { ms / 1000, (ms % 1000) * 1000 };
	struct event	*t;
	int		 expired = 0;

	assert_non_null(t = evtimer_new(f->base, expired_cb, &expired));
	evtimer_add(t, &tv);
	while (!pred(f) && !expired)
		event_base_loop(f->base, EVLOOP_ONCE);
	event_free(t);
	return (pred(f));
}

/* Never holds: run the loop for a while. */
int
never(struct fx *f)
{
	(void)f;
	return (0);
}

/* The client has received f->want. */
int
got_want(struct fx *f)
{
	return (strstr(f->cbuf, f->want) != NULL);
}

/* The client's connection was closed. */
int
got_eof(struct fx *f)
{
	return (f->ceof);
}

/* The gateway has no connection left. */
int
no_conns(struct fx *f)
{
	return (gateway_connections(f->gw) == 0);
}

/* A query is held. */
int
query_held(struct fx *f)
{
	return (fake_held != NULL);
}

/* The escalation queue has a pending request. */
int
ask_pending(struct fx *f)
{
	return (escalate_npending(f->esc) > 0);
}

/* Wait until the client has received text. */
void
expect(struct fx *f, const char *text)
{
	f->want = text;
	if (!run_until(f, got_want, WAIT_MS))
		fail_msg("client never got \"%s\"; got \"%s\"", text, f->cbuf);
}

/* Wait until the client's connection is closed. */
void
expect_eof(struct fx *f)
{
	if (!run_until(f, got_eof, WAIT_MS))
		fail_msg("client connection still open; got \"%s\"", f->cbuf);
}

/* Wait until pred holds. */
void
expect_that(struct fx *f, int (*pred)(struct fx *), const char *what)
{
	if (!run_until(f, pred, WAIT_MS))
		fail_msg("%s: not in time", what);
}

/* Does the client's answer begin with this status line? */
void
expect_status(struct fx *f, const char *status)
{
	expect(f, "\r\n\r\n");
	if (strncmp(f->cbuf, status, strlen(status)) != 0)
		fail_msg("want \"%s\", got \"%s\"", status, f->cbuf);
}

/* Is an audit field as wanted (NULL: absent, "*": anything)? */
static int
audit_field_is(const struct audit_rec *rec, const char *key,
    const char *want)
{
	const char	*s = audit_rec_str(rec, key);

	if (want != NULL && strcmp(want, "*") == 0)
		return (1);
	if (want == NULL)
		return (s == NULL);
	return (s != NULL && strcmp(s, want) == 0);
}

/* Read the next audit line into rec (its strings in store). */
static int
audit_next(FILE *fp, char *store, size_t len, struct audit_rec *rec)
{
	char	line[4096];

	if (fgets(line, sizeof line, fp) == NULL)
		return (0);
	if (audit_rec_parse(line, strlen(line), store, len, rec) == -1)
		fail_msg("bad audit line: %s", line);
	return (1);
}

/*
 * Count the audit lines with this event, verdict and reason (NULL:
 * absent; "*": any), and status (-1: any).
 */
int
count_audit(struct fx *f, const char *event, const char *verdict,
    const char *reason, int status)
{
	FILE		*fp;
	char		 store[4096];
	struct audit_rec rec;
	int		 n = 0;

	assert_non_null(fp = fopen(f->log, "r"));
	while (audit_next(fp, store, sizeof store, &rec)) {
		if (audit_field_is(&rec, "event", event) &&
		    audit_field_is(&rec, "verdict", verdict) &&
		    audit_field_is(&rec, "reason", reason) &&
		    (status == -1 || audit_rec_num(&rec, "status") == status))
			n++;
	}
	fclose(fp);
	return (n);
}

/* Count the audit lines where key is value. */
int
count_audit_field(struct fx *f, const char *key, const char *value)
{
	FILE		*fp;
	char		 store[4096];
	struct audit_rec rec;
	int		 n = 0;

	assert_non_null(fp = fopen(f->log, "r"));
	while (audit_next(fp, store, sizeof store, &rec))
		n += audit_field_is(&rec, key, value);
	fclose(fp);
	return (n);
}

/* Exactly one audit line like this. */
void
expect_audit(struct fx *f, const char *event, const char *verdict,
    const char *reason, int status)
{
	int	n = count_audit(f, event, verdict, reason, status);
	FILE	*fp;
	char	 line[4096];

	if (n == 1)
		return;
	if ((fp = fopen(f->log, "r")) != NULL) {
		while (fgets(line, sizeof line, fp) != NULL)
			print_error("audit: %s", line);
		fclose(fp);
	}
	fail_msg("%d audit lines with event %s verdict %s reason %s "
	    "status %d", n, event, verdict != NULL ? verdict : "-",
	    reason != NULL ? reason : "-", status);
}

/*
 * The client is refused: this status and Pinhole-Error, and one audit
 * line with this event, verdict and reason.
 */
void
expect_refusal(struct fx *f, int status, const char *perr,
    const char *event, const char *verdict, const char *reason)
{
	char	line[64];

	snprintf(line, sizeof line, "HTTP/1.1 %d ", status);
	expect_status(f, line);
	snprintf(line, sizeof line, "Pinhole-Error: %s\r\n", perr);
	expect(f, line);
	expect_audit(f, event, verdict, reason, status);
}
