/*
 * Unit tests for the sniffers: real ClientHellos captured from local
 * clients (tests/unit/data/capture-hellos.py), hellos built here to
 * reach each rule, and a table of HTTP request heads.
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "proxy/wire/sni.h"

#define BYTES_MAX	(2 * SNI_PEEK_MAX)

/* A byte string being built. */
struct bytes {
	uint8_t	b[BYTES_MAX];
	size_t	len;
};

static struct bytes	exts, msg, wire;

typedef enum sni_status (*parse_fn)(const uint8_t *, size_t,
    struct sni_result *);

/* Append n bytes. */
static void
put(struct bytes *o, const void *p, size_t n)
{
	assert_true(o->len + n <= sizeof o->b);
	memcpy(o->b + o->len, p, n);
	o->len += n;
}

/* Append a big-endian integer of n bytes. */
static void
put_uint(struct bytes *o, size_t v, size_t n)
{
	uint8_t	b[4];
	size_t	i;

	for (i = 0; i < n; i++)
		b[i] = v >> (8 * (n - 1 - i));
	put(o, b, n);
}

/* Append n copies of byte c. */
static void
put_fill(struct bytes *o, uint8_t c, size_t n)
{
	assert_true(o->len + n <= sizeof o->b);
	memset(o->b + o->len, c, n);
	o->len += n;
}

/* Append an extension. */
static void
put_ext(struct bytes *o, unsigned int type, const void *data, size_t n)
{
	put_uint(o, type, 2);
	put_uint(o, n, 2);
	put(o, data, n);
}

/* Append a server_name extension with one host_name. */
static void
put_sni(struct bytes *o, const char *name)
{
	size_t	n = strlen(name);

	put_uint(o, 0, 2);
	put_uint(o, n + 5, 2);
	put_uint(o, n + 3, 2);
	put_uint(o, 0, 1);
	put_uint(o, n, 2);
	put(o, name, n);
}

/* Build a ClientHello message in msg around the extensions in exts. */
static void
build_msg(int grease)
{
	msg.len = 0;
	put_uint(&msg, 1, 1);
	put_uint(&msg, 2 + 32 + 33 + 2 + (grease ? 8 : 6) + 2 + 2 + exts.len,
	    3);
	put_uint(&msg, 0x0303, 2);
	put_fill(&msg, 0x11, 32);
	put_uint(&msg, 32, 1);
	put_fill(&msg, 0x22, 32);
	put_uint(&msg, grease ? 8 : 6, 2);
	if (grease)
		put_uint(&msg, 0x3a3a, 2);
	put_uint(&msg, 0x1301, 2);
	put_uint(&msg, 0x1302, 2);
	put_uint(&msg, 0xc02f, 2);
	put_uint(&msg, 1, 1);
	put_uint(&msg, 0, 1);
	put_uint(&msg, exts.len, 2);
	put(&msg, exts.b, exts.len);
}

/* Frame a handshake message into records of at most frag bytes. */
static void
frame(const uint8_t *m, size_t n, size_t frag)
{
	size_t	off, k;

	wire.len = 0;
	for (off = 0; off < n; off += k) {
		k = n - off < frag ? n - off : frag;
		put_uint(&wire, 0x160301, 3);
		put_uint(&wire, k, 2);
		put(&wire, m + off, k);
	}
}

/* Build a whole single-record ClientHello in wire. */
static void
build_hello(int grease)
{
	build_msg(grease);
	frame(msg.b, msg.len, 16384);
}

/* Load a captured test vector into wire. */
static void
load(const char *name)
{
	char		 path[1024];
	const char	*dir = getenv("top_srcdir");
	FILE		*f;

	snprintf(path, sizeof path, "%s/tests/unit/data/%s",
	    dir != NULL ? dir : ".", name);
	if ((f = fopen(path, "rb")) == NULL)
		fail_msg("%s: cannot open", path);
	wire.len = fread(wire.b, 1, sizeof wire.b, f);
	fclose(f);
	assert_true(wire.len > 5);
}

/*
 * Parse buf whole, then check every prefix (every stride-th for long
 * inputs): undecided with a need past the prefix and within the input,
 * or decided exactly as the whole.
 */
