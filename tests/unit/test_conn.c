/*
 * Unit tests: client connections through the gateway, state by state, on
 * a real event loop over loopback sockets.  Origins are scripted servers
 * on 127.0.0.0/8 accepted in the same loop; names resolve by a fake
 * resolver answering from each test's script (it defines every function
 * of proxy/resolver/resolver.h, so the real one is never linked in).
 * Only the gateway's public interface is used.
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/stat.h>

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

#define WAIT_MS		2500	/* longest wait for anything */
#define SCRIPT_MAX	8
#define BUF_MAX		16384
#define SNIFF_PORT	8888	/* a port where capture waits for bytes */
#define FILL		4	/* connections that fill an accept queue */

/* The states test_client_closes and test_free_in leave a connection in. */
enum reach {
	R_HEAD,		/* half a head */
	R_RESOLVE,	/* the query held */
	R_DIAL,		/* connecting to a server that never accepts */
	R_TUNNEL,
	R_FORWARD,	/* the request sent, no answer */
	R_ASK,		/* held for a decision */
	R_AGENT,	/* half a body */
	R_REPLY,	/* answers the client does not read */
	R_MAX
};

/* Say why a capture test cannot run, and skip it. */
#define skip_busy() do {						\
	print_message("port %d on 127.77/16 or 127.78/16 is taken\n",	\
	    SNIFF_PORT);						\
	skip();								\
} while (0)


/* What a name resolves to: an address, an error, or (both NULL) held. */
struct fake_answer {
	const char	*name;
	const char	*addr;
	const char	*error;
};

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
static struct resolver_query	*fake_held;
static int			 fake_open;	/* still pending */
static int			 fake_cancels;

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
static void
fake_release(const struct fake_answer *a)
{
	struct resolver_query	*q = fake_held;

	assert_non_null(q);
	fake_held = NULL;
	q->a = a;
	event_active(q->ev, EV_TIMEOUT, 0);
}

/* How an origin answers. */
enum origin_mode {
	O_ECHO,		/* bytes back; on EOF "bye" and close */
	O_HTTP,		/* 200 to each request (chunked to a chunked one) */
	O_BAD,		/* garbage for a response head */
	O_SHUT,		/* close on the request */
	O_SILENT,	/* never answer */
	O_UPGRADE,	/* 101 Switching Protocols */
	O_REPLY,	/* o->reply to each request, then as o->after */
	O_PROXY		/* an upstream proxy: proxy_reply to each head */
};

struct origin {
	int		 lfd;
	struct event	*lev;
	struct sockaddr_in sin;
	enum origin_mode mode;
	int		 accepts;
	int		 fd;		/* the last connection accepted */
	struct event	*ev;
	char		 in[BUF_MAX];
	size_t		 inlen;
	int		 requests;
	int		 eof;
	const char	*reply;		/* O_REPLY: the answer */
	int		 close_after;	/* O_REPLY: close once it is sent */
	char		 head[BUF_MAX];	/* the last request head */
	const char	*proxy_reply;	/* O_PROXY: its answer; 200: a tunnel */
	char		 heads[BUF_MAX];	/* O_PROXY: what it was asked */
};

struct fx {
	struct event_base	*base;
	struct resolver		*res;
	char			 dir[64];
	char			 log[96];
	struct audit		*audit;
	struct gateway_config	 cfg;
	struct gateway		*gw;
	struct escalate		*esc;
	struct fakeip		*fakeip;
	struct sockaddr_in	 gwsin;		/* the proxy listener */
	struct origin		 o;
	char			 otext[INET6_ADDRSTRLEN];
	struct fake_answer	 script[SCRIPT_MAX];
	size_t			 nscript;
	int			 c;		/* the client */
	struct event		*cev;
	char			 cbuf[BUF_MAX];
	size_t			 clen;
	int			 ceof;
	int			 creset;
	const char		*want;
	size_t			 want_len;
	int			 rcvbuf;	/* client's SO_RCVBUF, or 0 */
	int			 idle;		/* a client sending nothing */
	int			 which;		/* the state to reach, or -1 */
	int			 bh;		/* blackhole(), or -1 */
	int			 fill[FILL];
	int			 bhport;
	uint8_t			 fake[4];	/* origin.test's fake address */
	int			 stopped;
	int			 want_asks;	/* origin_asked() */
};

/* A TCP socket bound to addr:port (port 0: any), listening; -1 if busy. */
static int
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
static void
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
static void
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
static int
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
static void
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

/* Put the policy in force: text with up to two %u for port. */
static void
policy_port(struct fx *f, const char *fmt, int port)
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
static void
policy(struct fx *f, const char *fmt)
{
	policy_port(f, fmt, ntohs(f->o.sin.sin_port));
}

/* Add a line to the resolver's script. */
static void
script(struct fx *f, const char *name, const char *addr, const char *error)
{
	assert_true(f->nscript < SCRIPT_MAX - 1);
	f->script[f->nscript].name = name;
	f->script[f->nscript].addr = addr;
	f->script[f->nscript].error = error;
	f->nscript++;
}

static const char default_policy[] =
    "allow origin.test:%u\n"
    "allow-private 127.0.0.0/8\n";

/* A gateway on a fresh loop, an origin, an audit log, a policy. */
static int
setup(void **state)
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
	policy(f, default_policy);
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

/* Close the blackhole and what fills its queue. */
static void
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
static int
teardown(void **state)
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
static void
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
static void
say(struct fx *f, const char *text)
{
	put(f->c, text, strlen(text));
}

/* Connect a client to the proxy and send it text. */
static void
client(struct fx *f, const char *text)
{
	client_to(f, &f->gwsin);
	if (text != NULL)
		say(f, text);
}

/* Close the client. */
static void
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
static void
client_clear(struct fx *f)
{
	f->clen = 0;
	f->cbuf[0] = '\0';
}

/* A deadline passed. */
static void
expired_cb(evutil_socket_t fd, short what, void *arg)
{
	*(int *)arg = 1;
}

/* Run the loop until pred holds, or ms pass.  Returns pred. */
static int
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

/* The client has received f->want. */
static int
got_want(struct fx *f)
{
	return (strstr(f->cbuf, f->want) != NULL);
}

/* The client has received f->want_len bytes. */
static int
got_len(struct fx *f)
{
	return (f->clen >= f->want_len);
}

/* The client's connection was closed. */
static int
got_eof(struct fx *f)
{
	return (f->ceof);
}

/* The gateway has no connection left. */
static int
no_conns(struct fx *f)
{
	return (gateway_connections(f->gw) == 0);
}

/* A query is held. */
static int
query_held(struct fx *f)
{
	return (fake_held != NULL);
}

/* The origin has a connection. */
static int
origin_connected(struct fx *f)
{
	return (f->o.accepts > 0);
}

/* The origin saw EOF. */
static int
origin_eof(struct fx *f)
{
	return (f->o.eof);
}

/* The escalation queue has a pending request. */
static int
ask_pending(struct fx *f)
{
	return (escalate_npending(f->esc) > 0);
}

/* The gateway said it stopped. */
static int
is_stopped(struct fx *f)
{
	return (f->stopped);
}

/* Wait until the client has received text. */
static void
expect(struct fx *f, const char *text)
{
	f->want = text;
	if (!run_until(f, got_want, WAIT_MS))
		fail_msg("client never got \"%s\"; got \"%s\"", text, f->cbuf);
}

/* Wait until the client's connection is closed. */
static void
expect_eof(struct fx *f)
{
	if (!run_until(f, got_eof, WAIT_MS))
		fail_msg("client connection still open; got \"%s\"", f->cbuf);
}

/* Wait until pred holds. */
static void
expect_that(struct fx *f, int (*pred)(struct fx *), const char *what)
{
	if (!run_until(f, pred, WAIT_MS))
		fail_msg("%s: not in time", what);
}

