/*
 * Through an upstream proxy: which connections go through it (all but
 * the host's loopback and what no-upstream names), its CONNECT for a
 * tunnel, a captured or SOCKS5 connection and inspected TLS, and its
 * answer: the tunnel open, or a refusal that says which side refused.
 * Plain HTTP goes to it as absolute-form requests (forward.c).  The
 * upstream itself, its addresses resolved once by the host's resolver
 * and its credentials read once, is made here too (conn.h).
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/stat.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>

#include "lib/log.h"
#include "proxy/conn/conn-int.h"
#include "proxy/escalate/escalate.h"
#include "proxy/wire/http.h"
#include "proxy/wire/upstreammsg.h"
#include "rules/policy.h"
#include "rules/rules.h"

/* Read the credentials file: its first line as "Basic BASE64". */
static char *
conn_upstream_auth(const char *path, char *err, size_t errlen)
{
	char		 buf[UPSTREAM_CRED_MAX + 2], out[UPSTREAM_AUTH_MAX];
	char		*auth = NULL;
	const char	*errstr;
	struct stat	 st;
	ssize_t		 n;
	int		 fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY)) == -1) {
		snprintf(err, errlen, "upstream-auth %s: %s", path,
		    strerror(errno));
		return (NULL);
	}
	if (fstat(fd, &st) == 0 && (st.st_mode & S_IROTH) != 0)
		log_warnx("upstream-auth %s: everyone may read it (chmod o-r)",
		    path);
	n = read(fd, buf, sizeof buf);
	close(fd);
	if (n < 0)
		snprintf(err, errlen, "upstream-auth %s: %s", path,
		    strerror(errno));
	else if (upstream_credentials(buf, (size_t)n, out, sizeof out,
	    &errstr) == -1)
		snprintf(err, errlen, "upstream-auth %s: %s", path, errstr);
	else if ((auth = strdup(out)) == NULL)
		snprintf(err, errlen, "out of memory");
	explicit_bzero(buf, sizeof buf);
	explicit_bzero(out, sizeof out);
	return (auth);
}

/* Its addresses, by the host's resolver (the operator named it). */
static int
conn_upstream_addrs(struct conn_upstream *u, const char *host, char *err,
    size_t errlen)
{
	struct addrinfo	 hints, *ai, *a;
	int		 rv;

	memset(&hints, 0, sizeof hints);
	hints.ai_socktype = SOCK_STREAM;
	if ((rv = getaddrinfo(host, NULL, &hints, &ai)) != 0) {
		snprintf(err, errlen, "upstream %s: %s", u->label,
		    gai_strerror(rv));
		return (-1);
	}
	for (a = ai; a != NULL && u->naddrs < RESOLVER_MAX_ADDRS;
	    a = a->ai_next) {
		if (a->ai_family == AF_INET) {
			u->addrs[u->naddrs].family = AF_INET;
			memcpy(u->addrs[u->naddrs++].addr, &((struct
			    sockaddr_in *)a->ai_addr)->sin_addr, 4);
		} else if (a->ai_family == AF_INET6) {
			u->addrs[u->naddrs].family = AF_INET6;
			memcpy(u->addrs[u->naddrs++].addr, &((struct
			    sockaddr_in6 *)a->ai_addr)->sin6_addr, 16);
		}
	}
	freeaddrinfo(ai);
	if (u->naddrs == 0) {
		snprintf(err, errlen, "upstream %s: no address", u->label);
		return (-1);
	}
	return (0);
}

/* The upstream a policy names: resolved, its credentials read. */
struct conn_upstream *
conn_upstream_create(const struct rules_upstream *ru, char *err,
    size_t errlen)
{
	struct conn_upstream	*u;
	struct host		 h;

	if ((u = calloc(1, sizeof *u)) == NULL) {
		snprintf(err, errlen, "out of memory");
		return (NULL);
	}
	u->refs = 1;
	u->port = ru->port;
	memset(&h, 0, sizeof h);
	h.kind = strchr(ru->host, ':') != NULL ? HOST_IPV6 : HOST_NAME;
	snprintf(h.text, sizeof h.text, "%s", ru->host);
	escalate_target(&h, ru->port, u->label, sizeof u->label);
	snprintf(u->detail, sizeof u->detail, "upstream %s", u->label);
	if (conn_upstream_addrs(u, ru->host, err, errlen) == -1 ||
	    (ru->auth != NULL && (u->auth = conn_upstream_auth(ru->auth, err,
	    errlen)) == NULL)) {
		conn_upstream_unref(u);
		return (NULL);
	}
	return (u);
}

/*
 * Choose the way to (host, port): through the upstream in force, or
 * directly (no upstream, the host's loopback, a no-upstream host).
 * Returns 1 through the upstream.
 */
