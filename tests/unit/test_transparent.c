/*
 * Unit tests for the pure part of transparent capture: the ports that
 * wait for the first bytes, the verdict on those bytes against the host
 * of the fake address (ClientHellos built here, HTTP heads), and the
 * ICMP answer to caught UDP.
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include "proxy/capture/udpcatch.h"
#include "proxy/wire/transparent.h"
#include "rules/rules.h"

#define DST	"198.18.0.7"

static struct host	want;

/* Put a big-endian number of n bytes. */
static size_t
put_be(uint8_t *p, unsigned long v, int n)
{
	int	i;

	for (i = n - 1; i >= 0; i--) {
		p[i] = v & 0xff;
		v >>= 8;
	}
	return (n);
}

/* A TLS 1.2 ClientHello record, with SNI name unless it is NULL. */
static size_t
hello(uint8_t *out, const char *name)
{
	uint8_t	body[512], ext[300];
	size_t	n = 0, e = 0, len = name != NULL ? strlen(name) : 0;

	if (name != NULL) {
		e += put_be(ext + e, 0, 2);		/* server_name */
		e += put_be(ext + e, len + 5, 2);
		e += put_be(ext + e, len + 3, 2);
		e += put_be(ext + e, 0, 1);		/* host_name */
		e += put_be(ext + e, len, 2);
		memcpy(ext + e, name, len);
		e += len;
	}
	n += put_be(body + n, 0x0303, 2);
	memset(body + n, 0x5a, 32);
	n += 32;
	n += put_be(body + n, 0, 1);			/* session id */
	n += put_be(body + n, 2, 2);
	n += put_be(body + n, 0x1301, 2);
	n += put_be(body + n, 1, 1);
	n += put_be(body + n, 0, 1);
	n += put_be(body + n, e, 2);
	memcpy(body + n, ext, e);
	n += e;
	out[0] = 0x16;
	put_be(out + 1, 0x0301, 2);
	put_be(out + 3, n + 4, 2);
	out[5] = 1;
	put_be(out + 6, n, 3);
	memcpy(out + 9, body, n);
	return (n + 9);
}

/* The verdict on a string of bytes. */
static enum transparent_verdict
check(const char *text, struct transparent_sniff *t)
{
	return (transparent_check((const uint8_t *)text, strlen(text), &want,
	    DST, t));
}

static int
setup(void **state)
{
	const char	*errstr;

	return (host_parse("allowed.test", 12, &want, &errstr));
}

static void
test_wait_ports(void **state)
{
	assert_true(transparent_wait_port(80));
	assert_true(transparent_wait_port(443));
	assert_true(transparent_wait_port(8443));
	assert_false(transparent_wait_port(22));
	assert_false(transparent_wait_port(5432));
	assert_false(transparent_wait_port(0));
}

static void
test_http(void **state)
{
	struct transparent_sniff	t;

	assert_int_equal(check("GET / HTTP/1.1\r\nHost: allowed.test\r\n\r\n",
	    &t), TRANSPARENT_MATCH);
	assert_string_equal(transparent_name_from(&t), "host");
	assert_int_equal(check("GET / HTTP/1.1\r\nHost: Allowed.Test.:8080\r\n"
	    "\r\n", &t), TRANSPARENT_MATCH);
	assert_int_equal(check("GET / HTTP/1.1\r\nHost: other.test\r\n\r\n",
	    &t), TRANSPARENT_FRONTING);
	assert_string_equal(t.name, "other.test");
	assert_int_equal(t.proto, SNI_PROTO_HTTP);
	assert_int_equal(check("GET / HTTP/1.1\r\nHost: " DST "\r\n\r\n", &t),
	    TRANSPARENT_MATCH);
	assert_int_equal(check("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
	    &t), TRANSPARENT_FRONTING);
	assert_int_equal(check("GET / HTTP/1.0\r\n\r\n", &t),
	    TRANSPARENT_NO_NAME);
	assert_int_equal(check("GET / HTTP/1.1\r\nAccept: */*\r\n\r\n", &t),
	    TRANSPARENT_MALFORMED);
	assert_non_null(t.error);
	assert_int_equal(check("GET / HTTP/1.1\r\nHost: allo", &t),
	    TRANSPARENT_NEED_MORE);
	assert_true(t.need > 0);
}