static enum sni_status
parse_all(parse_fn fn, const uint8_t *buf, size_t len, struct sni_result *r)
{
	struct sni_result	p;
	enum sni_status		st, pst;
	size_t			k, stride = len > 4096 ? 97 : 1;

	st = fn(buf, len, r);
	for (k = 0; k < len; k += stride) {
		pst = fn(buf, k, &p);
		if (pst == SNI_NEED_MORE) {
			assert_true(p.need > k);
			if (st != SNI_NEED_MORE)
				assert_true(p.need <= len);
			continue;
		}
		assert_int_equal(pst, st);
		assert_string_equal(p.name, r->name);
		assert_int_equal(p.ech, r->ech);
	}
	return (st);
}

/* Parse wire as TLS, expecting status st and, when given, name. */
static void
expect_tls(enum sni_status st, const char *name)
{
	struct sni_result	r;
	enum sni_status		got;

	got = parse_all(sni_tls_parse, wire.b, wire.len, &r);
	if (got != st)
		fail_msg("got %s (%s), expected %s", sni_status_name(got),
		    r.error ? r.error : "", sni_status_name(st));
	if (name != NULL)
		assert_string_equal(r.name, name);
	if (st == SNI_ERROR)
		assert_non_null(r.error);
}

/* Real hellos from openssl, curl and python. */
static void
test_captured(void **state)
{
	static const struct {
		const char	*file;
		enum sni_status	 st;
		const char	*name;
		int		 iplit;
	} t[] = {
		{ "hello-openssl-tls13.bin", SNI_NAME, "origin.test", 0 },
		{ "hello-openssl-tls12.bin", SNI_NAME, "origin.test", 0 },
		{ "hello-openssl-upper.bin", SNI_NAME, "origin.test", 0 },
		{ "hello-openssl-nosni.bin", SNI_NO_NAME, "", 0 },
		{ "hello-openssl-iplit.bin", SNI_NAME, "127.0.0.1", 1 },
		{ "hello-curl.bin", SNI_NAME, "origin.test", 0 },
		{ "hello-curl-iplit.bin", SNI_NO_NAME, "", 0 },
		{ "hello-python.bin", SNI_NAME, "origin.test", 0 },
	};
	struct sni_result	r;
	size_t			i, len;

	for (i = 0; i < sizeof t / sizeof t[0]; i++) {
		load(t[i].file);
		len = wire.len;
		expect_tls(t[i].st, t[i].name);
		assert_int_equal(sni_tls_parse(wire.b, len, &r), t[i].st);
		assert_int_equal(r.iplit, t[i].iplit);
		assert_int_equal(r.used, len);
		assert_int_equal(r.ech, 0);
		/* The same through the classifier, and with data after it. */
		assert_int_equal(sni_sniff(wire.b, len, &r), t[i].st);
		assert_int_equal(r.proto, SNI_PROTO_TLS);
		put(&wire, "\x17\x03\x03\x00\x01X", 6);
		assert_int_equal(sni_tls_parse(wire.b, wire.len, &r), t[i].st);
		assert_int_equal(r.used, len);
	}
}

/* A real hello re-framed across two records, and one byte a record. */
static void
test_records(void **state)
{
	uint8_t	m[1024];
	size_t	n, half;

	load("hello-curl.bin");
	n = wire.len - 5;
	memcpy(m, wire.b + 5, n);
	frame(m, n, n / 2 + 1);
	assert_int_equal(wire.len, n + 10);
	expect_tls(SNI_NAME, "origin.test");
	frame(m, n, 3);			/* the header itself split */
	expect_tls(SNI_NAME, "origin.test");
	frame(m, n, 1);
	expect_tls(SNI_NAME, "origin.test");

	/* Another record type between the fragments. */
	half = n / 2 + 1;
	frame(m, n, half);
	memcpy(m, wire.b, wire.len);
	n = wire.len;
	wire.len = 0;
	put(&wire, m, 5 + half);
	put(&wire, "\x14\x03\x03\x00\x01\x01", 6);
	put(&wire, m + 5 + half, n - 5 - half);
	expect_tls(SNI_ERROR, NULL);
}

