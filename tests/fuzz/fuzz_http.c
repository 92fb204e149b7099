/*
 * Fuzz the HTTP request and response head parsers and the chunked body
 * framing.  The first byte picks the parser; the rest is its input.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/wire/http.h"
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
	if (response)
		(void)http_response_parse((const char *)data, n, &lim,
		    len & 1, &resp);
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
	switch (data[0] % 3) {
	case 0:
		fuzz_head(data + 1, len - 1, 0);
		break;
	case 1:
		fuzz_head(data + 1, len - 1, 1);
		break;
	default:
		fuzz_chunked(data + 1, len - 1);
		break;
	}
	return (0);
}