/* Does the client's answer begin with this status line? */
static void
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
static int
audit_count(struct fx *f, const char *event, const char *verdict,
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
static int
audit_count_field(struct fx *f, const char *key, const char *value)
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
static void
expect_audit(struct fx *f, const char *event, const char *verdict,
    const char *reason, int status)
{
	int	n = audit_count(f, event, verdict, reason, status);
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
static void
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

/* A CONNECT request for host:port. */
static const char *
connect_to(struct fx *f, const char *host, int port)
{
	static char	buf[256];

	snprintf(buf, sizeof buf, "CONNECT %s:%d HTTP/1.1\r\n"
	    "Host: %s:%d\r\n\r\n", host, port, host, port);
	return (buf);
}

/* The origin's port. */
static int
oport(struct fx *f)
{
	return (ntohs(f->o.sin.sin_port));
}

/*
 * A listener whose accept queue is full, so that the kernel drops the
 * SYNs to it: dialing it hangs.  origin.test goes to its port.
 */
static void
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
	policy_port(f, default_policy, ntohs(sin.sin_port));
	f->bhport = ntohs(sin.sin_port);
}

/* A malformed head: 400, closed (S_HEAD, S_REPLY). */
static void
test_malformed(void **state)
{
	struct fx	*f = *state;

	client(f, "BLAH\r\n\r\n");
	expect_status(f, "HTTP/1.1 400 ");
	expect(f, "Connection: close\r\n");
	expect_eof(f);
	expect_audit(f, "request", "deny", "malformed request", 400);
}

/* An unknown transfer coding: 501. */
static void
test_unsupported(void **state)
{
	struct fx	*f = *state;

	client(f, "POST http://origin.test/ HTTP/1.1\r\nHost: origin.test\r\n"
	    "Transfer-Encoding: gzip\r\n\r\n");
	expect_status(f, "HTTP/1.1 501 ");
	expect_eof(f);
	/* Audited "allow" today, as every refusal of 500 and up. */
	expect_audit(f, "request", "*", "not supported by this proxy", 501);
}

/* A head past max_head: 431. */
static void
test_head_too_large(void **state)
{
	struct fx	*f = *state;
	char		 big[5000];

	memset(big, 'a', sizeof big);
	memcpy(big, "GET http://origin.test/ HTTP/1.1\r\nX: ", 37);
	big[sizeof big - 1] = '\0';
	client(f, big);
	expect_status(f, "HTTP/1.1 431 ");
	expect_eof(f);
	expect_audit(f, "request", "deny", "request head too large", 431);
}

/* A host that is no host: 400. */
static void
test_bad_host(void **state)
{
	struct fx	*f = *state;

	client(f, connect_to(f, "bad_name!", 443));
	expect_status(f, "HTTP/1.1 400 ");
	expect_eof(f);
	expect_audit(f, "connect", "deny", "*", 400);
}

/* The info page, twice on one connection (S_REPLY back to S_HEAD). */
static void
test_info_page(void **state)
{
	struct fx	*f = *state;

	client(f, "GET / HTTP/1.1\r\nHost: proxy\r\n\r\n");
	expect_status(f, "HTTP/1.1 200 ");
	expect(f, "This is pinhole");
	expect(f, "Connection: keep-alive\r\n");
	client_clear(f);
	say(f, "GET / HTTP/1.1\r\nHost: proxy\r\n\r\n");
	expect_status(f, "HTTP/1.1 200 ");
	expect(f, "(default: nothing)");
	assert_int_equal(audit_count(f, "request", NULL, "info-page", 200), 2);
	assert_false(f->ceof);
}

/* CONNECT allowed: resolve, dial, tunnel both ways, half-close. */
static void
test_connect_tunnel(void **state)
{
	struct fx	*f = *state;

	client(f, connect_to(f, "origin.test", oport(f)));
	expect(f, "HTTP/1.1 200 Connection established\r\n\r\n");
	expect_audit(f, "connect", "allow", NULL, 200);
	client_clear(f);
	put(f->c, "ping", 4);
	expect(f, "ping");
	shutdown(f->c, SHUT_WR);
	expect_that(f, origin_eof, "EOF passed to the origin");
	expect(f, "pingbye");
	expect_eof(f);
	assert_string_equal(f->o.in, "ping");
	assert_int_equal(f->o.accepts, 1);
	expect_audit(f, "close", NULL, "eof", 200);
	expect_that(f, no_conns, "connection freed");
}

/* Forwarding: two requests on one connection and one server, chunked. */
static void
test_forward_keepalive(void **state)
{
	struct fx	*f = *state;
	char		 req[512];

	f->o.mode = O_HTTP;
	snprintf(req, sizeof req, "GET http://origin.test:%d/a HTTP/1.1\r\n"
	    "Host: origin.test:%d\r\n\r\n", oport(f), oport(f));
	client(f, req);
	expect_status(f, "HTTP/1.1 200 OK\r\n");
	expect(f, "\r\n\r\nok");
	assert_null(strstr(f->cbuf, "Connection: close"));
	client_clear(f);
	snprintf(req, sizeof req, "POST http://origin.test:%d/b HTTP/1.1\r\n"
	    "Host: origin.test:%d\r\nTransfer-Encoding: chunked\r\n\r\n"
	    "3\r\nabc\r\n0\r\n\r\n", oport(f), oport(f));
	put(f->c, req, strlen(req));
	expect(f, "5\r\nhello\r\n0\r\n\r\n");
	assert_int_equal(f->o.accepts, 1);
	assert_int_equal(f->o.requests, 2);
	assert_int_equal(audit_count(f, "request", "allow", NULL, 200), 2);
	assert_false(f->ceof);
}

static int	never(struct fx *);

#define SCRUB_VALUE	"s3cr3t-v@lue/42"
#define SCRUB_PH	"PINHOLE-SECRET-TOK-MASKED"

/*
 * A policy with secret TOK for origin.test, its value SCRUB_VALUE; the
 * gateway is given it as cli/gwopts.c gives it.
 */
static void
policy_secret(struct fx *f)
{
	static struct conn_secret	 sec;
	const struct rules_secret	*rs;
	struct rules			*r;
	char				 text[256], err[256];

	snprintf(text, sizeof text, "allow origin.test:%d\n"
	    "allow 127.0.0.1:%d\nallow-private 127.0.0.0/8\n"
	    "secret TOK for origin.test\n", oport(f), oport(f));
	assert_non_null(r = rules_create());
	if (rules_load_text(r, "test", text, strlen(text), err,
	    sizeof err) == -1)
		fail_msg("%s", err);
	assert_int_equal(rules_secrets(r, &rs, 1), 1);
	sec.rule = rs;
	sec.value = SCRUB_VALUE;
	sec.len = strlen(SCRUB_VALUE);
	gateway_set_rules(f->gw, r);
	gateway_set_secrets(f->gw, &sec, 1);
}

/*
 * Forward one GET for origin.test over HTTP/1.minor, the origin's
 * answer being reply; wait for want.
 */
static void
scrub_exchange(struct fx *f, int minor, const char *reply, const char *want)
{
	char	req[512];

	f->o.mode = O_REPLY;
	f->o.reply = reply;
	snprintf(req, sizeof req, "GET http://origin.test:%d/echo HTTP/1.%d\r\n"
	    "Host: origin.test\r\nAccept-Encoding: gzip, br\r\n\r\n",
	    oport(f), minor);
	client(f, req);
	expect(f, want);
}

/*
 * A response from a host a secret is for: the value, raw, base64 and
 * percent-encoded, in the head and in a body of any framing, is replaced
 * by the placeholder; the body goes chunked (the length changed), the
 * origin was asked for no coding, and the line names the secret.
 */
static void
test_forward_scrub(void **state)
{
	static const char *const replies[] = {
	    "HTTP/1.1 200 OK\r\nX-Echo: Bearer " SCRUB_VALUE "\r\n"
	    "Content-Length: 32\r\n\r\n{\"t\":\"" SCRUB_VALUE "\",\"end\":1}\n",
	    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n"
	    "Trailer: X-T\r\n\r\n9\r\nb64=czNjc\r\n"
	    "b\r\njN0LXZAbHVl\r\n8\r\nLzQy end\r\n0\r\nX-T: " SCRUB_VALUE
	    "\r\n\r\n",
	    ("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n"
	    "q=s3cr3t-v%40lue%2F42 end"),
	};
	struct fx	*f = *state;
	size_t		 i;

	policy_secret(f);
	for (i = 0; i < sizeof replies / sizeof replies[0]; i++) {
		f->o.close_after = i == 2;
		scrub_exchange(f, 1, replies[i], "0\r\n\r\n");
		assert_null(strstr(f->cbuf, "s3cr3t"));
		assert_null(strstr(f->cbuf, "czNjcjN0LXZAbHVlLzQy"));
		assert_non_null(strstr(f->cbuf, SCRUB_PH));
		assert_non_null(strstr(f->cbuf, "Transfer-Encoding: chunked"));
		assert_null(strstr(f->cbuf, "Content-Length"));
		assert_null(strstr(f->cbuf, "X-T"));
		assert_non_null(strstr(f->cbuf, "end"));
		assert_non_null(strstr(f->o.head, "Accept-Encoding: identity"));
		assert_null(strstr(f->o.head, "gzip"));
		client_close(f);
	}
	assert_int_equal(audit_count_field(f, "secret_scrubbed", "TOK"), 3);
}

/*
 * A value cut between two reads, in the chunks of a body that comes in
 * two pieces: held back, then replaced whole.
 */
static void
test_forward_scrub_split(void **state)
{
	struct fx	*f = *state;
	static const char rest[] = "8\r\nv@lue/42\r\n0\r\n\r\n";

	policy_secret(f);
	scrub_exchange(f, 1, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked"
	    "\r\n\r\n8\r\n=s3cr3t-\r\n", "\r\n\r\n");
	run_until(f, never, 100);
	assert_null(strstr(f->cbuf, "s3cr3t"));
	put(f->o.fd, rest, sizeof rest - 1);
	expect(f, "0\r\n\r\n");
	assert_non_null(strstr(f->cbuf, "1\r\n=\r\n"));
	assert_non_null(strstr(f->cbuf, "\r\n" SCRUB_PH "\r\n0\r\n\r\n"));
	assert_null(strstr(f->cbuf, "s3cr3t"));
	assert_int_equal(audit_count_field(f, "secret_scrubbed", "TOK"), 1);
}

/*
 * To an HTTP/1.0 client the scrubbed body ends with the connection; a
 * HEAD's answer keeps its length; a coded body cannot be read: 502.
 */
static void
test_forward_scrub_framing(void **state)
{
	struct fx	*f = *state;
	char		 req[512];

	policy_secret(f);
	scrub_exchange(f, 0, "HTTP/1.1 200 OK\r\nContent-Length: 16\r\n"
	    "\r\n=" SCRUB_VALUE, "Connection: close");
	expect_eof(f);
	assert_non_null(strstr(f->cbuf, "\r\n\r\n=" SCRUB_PH));
	assert_null(strstr(f->cbuf, "chunked"));
	client_close(f);
	f->o.reply = "HTTP/1.1 200 OK\r\nContent-Length: 16\r\n\r\n";
	snprintf(req, sizeof req, "HEAD http://origin.test:%d/ HTTP/1.1\r\n"
	    "Host: origin.test\r\n\r\n", oport(f));
	client(f, req);
	expect(f, "Content-Length: 16\r\n");
	client_close(f);
	scrub_exchange(f, 1, "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n"
	    "Content-Length: 16\r\n\r\n=" SCRUB_VALUE, "\r\n\r\n");
	expect_refusal(f, 502, "secret-unscannable", "request", "allow",
	    "secret-unscannable");
	assert_null(strstr(f->cbuf, "s3cr3t"));
	assert_int_equal(audit_count_field(f, "secret_scrubbed", "TOK"), 1);
}

/* A host no secret is for: its answer as it came. */
static void
test_forward_scrub_other(void **state)
{
	struct fx	*f = *state;
	char		 req[512];

	policy_secret(f);
	f->o.mode = O_REPLY;
	f->o.reply = "HTTP/1.1 200 OK\r\nContent-Length: 16\r\n\r\n="
	    SCRUB_VALUE;
	snprintf(req, sizeof req, "GET http://127.0.0.1:%d/ HTTP/1.1\r\n"
	    "Host: 127.0.0.1\r\nAccept-Encoding: gzip\r\n\r\n", oport(f));
	client(f, req);
	expect(f, "=" SCRUB_VALUE);
	assert_non_null(strstr(f->cbuf, "Content-Length: 16"));
	assert_non_null(strstr(f->o.head, "gzip"));
}

/* Never holds: run the loop for a while. */
static int
never(struct fx *f)
{
	(void)f;
	return (0);
}

/* Milliseconds on the monotonic clock. */
static int64_t
mono_now_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}