/* GREASE cipher suites and extensions are ignored. */
static void
test_grease(void **state)
{
	exts.len = 0;
	put_ext(&exts, 0x0a0a, "", 0);
	put_sni(&exts, "grease.example");
	put_ext(&exts, 0xfafa, "\0", 1);
	build_hello(1);
	expect_tls(SNI_NAME, "grease.example");
}

/* encrypted_client_hello: the outer name decides, flagged. */
static void
test_ech(void **state)
{
	struct sni_result	r;
	uint8_t			ech[200];

	memset(ech, 0x5a, sizeof ech);
	ech[0] = 0;			/* outer */
	exts.len = 0;
	put_sni(&exts, "public.example");
	put_ext(&exts, 0xfe0d, ech, sizeof ech);
	build_hello(1);
	expect_tls(SNI_NAME, "public.example");
	sni_tls_parse(wire.b, wire.len, &r);
	assert_int_equal(r.ech, 1);

	exts.len = 0;
	put_ext(&exts, 0xfe0d, ech, sizeof ech);
	build_hello(0);
	assert_int_equal(sni_tls_parse(wire.b, wire.len, &r), SNI_NO_NAME);
	assert_int_equal(r.ech, 1);
}

/* server_name: exactly one extension, exactly one host_name. */
static void
test_server_name_list(void **state)
{
	exts.len = 0;
	put_sni(&exts, "a.example");
	put_sni(&exts, "a.example");
	build_hello(0);
	expect_tls(SNI_ERROR, NULL);

	/* host_name and another type: the host_name. */
	exts.len = 0;
	put(&exts, "\x00\x00\x00\x0e\x00\x0c\x01\x00\x03xyz\x00\x00\x03" "abc",
	    18);
	build_hello(0);
	expect_tls(SNI_NAME, "abc");

	/* Only another type: no name. */
	exts.len = 0;
	put(&exts, "\x00\x00\x00\x08\x00\x06\x01\x00\x03xyz", 12);
	build_hello(0);
	expect_tls(SNI_NO_NAME, "");

	/* Two host_names. */
	exts.len = 0;
	put(&exts, "\x00\x00\x00\x0e\x00\x0c\x00\x00\x03xyz\x00\x00\x03" "abc",
	    18);
	build_hello(0);
	expect_tls(SNI_ERROR, NULL);

	/* Empty list, empty name, list longer than the extension. */
	exts.len = 0;
	put(&exts, "\x00\x00\x00\x02\x00\x00", 6);
	build_hello(0);
	expect_tls(SNI_ERROR, NULL);
	exts.len = 0;
	put(&exts, "\x00\x00\x00\x05\x00\x03\x00\x00\x00", 9);
	build_hello(0);
	expect_tls(SNI_ERROR, NULL);
	exts.len = 0;
	put(&exts, "\x00\x00\x00\x08\x00\x07\x00\x00\x03xyz", 12);
	build_hello(0);
	expect_tls(SNI_ERROR, NULL);
}

