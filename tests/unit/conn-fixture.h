/*
 * The fixture the connection tests share: a gateway on a fresh event
 * loop with a proxy listener, a scripted origin on 127.0.0.1, an audit
 * log in a temporary directory, a default policy, and a fake resolver
 * answering from each test's script (conn-fixture.c defines every
 * function of proxy/resolver/resolver.h, so the real one is never linked
 * in).  Only the gateway's public interface is used.
 */
#ifndef TESTS_UNIT_CONN_FIXTURE_H
#define TESTS_UNIT_CONN_FIXTURE_H

#include <sys/socket.h>

#include <netinet/in.h>

#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

#include "proxy/gateway.h"

#define WAIT_MS		2500	/* longest wait for anything */
#define SCRIPT_MAX	8
#define BUF_MAX		16384
#define FILL		4	/* connections that fill an accept queue */

/* A test case on a fresh fixture. */
#define CONN_TEST(fn)	cmocka_unit_test_setup_teardown(fn, fx_setup, \
	    fx_teardown)

/* What a name resolves to: an address, an error, or (both NULL) held. */
struct fake_answer {
	const char	*name;
	const char	*addr;
	const char	*error;
};

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

/* An origin on loopback, answering as its mode says. */
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

/* One test's world: its loop, gateway, origin, client and log. */
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

extern struct resolver_query	*fake_held;
extern int			 fake_open;
extern int			 fake_cancels;
extern const char		 default_policy[];

int		 conn_group_setup(void **);
int		 fx_setup(void **);
int		 fx_teardown(void **);
void		 fake_release(const struct fake_answer *);

int		 listen_on(const char *, uint16_t, struct sockaddr_in *);
void		 put(int, const void *, size_t);
int		 origin_start(struct fx *, const char *, uint16_t);
void		 origin_drop(struct origin *);
void		 origin_stop(struct origin *);
int		 oport(struct fx *);
void		 blackhole(struct fx *);
void		 blackhole_stop(struct fx *);

void		 use_policy_port(struct fx *, const char *, int);
void		 use_policy(struct fx *, const char *);
void		 script(struct fx *, const char *, const char *, const char *);
void		 use_escalate(struct fx *, int);
void		 use_fakeip(struct fx *, uint8_t *);
const char	*fake_unused(const uint8_t *);

void		 client_to(struct fx *, const struct sockaddr_in *);
void		 say(struct fx *, const char *);
void		 client(struct fx *, const char *);
void		 client_close(struct fx *);
void		 client_clear(struct fx *);
const char	*connect_to(struct fx *, const char *, int);

int		 run_until(struct fx *, int (*)(struct fx *), int);
int		 never(struct fx *);
int		 got_want(struct fx *);
int		 got_eof(struct fx *);
int		 no_conns(struct fx *);
int		 query_held(struct fx *);
int		 ask_pending(struct fx *);

void		 expect(struct fx *, const char *);
void		 expect_eof(struct fx *);
void		 expect_that(struct fx *, int (*)(struct fx *), const char *);
void		 expect_status(struct fx *, const char *);
int		 count_audit(struct fx *, const char *, const char *,
		    const char *, int);
int		 count_audit_field(struct fx *, const char *, const char *);
void		 expect_audit(struct fx *, const char *, const char *,
		    const char *, int);
void		 expect_refusal(struct fx *, int, const char *, const char *,
		    const char *, const char *);

#endif