/*
 * A kept-alive connection waits the whole idle timeout (1 s here) after
 * its last answer, though its timer was armed by an earlier request.
 */
static void
test_forward_keepalive_idle(void **state)
{
	struct fx	*f = *state;
	char		 req[512];
	int64_t		 answered;

	f->o.mode = O_HTTP;
	snprintf(req, sizeof req, "GET http://origin.test:%d/a HTTP/1.1\r\n"
	    "Host: origin.test:%d\r\n\r\n", oport(f), oport(f));
	client(f, req);
	expect(f, "\r\n\r\nok");
	run_until(f, never, 600);
	assert_false(f->ceof);
	client_clear(f);
	put(f->c, req, strlen(req));
	expect(f, "\r\n\r\nok");
	answered = mono_now_ms();
	expect_eof(f);
	if (mono_now_ms() - answered < 900)
		fail_msg("closed %lld ms after the last answer",
		    (long long)(mono_now_ms() - answered));
	assert_int_equal(f->o.requests, 2);
}

/* A broken chunked request body: 400. */
static void
test_forward_broken_chunked(void **state)
{
	struct fx	*f = *state;
	char		 req[512];

	f->o.mode = O_HTTP;
	snprintf(req, sizeof req, "POST http://origin.test:%d/ HTTP/1.1\r\n"
	    "Host: origin.test\r\nTransfer-Encoding: chunked\r\n\r\n"
	    "zz\r\n", oport(f));
	client(f, req);
	expect_status(f, "HTTP/1.1 400 ");
	expect_eof(f);
	expect_audit(f, "request", "deny", "broken chunked body", 400);
}

/* The origin answers what cannot be relayed: 502 each time. */
static void
test_forward_bad_upstream(void **state)
{
	static const struct {
		enum origin_mode	 mode;
		const char		*why;
	} cases[] = {
		{ O_BAD, "malformed response from upstream" },
		{ O_SHUT, "upstream closed the connection without answering" },
		{ O_UPGRADE, "unexpected upgrade from upstream" }
	};
	struct fx	*f = *state;
	char		 req[512];
	size_t		 i;

	snprintf(req, sizeof req, "GET http://origin.test:%d/ HTTP/1.1\r\n"
	    "Host: origin.test\r\n\r\n", oport(f));
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		f->o.mode = cases[i].mode;
		client(f, req);
		expect_refusal(f, 502, "bad-gateway", "request", "allow",
		    cases[i].why);
		expect(f, cases[i].why);
		client_close(f);
	}
}

/* An upgrade asked for and given: the exchange becomes a tunnel. */
static void
test_forward_upgrade(void **state)
{
	struct fx	*f = *state;
	char		 req[512];

	f->o.mode = O_UPGRADE;
	snprintf(req, sizeof req, "GET http://origin.test:%d/ HTTP/1.1\r\n"
	    "Host: origin.test\r\nConnection: upgrade\r\nUpgrade: x\r\n\r\n",
	    oport(f));
	client(f, req);
	expect_status(f, "HTTP/1.1 101 ");
	client_clear(f);
	put(f->c, "up", 2);
	expect(f, "up");
	expect_audit(f, "request", "allow", "upgrade", 101);
}

/* An absolute-form GET to origin.test asking to upgrade to proto. */
static const char *
upgrade_to(struct fx *f, const char *path, const char *proto)
{
	static char	req[512];

	snprintf(req, sizeof req, "GET http://origin.test:%d%s HTTP/1.1\r\n"
	    "Host: origin.test\r\nConnection: upgrade\r\nUpgrade: %s\r\n"
	    "\r\n", oport(f), path, proto);
	return (req);
}

/*
 * On a host whose rule checks requests, an upgrade would leave a tunnel
 * no rule reads: h2c is refused, and so is a WebSocket unless the rule
 * says websocket; the origin is never asked, and the audit line says
 * why.
 */
static void
test_forward_upgrade_checked(void **state)
{
	struct fx	*f = *state;

	policy(f, "allow origin.test:%u methods GET\nallow-private 127.0.0.0/8\n");
	f->o.mode = O_UPGRADE;
	client(f, upgrade_to(f, "/", "h2c"));
	expect_refusal(f, 403, "constraint", "request", "deny", "constraint");
	assert_int_equal(f->o.accepts, 0);
	client_close(f);
	client(f, upgrade_to(f, "/live", "WebSocket"));
	expect_status(f, "HTTP/1.1 403 ");
	expect(f, "Pinhole-Error: constraint\r\n");
	expect(f, "needs a rule that says websocket");
	assert_int_equal(f->o.accepts, 0);
	assert_int_equal(audit_count_field(f, "detail", "upgrade: a WebSocket "
	    "to /live needs a rule that says websocket (its frames are not "
	    "read)"), 1);
	assert_int_equal(audit_count(f, "request", "allow", "upgrade", 101), 0);
}

/*
 * A rule that says websocket lets a WebSocket through as a GET on its
 * paths, and the exchange becomes a tunnel; elsewhere on the host, or
 * to h2c, the upgrade is refused.
 */
static void
test_forward_websocket(void **state)
{
	struct fx	*f = *state;

	policy(f, "allow origin.test:%u read-only websocket path /live/**\n"
	    "allow-private 127.0.0.0/8\n");
	f->o.mode = O_UPGRADE;
	client(f, upgrade_to(f, "/other", "websocket"));
	expect_refusal(f, 403, "constraint", "request", "deny", "constraint");
	client_close(f);
	client(f, upgrade_to(f, "/live/x", "h2c"));
	expect_status(f, "HTTP/1.1 403 ");
	assert_int_equal(f->o.accepts, 0);
	client_close(f);
	client(f, upgrade_to(f, "/live/x", "websocket"));
	expect_status(f, "HTTP/1.1 101 ");
	client_clear(f);
	put(f->c, "frame", 5);
	expect(f, "frame");
	expect_audit(f, "request", "allow", "upgrade", 101);
}