/* Which server names are host names, and how they come out. */
static void
test_names(void **state)
{
	static const struct {
		const char	*in;
		enum sni_status	 st;
		const char	*out;
		int		 iplit;
	} t[] = {
		{ "Example.COM", SNI_NAME, "example.com", 0 },
		{ "example.com.", SNI_NAME, "example.com", 0 },
		{ "xn--bcher-kva.example", SNI_NAME, "xn--bcher-kva.example", 0 },
		{ "a-b.c", SNI_NAME, "a-b.c", 0 },
		{ "localhost", SNI_NAME, "localhost", 0 },
		{ "10.0.0.1", SNI_NAME, "10.0.0.1", 1 },
		{ "0x7f.1", SNI_NAME, "0x7f.1", 1 },
		{ "0x7F000001", SNI_NAME, "0x7f000001", 1 },
		{ "2130706433", SNI_NAME, "2130706433", 1 },
		{ "a.0xg", SNI_NAME, "a.0xg", 0 },
		{ "under_score.example", SNI_ERROR, "", 0 },
		{ "sp ace.example", SNI_ERROR, "", 0 },
		{ "::1", SNI_ERROR, "", 0 },
		{ "[::1]", SNI_ERROR, "", 0 },
		{ "a..b", SNI_ERROR, "", 0 },
		{ ".a", SNI_ERROR, "", 0 },
		{ "a..", SNI_ERROR, "", 0 },
		{ ".", SNI_ERROR, "", 0 },
		{ "caf\xc3\xa9.example", SNI_ERROR, "", 0 },
	};
	struct sni_result	r;
	char			name[300];
	size_t			i;

	for (i = 0; i < sizeof t / sizeof t[0]; i++) {
		exts.len = 0;
		put_sni(&exts, t[i].in);
		build_hello(0);
		assert_int_equal(sni_tls_parse(wire.b, wire.len, &r), t[i].st);
		assert_string_equal(r.name, t[i].out);
		assert_int_equal(r.iplit, t[i].iplit);
	}

	/* A NUL inside the name. */
	exts.len = 0;
	put(&exts, "\x00\x00\x00\x08\x00\x06\x00\x00\x03" "a\0b", 12);
	build_hello(0);
	expect_tls(SNI_ERROR, NULL);

	/* Lengths: 63-byte labels, 253-byte names. */
	memset(name, 'a', 64);
	name[64] = '\0';
	exts.len = 0;
	put_sni(&exts, name);
	build_hello(0);
	expect_tls(SNI_ERROR, NULL);
	name[63] = '\0';
	exts.len = 0;
	put_sni(&exts, name);
	build_hello(0);
	expect_tls(SNI_NAME, name);
	for (i = 0; i < 254; i++)
		name[i] = i % 2 ? '.' : 'b';
	name[253] = '\0';
	exts.len = 0;
	put_sni(&exts, name);
	build_hello(0);
	expect_tls(SNI_NAME, name);
	strcpy(name + 253, "b");
	exts.len = 0;
	put_sni(&exts, name);
	build_hello(0);
	expect_tls(SNI_ERROR, NULL);
	name[253] = '.';		/* 253 and a trailing dot: fine */
	name[254] = '\0';
	exts.len = 0;
	put_sni(&exts, name);
	build_hello(0);
	name[253] = '\0';
	expect_tls(SNI_NAME, name);
}

/* Break one length field of a good hello (offsets into wire). */
static void
test_malformed(void **state)
{
	static const struct {
		size_t	off;		/* byte to change */
		int	delta;
		enum sni_status st;
	} t[] = {
		{ 4, +1, SNI_NEED_MORE },	/* record longer than sent */
		{ 4, -1, SNI_NEED_MORE },	/* message goes on in a record */
		{ 8, +1, SNI_NEED_MORE },	/* message longer than record */
		{ 8, -1, SNI_ERROR },		/* message shorter than record */
		{ 5, +1, SNI_ERROR },		/* not a ClientHello */
		{ 9, -2, SNI_ERROR },		/* legacy_version 0x0103 */
		{ 43, +1, SNI_ERROR },		/* session id 33 */
		{ 43, +60, SNI_ERROR },		/* session id past the end */
		{ 77, +1, SNI_ERROR },		/* odd cipher suites */
		{ 77, -6, SNI_ERROR },		/* no cipher suites */
		{ 84, -1, SNI_ERROR },		/* no compression */
		{ 87, +1, SNI_ERROR },		/* extensions past the end */
		{ 87, -1, SNI_ERROR },		/* extensions short */
		{ 91, +1, SNI_ERROR },		/* extension past the end */
		{ 93, +1, SNI_ERROR },		/* server_name list */
		{ 96, +1, SNI_ERROR },		/* host_name length */
		{ 96, -1, SNI_ERROR },
	};
	struct sni_result	r;
	size_t			i;

	for (i = 0; i < sizeof t / sizeof t[0]; i++) {
		exts.len = 0;
		put_sni(&exts, "origin.test");
		build_hello(0);
		assert_int_equal(sni_tls_parse(wire.b, wire.len, &r), SNI_NAME);
		wire.b[t[i].off] += t[i].delta;
		if (sni_tls_parse(wire.b, wire.len, &r) != t[i].st)
			fail_msg("offset %zu: %s (%s)", t[i].off,
			    sni_status_name(sni_tls_parse(wire.b, wire.len,
			    &r)), r.error ? r.error : "");
	}

	/* Record lengths 0 and 2^14 + 1; a hello with no extensions. */
	wire.len = 0;
	put(&wire, "\x16\x03\x01\x00\x00", 5);
	expect_tls(SNI_ERROR, NULL);
	wire.len = 0;
	put(&wire, "\x16\x03\x01\x40\x01\x01", 6);
	expect_tls(SNI_ERROR, NULL);
	exts.len = 0;
	build_hello(0);
	wire.len -= 2;
	wire.b[4] -= 2;
	wire.b[8] -= 2;
	expect_tls(SNI_NO_NAME, "");
}