int
conn_upstream_route(struct conn *c)
{
	struct conn_upstream	*u = c->set->upstream;
	const struct rules	*r = policy_rules(conn_policy_in_force(c));

	conn_upstream_unref(c->upstream);
	c->upstream = NULL;
	if (u == NULL || (c->host.kind == HOST_NAME &&
	    strcmp(c->host.text, RULES_HOST_LOOPBACK) == 0) ||
	    (r != NULL && rules_no_upstream(r, &c->host)))
		return (0);
	c->upstream = conn_upstream_ref(u);
	return (1);
}

/*
 * Does the server take the requests themselves, as absolute-form
 * (plain HTTP: forwarded, or read on a bound connection in clear), rather
 * than a tunnel opened by CONNECT?
 */
int
conn_upstream_forward(const struct conn *c)
{
	if (c->bound)
		return (!c->client_tls);
	return (!c->transparent && !c->socks && !c->req->is_connect);
}

/* The upstream's addresses, to dial in place of the host's.  0 or -1. */
int
conn_upstream_addrs_take(struct conn *c)
{
	struct conn_upstream	*u = c->upstream;

	free(c->addrs);
	c->naddrs = c->next_addr = 0;
	if ((c->addrs = calloc(u->naddrs, sizeof *c->addrs)) == NULL) {
		conn_refuse(c, 502, NULL, "out of memory");
		return (-1);
	}
	memcpy(c->addrs, u->addrs, u->naddrs * sizeof *c->addrs);
	c->naddrs = u->naddrs;
	return (0);
}

/* Ask the upstream for a tunnel to (host, port), and wait for it. */
void
conn_upstream_connect(struct conn *c)
{
	char	head[UPSTREAM_HEAD_MAX];
	int	n;

	if (conn_fwd_start(c) == -1) {
		conn_close(c, "out of memory");
		return;
	}
	if ((n = upstream_connect_head(head, sizeof head, &c->host, c->port,
	    c->upstream->auth)) == -1) {
		conn_upstream_failed(c, "upstream-failed", "cannot be asked: "
		    "the CONNECT request does not fit");
		return;
	}
	conn_send(c->server, head, (size_t)n);
	explicit_bzero(head, sizeof head);
	c->state = S_UPSTREAM;
	conn_timer(c, c->set->connect_timeout);
}

/*
 * The upstream refused, or went wrong: 502 with which, and why in the
 * audit line's detail, naming the upstream.
 */
void
conn_upstream_failed(struct conn *c, const char *perr, const char *fmt, ...)
{
	va_list	ap;
	char	what[256], note[CONN_NOTE_LEN];

	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	if (snprintf(note, sizeof note, "the upstream proxy %s %s",
	    c->upstream->label, what) < 0)
		note[0] = '\0';
	conn_note_set(c, "%s", note);
	conn_server_free(c);
	conn_refuse(c, 502, perr, note);
}

/* The upstream's own refusal of a CONNECT or a request. */
void
conn_upstream_refuse(struct conn *c, const struct upstream_verdict *v)
{
	char	note[CONN_NOTE_LEN];

	upstream_why(v, c->upstream->label, c->upstream->auth != NULL,
	    note, sizeof note);
	conn_note_set(c, "%s", note);
	conn_server_free(c);
	conn_refuse(c, 502, upstream_label(v->answer), note);
}

/*
 * S_UPSTREAM: read the answer to CONNECT.  A 2xx opens the tunnel (what
 * came after its head is the server's, and stays): returns 1.  Anything
 * else is the upstream's refusal; 0 while the head is incomplete too.
 */
int
conn_upstream_read(struct conn *c)
{
	struct evbuffer		*in = bufferevent_get_input(c->server);
	struct upstream_verdict	 v;
	size_t			 len, avail;
	unsigned char		*p;

	len = evbuffer_get_length(in);
	avail = len < CONN_RESP_HEAD_MAX ? len : CONN_RESP_HEAD_MAX;
	if (avail <= c->fwd->rscan.total)
		return (0);
	if ((p = evbuffer_pullup(in, avail)) == NULL ||
	    http_scan_feed(&c->fwd->rscan, p + c->fwd->rscan.total,
	    avail - c->fwd->rscan.total) == 0) {
		if (p == NULL || avail >= CONN_RESP_HEAD_MAX)
			conn_upstream_failed(c, "upstream-failed", "answered "
			    "CONNECT with a head too large");
		return (0);
	}
	if (c->fwd->resp == NULL &&
	    (c->fwd->resp = malloc(sizeof *c->fwd->resp)) == NULL) {
		conn_close(c, "out of memory");
		return (0);
	}
	if (http_response_parse((const char *)p, c->fwd->rscan.total,
	    &c->set->lim, 0, c->fwd->resp) == -1) {
		conn_upstream_failed(c, "upstream-failed", "answered CONNECT "
		    "with a malformed head");
		return (0);
	}
	upstream_answer_read(c->fwd->resp, 1, &v);
	evbuffer_drain(in, c->fwd->rscan.total);
	http_scan_init(&c->fwd->rscan);
	if (v.answer != UPSTREAM_OPEN) {
		conn_upstream_refuse(c, &v);
		return (0);
	}
	c->upstream_open = 1;
	c->state = S_DIAL;	/* as if just connected to the host */
	return (1);
}