/* An absolute-form GET of origin.test's /x with these header lines. */
static const char *
get_x(struct fx *f, const char *headers)
{
	static char	req[512];

	snprintf(req, sizeof req, "GET http://origin.test:%d/x HTTP/1.1\r\n"
	    "Host: origin.test\r\n%s\r\n", oport(f), headers);
	return (req);
}

/*
 * A method override header names the method a framework acts on: on a
 * host whose rule checks methods, a GET carrying DELETE is refused, one
 * given twice too, and the origin never sees them; the GET alone, or
 * naming an allowed method, goes through on the same connection.
 */
static void
test_forward_override(void **state)
{
	struct fx	*f = *state;

	policy(f, "allow origin.test:%u read-only\nallow-private 127.0.0.0/8\n");
	f->o.mode = O_HTTP;
	client(f, get_x(f, "X-HTTP-Method-Override: DELETE\r\n"));
	expect_refusal(f, 403, "constraint", "request", "deny", "constraint");
	expect(f, "X-HTTP-Method-Override: DELETE is not a read");
	assert_int_equal(audit_count_field(f, "detail", "read-only: GET /x "
	    "with X-HTTP-Method-Override: DELETE is not a read"), 1);
	client_clear(f);
	say(f, get_x(f, "X-HTTP-Method: HEAD\r\nX-Method-Override: HEAD\r\n"));
	expect(f, "is given twice");
	client_clear(f);
	say(f, get_x(f, "x-method-override: head\r\n"));
	expect_status(f, "HTTP/1.1 200 OK\r\n");
	expect(f, "\r\n\r\nok");
	client_clear(f);
	say(f, get_x(f, ""));
	expect_status(f, "HTTP/1.1 200 OK\r\n");
	expect(f, "\r\n\r\nok");
	assert_int_equal(f->o.requests, 2);
	assert_null(memmem(f->o.in, f->o.inlen, "DELETE", 6));
	assert_int_equal(audit_count(f, "request", "deny", "constraint", 403),
	    2);
	/* The allowed requests' lines carry no refusal's detail. */
	assert_int_equal(audit_count_field(f, "detail", "read-only: "
	    "X-HTTP-Method is given twice, or does not name one method"), 1);
}

/* Has the origin read the request's body? */
static int
origin_got_body(struct fx *f)
{
	return (memmem(f->o.in, f->o.inlen, "\r\n\r\nhi", 6) != NULL);
}

/*
 * The length goes upstream as the gateway framed the body, once: a
 * list another parser could read otherwise (", 2" as 0) never does.
 */
static void
test_forward_length_canonical(void **state)
{
	struct fx	*f = *state;
	char		 req[512];

	snprintf(req, sizeof req, "POST http://origin.test:%d/ HTTP/1.1\r\n"
	    "Host: origin.test\r\nContent-Length: 2, 2\r\n"
	    "Content-Length: 2\r\n\r\nhi", oport(f));
	client(f, req);
	expect_that(f, origin_got_body, "the body at the origin");
	assert_non_null(memmem(f->o.in, f->o.inlen, "\r\nContent-Length: 2\r\n",
	    21));
	assert_null(memmem(f->o.in, f->o.inlen, "2, 2", 4));
	assert_null(memmem(f->o.in, f->o.inlen, "Content-Length: 2\r\n"
	    "Content-Length", 33));
}

/* The origin says nothing: 504 at the idle timeout. */
static void
test_forward_silent(void **state)
{
	struct fx	*f = *state;
	char		 req[512];

	f->o.mode = O_SILENT;
	snprintf(req, sizeof req, "GET http://origin.test:%d/ HTTP/1.1\r\n"
	    "Host: origin.test\r\n\r\n", oport(f));
	client(f, req);
	expect_status(f, "HTTP/1.1 504 ");
	expect_audit(f, "request", "allow", "upstream did not answer in time",
	    504);
}

/* Refusals by policy: host, port, IP literal, private address. */
static void
test_denied(void **state)
{
	struct fx	*f = *state;

	client(f, connect_to(f, "other.test", 443));
	expect_refusal(f, 403, "denied-by-policy", "connect", "deny",
	    "denied-by-policy");
	expect(f, "Pinhole-Request: pinhole request other.test:443\r\n");
	expect(f, "pinhole request other.test");
	expect_eof(f);
	assert_int_equal(fake_open + fake_cancels, 0);	/* never resolved */
}

/* A host allowed on another port only. */
static void
test_denied_port(void **state)
{
	struct fx	*f = *state;

	client(f, connect_to(f, "origin.test", oport(f) == 1 ? 2 : 1));
	expect_refusal(f, 403, "port", "connect", "deny", "port");
}

/* An address literal no rule allows. */
static void
test_denied_ip_literal(void **state)
{
	struct fx	*f = *state;

	client(f, connect_to(f, "127.0.0.1", oport(f)));
	expect_refusal(f, 403, "ip-literal", "connect", "deny", "ip-literal");
	assert_int_equal(f->o.accepts, 0);
}

/* A name that resolves to a private address no rule covers. */
static void
test_denied_private(void **state)
{
	struct fx	*f = *state;

	policy(f, "allow private.test:443\nallow-private 127.0.0.0/8\n");
	client(f, connect_to(f, "private.test", 443));
	expect_refusal(f, 403, "private-address", "connect", "deny",
	    "private-address");
	expect(f, "10.1.2.3");
}

/* No policy at all denies everything. */
static void
test_no_policy(void **state)
{
	struct fx	*f = *state;

	gateway_set_rules(f->gw, NULL);
	client(f, connect_to(f, "origin.test", oport(f)));
	expect_status(f, "HTTP/1.1 403 ");
	expect(f, "no policy loaded");
	expect_audit(f, "connect", "deny", "denied-by-policy", 403);
}

/* Resolution fails: 502, or 504 when it timed out. */
static void
test_resolve_failed(void **state)
{
	struct fx	*f = *state;

	policy(f, "allow gone.test:443\nallow slow.test:443\n");
	client(f, connect_to(f, "gone.test", 443));
	expect_refusal(f, 502, "resolve-failed", "connect", "allow",
	    "resolve-failed");
	expect(f, "name resolution failed: no such host");
	client_close(f);
	client(f, connect_to(f, "slow.test", 443));
	expect_refusal(f, 504, "resolve-failed", "connect", "allow",
	    "resolve-failed");
	assert_int_equal(fake_cancels, 0);
}

/* The resolver cannot take the query: 502. */
static void
test_resolve_refused(void **state)
{
	struct fx	*f = *state;

	policy(f, "allow nomem.test:443\n");
	client(f, connect_to(f, "nomem.test", 443));
	expect_refusal(f, 502, "resolve-failed", "connect", "allow",
	    "resolve-failed");
	expect(f, "resolver failure");
	assert_int_equal(fake_open, 0);
}

/* The resolver never answers: 504 at the connect timeout, query dropped. */
static void
test_resolve_timeout(void **state)
{
	struct fx	*f = *state;

	policy(f, "allow held.test:443\n");
	client(f, connect_to(f, "held.test", 443));
	expect_that(f, query_held, "query held");
	expect_status(f, "HTTP/1.1 504 ");
	expect(f, "name resolution timed out");
	assert_null(fake_held);
	assert_int_equal(fake_cancels, 1);
	expect_audit(f, "connect", "allow", "resolve-failed", 504);
}

/* A held answer let go late still tunnels (S_RESOLVE left by its answer). */
static void
test_resolve_late(void **state)
{
	static const struct fake_answer	late = { "held.test", "127.0.0.1",
	    NULL };
	struct fx	*f = *state;

	policy(f, "allow held.test:%u\nallow-private 127.0.0.0/8\n");
	client(f, connect_to(f, "held.test", oport(f)));
	expect_that(f, query_held, "query held");
	assert_int_equal(f->o.accepts, 0);
	fake_release(&late);
	expect(f, "HTTP/1.1 200 Connection established\r\n\r\n");
	assert_int_equal(fake_cancels, 0);
}

/* Nothing listens: 502 connect-failed. */
static void
test_dial_refused(void **state)
{
	struct fx	*f = *state;
	int		 port = oport(f);

	origin_stop(&f->o);	/* its port is now refused */
	client(f, connect_to(f, "origin.test", port));
	expect_refusal(f, 502, "connect-failed", "connect", "allow",
	    "connect-failed");
	expect(f, "Connection refused");
}

/*
 * A server that takes no connection: its accept queue full, the kernel
 * drops the SYNs, so dialing times out: 504.
 */
static void
test_dial_timeout(void **state)
{
	struct fx	*f = *state;

	blackhole(f);
	client(f, connect_to(f, "origin.test", f->bhport));
	expect_refusal(f, 504, "timeout", "connect", "allow", "timeout");
	expect(f, "timed out");
}