static void
test_tls(void **state)
{
	struct transparent_sniff	t;
	uint8_t				b[1024];
	size_t				n;

	n = hello(b, "allowed.test");
	assert_int_equal(transparent_check(b, n, &want, DST, &t),
	    TRANSPARENT_MATCH);
	assert_string_equal(transparent_name_from(&t), "sni");
	assert_int_equal(transparent_check(b, n - 1, &want, DST, &t),
	    TRANSPARENT_NEED_MORE);
	n = hello(b, "other.test");
	assert_int_equal(transparent_check(b, n, &want, DST, &t),
	    TRANSPARENT_FRONTING);
	assert_string_equal(t.name, "other.test");
	assert_int_equal(t.proto, SNI_PROTO_TLS);
	n = hello(b, "sub.allowed.test");
	assert_int_equal(transparent_check(b, n, &want, DST, &t),
	    TRANSPARENT_FRONTING);
	n = hello(b, NULL);
	assert_int_equal(transparent_check(b, n, &want, DST, &t),
	    TRANSPARENT_NO_NAME);
}

static void
test_other(void **state)
{
	struct transparent_sniff	t;
	const uint8_t			pg[] = { 0, 0, 0, 8, 4, 210, 22, 47 };

	assert_int_equal(check("SSH-2.0-OpenSSH_9.2\r\n", &t),
	    TRANSPARENT_OTHER);
	assert_int_equal(transparent_check(pg, sizeof pg, &want, DST, &t),
	    TRANSPARENT_OTHER);
	assert_int_equal(check("", &t), TRANSPARENT_NEED_MORE);
	assert_string_equal(transparent_verdict_name(TRANSPARENT_FRONTING),
	    "fronting");
}

/* The one's-complement sum of a buffer, folded (0xffff when valid). */
static unsigned int
sum16(const uint8_t *p, size_t len)
{
	unsigned int	sum = 0;
	size_t		i;

	for (i = 0; i + 1 < len; i += 2)
		sum += p[i] << 8 | p[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (sum);
}

static void
test_udp_icmp(void **state)
{
	struct sockaddr_in	src, dst;
	uint8_t			b[UDPCATCH_ICMP_MAX];
	size_t			n;

	memset(&src, 0, sizeof src);
	memset(&dst, 0, sizeof dst);
	inet_pton(AF_INET, "198.51.100.254", &src.sin_addr);
	src.sin_port = htons(40000);
	inet_pton(AF_INET, "198.18.0.7", &dst.sin_addr);
	dst.sin_port = htons(443);
	n = udpcatch_icmp(b, &src, &dst, 1200);
	assert_int_equal(n, 36);
	assert_int_equal(b[0], 3);		/* unreachable */
	assert_int_equal(b[1], 3);		/* port */
	assert_int_equal(sum16(b, n), 0xffff);	/* ICMP checksum */
	assert_int_equal(b[8], 0x45);
	assert_int_equal(b[8 + 9], IPPROTO_UDP);
	assert_int_equal(b[8 + 2] << 8 | b[8 + 3], 1228);
	assert_int_equal(sum16(b + 8, 20), 0xffff);	/* IP checksum */
	assert_memory_equal(b + 8 + 12, &src.sin_addr, 4);
	assert_memory_equal(b + 8 + 16, &dst.sin_addr, 4);
	assert_int_equal(b[28] << 8 | b[29], 40000);
	assert_int_equal(b[30] << 8 | b[31], 443);
	assert_int_equal(b[32] << 8 | b[33], 1208);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wait_ports),
		cmocka_unit_test(test_http),
		cmocka_unit_test(test_tls),
		cmocka_unit_test(test_other),
		cmocka_unit_test(test_udp_icmp),
	};

	return (cmocka_run_group_tests(tests, setup, NULL));
}