/* Big hellos: up to SNI_HELLO_MAX in several records; none beyond. */
static void
test_sizes(void **state)
{
	struct sni_result	r;
	size_t			pad;

	exts.len = 0;
	put_sni(&exts, "big.example");
	put_uint(&exts, 21, 2);			/* padding */
	put_uint(&exts, 20000, 2);
	put_fill(&exts, 0, 20000);
	build_hello(0);
	expect_tls(SNI_NAME, "big.example");
	assert_int_equal(wire.len, msg.len + 10);

	/* Exactly SNI_HELLO_MAX: pad to it. */
	pad = SNI_HELLO_MAX - (msg.len - 20000);
	exts.len -= 20004;
	put_uint(&exts, 21, 2);
	put_uint(&exts, pad, 2);
	put_fill(&exts, 0, pad);
	build_hello(0);
	assert_int_equal(msg.len, SNI_HELLO_MAX);
	expect_tls(SNI_NAME, "big.example");

	put_uint(&exts, 0x0a0a, 2);
	put_uint(&exts, 0, 2);
	build_hello(0);
	expect_tls(SNI_ERROR, NULL);
	/* Decided from the message header. */
	wire.len = 0;
	put(&wire, "\x16\x03\x01\x00\x04\x01\x01\x00\x08\x16", 10);
	assert_int_equal(sni_tls_parse(wire.b, wire.len, &r), SNI_ERROR);
	assert_int_equal(sni_tls_parse(wire.b, 8, &r), SNI_NEED_MORE);

	/* Within SNI_HELLO_MAX, but in too many records. */
	exts.len = 0;
	put_sni(&exts, "big.example");
	put_uint(&exts, 21, 2);
	put_uint(&exts, 20000, 2);
	put_fill(&exts, 0, 20000);
	build_msg(0);
	frame(msg.b, msg.len, 2);
	assert_int_equal(sni_tls_parse(wire.b, wire.len, &r), SNI_ERROR);
}

/* Not TLS, and SSLv2-compatible hellos. */
static void
test_not_tls(void **state)
{
#define S(s)	{ s, sizeof s - 1 }
	static const struct {
		const char	*s;
		size_t		 n;
	} t[] = {
		S("SSH-2.0-OpenSSH_9.2\r\n"), S("GET / HTTP/1.1\r\n"),
		S("\x17\x03\x03\x00\x10"), S("\x16\x02\x00"), S("\x16\x03\x05"),
		S("\x80\x05\x01\x03\x01"), S("\x80\x2e\x02\x03\x01"),
		S("\x80\x2e\x01\x00\x03"),
	};
#undef S
	struct sni_result	r;
	size_t			i;

	for (i = 0; i < sizeof t / sizeof t[0]; i++) {
		assert_int_equal(sni_tls_parse((const uint8_t *)t[i].s,
		    t[i].n, &r), SNI_OTHER);
	}
	assert_int_equal(sni_tls_parse((const uint8_t *)"\x80\x2e\x01\x03\x01",
	    5, &r), SNI_NO_NAME);
	assert_int_equal(r.sslv2, 1);
	assert_int_equal(sni_tls_parse((const uint8_t *)"\x80\x2e\x01\x00\x02",
	    5, &r), SNI_NO_NAME);
	assert_int_equal(sni_tls_parse((const uint8_t *)"\x80\x2e\x01", 3, &r),
	    SNI_NEED_MORE);
	assert_int_equal(r.need, 4);
	assert_int_equal(sni_tls_parse((const uint8_t *)"", 0, &r),
	    SNI_NEED_MORE);
	assert_int_equal(r.need, 1);
	assert_int_equal(sni_tls_parse((const uint8_t *)"\x16\x03\x01", 3,
	    &r), SNI_NEED_MORE);
	assert_int_equal(r.need, 5);
}