/* Escalation on, with ask seconds (0: refuse at once). */
static void
use_escalate(struct fx *f, int ask)
{
	assert_non_null(f->esc = escalate_create(f->base, "test", f->audit));
	assert_int_equal(gateway_set_escalate(f->gw, f->esc, NULL, ask), 0);
}

/* The socket idle got EOF. */
static int
idle_closed(struct fx *f)
{
	char	b;

	return (recv(f->idle, &b, 1, MSG_DONTWAIT | MSG_PEEK) == 0);
}

/* A raw client to the proxy, sending text. */
static int
raw_client(struct fx *f, const char *text)
{
	int	fd;

	assert_true((fd = socket(AF_INET, SOCK_STREAM, 0)) >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&f->gwsin,
	    sizeof f->gwsin), 0);
	if (text[0] != '\0')
		put(fd, text, strlen(text));
	return (fd);
}

/* A raw client is closed without a byte of answer. */
static void
expect_quiet_close(struct fx *f, int fd)
{
	f->idle = fd;
	expect_that(f, idle_closed, "closed without an answer");
	close(fd);
	f->idle = -1;
}

/*
 * The handshake timeout: nothing sent is closed quietly, half a head
 * gets 408, half an agent request body is closed quietly (S_AGENT).
 */
static void
test_handshake_timeout(void **state)
{
	struct fx	*f = *state;
	int		 idle, agent;

	use_escalate(f, 0);
	idle = raw_client(f, "");
	agent = raw_client(f, "POST /pinhole/request HTTP/1.1\r\nHost: p\r\n"
	    "Content-Length: 10\r\n\r\nhost=");
	client(f, "GET http://origin.test/ HTTP/1.1\r\n");
	expect_status(f, "HTTP/1.1 408 ");
	expect_eof(f);
	expect_audit(f, "request", "deny", "request head not received in time",
	    408);
	expect_quiet_close(f, idle);
	expect_quiet_close(f, agent);
	assert_int_equal(audit_count(f, "*", "*", "*", -1), 1);
}

/* A quiet tunnel is closed at the idle timeout. */
static void
test_idle_timeout(void **state)
{
	struct fx	*f = *state;

	client(f, connect_to(f, "origin.test", oport(f)));
	expect(f, "HTTP/1.1 200 Connection established\r\n\r\n");
	expect_eof(f);
	expect_audit(f, "close", NULL, "idle timeout", 200);
}

/* The agent endpoint: answered, and its refusals (S_AGENT). */
static void
test_agent(void **state)
{
	struct fx	*f = *state;

	use_escalate(f, 0);
	client(f, "GET /pinhole/allowed HTTP/1.1\r\nHost: proxy\r\n\r\n");
	expect_status(f, "HTTP/1.1 200 ");
	expect(f, "origin.test");
	expect_audit(f, "request", NULL, "agent-endpoint", 200);
	client_clear(f);
	say(f, "POST /pinhole/request HTTP/1.1\r\nHost: p\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n");
	expect_status(f, "HTTP/1.1 411 ");
	expect_eof(f);
	client_close(f);
	client(f, "POST /pinhole/request HTTP/1.1\r\nHost: p\r\n"
	    "Content-Length: 5000\r\n\r\n");
	expect_status(f, "HTTP/1.1 413 ");
	expect_eof(f);
	expect_audit(f, "request", "deny", "send the body with a "
	    "Content-Length", 411);
	expect_audit(f, "request", "deny", "body too long", 413);
}

/* An agent request filed, and its long poll cut by the client. */
static void
test_agent_wait(void **state)
{
	struct fx	*f = *state;
	const struct escalate_request *r;
	char		 req[256];

	use_escalate(f, 0);
	client(f, "POST /pinhole/request HTTP/1.1\r\nHost: p\r\n"
	    "Content-Type: application/x-www-form-urlencoded\r\n"
	    "Content-Length: 33\r\n\r\nhost=asked.test&port=443&reason=x");
	expect_status(f, "HTTP/1.1 201 ");
	assert_non_null(r = escalate_next(f->esc, NULL));
	client_clear(f);
	snprintf(req, sizeof req, "GET /pinhole/request/%s?wait=30 HTTP/1.1"
	    "\r\nHost: p\r\n\r\n", r->id);
	put(f->c, req, strlen(req));
	run_until(f, got_eof, 200);
	assert_int_equal(f->clen, 0);	/* held */
	assert_int_equal(gateway_connections(f->gw), 1);
	client_close(f);
	expect_that(f, no_conns, "the waiting connection closed");
}

/* Ask mode: held, then refused when no one answers in time (S_ASK). */
static void
test_ask_timeout(void **state)
{
	struct fx	*f = *state;

	use_escalate(f, 1);
	client(f, connect_to(f, "asked.test", 443));
	expect_that(f, ask_pending, "request filed");
	assert_int_equal(f->clen, 0);
	expect_refusal(f, 403, "denied-by-policy", "connect", "deny",
	    "denied-by-policy");
	expect(f, "no answer in time");
}

/* Ask mode: a person denies, or approves once (then it tunnels). */
static void
test_ask_decided(void **state)
{
	struct fx	*f = *state;
	const struct escalate_request *r;
	char		 err[256];

	use_escalate(f, 5);
	script(f, "asked.test", "127.0.0.1", NULL);
	client(f, connect_to(f, "asked.test", oport(f)));
	expect_that(f, ask_pending, "request filed");
	assert_non_null(r = escalate_next(f->esc, NULL));
	assert_int_equal(escalate_deny(f->esc, r->id, "not today", "tester",
	    err, sizeof err), 0);
	expect_status(f, "HTTP/1.1 403 ");
	expect(f, "denied by tester: not today");
	client_close(f);

	client(f, connect_to(f, "asked.test", oport(f)));
	expect_that(f, ask_pending, "request filed again");
	r = NULL;
	while ((r = escalate_next(f->esc, r)) != NULL &&
	    r->state != ESCALATE_PENDING)
		;
	assert_non_null(r);
	if (escalate_approve(f->esc, r->id, ESCALATE_SCOPE_ONCE, 0, NULL,
	    "tester", err, sizeof err) == -1)
		fail_msg("approve: %s", err);
	expect(f, "HTTP/1.1 200 Connection established\r\n\r\n");
	assert_int_equal(audit_count(f, "connect", "allow", NULL, 200), 1);
}

/* A fake address map over 127.77.0.0/16, with origin.test in it. */
static void
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
static const char *
fake_unused(const uint8_t *a)
{
	return (a[2] == 255 && a[3] == 254 ? "127.77.255.253" :
	    "127.77.255.254");
}

/* A request to a fake address no name has now: 502. */
static void
test_fake_unused(void **state)
{
	struct fx	*f = *state;
	uint8_t		 a[4];

	use_fakeip(f, a);
	client(f, connect_to(f, fake_unused(a), 443));
	expect_status(f, "HTTP/1.1 502 ");
	expect(f, "fake address not in use");
	expect_audit(f, "connect", "allow", "fake address not in use", 502);
}

/*
 * Transparent capture: the origin on 127.78.x.y:SNIFF_PORT, the listener
 * on origin.test's fake address and the same port.  Returns -1 (skip)
 * when a port is taken.
 */
static int
use_transparent(struct fx *f, struct sockaddr_in *dst)
{
	char		 oaddr[INET_ADDRSTRLEN], fake[INET_ADDRSTRLEN];
	char		 err[256];
	int		 fd;

	origin_stop(&f->o);
	snprintf(oaddr, sizeof oaddr, "127.78.%d.%d", (getpid() >> 8) & 0xff,
	    1 + getpid() % 250);
	if (origin_start(f, oaddr, SNIFF_PORT) == -1)
		return (-1);
	policy(f, default_policy);
	use_fakeip(f, f->fake);
	inet_ntop(AF_INET, f->fake, fake, sizeof fake);
	if ((fd = listen_on(fake, SNIFF_PORT, dst)) == -1)
		return (-1);
	assert_int_equal(gateway_listen_fd(f->gw, fd,
	    CONN_TRANSPARENT, NULL, err, sizeof err), 0);
	return (0);
}

/*
 * A captured connection whose Host names its host: allowed, then read
 * request by request (each one decided and logged with its method).
 */
static void
test_transparent_host(void **state)
{
	struct fx	*f = *state;
	struct sockaddr_in dst;

	if (use_transparent(f, &dst) == -1)
		skip_busy();
	f->o.mode = O_HTTP;
	client_to(f, &dst);
	say(f, "GET / HTTP/1.1\r\nHost: origin.test\r\n\r\n");
	expect_status(f, "HTTP/1.1 200 OK\r\n");
	expect(f, "\r\n\r\nok");
	assert_int_equal(f->o.requests, 1);
	expect_audit(f, "connect", "allow", NULL, -1);
	assert_int_equal(audit_count_field(f, "name_from", "host"), 2);
	assert_int_equal(audit_count_field(f, "method", "GET"), 1);
	assert_int_equal(audit_count_field(f, "path", "/"), 1);
}

