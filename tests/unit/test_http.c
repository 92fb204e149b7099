/*
 * Unit tests for the HTTP head parsers and chunked framing.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "proxy/wire/http.h"
#include "rules/rules.h"

static const struct http_limits lim = { 4096, 20 };

struct req_case {
	const char	*in;
	size_t		 len;		/* 0: strlen(in) */
	int		 status;
	int		 form;
	const char	*host;
	int		 port;
	int		 body;
	int		 keep_alive;
};

#define R(in, st, form, host, port, body, ka) \
	{ in, 0, st, form, host, port, body, ka }
#define BAD(in, st) { in, 0, st, -1, NULL, 0, 0, 0 }
#define NUL(in, st) { in, sizeof(in) - 1, st, -1, NULL, 0, 0, 0 }

static const struct req_case req_cases[] = {
	R("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n",
	    0, HTTP_FORM_AUTHORITY, "example.com", 443, HTTP_BODY_NONE, 1),
	R("CONNECT [::1]:8443 HTTP/1.1\r\n\r\n",
	    0, HTTP_FORM_AUTHORITY, "::1", 8443, HTTP_BODY_NONE, 1),
	R("GET http://a.test/x?y HTTP/1.1\r\nHost: a.test\r\n\r\n",
	    0, HTTP_FORM_ABSOLUTE, "a.test", 80, HTTP_BODY_NONE, 1),
	R("GET HTTP://A.test:8080 HTTP/1.0\r\n\r\n",
	    0, HTTP_FORM_ABSOLUTE, "A.test", 8080, HTTP_BODY_NONE, 0),
	R("GET http://a.test:/ HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
	    0, HTTP_FORM_ABSOLUTE, "a.test", 80, HTTP_BODY_NONE, 1),
	R("\r\n\r\nGET / HTTP/1.1\nHost: x\n\n",
	    0, HTTP_FORM_ORIGIN, NULL, 0, HTTP_BODY_NONE, 1),
	R("POST http://a.test/ HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n"
	    "Connection: close\r\n\r\n",
	    0, HTTP_FORM_ABSOLUTE, "a.test", 80, HTTP_BODY_LENGTH, 0),
	R("POST http://a.test/ HTTP/1.1\r\nHost: a\r\nContent-Length: 5, 5\r\n"
	    "Content-Length: 5\r\n\r\n",
	    0, HTTP_FORM_ABSOLUTE, "a.test", 80, HTTP_BODY_LENGTH, 1),
	R("PUT http://a.test/ HTTP/1.1\r\nHost: a\r\n"
	    "Transfer-Encoding: Chunked\r\n\r\n",
	    0, HTTP_FORM_ABSOLUTE, "a.test", 80, HTTP_BODY_CHUNKED, 1),
	R("OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n",
	    0, HTTP_FORM_ASTERISK, NULL, 0, HTTP_BODY_NONE, 1),
	BAD("garbage\r\n\r\n", 400),
	BAD("GET  / HTTP/1.1\r\nHost: x\r\n\r\n", 400),
	BAD("GET / HTTP/1.1 \r\nHost: x\r\n\r\n", 400),
	BAD("GET / HTTP/2.0\r\nHost: x\r\n\r\n", 505),
	BAD("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 505),
	BAD("G(T / HTTP/1.1\r\nHost: x\r\n\r\n", 400),
	BAD("GET / HTTP/1.1\r\nHost x\r\n\r\n", 400),
	BAD("GET / HTTP/1.1\r\nHost : x\r\n\r\n", 400),
	BAD("GET / HTTP/1.1\r\n: x\r\nHost: x\r\n\r\n", 400),
	BAD("GET / HTTP/1.1\r\nHost: x\r\n folded\r\n\r\n", 400),
	BAD("GET / HTTP/1.1\r\nHost: x\ry\r\n\r\n", 400),
	BAD("GET / HTTP/1.1\r\nHost: x\x01y\r\n\r\n", 400),
	BAD("GET / HTTP/1.1\r\n\r\n", 400),
	BAD("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400),
	BAD("CONNECT example.com HTTP/1.1\r\n\r\n", 400),
	BAD("CONNECT example.com: HTTP/1.1\r\n\r\n", 400),
	BAD("CONNECT example.com:0 HTTP/1.1\r\n\r\n", 400),
	BAD("CONNECT example.com:65536 HTTP/1.1\r\n\r\n", 400),
	BAD("CONNECT example.com:44x HTTP/1.1\r\n\r\n", 400),
	BAD("CONNECT :443 HTTP/1.1\r\n\r\n", 400),
	BAD("CONNECT [::1:443 HTTP/1.1\r\n\r\n", 400),
	BAD("CONNECT a.test:443 HTTP/1.1\r\nContent-Length: 3\r\n\r\n", 400),
	BAD("GET http://user@evil.test/ HTTP/1.1\r\nHost: x\r\n\r\n", 400),
	BAD("GET http://good.test@evil.test:80/ HTTP/1.1\r\nHost: x\r\n\r\n",
	    400),
	BAD("GET http:///x HTTP/1.1\r\nHost: x\r\n\r\n", 400),
	BAD("GET http://a.test/#f HTTP/1.1\r\nHost: x\r\n\r\n", 400),
	BAD("GET ftp://a.test/ HTTP/1.1\r\nHost: x\r\n\r\n", 501),
	BAD("GET https://a.test/ HTTP/1.1\r\nHost: x\r\n\r\n", 501),
	BAD("GET a.test/ HTTP/1.1\r\nHost: x\r\n\r\n", 400),
	BAD("POST http://a/ HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n", 400),
	BAD("POST http://a/ HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n"
	    "Content-Length: 6\r\n\r\n", 400),
	BAD("POST http://a/ HTTP/1.1\r\nHost: a\r\nContent-Length: 5, 6\r\n\r\n",
	    400),
	BAD("POST http://a/ HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n",
	    400),
	BAD("POST http://a/ HTTP/1.1\r\nHost: a\r\nContent-Length: 0x5\r\n\r\n",
	    400),
	BAD("POST http://a/ HTTP/1.1\r\nHost: a\r\nContent-Length:\r\n\r\n",
	    400),
	BAD("POST http://a/ HTTP/1.1\r\nHost: a\r\nContent-Length: ,\r\n\r\n",
	    400),
	BAD("POST http://a/ HTTP/1.1\r\nHost: a\r\n"
	    "Content-Length: 99999999999999999999\r\n\r\n", 400),
	BAD("POST http://a/ HTTP/1.1\r\nHost: a\r\n"
	    "Transfer-Encoding: gzip, chunked\r\n\r\n", 501),
	BAD("POST http://a/ HTTP/1.1\r\nHost: a\r\n"
	    "Transfer-Encoding: chunked, chunked\r\n\r\n", 501),
	BAD("POST http://a/ HTTP/1.1\r\nHost: a\r\n"
	    "Transfer-Encoding: xchunked\r\n\r\n", 501),
	BAD("POST http://a/ HTTP/1.1\r\nHost: a\r\nTransfer-Encoding:\r\n\r\n",
	    400),
	BAD("POST http://a/ HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n",
	    400),
	BAD("GET / HTTP/1.1\r\nA: 1\r\nB: 1\r\nC: 1\r\nD: 1\r\nE: 1\r\nF: 1\r\n"
	    "G: 1\r\nH: 1\r\nI: 1\r\nJ: 1\r\nK: 1\r\nL: 1\r\nM: 1\r\nN: 1\r\n"
	    "O: 1\r\nP: 1\r\nQ: 1\r\nR: 1\r\nS: 1\r\nT: 1\r\nU: 1\r\n\r\n", 431),
	/* A framing header dropped as hop-by-hop would smuggle the body. */
	BAD("GET / HTTP/1.1\r\nHost: a\r\nConnection: Content-Length\r\n"
	    "Content-Length: 5\r\n\r\n", 400),
	BAD("POST / HTTP/1.1\r\nHost: a\r\nConnection: keep-alive, "
	    "transfer-encoding\r\nTransfer-Encoding: chunked\r\n\r\n", 400),
	BAD("GET / HTTP/1.1\r\nHost: a\r\nConnection: host\r\n\r\n", 400),
	NUL("GET / HTTP/1.1\r\nHost: a\0b\r\n\r\n", 400),
	NUL("GET /\0 HTTP/1.1\r\nHost: ab\r\n\r\n", 400),
	NUL("\0\r\n\r\n", 400),
};

/* Every request in the table parses to what it says. */
static void
test_request_table(void **state)
{
	struct http_request	*r;
	size_t			 i, len;
	int			 st;

	r = malloc(sizeof *r);
	assert_non_null(r);
	for (i = 0; i < sizeof req_cases / sizeof req_cases[0]; i++) {
		const struct req_case *c = &req_cases[i];

		len = c->len ? c->len : strlen(c->in);
		st = http_request_parse(c->in, len, &lim, r);
		if (st != c->status)
			fail_msg("case %zu (%s): status %d, want %d", i, c->in,
			    st, c->status);
		if (c->status != 0)
			continue;
		assert_int_equal(r->form, c->form);
		if (c->host != NULL) {
			assert_int_equal(r->host.len, strlen(c->host));
			assert_memory_equal(r->host.p, c->host, r->host.len);
			assert_int_equal(r->port, c->port);
		}
		assert_int_equal(r->h.body, c->body);
		assert_int_equal(r->h.keep_alive, c->keep_alive);
	}
	free(r);
}

/* Connection marks the headers it names hop-by-hop; path is kept. */
static void
test_request_hop(void **state)
{
	static const char	in[] = "GET http://a.test/p?q HTTP/1.1\r\n"
	    "Host: a.test\r\nConnection: X-Foo, upgrade\r\nX-Foo: 1\r\n"
	    "Keep-Alive: 5\r\nProxy-Authorization: x\r\nUpgrade: ws\r\n"
	    "Accept: */*\r\n\r\n";
	struct http_request	*r;

	r = malloc(sizeof *r);
	assert_non_null(r);
	assert_int_equal(http_request_parse(in, strlen(in), &lim, r), 0);
	assert_int_equal(r->h.nheaders, 7);
	assert_false(r->h.headers[0].hop);		/* Host */
	assert_true(r->h.headers[1].hop);		/* Connection */
	assert_true(r->h.headers[2].hop);		/* X-Foo */
	assert_true(r->h.headers[3].hop);
	assert_true(r->h.headers[4].hop);
	assert_true(r->h.headers[5].hop);
	assert_false(r->h.headers[6].hop);		/* Accept */
	assert_true(r->h.upgrade);
	assert_int_equal(r->path.len, 4);
	assert_memory_equal(r->path.p, "/p?q", 4);
	free(r);
}

/*
 * What the request rules see: the method an override header names (any
 * of its three names), or bad for two of them or a value that is not
 * one method; the protocol of an upgrade, only with Connection: upgrade.
 */
static const struct {
	const char	*headers;
	const char	*override;	/* NULL: none */
	const char	*name;		/* the header named */
	int		 bad;
	const char	*upgrade;	/* NULL: none */
} rules_cases[] = {
	{ "", NULL, NULL, 0, NULL },
	{ "X-HTTP-Method-Override: DELETE\r\n", "DELETE",
	    "X-HTTP-Method-Override", 0, NULL },
	{ "x-http-method: put \r\n", "put", "X-HTTP-Method", 0, NULL },
	{ "X-METHOD-OVERRIDE:\tPATCH\r\n", "PATCH", "X-Method-Override", 0,
	    NULL },
	{ "X-HTTP-Method-Override: GET\r\nX-HTTP-Method-Override: DELETE\r\n",
	    NULL, "X-HTTP-Method-Override", 1, NULL },
	{ "X-HTTP-Method: GET\r\nX-Method-Override: GET\r\n", NULL,
	    "X-HTTP-Method", 1, NULL },
	{ "X-HTTP-Method-Override: DELETE, GET\r\n", NULL,
	    "X-HTTP-Method-Override", 1, NULL },
	{ "X-HTTP-Method-Override:\r\n", NULL, "X-HTTP-Method-Override", 1,
	    NULL },
	{ "X-HTTP-Method-Override: GET POST\r\n", NULL,
	    "X-HTTP-Method-Override", 1, NULL },
	{ "X-HTTP-Method-Override: "
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZABCDEFG\r\n", NULL,
	    "X-HTTP-Method-Override", 1, NULL },
	{ "X-HTTP-Method-Overrides: DELETE\r\nX-Method: DELETE\r\n", NULL,
	    NULL, 0, NULL },
	{ "Connection: keep-alive, Upgrade\r\nUpgrade: websocket\r\n", NULL,
	    NULL, 0, "websocket" },
	{ "Connection: upgrade\r\nUpgrade: h2c\r\nUpgrade: websocket\r\n",
	    NULL, NULL, 0, "h2c" },
	{ "Upgrade: websocket\r\n", NULL, NULL, 0, NULL },
	{ "Connection: upgrade\r\n", NULL, NULL, 0, NULL },
	/* Spelled with '_', as CGI and WSGI servers read '-'. */
	{ "X_HTTP_Method_Override: DELETE\r\n", "DELETE",
	    "X-HTTP-Method-Override", 0, NULL },
	{ "x-http_method: PUT\r\nX-HTTP-Method: GET\r\n", NULL,
	    "X-HTTP-Method", 1, NULL },
};

/* A piece of the buffer (NULL: none) is want (NULL: none). */
static void
assert_piece(const char *p, size_t len, const char *want)
{
	if (want == NULL) {
		assert_null(p);
		return;
	}
	assert_int_equal(len, strlen(want));
	assert_memory_equal(p, want, len);
}

static void
test_request_rules(void **state)
{
	struct http_request	*r;
	struct rules_request	 rq;
	char			 in[512];
	size_t			 i;

	assert_non_null(r = malloc(sizeof *r));
	for (i = 0; i < sizeof rules_cases / sizeof rules_cases[0]; i++) {
		snprintf(in, sizeof in, "GET /a?b HTTP/1.1\r\nHost: a.test\r\n"
		    "%s\r\n", rules_cases[i].headers);
		assert_int_equal(http_request_parse(in, strlen(in), &lim, r),
		    0);
		http_request_rules(r, &rq);
		assert_int_equal(rq.method_len, 3);
		assert_memory_equal(rq.target, "/a?b", 4);
		assert_int_equal(rq.override_bad, rules_cases[i].bad);
		assert_piece(rq.override, rq.override_len,
		    rules_cases[i].override);
		assert_piece(rq.override_name, rq.override_name != NULL ?
		    strlen(rq.override_name) : 0, rules_cases[i].name);
		assert_piece(rq.upgrade, rq.upgrade_len,
		    rules_cases[i].upgrade);
		assert_false(rq.body);
	}
	/* A body, by length or chunked; an empty one is none. */
	snprintf(in, sizeof in, "GET / HTTP/1.1\r\nHost: a\r\n"
	    "Content-Length: 3\r\n\r\n");
	assert_int_equal(http_request_parse(in, strlen(in), &lim, r), 0);
	http_request_rules(r, &rq);
	assert_true(rq.body);
	snprintf(in, sizeof in, "GET / HTTP/1.1\r\nHost: a\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n");
	assert_int_equal(http_request_parse(in, strlen(in), &lim, r), 0);
	http_request_rules(r, &rq);
	assert_true(rq.body);
	snprintf(in, sizeof in, "GET / HTTP/1.1\r\nHost: a\r\n"
	    "Content-Length: 0\r\n\r\n");
	assert_int_equal(http_request_parse(in, strlen(in), &lim, r), 0);
	http_request_rules(r, &rq);
	assert_false(rq.body);
	free(r);
}

/* Oversized heads are 431. */
static void
test_request_too_big(void **state)
{
	struct http_request	*r;
	char			*buf;

	r = malloc(sizeof *r);
	buf = malloc(8192);
	assert_non_null(r);
	assert_non_null(buf);
	memset(buf, 'a', 8192);
	memcpy(buf, "GET / HTTP/1.1\r\nX: ", 19);
	memcpy(buf + 8188, "\r\n\r\n", 4);
	assert_int_equal(http_request_parse(buf, 8192, &lim, r), 431);
	free(buf);
	free(r);
}

/* The scanner finds the end of a head fed in pieces. */
static void
test_scan(void **state)
{
	static const char	in[] = "\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\nNEXT";
	struct http_scan	sc;
	size_t			i, n = 0;

	http_scan_init(&sc);
	for (i = 0; i < sizeof in - 1; i++) {
		if ((n = http_scan_feed(&sc, in + i, 1)) != 0)
			break;
	}
	assert_int_equal(n, 1);
	assert_int_equal(sc.total, strlen(in) - 4);
	http_scan_init(&sc);
	assert_int_equal(http_scan_feed(&sc, "A\n\nB", 4), 3);
	http_scan_init(&sc);
	assert_int_equal(http_scan_feed(&sc, "A\r\nB\r\n", 6), 0);
	assert_int_equal(http_scan_feed(&sc, "\r\n", 2), 2);
}

struct resp_case {
	const char	*in;
	int		 head_req;
	int		 rv;
	int		 status;
	int		 body;
	uint64_t	 length;
	int		 keep_alive;
};

static const struct resp_case resp_cases[] = {
	{ "HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n", 0, 0, 200,
	    HTTP_BODY_LENGTH, 12, 1 },
	{ "HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n", 1, 0, 200,
	    HTTP_BODY_NONE, 12, 1 },
	{ "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", 0, 0, 200,
	    HTTP_BODY_CHUNKED, 0, 1 },
	{ "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", 0, 0, 200,
	    HTTP_BODY_CLOSE, 0, 0 },
	{ "HTTP/1.0 200 OK\r\n\r\n", 0, 0, 200, HTTP_BODY_CLOSE, 0, 0 },
	{ "HTTP/1.1 200 OK\r\n\r\n", 0, 0, 200, HTTP_BODY_CLOSE, 0, 0 },
	{ "HTTP/1.1 204 No Content\r\n\r\n", 0, 0, 204, HTTP_BODY_NONE, 0, 1 },
	{ "HTTP/1.1 304 Not Modified\r\nContent-Length: 5\r\n\r\n", 0, 0, 304,
	    HTTP_BODY_NONE, 5, 1 },
	{ "HTTP/1.1 100 Continue\r\n\r\n", 0, 0, 100, HTTP_BODY_NONE, 0, 1 },
	{ "HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n", 0, 0, 200,
	    HTTP_BODY_NONE, 0, 1 },
	{ "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 1\r\n\r\n",
	    0, 0, 200, HTTP_BODY_LENGTH, 1, 0 },
	{ "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nTransfer-Encoding: "
	    "chunked\r\n\r\n", 0, -1, 0, 0, 0, 0 },
	{ "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
	    0, -1, 0, 0, 0, 0 },
	{ "HTTP/1.1 20 OK\r\n\r\n", 0, -1, 0, 0, 0, 0 },
	{ "HTTP/1.1 2000 OK\r\n\r\n", 0, -1, 0, 0, 0, 0 },
	{ "HTTP/1.1 099 OK\r\n\r\n", 0, -1, 0, 0, 0, 0 },
	{ "ICY 200 OK\r\n\r\n", 0, -1, 0, 0, 0, 0 },
};

/* Every response in the table parses to what it says. */
static void
test_response_table(void **state)
{
	struct http_response	*r;
	size_t			 i;
	int			 rv;

	r = malloc(sizeof *r);
	assert_non_null(r);
	for (i = 0; i < sizeof resp_cases / sizeof resp_cases[0]; i++) {
		const struct resp_case *c = &resp_cases[i];

		rv = http_response_parse(c->in, strlen(c->in), &lim,
		    c->head_req, r);
		if (rv != c->rv)
			fail_msg("case %zu: rv %d, want %d", i, rv, c->rv);
		if (rv != 0)
			continue;
		assert_int_equal(r->status, c->status);
		assert_int_equal(r->h.body, c->body);
		if (c->body == HTTP_BODY_LENGTH)
			assert_int_equal(r->h.length, c->length);
		assert_int_equal(r->h.keep_alive, c->keep_alive);
	}
	free(r);
}

/* Feed a chunked body one byte at a time; return bytes taken or -1. */
static ssize_t
chunked_bytewise(const char *in, size_t len, int *done)
{
	struct http_chunked	ch;
	size_t			i;
	ssize_t			n;

	http_chunked_init(&ch);
	for (i = 0; i < len; i++) {
		if ((n = http_chunked_feed(&ch, in + i, 1, done)) == -1)
			return (-1);
		if (*done)
			return ((ssize_t)i + n);
	}
	return ((ssize_t)i);
}

/* Chunked bodies end where they should, whole or byte by byte. */
static void
test_chunked(void **state)
{
	static const char	ok[] = "5\r\nhello\r\nA;ext=1\r\n0123456789\r\n"
	    "0\r\nX-Trailer: 1\r\n\r\nNEXT";
	static const char	*bad[] = {
		"5\nhello\r\n0\r\n\r\n",
		"5\r\nhello\n0\r\n\r\n",
		"5\r\nhelloX\r\n0\r\n\r\n",
		"g\r\n",
		"\r\n",
		"1234567890abcdef0\r\n",
		"0\r\n\n",
		"5 x\r\n",
		"0\r\nX: 1\n\r\n",
	};
	struct http_chunked	ch;
	ssize_t			n;
	size_t			i;
	int			done;

	http_chunked_init(&ch);
	n = http_chunked_feed(&ch, ok, strlen(ok), &done);
	assert_int_equal(n, strlen(ok) - 4);
	assert_true(done);
	assert_int_equal(chunked_bytewise(ok, strlen(ok), &done),
	    (ssize_t)strlen(ok) - 4);
	assert_true(done);
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		http_chunked_init(&ch);
		n = http_chunked_feed(&ch, bad[i], strlen(bad[i]), &done);
		if (n != -1)
			fail_msg("bad chunked case %zu accepted", i);
	}
	http_chunked_init(&ch);
	n = http_chunked_feed(&ch, "ff\r\nabc", 7, &done);
	assert_int_equal(n, 7);
	assert_false(done);
	assert_int_equal(ch.remain, 0xff - 3);
}

/* One resource: GET of exactly its path, in origin-form. */
static void
test_request_route(void **state)
{
	static struct http_request	r;
	struct http_limits		rlim = { 4096, 32 };
	static const struct {
		const char	*head;
		int		 status;
	} t[] = {
		{ "GET /metrics HTTP/1.1\r\nHost: a\r\n\r\n", 200 },
		{ "GET /metrics HTTP/1.0\r\n\r\n", 200 },
		{ "GET /metrics HTTP/1.1\r\n\r\n", 400 },	/* no Host */
		{ "GET /metrics?x=1 HTTP/1.1\r\nHost: a\r\n\r\n", 404 },
		{ "GET /METRICS HTTP/1.1\r\nHost: a\r\n\r\n", 404 },
		{ "GET /metrics/ HTTP/1.1\r\nHost: a\r\n\r\n", 404 },
		{ "GET / HTTP/1.1\r\nHost: a\r\n\r\n", 404 },
		{ "GET http://a/metrics HTTP/1.1\r\nHost: a\r\n\r\n", 404 },
		{ "CONNECT a:80 HTTP/1.1\r\nHost: a:80\r\n\r\n", 404 },
		{ "POST /metrics HTTP/1.1\r\nHost: a\r\n"
		    "Content-Length: 0\r\n\r\n", 405 },
		{ "get /metrics HTTP/1.1\r\nHost: a\r\n\r\n", 405 },
		{ "HEAD /metrics HTTP/1.1\r\nHost: a\r\n\r\n", 405 },
		{ "GARBAGE\r\n\r\n", 400 },
		{ "GET /metrics HTTP/2.0\r\n\r\n", 505 },
	};
	size_t	i;

	for (i = 0; i < sizeof t / sizeof t[0]; i++)
		assert_int_equal(http_request_route(t[i].head,
		    strlen(t[i].head), &rlim, "/metrics", &r), t[i].status);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_request_table),
		cmocka_unit_test(test_request_hop),
		cmocka_unit_test(test_request_rules),
		cmocka_unit_test(test_request_too_big),
		cmocka_unit_test(test_scan),
		cmocka_unit_test(test_response_table),
		cmocka_unit_test(test_chunked),
		cmocka_unit_test(test_request_route),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
