/*
 * Secrets' values kept out of responses.  A response from a host a
 * secret is for (one its value may have been sent to, on this
 * connection or any other) goes through a scrubber
 * (proxy/wire/scrub.c): its head whole, its body piece by piece, every
 * value in it replaced by the secret's placeholder.  Such a request asks
 * the origin for no content coding (Accept-Encoding: identity), and a
 * coded body (gzip, br), which cannot be read, is refused with 502.  A
 * body that goes through the scrubber is sent chunked, its length being
 * what the replacements make it (to an HTTP/1.0 client: up to the
 * close), the origin's trailers dropped.  The audit line of the
 * exchange names the secrets replaced, never a value.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>

#include "proxy/conn/conn-int.h"
#include "proxy/wire/http.h"
#include "proxy/wire/scrub.h"
#include "rules/rules.h"

/* The secrets whose values may have gone to this host. */
static uint64_t
conn_scrub_mask(const struct conn *c)
{
	const struct conn_set	*set = c->set;
	uint64_t		 mask = 0;
	size_t			 i;

	for (i = 0; i < set->nsecrets && i < SCRUB_SECRETS_MAX; i++) {
		if (set->secrets[i].value != NULL &&
		    rules_secret_for(set->secrets[i].rule, &c->host))
			mask |= (uint64_t)1 << i;
	}
	return (mask);
}

/* A scrubber for the secrets of mask.  0, or -1 out of memory. */
static int
conn_scrub_make(struct conn *c, uint64_t mask)
{
	const struct conn_secret	*s;
	size_t				 i;

	conn_scrub_free(c);
	if ((c->scrub = scrub_create()) == NULL ||
	    (c->scrub_out = evbuffer_new()) == NULL)
		return (-1);
	for (i = 0; i < SCRUB_SECRETS_MAX; i++) {
		if ((mask & (uint64_t)1 << i) == 0)
			continue;
		s = &c->set->secrets[i];
		if (scrub_add(c->scrub, s->rule->name, s->value, s->len) == -1)
			return (-1);
	}
	c->scrub_mask = mask;
	c->scrub_gen = c->set->secrets_gen;
	return (0);
}

/*
 * An exchange begins: is its response to be scrubbed?  The scrubber is
 * kept for the next request while the host's secrets stay the same.
 * Returns 0, or -1 when out of memory.
 */
int
conn_scrub_start(struct conn *c)
{
	uint64_t	mask;

	c->scrubbing = c->scrub_body = c->scrub_chunked = 0;
	if (c->set->nsecrets == 0 || (mask = conn_scrub_mask(c)) == 0)
		return (0);
	if ((c->scrub == NULL || c->scrub_mask != mask ||
	    c->scrub_gen != c->set->secrets_gen) &&
	    conn_scrub_make(c, mask) == -1) {
		conn_scrub_free(c);
		return (-1);
	}
	scrub_reset(c->scrub);
	c->scrubbing = 1;
	return (0);
}

/* The scrubber's output goes to an evbuffer. */
static void
conn_scrub_emit(void *arg, const void *p, size_t n)
{
	evbuffer_add(arg, p, n);
}

/* The scrubber's output is not wanted: only whether it replaced. */
static void
conn_scrub_drop(void *arg, const void *p, size_t n)
{
	(void)arg;
	(void)p;
	(void)n;
}

/*
 * A response head read whole (c->fwd->rhead, *len bytes): with the values
 * replaced, before it is parsed; copied only when one was.  Returns 0,
 * or -1 when out of memory.
 */
int
conn_scrub_head(struct conn *c, size_t *len)
{
	char	*p;
	size_t	 n;

	if (!c->scrubbing ||
	    scrub_feed(c->scrub, c->fwd->rhead, *len, 1, conn_scrub_drop,
	    NULL) == 0)
		return (0);
	scrub_feed(c->scrub, c->fwd->rhead, *len, 1, conn_scrub_emit,
	    c->scrub_out);
	n = evbuffer_get_length(c->scrub_out);
	if ((p = malloc(n)) == NULL)
		return (-1);
	evbuffer_remove(c->scrub_out, p, n);
	free(c->fwd->rhead);
	c->fwd->rhead = p;
	*len = n;
	return (0);
}

/* The names of the secrets this exchange's scrubber has, "A,B". */
static void
conn_scrub_names(const struct conn *c, char *buf, size_t len)
{
	const char	*name;
	size_t		 i, n = 0, k;

	buf[0] = '\0';
	for (i = 0; i < SCRUB_SECRETS_MAX && i < c->set->nsecrets; i++) {
		if ((c->scrub_mask & (uint64_t)1 << i) == 0)
			continue;
		name = c->set->secrets[i].rule->name;
		if ((k = strlen(name)) + 2 > len - n)
			break;
		if (n > 0)
			buf[n++] = ',';
		memcpy(buf + n, name, k + 1);
		n += k;
	}
}

/*
 * A final response head with a body: can the body be scrubbed?  One
 * with a content coding cannot (the request asked for none): refused
 * with 502.  Otherwise its framing is chosen.  Returns 0, or -1 when
 * refused.
 */