/*
 * A captured plain-HTTP connection is decided request by request: on a
 * host whose rule checks methods, a refused request (a method, an
 * upgrade, a method override) is answered and the next one on the
 * connection goes through.
 */
static void
test_transparent_requests(void **state)
{
	struct fx	*f = *state;
	struct sockaddr_in dst;

	if (use_transparent(f, &dst) == -1)
		skip_busy();
	policy(f, "allow origin.test:%u methods GET\nallow-private 127.0.0.0/8\n");
	f->o.mode = O_HTTP;
	client_to(f, &dst);
	say(f, "DELETE /x HTTP/1.1\r\nHost: origin.test\r\n\r\n");
	expect_status(f, "HTTP/1.1 403 ");
	expect(f, "methods: DELETE is not one of GET");
	expect(f, "why it is needed\"\n");
	expect(f, "    pinhole request --status ID --wait\n");
	client_clear(f);
	say(f, "GET /ws HTTP/1.1\r\nHost: origin.test\r\n"
	    "Connection: upgrade\r\nUpgrade: websocket\r\n\r\n");
	expect_status(f, "HTTP/1.1 403 ");
	expect(f, "needs a rule that says websocket");
	client_clear(f);
	say(f, "GET / HTTP/1.1\r\nHost: origin.test\r\n"
	    "X-HTTP-Method-Override: DELETE\r\n\r\n");
	expect_status(f, "HTTP/1.1 403 ");
	expect(f, "X-HTTP-Method-Override: DELETE is not one of GET");
	client_clear(f);
	say(f, "GET / HTTP/1.1\r\nHost: origin.test\r\n\r\n");
	expect_status(f, "HTTP/1.1 200 OK\r\n");
	expect(f, "\r\n\r\nok");
	assert_int_equal(f->o.requests, 1);
	assert_int_equal(audit_count_field(f, "method", "DELETE"), 1);
	assert_int_equal(audit_count_field(f, "reason", "constraint"), 3);
}

/* A captured ClientHello naming its host: tunneled as is. */
static void
test_transparent_sni(void **state)
{
	struct fx	*f = *state;
	struct sockaddr_in dst;
	const char	*dir = getenv("top_srcdir");
	char		 path[1024], hello[4096];
	FILE		*fp;
	size_t		 n;

	if (use_transparent(f, &dst) == -1)
		skip_busy();
	snprintf(path, sizeof path, "%s/tests/unit/data/"
	    "hello-openssl-tls13.bin", dir != NULL ? dir : ".");
	assert_non_null(fp = fopen(path, "rb"));
	n = fread(hello, 1, sizeof hello, fp);
	fclose(fp);
	assert_true(n > 5);
	client_to(f, &dst);
	put(f->c, hello, n);
	f->want_len = n;
	expect_that(f, got_len, "the ClientHello echoed");
	assert_int_equal(f->clen, n);
	assert_memory_equal(f->cbuf, hello, n);
	expect_audit(f, "connect", "allow", NULL, -1);
	assert_int_equal(audit_count_field(f, "name_from", "sni"), 1);
}

/* A captured connection whose Host names another host: 403 fronting. */
static void
test_transparent_fronting(void **state)
{
	struct fx	*f = *state;
	struct sockaddr_in dst;

	if (use_transparent(f, &dst) == -1)
		skip_busy();
	client_to(f, &dst);
	say(f, "GET / HTTP/1.1\r\nHost: other.test\r\n\r\n");
	expect_status(f, "HTTP/1.1 403 ");
	expect(f, "Pinhole-Error: fronting\r\n");
	expect_eof(f);
	expect_audit(f, "connect", "deny", "fronting", -1);
	assert_int_equal(f->o.accepts, 0);
}

/* Captured to a fake address no name has, or to a real one: a reset. */
static void
test_transparent_refused(void **state)
{
	struct fx	*f = *state;
	struct sockaddr_in dst, other, real;
	char		 err[256];
	int		 fd;

	if (use_transparent(f, &dst) == -1)
		skip_busy();
	if ((fd = listen_on(fake_unused(f->fake), SNIFF_PORT, &other)) == -1)
		skip_busy();
	assert_int_equal(gateway_listen_fd(f->gw, fd,
	    CONN_TRANSPARENT, NULL, err, sizeof err), 0);
	client_to(f, &other);
	expect_eof(f);
	assert_true(f->creset);
	expect_audit(f, "connect", "deny", "unknown-fake-address", -1);
	client_close(f);

	assert_true((fd = listen_on("127.0.0.1", 0, &real)) >= 0);
	assert_int_equal(gateway_listen_fd(f->gw, fd,
	    CONN_TRANSPARENT, NULL, err, sizeof err), 0);
	client_to(f, &real);
	expect_eof(f);
	assert_true(f->creset);
	expect_audit(f, "connect", "deny", "ip-literal", -1);
}

/* A SOCKS5 listener beside the proxy's; the client connects to it. */
static void
socks_client(struct fx *f)
{
	struct sockaddr_in	sin;
	char			err[256];
	int			fd;

	assert_true((fd = listen_on("127.0.0.1", 0, &sin)) >= 0);
	assert_int_equal(gateway_listen_fd(f->gw, fd, CONN_SOCKS,
	    NULL, err, sizeof err), 0);
	client_to(f, &sin);
}

/* The greeting (no authentication) and a CONNECT, sent at once. */
static void
socks_connect(struct fx *f, uint8_t atyp, const void *addr, size_t n,
    int port)
{
	uint8_t	m[300] = { 5, 1, 0, 5, 1, 0 };

	m[6] = atyp;
	memcpy(m + 7, addr, n);
	m[7 + n] = port >> 8;
	m[8 + n] = port & 0xff;
	put(f->c, m, 9 + n);
}

/* The same to a name. */
static void
socks_connect_name(struct fx *f, const char *name, int port)
{
	uint8_t	a[256];
	size_t	n = strlen(name);

	a[0] = n;
	memcpy(a + 1, name, n);
	socks_connect(f, 3, a, n + 1, port);
}

/* The method chosen, then a reply with code rep (BND.ADDR IPv4). */
static void
expect_socks(struct fx *f, uint8_t rep)
{
	f->want_len = 12;
	expect_that(f, got_len, "a SOCKS5 reply");
	assert_memory_equal(f->cbuf, "\005\000\005", 3);
	assert_int_equal((uint8_t)f->cbuf[3], rep);
	assert_int_equal((uint8_t)f->cbuf[4], 0);
	assert_int_equal((uint8_t)f->cbuf[5], 1);
}

/* SOCKS5 CONNECT allowed: the reply names our end, then a tunnel. */
static void
test_socks_tunnel(void **state)
{
	struct fx	*f = *state;

	socks_client(f);
	socks_connect_name(f, "origin.test", oport(f));
	expect_socks(f, 0);
	assert_memory_equal(f->cbuf + 6, "\177\000\000\001", 4);
	assert_true(f->cbuf[10] != 0 || f->cbuf[11] != 0);
	expect_audit(f, "connect", "allow", NULL, -1);
	put(f->c, "ping", 4);
	shutdown(f->c, SHUT_WR);
	f->want_len = 12 + 7;
	expect_that(f, got_len, "the echo through the tunnel");
	assert_memory_equal(f->cbuf + 12, "pingbye", 7);
	expect_eof(f);
	expect_audit(f, "close", NULL, "eof", -1);
	assert_int_equal(audit_count_field(f, "via", "socks"), 2);
	expect_that(f, no_conns, "connection freed");
}

/* A SOCKS5 request to a fake address is decided as its name. */
static void
test_socks_fake(void **state)
{
	struct fx	*f = *state;

	use_fakeip(f, f->fake);
	socks_client(f);
	socks_connect(f, 1, f->fake, 4, oport(f));
	expect_socks(f, 0);
	expect_audit(f, "connect", "allow", NULL, -1);
	assert_int_equal(audit_count_field(f, "host", "origin.test"), 1);
}

/* Refusals: each its reply code, closed, and its audit line. */
static void
test_socks_refused(void **state)
{
	struct fx	*f = *state;
	const uint8_t	 lo[4] = { 127, 0, 0, 1 };

	socks_client(f);
	socks_connect_name(f, "denied.test", 443);
	expect_socks(f, 2);
	expect_eof(f);
	expect_audit(f, "connect", "deny", "denied-by-policy", -1);
	assert_int_equal(audit_count_field(f, "ask",
	    "pinhole request denied.test:443"), 1);
	client_close(f);
	socks_client(f);
	socks_connect(f, 1, lo, 4, oport(f));
	expect_socks(f, 2);
	expect_eof(f);
	expect_audit(f, "connect", "deny", "ip-literal", -1);
	client_close(f);
	policy(f, "allow origin.test:%u\nallow private.test\n"
	    "allow gone.test\nallow-private 127.0.0.0/8\n");
	socks_client(f);
	socks_connect_name(f, "private.test", 443);
	expect_socks(f, 2);
	expect_eof(f);
	expect_audit(f, "connect", "deny", "private-address", -1);
	client_close(f);
	socks_client(f);
	socks_connect_name(f, "gone.test", 443);
	expect_socks(f, 4);
	expect_eof(f);
	expect_audit(f, "connect", "allow", "resolve-failed", -1);
	assert_int_equal(f->o.accepts, 0);
}