/* HTTP request heads. */
static void
test_http(void **state)
{
	static const struct {
		const char	*in;
		enum sni_status	 st;
		const char	*name;
		int		 port;
	} t[] = {
		{ "GET / HTTP/1.1\r\nHost: origin.test\r\n\r\n",
		    SNI_NAME, "origin.test", 0 },
		{ "GET / HTTP/1.1\r\nhOsT:Origin.Test.:8080 \r\n\r\nbody",
		    SNI_NAME, "origin.test", 8080 },
		{ "POST /x?y=z HTTP/1.1\r\nUser-Agent: t\r\nHost:\t a.b \t\r\n"
		    "Content-Length: 0\r\n\r\n", SNI_NAME, "a.b", 0 },
		{ "GET / HTTP/1.1\r\nHost: [2001:DB8::1]:443\r\n\r\n",
		    SNI_NAME, "[2001:db8::1]", 443 },
		{ "GET / HTTP/1.1\r\nHost: 127.0.0.1:80\r\n\r\n",
		    SNI_NAME, "127.0.0.1", 80 },
		{ "GET / HTTP/1.1\r\nHost: a.b:\r\n\r\n", SNI_NAME, "a.b", 0 },
		{ "M-SEARCH * HTTP/1.1\r\nHost: a.b\r\n\r\n", SNI_NAME, "a.b", 0 },
		{ "GET http://x.y/ HTTP/1.1\r\nHost: x.y\r\n\r\n",
		    SNI_NAME, "x.y", 0 },
		{ "GET / HTTP/1.0\r\n\r\n", SNI_NO_NAME, "", 0 },
		{ "GET / HTTP/1.0\r\nAccept: */*\r\n\r\n", SNI_NO_NAME, "", 0 },
		{ "GET / HTTP/1.1\r\nHost:\r\n\r\n", SNI_NO_NAME, "", 0 },
		{ "GET / HTTP/1.1\r\n\r\n", SNI_ERROR, "", 0 },
		{ "GET / HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n",
		    SNI_ERROR, "", 0 },
		{ "GET / HTTP/1.1\r\nHost: a b\r\n\r\n", SNI_ERROR, "", 0 },
		{ "GET / HTTP/1.1\r\nHost: a_b\r\n\r\n", SNI_ERROR, "", 0 },
		{ "GET / HTTP/1.1\r\nHost: a:65536\r\n\r\n", SNI_ERROR, "", 0 },
		{ "GET / HTTP/1.1\r\nHost: a:8x\r\n\r\n", SNI_ERROR, "", 0 },
		{ "GET / HTTP/1.1\r\nHost: :80\r\n\r\n", SNI_ERROR, "", 0 },
		{ "GET / HTTP/1.1\r\nHost: [::1\r\n\r\n", SNI_ERROR, "", 0 },
		{ "GET / HTTP/1.1\r\nHost: [::g]\r\n\r\n", SNI_ERROR, "", 0 },
		{ "GET / HTTP/1.1\r\nHost: [::1]x\r\n\r\n", SNI_ERROR, "", 0 },
		{ "GET / HTTP/1.1\r\nX: y\r\n z\r\nHost: a\r\n\r\n",
		    SNI_ERROR, "", 0 },
		{ "GET / HTTP/1.1\r\nHost a\r\n\r\n", SNI_ERROR, "", 0 },
		{ "GET / HTTP/1.1\r\nHost: a\nX: y\r\n\r\n", SNI_ERROR, "", 0 },
		{ "GET / HTTP/1.1\r\nHost: a\rb\r\n\r\n", SNI_ERROR, "", 0 },
		{ "GET / HTTP/1.1\r\nHost: a\r\n", SNI_NEED_MORE, "", 0 },
		{ "GET / HTTP/1.1\r\n", SNI_NEED_MORE, "", 0 },
		{ "G", SNI_NEED_MORE, "", 0 },
		{ "GET / HTTP/1.1\n\n", SNI_OTHER, "", 0 },
		{ "GET / HTTP/2.0\r\n\r\n", SNI_OTHER, "", 0 },
		{ "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", SNI_OTHER, "", 0 },
		{ "GET /\r\n", SNI_OTHER, "", 0 },
		{ "GET  / HTTP/1.1\r\n", SNI_OTHER, "", 0 },
		{ "get / HTTP/1.1\r\n", SNI_OTHER, "", 0 },
		{ "SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n", SNI_OTHER, "", 0 },
		{ "ABCDEFGHIJKLMNOPQRSTU / HTTP/1.1\r\n", SNI_OTHER, "", 0 },
	};
	struct sni_result	r;
	size_t			i;
	enum sni_status		st;

	for (i = 0; i < sizeof t / sizeof t[0]; i++) {
		st = parse_all(sni_http_parse, (const uint8_t *)t[i].in,
		    strlen(t[i].in), &r);
		if (st != t[i].st)
			fail_msg("%s: got %s", t[i].in, sni_status_name(st));
		assert_string_equal(r.name, t[i].name);
		assert_int_equal(r.port, t[i].port);
		assert_int_equal(r.iplit,
		    t[i].name[0] == '[' || t[i].name[0] == '1');
	}
}