int
conn_scrub_check(struct conn *c)
{
	const struct http_response	*r = c->fwd->resp;
	const struct http_header	*hd;
	char				 names[128], why[512];
	size_t				 i;

	if (!c->scrubbing || r->h.body == HTTP_BODY_NONE)
		return (0);
	for (i = 0; i < r->h.nheaders; i++) {
		hd = &r->h.headers[i];
		if (!http_str_eq(&hd->name, "content-encoding") ||
		    http_str_eq(&hd->value, "identity"))
			continue;
		conn_scrub_names(c, names, sizeof names);
		conn_note_set(c, "Content-Encoding %.*s "
		    "from a host of secret %s", (int)(hd->value.len < 32 ?
		    hd->value.len : 32), hd->value.p, names);
		snprintf(why, sizeof why, "the response is coded (%.*s), so "
		    "it cannot be checked for the value of secret %s",
		    (int)(hd->value.len < 32 ? hd->value.len : 32),
		    hd->value.p, names);
		conn_refuse(c, 502, "secret-unscannable", why);
		return (-1);
	}
	c->scrub_body = 1;
	c->scrub_chunked = c->req->h.minor >= 1;
	if (!c->scrub_chunked)
		c->client_ka = 0;
	return (0);
}

#define CONN_CHUNK_HEAD	"00000000\r\n"	/* a chunk's size, filled in */

/*
 * Make room for what the scrubber will make of the body the server's
 * input holds: one chain, the chunk's size first, so that it goes to
 * the client in one piece (a TLS filter makes an SSL_write, a record,
 * of each chain it is given).
 */
static void
conn_scrub_begin(struct conn *c, size_t in)
{
	struct evbuffer	*b = c->scrub_out;

	evbuffer_expand(b, (in < CONN_HIGH ? in : CONN_HIGH) + 64);
	if (c->scrub_chunked)
		evbuffer_add(b, CONN_CHUNK_HEAD, sizeof CONN_CHUNK_HEAD - 1);
}

/*
 * Send what the scrubber made of the body so far: as one chunk, its
 * size written in the room left for it (leading zeros are allowed), and
 * the last chunk after it when the body ended; to an HTTP/1.0 client, as
 * it is.
 */
static void
conn_scrub_flush(struct conn *c, int done)
{
	static const char	 hex[] = "0123456789abcdef";
	struct evbuffer		*b = c->scrub_out;
	struct evbuffer_iovec	 v;
	size_t			 len, head = sizeof CONN_CHUNK_HEAD - 1, i;
	char			 size[8], *p = size;

	if (c->scrub_chunked) {
		len = evbuffer_get_length(b) - head;
		if (evbuffer_peek(b, (ev_ssize_t)head, NULL, &v, 1) == 1 &&
		    v.iov_len >= head)
			p = v.iov_base;		/* written in place */
		for (i = 8; i-- > 0; len >>= 4)
			p[i] = hex[len & 15];
		if (evbuffer_get_length(b) == head)
			evbuffer_drain(b, head);
		else if (p == size) {
			evbuffer_drain(b, 8);
			evbuffer_prepend(b, size, 8);
		}
		if (evbuffer_get_length(b) > 0)
			evbuffer_add(b, "\r\n", 2);
		if (done)
			evbuffer_add(b, "0\r\n\r\n", 5);
	}
	c->down += (int64_t)evbuffer_get_length(b);
	evbuffer_add_buffer(bufferevent_get_output(c->client), b);
}

/*
 * One piece of the body at the front of the server's input: how many
 * bytes of it to take (*n), of which *data are data, *done when the
 * body ends with them.  Returns -1 on broken framing.
 */
static int
conn_scrub_piece(struct conn *c, const struct evbuffer_iovec *v, size_t *n,
    size_t *data, int *done)
{
	ssize_t	k;
	int	isdata;

	*n = *data = v->iov_len;
	switch (c->fwd->resp->h.body) {
	case HTTP_BODY_LENGTH:
		if (*n > c->fwd->resp_remain)
			*n = *data = (size_t)c->fwd->resp_remain;
		*done = (c->fwd->resp_remain -= *n) == 0;
		return (0);
	case HTTP_BODY_CHUNKED:
		if ((k = http_chunked_step(&c->fwd->resp_ch, v->iov_base,
		    v->iov_len, &isdata, done)) == -1)
			return (-1);
		*n = (size_t)k;
		*data = isdata ? *n : 0;
		return (0);
	default:
		return (0);
	}
}

/*
 * Relay the response body through the scrubber, as its framing says;
 * at eof (the server closed), all that came.  Returns 1 when the body
 * is complete, 0 when more is to come, -1 on broken framing.
 */
int
conn_scrub_body(struct conn *c, int eof)
{
	struct evbuffer		*in = bufferevent_get_input(c->server);
	struct evbuffer		*out = bufferevent_get_output(c->client);
	struct evbuffer_iovec	 v;
	size_t			 n, data;
	struct conn_fwd		*f = c->fwd;
	int			 done = f->resp->h.body == HTTP_BODY_LENGTH &&
	    f->resp_remain == 0;

	conn_scrub_begin(c, evbuffer_get_length(in));
	while (!done && evbuffer_get_length(in) > 0 && (eof ||
	    evbuffer_get_length(out) + evbuffer_get_length(c->scrub_out) <
	    CONN_HIGH) && evbuffer_peek(in, -1, NULL, &v, 1) >= 1 &&
	    v.iov_len > 0) {
		if (conn_scrub_piece(c, &v, &n, &data, &done) == -1) {
			evbuffer_drain(c->scrub_out,
			    evbuffer_get_length(c->scrub_out));
			return (-1);
		}
		if (data > 0)
			scrub_feed(c->scrub, v.iov_base, data, done,
			    conn_scrub_emit, c->scrub_out);
		evbuffer_drain(in, n);
	}
	if (eof && c->fwd->resp->h.body == HTTP_BODY_CLOSE)
		done = 1;
	if (done)
		scrub_feed(c->scrub, "", 0, 1, conn_scrub_emit, c->scrub_out);
	conn_scrub_flush(c, done);
	return (done);
}
