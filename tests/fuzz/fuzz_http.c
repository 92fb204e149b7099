/*
 * Fuzz the HTTP request and response head parsers, the chunked body
 * framing, and what an upstream proxy's answer and credentials file are
 * read as (proxy/wire/upstreammsg.c).  The first byte picks the parser
 * ('0' request, '1' response, '2' chunked, '3' credentials); the rest
 * is its input.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/wire/http.h"
#include "proxy/wire/upstreammsg.h"
#include "rules/rules.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* What the request rules are given must be what the parser found. */
static void
fuzz_rules(const struct http_request *req)
{
	struct rules_request	rq;
	size_t			i;

	http_request_rules(req, &rq);
	if (rq.override_bad && rq.override != NULL)
		abort();
	if ((rq.override_bad || rq.override != NULL) &&
	    rq.override_name == NULL)
		abort();
	for (i = 0; i < rq.override_len; i++)
		if (rq.override[i] <= ' ' || rq.override[i] == ',' ||
		    rq.override[i] == 0x7f)
			abort();
	if (rq.upgrade != NULL && !req->h.upgrade)
		abort();
}

/* Is s printable ASCII, NUL-ended within len? */
static int
printable(const char *s, size_t len)
{
	size_t	i;

	for (i = 0; i < len && s[i] != '\0'; i++)
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] >= 0x7f)
			return (0);
	return (i < len);
}

/*
 * An upstream's answer: a tunnel opens only on a 2xx to a CONNECT, a
 * CONNECT's answer is never relayed, a 407 is always the upstream's,
 * and what is kept of it is printable.
 */
static void
fuzz_upstream(const struct http_response *r, int connect)
{
	struct upstream_verdict	v;
	char			why[512];

	upstream_answer_read(r, connect, &v);
	if ((v.answer == UPSTREAM_OPEN) != (connect && r->status >= 200 &&
	    r->status <= 299))
		abort();
	if (connect && v.answer == UPSTREAM_RELAY)
		abort();
	if (r->status == 407 && v.answer != UPSTREAM_AUTH)
		abort();
	if (!printable(v.reason, sizeof v.reason) ||
	    !printable(v.scheme, sizeof v.scheme))
		abort();
	upstream_why(&v, "127.0.0.1:3128", connect, why, sizeof why);
	if (!printable(why, sizeof why))
		abort();
}

/* A credentials file: taken as "Basic BASE64" of its first line, or not. */
static void
fuzz_credentials(const uint8_t *data, size_t len)
{
	char		 out[UPSTREAM_AUTH_MAX];
	const char	*errstr = NULL;
	size_t		 n;

	if (upstream_credentials((const char *)data, len, out, sizeof out,
	    &errstr) == -1) {
		if (errstr == NULL)
			abort();
		return;
	}
	n = strlen(out);
	if (n < 10 || (n - 6) % 4 != 0 || memcmp(out, "Basic ", 6) != 0 ||
	    strspn(out + 6, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuv"
	    "wxyz0123456789+/=") != n - 6)
		abort();
}

/* Scan for the end of a head, then parse what was found. */
static void
fuzz_head(const uint8_t *data, size_t len, int response)
{
	static struct http_request	req;
	static struct http_response	resp;
	struct http_limits		lim = { HTTP_MAX_HEAD, HTTP_MAX_HEADERS };
	struct http_scan		sc;
	size_t				i, n = 0;

	http_scan_init(&sc);
	for (i = 0; i < len; i += 7) {
		size_t step = len - i < 7 ? len - i : 7;

		if ((n = http_scan_feed(&sc, data + i, step)) != 0) {
			n += i;
			break;
		}
	}
	if (n == 0)
		n = len;
	if (response) {
		if (http_response_parse((const char *)data, n, &lim, len & 1,
		    &resp) == 0)
			fuzz_upstream(&resp, (len & 2) != 0);
	}
	else if (http_request_parse((const char *)data, n, &lim, &req) == 0) {
		size_t	j;

		/* Touch every piece the parser hands out. */
		for (j = 0; j < req.h.nheaders; j++)
			if (memchr(req.h.headers[j].value.p, 0,
			    req.h.headers[j].value.len) != NULL)
				abort();
		if (req.host.len > 0 && memchr(req.host.p, '@',
		    req.host.len) != NULL)
			abort();
		fuzz_rules(&req);
	}
}

/*
 * Follow a chunked body step by step (http_chunked_step()): the bytes it
 * takes and whether it ends must be what http_chunked_feed() says.
 * Returns the body's length, or -1 for broken framing.
 */
static ssize_t
fuzz_chunked_steps(const uint8_t *data, size_t len)
{
	struct http_chunked	ch;
	size_t			i = 0;
	ssize_t			n;
	int			data_bytes, done = 0;

	http_chunked_init(&ch);
	while (i < len && !done) {
		if ((n = http_chunked_step(&ch, data + i, len - i, &data_bytes,
		    &done)) == -1)
			return (-1);
		if (n == 0 && !done)
			abort();
		i += (size_t)n;
	}
	return (done ? (ssize_t)i : (ssize_t)len);
}

/* Feed a chunked body in pieces of varying size. */
static void
fuzz_chunked(const uint8_t *data, size_t len)
{
	struct http_chunked	ch;
	size_t			i = 0, step;
	ssize_t			n, total;
	int			done = 0;

	http_chunked_init(&ch);
	total = fuzz_chunked_steps(data, len);
	while (i < len) {
		step = (data[i] % 13) + 1;
		if (step > len - i)
			step = len - i;
		n = http_chunked_feed(&ch, data + i, step, &done);
		if (n == -1) {
			if (total != -1)
				abort();
			return;
		}
		i += (size_t)n;
		if (done)
			break;
		if ((size_t)n != step)
			abort();
	}
	if (total != (ssize_t)i)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	if (len == 0)
		return (0);
	switch (data[0] % 4) {
	case 0:
		fuzz_head(data + 1, len - 1, 0);
		break;
	case 1:
		fuzz_head(data + 1, len - 1, 1);
		break;
	case 3:
		fuzz_credentials(data + 1, len - 1);
		break;
	default:
		fuzz_chunked(data + 1, len - 1);
		break;
	}
	return (0);
}