/* A SOCKS5 handshake cut short is closed at the handshake timeout. */
static void
test_socks_handshake(void **state)
{
	struct fx	*f = *state;

	socks_client(f);
	put(f->c, "\005\001", 2);
	expect_eof(f);
	assert_int_equal(f->clen, 0);
	expect_that(f, no_conns, "connection freed");
	client_close(f);
	socks_client(f);
	put(f->c, "\004\001", 2);
	f->want_len = 2;
	expect_that(f, got_len, "no acceptable method");
	assert_memory_equal(f->cbuf, "\005\377", 2);
	expect_eof(f);
	expect_audit(f, "connect", "deny", "not a SOCKS5 greeting", -1);
}

/* The gateway was stopped. */
static void
stopped_cb(void *arg)
{
	((struct fx *)arg)->stopped = 1;
}

/*
 * Stopping: an idle connection closes at once, a tunnel may finish
 * within the grace period, then the done callback runs.
 */
static void
test_stop(void **state)
{
	struct fx	*f = *state;
	int		 tunnel;

	client(f, connect_to(f, "origin.test", oport(f)));
	expect(f, "HTTP/1.1 200 Connection established\r\n\r\n");
	tunnel = f->c;
	event_free(f->cev);
	f->cev = NULL;
	client_clear(f);
	client(f, NULL);
	run_until(f, got_eof, 50);
	gateway_stop(f->gw, 5, stopped_cb, f);
	expect_eof(f);
	assert_int_equal(gateway_connections(f->gw), 1);
	assert_false(f->stopped);
	close(tunnel);
	expect_that(f, is_stopped, "stopped");
	assert_int_equal(gateway_connections(f->gw), 0);
}

/* Reach a state, then either close the client or free the gateway. */
static void
reach(struct fx *f, int state)
{
	char	req[256];
	int	i;

	switch (state) {
	case R_HEAD:	/* S_HEAD, half a head */
		client(f, "GET http://origin.test/ HTTP/1.1\r\n");
		break;
	case R_RESOLVE:	/* S_RESOLVE */
		policy(f, "allow held.test:443\n");
		client(f, connect_to(f, "held.test", 443));
		expect_that(f, query_held, "query held");
		break;
	case R_DIAL:	/* S_DIAL */
		blackhole(f);
		client(f, connect_to(f, "origin.test", f->bhport));
		break;
	case R_TUNNEL:	/* S_TUNNEL */
		client(f, connect_to(f, "origin.test", oport(f)));
		expect(f, "Connection established\r\n\r\n");
		break;
	case R_FORWARD:	/* S_FORWARD, no answer yet */
		f->o.mode = O_SILENT;
		snprintf(req, sizeof req, "GET http://origin.test:%d/ "
		    "HTTP/1.1\r\nHost: origin.test\r\n\r\n", oport(f));
		client(f, req);
		expect_that(f, origin_connected, "dialed");
		break;
	case R_ASK:	/* S_ASK */
		use_escalate(f, 5);
		client(f, connect_to(f, "asked.test", 443));
		expect_that(f, ask_pending, "request filed");
		break;
	case R_AGENT:	/* S_AGENT, half a body */
		use_escalate(f, 0);
		client(f, "POST /pinhole/request HTTP/1.1\r\nHost: p\r\n"
		    "Content-Length: 10\r\n\r\nhost=");
		break;
	case R_REPLY:	/* S_REPLY: a reply the client does not read */
		f->rcvbuf = 2048;
		client(f, NULL);
		f->rcvbuf = 0;
		event_del(f->cev);
		for (i = 0; i < 1500; i++)
			say(f, "GET / HTTP/1.1\r\nHost: proxy\r\n\r\n");
		run_until(f, got_eof, 100);
		break;
	}
	run_until(f, got_eof, 50);
	assert_false(f->ceof);
	assert_int_equal(gateway_connections(f->gw), 1);
}


/* Close the client in each state: the connection goes, nothing leaks. */
static void
test_client_closes(void **state)
{
	static const struct fake_answer	answer = { "held.test", "127.0.0.1",
	    NULL };
	static const char	ok[] = "HTTP/1.1 200 OK\r\n"
	    "Content-Length: 0\r\n\r\n";
	struct fx	*f = *state;
	const struct escalate_request *r;
	char		 err[256];
	int		 s;

	for (s = 0; s < R_MAX; s++) {
		reach(f, s);
		client_close(f);
		/*
		 * Resolving and forwarding, nothing is read from the client
		 * (it has nothing to say), so its EOF is seen only once the
		 * next step writes to it: let that step have its input.
		 */
		if (s == R_RESOLVE)
			fake_release(&answer);
		else if (s == R_FORWARD)
			put(f->o.fd, ok, sizeof ok - 1);
		expect_that(f, no_conns, "connection closed");
		/* A decision after the client left finds no one waiting. */
		if (s == R_ASK) {
			assert_non_null(r = escalate_next(f->esc, NULL));
			assert_int_equal(escalate_deny(f->esc, r->id, "late",
			    "tester", err, sizeof err), 0);
		}
		assert_int_equal(fake_open, 0);
		origin_drop(&f->o);
		f->o.accepts = 0;
		f->o.mode = O_ECHO;
		blackhole_stop(f);
		gateway_set_escalate(f->gw, NULL, NULL, 0);
		escalate_free(f->esc);
		f->esc = NULL;
		policy(f, default_policy);
	}
}

/* Free the gateway in a state (the test's prestate). */
static void
test_free_in(void **state)
{
	struct fx	*f = *state;

	reach(f, f->which);
	gateway_free(f->gw);
	f->gw = NULL;
	assert_int_equal(fake_open, 0);
	if (f->which != R_REPLY)
		expect_eof(f);
}

/*
 * The origin as the upstream proxy, answering reply to each request;
 * with credentials "alice:s3cret" when auth.  Names are never resolved
 * here then: origin.test's entry goes, so asking the resolver fails.
 */
static void
via_upstream(struct fx *f, const char *reply, int auth)
{
	struct conn_upstream	*u;
	struct rules		*r;
	char			 text[512], path[128], err[256];
	FILE			*fp;

	snprintf(path, sizeof path, "%s/auth", f->dir);
	assert_non_null(fp = fopen(path, "w"));
	fputs("alice:s3cret\n", fp);
	fclose(fp);
	assert_int_equal(chmod(path, 0600), 0);
	snprintf(text, sizeof text, "upstream http://127.0.0.1:%d\n%s%s\n",
	    oport(f), auth ? "upstream-auth " : "", auth ? path : "");
	assert_non_null(r = rules_create());
	if (rules_load_text(r, "test", text, strlen(text), err,
	    sizeof err) == -1)
		fail_msg("%s", err);
	if ((u = conn_upstream_create(rules_upstream(r), err,
	    sizeof err)) == NULL)
		fail_msg("%s", err);
	unlink(path);
	rules_free(r);
	gateway_set_upstream(f->gw, u);
	conn_upstream_unref(u);
	f->o.mode = O_PROXY;
	f->o.proxy_reply = reply;
	f->nscript = 0;
	script(f, "private.test", "10.1.2.3", NULL);
}

/* The policy with the test's upstream lines, as gateway_set_rules. */
static void
policy_upstream(struct fx *f, const char *extra)
{
	char	text[512];

	snprintf(text, sizeof text, "allow origin.test:443\n"
	    "allow origin.test:80\nallow 10.1.2.3:443\nallow private.test:443\n"
	    "allow-private 127.0.0.0/8\n%s", extra);
	policy_port(f, text, 0);
}

/* The origin has had want_asks requests. */
static int
origin_asked(struct fx *f)
{
	return (f->o.requests >= f->want_asks);
}

/* The audit lines with this detail. */
static int
audit_detail(struct fx *f, const char *detail)
{
	return (audit_count_field(f, "detail", detail));
}

/*
 * CONNECT through the upstream: the name goes to it unresolved, with
 * the credentials; its 200 opens the tunnel; every line names it.
 */