/* HTTP heads up to SNI_HTTP_MAX bytes; beyond, an error. */
static void
test_http_size(void **state)
{
	static const char	 end[] = "\r\nHost: a.b\r\n\r\n";
	struct sni_result	 r;

	wire.len = 0;
	put(&wire, "GET /", 5);
	put_fill(&wire, 'x', SNI_HTTP_MAX - 5 - 9 - (sizeof end - 1));
	put(&wire, " HTTP/1.1", 9);
	put(&wire, end, sizeof end - 1);
	assert_int_equal(wire.len, SNI_HTTP_MAX);
	assert_int_equal(parse_all(sni_http_parse, wire.b, wire.len, &r),
	    SNI_NAME);
	assert_int_equal(r.used, SNI_HTTP_MAX);
	/* One byte more in the target, and the end is out of reach. */
	memmove(wire.b + 6, wire.b + 5, wire.len - 5);
	wire.len++;
	assert_int_equal(sni_http_parse(wire.b, wire.len, &r), SNI_ERROR);
	assert_int_equal(sni_http_parse(wire.b, SNI_HTTP_MAX, &r), SNI_ERROR);
	assert_int_equal(sni_http_parse(wire.b, SNI_HTTP_MAX - 1, &r),
	    SNI_NEED_MORE);
	assert_int_equal(r.need, SNI_HTTP_MAX);
}

/* The classifier: TLS, HTTP or neither, from the first byte. */
static void
test_sniff(void **state)
{
	struct sni_result	r;

	assert_int_equal(sni_sniff(NULL, 0, &r), SNI_NEED_MORE);
	assert_int_equal(r.need, 1);
	assert_int_equal(sni_sniff((const uint8_t *)"\x16", 1, &r),
	    SNI_NEED_MORE);
	assert_int_equal(r.proto, SNI_PROTO_TLS);
	assert_int_equal(sni_sniff((const uint8_t *)"P", 1, &r),
	    SNI_NEED_MORE);
	assert_int_equal(r.proto, SNI_PROTO_HTTP);
	assert_int_equal(sni_sniff((const uint8_t *)"SSH-2.0-x\r\n", 11, &r),
	    SNI_OTHER);
	assert_int_equal(r.proto, SNI_PROTO_UNKNOWN);
	assert_int_equal(sni_sniff((const uint8_t *)"\0\0\0\x0c", 4, &r),
	    SNI_OTHER);
	assert_int_equal(sni_sniff((const uint8_t *)"\x16\x16", 2, &r),
	    SNI_OTHER);
	assert_int_equal(sni_sniff((const uint8_t *)"HEAD / HTTP/1.0\r\n\r\n",
	    19, &r), SNI_NO_NAME);
	assert_int_equal(r.proto, SNI_PROTO_HTTP);
	load("hello-openssl-tls13.bin");
	assert_int_equal(parse_all(sni_sniff, wire.b, wire.len, &r), SNI_NAME);
	assert_int_equal(r.proto, SNI_PROTO_TLS);
	assert_string_equal(sni_status_name(SNI_ERROR), "error");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_captured),
		cmocka_unit_test(test_records),
		cmocka_unit_test(test_grease),
		cmocka_unit_test(test_ech),
		cmocka_unit_test(test_server_name_list),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_not_tls),
		cmocka_unit_test(test_http),
		cmocka_unit_test(test_http_size),
		cmocka_unit_test(test_sniff),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