static void
test_upstream_connect(void **state)
{
	struct fx	*f = *state;
	char		 want[256];

	via_upstream(f, "HTTP/1.1 200 Connection established\r\n\r\n", 1);
	policy_upstream(f, "");
	client(f, connect_to(f, "origin.test", 443));
	expect(f, "HTTP/1.1 200 Connection established\r\n\r\n");
	assert_string_equal(f->o.heads, "CONNECT origin.test:443 HTTP/1.1\r\n"
	    "Host: origin.test:443\r\n"
	    "Proxy-Authorization: Basic YWxpY2U6czNjcmV0\r\n\r\n");
	client_clear(f);
	put(f->c, "ping", 4);
	expect(f, "ping");
	shutdown(f->c, SHUT_WR);
	expect(f, "pingbye");
	expect_eof(f);
	expect_audit(f, "connect", "allow", NULL, 200);
	expect_audit(f, "close", NULL, "eof", 200);
	snprintf(want, sizeof want, "upstream 127.0.0.1:%d", oport(f));
	assert_int_equal(audit_detail(f, want), 2);
	assert_int_equal(audit_count_field(f, "addr", "127.0.0.1"), 2);
	assert_int_equal(fake_cancels, 0);
}

/* Forwarded HTTP goes to the upstream in absolute form. */
static void
test_upstream_forward(void **state)
{
	struct fx	*f = *state;

	via_upstream(f, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", 1);
	policy_upstream(f, "");
	client(f, "GET http://origin.test/a?b HTTP/1.1\r\nHost: origin.test\r\n"
	    "Proxy-Authorization: Basic c2FuZGJveDp4\r\n\r\n");
	expect_status(f, "HTTP/1.1 200 OK\r\n");
	expect(f, "\r\n\r\nok");
	assert_non_null(strstr(f->o.heads, "GET http://origin.test:80/a?b "
	    "HTTP/1.1\r\nHost: origin.test\r\n"));
	/* Ours only: the client's are not passed on. */
	assert_non_null(strstr(f->o.heads, "Proxy-Authorization: Basic "
	    "YWxpY2U6czNjcmV0\r\n"));
	assert_null(strstr(f->o.heads, "c2FuZGJveDp4"));
	expect_audit(f, "request", "allow", NULL, 200);
}

/* The upstream's refusals: 502, which side refused, never relayed. */
static void
test_upstream_refusals(void **state)
{
	struct fx	*f = *state;

	via_upstream(f, "HTTP/1.1 407 Proxy Authentication Required\r\n"
	    "Proxy-Authenticate: Basic realm=\"x\"\r\nContent-Length: 0\r\n\r\n",
	    0);
	policy_upstream(f, "");
	client(f, connect_to(f, "origin.test", 443));
	expect_refusal(f, 502, "upstream-auth", "connect", "allow",
	    "upstream-auth");
	expect(f, "wants credentials (407 Proxy Authentication Required): "
	    "give them with upstream-auth FILE");
	assert_null(strstr(f->o.heads, "Proxy-Authorization"));
	client_close(f);

	f->o.proxy_reply = "HTTP/1.1 403 Forbidden\r\nX-Squid-Error: "
	    "ERR_ACCESS_DENIED 0\r\nContent-Length: 3\r\n\r\nno!";
	client(f, "GET http://origin.test/ HTTP/1.1\r\nHost: origin.test\r\n"
	    "\r\n");
	expect_refusal(f, 502, "upstream-denied", "request", "allow",
	    "upstream-denied");
	assert_null(strstr(f->cbuf, "no!"));
	client_close(f);

	/* The origin's own 403, through the upstream, is the origin's. */
	f->o.proxy_reply = "HTTP/1.1 403 Forbidden\r\nContent-Length: 3\r\n"
	    "\r\nno!";
	client(f, "GET http://origin.test/ HTTP/1.1\r\nHost: origin.test\r\n"
	    "\r\n");
	expect_status(f, "HTTP/1.1 403 Forbidden\r\n");
	expect(f, "\r\n\r\nno!");
	client_close(f);

	f->o.proxy_reply = "garbage\r\n\r\n";
	client(f, connect_to(f, "origin.test", 443));
	expect_refusal(f, 502, "upstream-failed", "connect", "allow",
	    "upstream-failed");
	client_close(f);

	/* No answer in time; a client gone meanwhile leaves nothing. */
	f->o.proxy_reply = "";
	client(f, connect_to(f, "origin.test", 443));
	expect_status(f, "HTTP/1.1 502 ");
	expect(f, "did not answer CONNECT in 1 s");
	client_close(f);
	f->want_asks = f->o.requests + 1;
	client(f, connect_to(f, "origin.test", 443));
	expect_that(f, origin_asked, "CONNECT sent");
	client_close(f);
	expect_that(f, no_conns, "connection freed");

	origin_stop(&f->o);	/* nothing listens there now */
	client(f, connect_to(f, "origin.test", 443));
	expect_refusal(f, 502, "upstream-unreachable", "connect", "allow",
	    "upstream-unreachable");
	expect(f, "cannot be reached (127.0.0.1: Connection refused)");
	assert_int_equal(fake_cancels, 0);
}

/*
 * The guard holds for what the sandbox asks for: an address literal is
 * vetted before the upstream sees it.  no-upstream hosts are dialed
 * (and resolved) directly.
 */
static void
test_upstream_guard(void **state)
{
	struct fx	*f = *state;
	char		 req[256];

	via_upstream(f, "HTTP/1.1 200 Connection established\r\n\r\n", 0);
	policy_upstream(f, "");
	client(f, connect_to(f, "10.1.2.3", 443));
	expect_refusal(f, 403, "private-address", "connect", "deny",
	    "private-address");
	client_close(f);
	assert_int_equal(f->o.accepts, 0);

	/* A name is the upstream's to resolve: no guard on its answer. */
	client(f, connect_to(f, "private.test", 443));
	expect(f, "HTTP/1.1 200 Connection established\r\n\r\n");
	client_close(f);
	assert_int_equal(f->o.accepts, 1);

	script(f, "origin.test", f->otext, NULL);
	f->o.mode = O_PROXY;
	f->o.proxy_reply = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
	f->o.heads[0] = '\0';
	policy_port(f, "allow origin.test:%u\nallow-private 127.0.0.0/8\n"
	    "no-upstream *.test,192.0.2.0/24\n", oport(f));
	snprintf(req, sizeof req, "GET http://origin.test:%d/x HTTP/1.1\r\n"
	    "Host: x\r\n\r\n", oport(f));
	client(f, req);
	expect_status(f, "HTTP/1.1 200 OK\r\n");
	assert_non_null(strstr(f->o.heads, "GET /x HTTP/1.1\r\n"));
	assert_null(strstr(f->o.heads, "Proxy-Authorization"));
}

int
main(void)
{
	static int		states[R_MAX] = { R_HEAD, R_RESOLVE, R_DIAL,
	    R_TUNNEL, R_FORWARD, R_ASK, R_AGENT, R_REPLY };
	const struct CMUnitTest tests[] = {
#define T(fn)	cmocka_unit_test_setup_teardown(fn, setup, teardown)
		T(test_malformed), T(test_unsupported),
		T(test_head_too_large), T(test_bad_host), T(test_info_page),
		T(test_connect_tunnel), T(test_forward_keepalive),
		T(test_forward_keepalive_idle),
		T(test_forward_broken_chunked), T(test_forward_bad_upstream),
		T(test_forward_upgrade), T(test_forward_upgrade_checked),
		T(test_forward_websocket), T(test_forward_override),
		T(test_forward_length_canonical),
		T(test_forward_silent),
		T(test_forward_scrub),
		T(test_forward_scrub_split),
		T(test_forward_scrub_framing),
		T(test_forward_scrub_other),
		T(test_denied), T(test_denied_port), T(test_denied_ip_literal),
		T(test_denied_private), T(test_no_policy),
		T(test_resolve_failed), T(test_resolve_refused),
		T(test_resolve_timeout), T(test_resolve_late),
		T(test_dial_refused), T(test_dial_timeout),
		T(test_handshake_timeout), T(test_idle_timeout), T(test_agent),
		T(test_agent_wait), T(test_ask_timeout), T(test_ask_decided),
		T(test_transparent_host), T(test_transparent_requests), T(test_fake_unused),
		T(test_transparent_sni), T(test_transparent_fronting),
		T(test_transparent_refused), T(test_socks_tunnel),
		T(test_socks_fake), T(test_socks_refused),
		T(test_socks_handshake), T(test_stop),
		T(test_client_closes),
		T(test_upstream_connect), T(test_upstream_forward),
		T(test_upstream_refusals), T(test_upstream_guard),
#define FREE_IN(i) \
		cmocka_unit_test_prestate_setup_teardown(test_free_in, setup, \
		    teardown, &states[i])
		FREE_IN(R_HEAD), FREE_IN(R_RESOLVE), FREE_IN(R_DIAL),
		FREE_IN(R_TUNNEL), FREE_IN(R_FORWARD), FREE_IN(R_ASK),
		FREE_IN(R_AGENT), FREE_IN(R_REPLY),
	};

	/* As pinhole does (gwctx_setup()): a client gone is an EPIPE. */
	signal(SIGPIPE, SIG_IGN);
	return (cmocka_run_group_tests(tests, NULL, NULL));
}
