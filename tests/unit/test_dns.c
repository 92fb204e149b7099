/*
 * Unit tests: the DNS message parser and builder (proxy/wire/dnsmsg.c).
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "proxy/wire/dnsmsg.h"

#define QHDR		"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00"
#define QHDR_AR		"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x01"
#define QNAME		"\x07" "example" "\x03" "com" "\x00"
#define QA		QNAME "\x00\x01\x00\x01"
#define OPT(size, ttl, rdlen) "\x00\x00\x29" size ttl rdlen

/* One packet and what the query parser must make of it. */
struct bad_case {
	const char	*what;
	const char	*data;
	size_t		 len;
	int		 expect;
};

#define CASE(w, d, e)	{ w, d, sizeof(d) - 1, e }

static const struct bad_case bad_cases[] = {
	CASE("empty", "", DNS_DROP),
	CASE("short header", "\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00",
	    DNS_DROP),
	CASE("a response", "\x12\x34\x81\x00\x00\x01\x00\x00\x00\x00\x00\x00"
	    QA, DNS_DROP),
	CASE("a broken response",
	    "\x12\x34\x81\x00\x00\x01\x00\x00\x00\x00\x00\x00\x07", DNS_DROP),
	CASE("QDCOUNT 0", "\x12\x34\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00",
	    DNS_R_FORMERR),
	CASE("QDCOUNT 2", "\x12\x34\x01\x00\x00\x02\x00\x00\x00\x00\x00\x00"
	    QA QA, DNS_R_FORMERR),
	CASE("header only", QHDR, DNS_R_FORMERR),
	CASE("truncated name", QHDR "\x07" "exam", DNS_R_FORMERR),
	CASE("name without its end", QHDR "\x07" "example", DNS_R_FORMERR),
	CASE("truncated type", QHDR QNAME "\x00", DNS_R_FORMERR),
	CASE("truncated class", QHDR QNAME "\x00\x01\x00", DNS_R_FORMERR),
	CASE("pointer into the header", QHDR "\xc0\x02\x00\x01\x00\x01",
	    DNS_R_FORMERR),
	CASE("pointer to itself", QHDR "\xc0\x0c\x00\x01\x00\x01",
	    DNS_R_FORMERR),
	CASE("pointer loop", QHDR "\x01" "a" "\xc0\x0c\x00\x01\x00\x01",
	    DNS_R_FORMERR),
	CASE("forward pointer", QHDR "\xc0\x10\x00\x01\x00\x01\x00",
	    DNS_R_FORMERR),
	CASE("pointer cut short", QHDR "\x01" "a" "\xc0", DNS_R_FORMERR),
	CASE("label too long", QHDR "\x40" "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\x00\x00\x01\x00\x01",
	    DNS_R_FORMERR),
	CASE("extended label type", QHDR "\x41\x00\x00\x01\x00\x01",
	    DNS_R_FORMERR),
	CASE("reserved label type", QHDR "\x81\x00\x00\x01\x00\x01",
	    DNS_R_FORMERR),
	CASE("trailing bytes", QHDR QA "\x00", DNS_R_FORMERR),
	CASE("record in the answer section",
	    "\x12\x34\x01\x00\x00\x01\x00\x01\x00\x00\x00\x00" QA
	    "\xc0\x0c\x00\x01\x00\x01\x00\x00\x00\x05\x00\x04\x01\x02\x03\x04",
	    DNS_R_FORMERR),
	CASE("ARCOUNT without a record", QHDR_AR QA, DNS_R_FORMERR),
	CASE("truncated OPT", QHDR_AR QA "\x00\x00\x29\x10", DNS_R_FORMERR),
	CASE("truncated OPT data", QHDR_AR QA
	    OPT("\x10\x00", "\x00\x00\x00\x00", "\x00\x08") "\x00\x0a",
	    DNS_R_FORMERR),
	CASE("truncated EDNS option", QHDR_AR QA
	    OPT("\x10\x00", "\x00\x00\x00\x00", "\x00\x06")
	    "\x00\x0a\x00\x08\x01\x02", DNS_R_FORMERR),
	CASE("EDNS option header cut", QHDR_AR QA
	    OPT("\x10\x00", "\x00\x00\x00\x00", "\x00\x03") "\x00\x0a\x00",
	    DNS_R_FORMERR),
	CASE("two OPT records",
	    "\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x02" QA
	    OPT("\x10\x00", "\x00\x00\x00\x00", "\x00\x00")
	    OPT("\x10\x00", "\x00\x00\x00\x00", "\x00\x00"), DNS_R_FORMERR),
	CASE("OPT not owned by the root", QHDR_AR QA
	    "\x01" "a" "\x00\x00\x29\x10\x00\x00\x00\x00\x00\x00\x00",
	    DNS_R_FORMERR),
	CASE("opcode STATUS", "\x12\x34\x11\x00\x00\x01\x00\x00\x00\x00\x00\x00"
	    QA, DNS_R_NOTIMP),
	CASE("opcode UPDATE, broken", "\x12\x34\x29\x00\x00\x01\x00\x00\x00\x00"
	    "\x00\x00\x07", DNS_R_NOTIMP),
	CASE("EDNS version 1", QHDR_AR QA
	    OPT("\x10\x00", "\x00\x01\x00\x00", "\x00\x00"), DNS_R_BADVERS),
};

/* Every malformed packet gets the answer it deserves, and no crash. */
static void
test_bad_packets(void **state)
{
	struct dns_msg	 m;
	const char	*errstr;
	size_t		 i;
	int		 rv;

	for (i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++) {
		errstr = NULL;
		rv = dns_query_parse((const uint8_t *)bad_cases[i].data,
		    bad_cases[i].len, &m, &errstr);
		if (rv != bad_cases[i].expect)
			fail_msg("%s: got %d, want %d (%s)", bad_cases[i].what,
			    rv, bad_cases[i].expect, errstr ? errstr : "-");
		assert_non_null(errstr);
	}
}

/* A name longer than 255 bytes is refused. */
static void
test_name_too_long(void **state)
{
	uint8_t		 pkt[600];
	struct dns_msg	 m;
	const char	*errstr;
	size_t		 len = DNS_HEADER_LEN;
	int		 i;

	memcpy(pkt, QHDR, DNS_HEADER_LEN);
	for (i = 0; i < 5; i++) {
		pkt[len++] = 50;
		memset(pkt + len, 'a', 50);
		len += 50;
	}
	pkt[len++] = 0;
	memcpy(pkt + len, "\x00\x01\x00\x01", 4);
	len += 4;
	assert_int_equal(dns_query_parse(pkt, len, &m, &errstr),
	    DNS_R_FORMERR);
	assert_string_equal(errstr, "name too long");

	/* 4 labels of 63 is 253 characters, 255 bytes: the longest. */
	len = DNS_HEADER_LEN;
	for (i = 0; i < 4; i++) {
		pkt[len++] = i == 3 ? 61 : 63;
		memset(pkt + len, 'b', pkt[len - 1]);
		len += pkt[len - 1];
	}
	pkt[len++] = 0;
	memcpy(pkt + len, "\x00\x01\x00\x01", 4);
	len += 4;
	assert_int_equal(dns_query_parse(pkt, len, &m, &errstr), 0);
	assert_int_equal(strlen(m.qname), 253);
	assert_int_equal(m.qwire_len, 255 + 4);
}

/* Pointers: a chain of DNS_PTR_HOPS is read, one more is refused. */
static void
test_pointer_hops(void **state)
{
	uint8_t		 pkt[DNS_HEADER_LEN + 3 + 2 * 20];
	uint8_t		 wire[DNS_NAME_MAX];
	struct dns_buf	 b;
	const char	*errstr;
	size_t		 i, off;
	int		 compressed;

	memset(pkt, 0, sizeof pkt);
	memcpy(pkt + DNS_HEADER_LEN, "\x01z\x00", 3);
	off = DNS_HEADER_LEN + 3;
	for (i = 0; i < 20; i++) {
		size_t	to = i == 0 ? DNS_HEADER_LEN : off - 2;

		pkt[off] = 0xc0 | (uint8_t)(to >> 8);
		pkt[off + 1] = to & 0xff;
		off += 2;
	}
	/* The pointer at index k makes k + 1 hops. */
	dns_buf_init(&b, pkt, sizeof pkt);
	b.off = DNS_HEADER_LEN + 3 + 2 * (DNS_PTR_HOPS - 1);
	assert_int_equal(dns_name_read(&b, wire, &compressed, &errstr), 3);
	assert_int_equal(compressed, 1);
	assert_int_equal(b.off, DNS_HEADER_LEN + 3 + 2 * DNS_PTR_HOPS);
	b.off = DNS_HEADER_LEN + 3 + 2 * DNS_PTR_HOPS;
	assert_int_equal(dns_name_read(&b, wire, &compressed, &errstr), -1);
	assert_string_equal(errstr, "too many compression pointers");
}

/* A plain query: header, question, name text, no EDNS. */
static void
test_query_plain(void **state)
{
	static const char	 q[] = QHDR "\x07" "ExAmPlE" "\x03" "cOm"
				    "\x00\x00\x0f\x00\x01";
	struct dns_msg		 m;
	const char		*errstr;

	assert_int_equal(dns_query_parse((const uint8_t *)q, sizeof q - 1, &m,
	    &errstr), 0);
	assert_int_equal(m.id, 0x1234);
	assert_string_equal(m.qname, "ExAmPlE.cOm");
	assert_int_equal(m.qtype, DNS_T_MX);
	assert_int_equal(m.qclass, DNS_C_IN);
	assert_int_equal(m.edns.present, 0);
	assert_int_equal(dns_query_limit(&m), 512);
	assert_memory_equal(m.qwire, q + DNS_HEADER_LEN, sizeof q - 1 -
	    DNS_HEADER_LEN);
}

/* EDNS: payload, DO bit, options; the limit is clamped. */
static void
test_query_edns(void **state)
{
	static const char	 q[] = QHDR_AR QA
				    OPT("\x04\xd0", "\x00\x00\x80\x00", "\x00\x0c")
				    "\x00\x0a\x00\x08" "abcdefgh";
	static const char	 small[] = QHDR_AR QA
				    OPT("\x00\x64", "\x00\x00\x00\x00", "\x00\x00");
	static const char	 big[] = QHDR_AR QA
				    OPT("\xff\x00", "\x00\x00\x00\x00", "\x00\x00");
	struct dns_msg		 m;
	const char		*errstr;

	assert_int_equal(dns_query_parse((const uint8_t *)q, sizeof q - 1, &m,
	    &errstr), 0);
	assert_int_equal(m.edns.present, 1);
	assert_int_equal(m.edns.payload, 1232);
	assert_int_equal(m.edns.flags & DNS_EDNS_DO, DNS_EDNS_DO);
	assert_int_equal(m.edns.nopts, 1);
	assert_int_equal(m.edns.opts[0].code, 10);
	assert_int_equal(m.edns.opts[0].len, 8);
	assert_memory_equal(q + m.edns.opts[0].off, "abcdefgh", 8);
	assert_int_equal(dns_query_limit(&m), 1232);
	assert_int_equal(dns_query_parse((const uint8_t *)small,
	    sizeof small - 1, &m, &errstr), 0);
	assert_int_equal(dns_query_limit(&m), 512);
	assert_int_equal(dns_query_parse((const uint8_t *)big, sizeof big - 1,
	    &m, &errstr), 0);
	assert_int_equal(dns_query_limit(&m), DNS_UDP_MAX);
}

/* Presentation form escapes dots, backslashes and odd bytes. */
static void
test_name_text(void **state)
{
	char	text[DNS_NAME_TEXT];

	dns_name_text((const uint8_t *)"\x03" "a.b" "\x02" "\x00\\" "\x00", 9,
	    text, sizeof text);
	assert_string_equal(text, "a\\.b.\\000\\\\");
	dns_name_text((const uint8_t *)"", 1, text, sizeof text);
	assert_string_equal(text, ".");
	dns_name_text((const uint8_t *)"\x03" "abc" "\x00", 5, text, 3);
	assert_string_equal(text, "ab");
	assert_int_equal(dns_name_equal((const uint8_t *)"\x03" "aBc" "\x00",
	    (const uint8_t *)"\x03" "AbC" "\x00"), 1);
	assert_int_equal(dns_name_equal((const uint8_t *)"\x03" "abc" "\x00",
	    (const uint8_t *)"\x03" "abd" "\x00"), 0);
}

/* Parse a query given as a literal. */
static void
parse_query(const char *q, size_t len, struct dns_msg *m)
{
	const char	*errstr;

	assert_int_equal(dns_query_parse((const uint8_t *)q, len, m, &errstr),
	    0);
}

/* An A answer echoes ID and question (case kept) and carries the address. */
static void
test_reply_a(void **state)
{
	static const char	 q[] = QHDR "\x07" "ExAmPlE" "\x03" "cOm"
				    "\x00\x00\x01\x00\x01";
	struct dns_addr		 a = { DNS_T_A, { 198, 18, 0, 7 } };
	struct dns_reply	 r = { DNS_R_NOERROR, 5, 1, &a, -1, NULL, NULL };
	struct dns_msg		 m, back;
	uint8_t			 out[DNS_UDP_MAX];
	const char		*errstr;
	size_t			 len;

	parse_query(q, sizeof q - 1, &m);
	len = dns_reply_build(&m, &r, dns_query_limit(&m), out, sizeof out);
	assert_true(len > 0);
	assert_int_equal(dns_msg_parse(out, len, &back, &errstr), 0);
	assert_int_equal(back.id, 0x1234);
	assert_true(back.flags & DNS_F_QR);
	assert_true(back.flags & DNS_F_RD);
	assert_int_equal(DNS_RCODE(back.flags), DNS_R_NOERROR);
	assert_memory_equal(out + DNS_HEADER_LEN, q + DNS_HEADER_LEN,
	    sizeof q - 1 - DNS_HEADER_LEN);
	assert_int_equal(back.nans, 1);
	assert_int_equal(back.ans[0].type, DNS_T_A);
	assert_int_equal(back.ans[0].ttl, 5);
	assert_int_equal(back.ans[0].rdlen, 4);
	assert_memory_equal(out + back.ans[0].rdoff, a.a, 4);
	assert_int_equal(back.edns.present, 0);
}

/* NXDOMAIN with EDE 15 when the client speaks EDNS; none when not. */
static void
test_reply_blocked(void **state)
{
	static const char	 qe[] = QHDR_AR QA
				    OPT("\x04\xd0", "\x00\x00\x00\x00", "\x00\x00");
	static const char	 qp[] = QHDR QA;
	static const char	 text[] = "blocked by pinhole policy; "
				    "ask: pinhole request example.com";
	struct dns_reply	 r = { DNS_R_NXDOMAIN, 0, 0, NULL,
				    DNS_EDE_BLOCKED, text, NULL };
	struct dns_msg		 m, back;
	uint8_t			 out[DNS_UDP_MAX];
	const char		*errstr;
	size_t			 len;
	const uint8_t		*o;

	parse_query(qe, sizeof qe - 1, &m);
	len = dns_reply_build(&m, &r, dns_query_limit(&m), out, sizeof out);
	assert_int_equal(dns_msg_parse(out, len, &back, &errstr), 0);
	assert_int_equal(DNS_RCODE(back.flags), DNS_R_NXDOMAIN);
	assert_int_equal(back.ancount, 0);
	assert_int_equal(back.edns.present, 1);
	assert_int_equal(back.edns.nopts, 1);
	assert_int_equal(back.edns.opts[0].code, DNS_OPT_EDE);
	assert_int_equal(back.edns.opts[0].len, 2 + strlen(text));
	o = out + back.edns.opts[0].off;
	assert_int_equal(o[0] << 8 | o[1], DNS_EDE_BLOCKED);
	assert_memory_equal(o + 2, text, strlen(text));

	parse_query(qp, sizeof qp - 1, &m);
	len = dns_reply_build(&m, &r, dns_query_limit(&m), out, sizeof out);
	assert_int_equal(dns_msg_parse(out, len, &back, &errstr), 0);
	assert_int_equal(DNS_RCODE(back.flags), DNS_R_NXDOMAIN);
	assert_int_equal(back.arcount, 0);
	assert_int_equal(back.edns.present, 0);
}

/* Too many answers for 512 bytes: TC, no answers; EDNS 4096 fits them. */
static void
test_reply_truncated(void **state)
{
	static const char	 qp[] = QHDR QA;
	static const char	 qe[] = QHDR_AR QA
				    OPT("\x10\x00", "\x00\x00\x00\x00", "\x00\x00");
	struct dns_addr		 a[40];
	struct dns_reply	 r = { DNS_R_NOERROR, 5, 40, a, -1, NULL, NULL };
	struct dns_msg		 m, back;
	uint8_t			 out[DNS_MSG_MAX];
	const char		*errstr;
	size_t			 len, i;

	for (i = 0; i < 40; i++) {
		a[i].type = DNS_T_AAAA;
		memset(a[i].a, (int)i, 16);
	}
	parse_query(qp, sizeof qp - 1, &m);
	len = dns_reply_build(&m, &r, dns_query_limit(&m), out, sizeof out);
	assert_true(len <= 512);
	assert_int_equal(dns_msg_parse(out, len, &back, &errstr), 0);
	assert_true(back.flags & DNS_F_TC);
	assert_int_equal(back.ancount, 0);

	/* Over TCP the limit is the message size. */
	len = dns_reply_build(&m, &r, DNS_MSG_MAX, out, sizeof out);
	assert_int_equal(dns_msg_parse(out, len, &back, &errstr), 0);
	assert_false(back.flags & DNS_F_TC);
	assert_int_equal(back.ancount, 40);

	parse_query(qe, sizeof qe - 1, &m);
	len = dns_reply_build(&m, &r, dns_query_limit(&m), out, sizeof out);
	assert_int_equal(dns_msg_parse(out, len, &back, &errstr), 0);
	assert_false(back.flags & DNS_F_TC);
	assert_int_equal(back.ancount, 40);
	assert_int_equal(back.edns.present, 1);
}

/* Error replies: FORMERR without a question, BADVERS in the OPT. */
static void
test_reply_errors(void **state)
{
	static const char	 q0[] = "\x43\x21\x01\x00\x00\x00\x00\x00\x00\x00"
				    "\x00\x00";
	static const char	 qv[] = QHDR_AR QA
				    OPT("\x10\x00", "\x00\x01\x00\x00", "\x00\x00");
	struct dns_reply	 r = { DNS_R_FORMERR, 0, 0, NULL, -1, NULL, NULL };
	struct dns_msg		 m, back;
	uint8_t			 out[DNS_UDP_MAX];
	const char		*errstr;
	size_t			 len;

	assert_int_equal(dns_query_parse((const uint8_t *)q0, sizeof q0 - 1,
	    &m, &errstr), DNS_R_FORMERR);
	len = dns_reply_build(&m, &r, 512, out, sizeof out);
	assert_int_equal(len, DNS_HEADER_LEN);
	assert_int_equal(dns_msg_parse(out, len, &back, &errstr), 0);
	assert_int_equal(back.id, 0x4321);
	assert_int_equal(DNS_RCODE(back.flags), DNS_R_FORMERR);
	assert_int_equal(back.qdcount, 0);

	assert_int_equal(dns_query_parse((const uint8_t *)qv, sizeof qv - 1,
	    &m, &errstr), DNS_R_BADVERS);
	r.rcode = DNS_R_BADVERS;
	len = dns_reply_build(&m, &r, 512, out, sizeof out);
	assert_int_equal(dns_msg_parse(out, len, &back, &errstr), 0);
	assert_int_equal(DNS_RCODE(back.flags), 0);
	assert_int_equal(back.edns.ext_rcode, 1);
	assert_int_equal(back.edns.version, 0);
}

/* An upstream MX answer, relayed under the client's ID and question. */
static void
test_relay(void **state)
{
	static const char	 q[] = QHDR "\x07" "ExAmPlE" "\x03" "cOm"
				    "\x00\x00\x0f\x00\x01";
	static const char	 qe[] = QHDR_AR "\x07" "EXAMPLE" "\x03" "com"
				    "\x00\x00\x0f\x00\x01"
				    OPT("\x10\x00", "\x00\x00\x00\x00", "\x00\x00");
	static const char	 up[] = "\xbe\xef\x81\x80\x00\x01\x00\x01\x00\x00"
				    "\x00\x02" QNAME "\x00\x0f\x00\x01"
				    "\xc0\x0c\x00\x0f\x00\x01\x00\x00\x01\x00"
				    "\x00\x09\x00\x0a\x04" "mail" "\xc0\x0c"
				    "\xc0\x2b\x00\x01\x00\x01\x00\x00\x01\x00"
				    "\x00\x04\x01\x02\x03\x04"
				    OPT("\x04\xd0", "\x00\x00\x00\x00", "\x00\x00");
	struct dns_msg		 m, back;
	uint8_t			 out[DNS_UDP_MAX];
	const char		*errstr;
	size_t			 len;

	parse_query(q, sizeof q - 1, &m);
	len = dns_relay_build(&m, (const uint8_t *)up, sizeof up - 1, 512,
	    out, sizeof out, &errstr);
	assert_true(len > 0);
	assert_int_equal(dns_msg_parse(out, len, &back, &errstr), 0);
	assert_int_equal(back.id, 0x1234);
	assert_memory_equal(out + DNS_HEADER_LEN, q + DNS_HEADER_LEN,
	    sizeof q - 1 - DNS_HEADER_LEN);
	assert_int_equal(back.ancount, 1);
	assert_int_equal(back.arcount, 1);
	assert_int_equal(back.edns.present, 0);
	assert_int_equal(back.ans[0].type, DNS_T_MX);

	parse_query(qe, sizeof qe - 1, &m);
	len = dns_relay_build(&m, (const uint8_t *)up, sizeof up - 1, 4096,
	    out, sizeof out, &errstr);
	assert_int_equal(dns_msg_parse(out, len, &back, &errstr), 0);
	assert_int_equal(back.arcount, 2);
	assert_int_equal(back.edns.present, 1);
	assert_string_equal(back.qname, "EXAMPLE.com");

	/* Too big for the client: TC and the question only. */
	len = dns_relay_build(&m, (const uint8_t *)up, sizeof up - 1, 39,
	    out, sizeof out, &errstr);
	assert_int_equal(len, 0);
	len = dns_relay_build(&m, (const uint8_t *)up, sizeof up - 1, 60,
	    out, sizeof out, &errstr);
	assert_true(len > 0);
	assert_int_equal(dns_msg_parse(out, len, &back, &errstr), 0);
	assert_true(back.flags & DNS_F_TC);
	assert_int_equal(back.ancount, 0);
}

/* An upstream answer to another question is refused. */
static void
test_relay_mismatch(void **state)
{
	static const char	 q[] = QHDR QNAME "\x00\x0f\x00\x01";
	static const char	 other[] = "\xbe\xef\x81\x80\x00\x01\x00\x00\x00"
				    "\x00\x00\x00\x07" "example" "\x03" "org"
				    "\x00\x00\x0f\x00\x01";
	static const char	 qtype[] = "\xbe\xef\x81\x80\x00\x01\x00\x00\x00"
				    "\x00\x00\x00" QNAME "\x00\x10\x00\x01";
	static const char	 notanswer[] = "\xbe\xef\x01\x00\x00\x01\x00\x00"
				    "\x00\x00\x00\x00" QNAME "\x00\x0f\x00\x01";
	struct dns_msg		 m;
	uint8_t			 out[DNS_UDP_MAX];
	const char		*errstr;

	parse_query(q, sizeof q - 1, &m);
	assert_int_equal(dns_relay_build(&m, (const uint8_t *)other,
	    sizeof other - 1, 512, out, sizeof out, &errstr), 0);
	assert_int_equal(dns_relay_build(&m, (const uint8_t *)qtype,
	    sizeof qtype - 1, 512, out, sizeof out, &errstr), 0);
	assert_int_equal(dns_relay_build(&m, (const uint8_t *)notanswer,
	    sizeof notanswer - 1, 512, out, sizeof out, &errstr), 0);
	assert_int_equal(dns_relay_build(&m, (const uint8_t *)"\x01", 1, 512,
	    out, sizeof out, &errstr), 0);
}

/* A PTR answer carries the name in wire form; bad names are left out. */
static void
test_reply_ptr(void **state)
{
	static const char	 q[] = QHDR "\x01" "1" "\x01" "0" "\x02" "18"
				    "\x03" "198" "\x07" "in-addr" "\x04" "arpa"
				    "\x00\x00\x0c\x00\x01";
	struct dns_reply	 r = { DNS_R_NOERROR, 5, 0, NULL, -1, NULL,
				    "pypi.org" };
	struct dns_msg		 m, back;
	uint8_t			 out[DNS_UDP_MAX], wire[DNS_NAME_MAX];
	const char		*errstr;
	size_t			 len;

	parse_query(q, sizeof q - 1, &m);
	assert_string_equal(m.qname, "1.0.18.198.in-addr.arpa");
	len = dns_reply_build(&m, &r, 512, out, sizeof out);
	assert_int_equal(dns_msg_parse(out, len, &back, &errstr), 0);
	assert_int_equal(back.ancount, 1);
	assert_int_equal(back.ans[0].type, DNS_T_PTR);
	assert_int_equal(back.ans[0].rdlen, 10);
	assert_memory_equal(out + back.ans[0].rdoff, "\x04pypi\x03org", 10);

	r.ptr = "bad..name";
	len = dns_reply_build(&m, &r, 512, out, sizeof out);
	assert_int_equal(dns_msg_parse(out, len, &back, &errstr), 0);
	assert_int_equal(back.ancount, 0);
	assert_int_equal(dns_name_wire("a.b", wire), 5);
	assert_int_equal(dns_name_wire("", wire), 1);
	assert_int_equal(dns_name_wire("a.", wire), 3);
	assert_int_equal(dns_name_wire(".a", wire), -1);
}

/* Type and rcode names. */
static void
test_names(void **state)
{
	char	buf[12];

	assert_string_equal(dns_type_name(DNS_T_HTTPS, buf, sizeof buf),
	    "HTTPS");
	assert_string_equal(dns_type_name(999, buf, sizeof buf), "TYPE999");
	assert_string_equal(dns_rcode_name(DNS_R_NXDOMAIN), "NXDOMAIN");
	assert_string_equal(dns_rcode_name(DNS_R_BADVERS), "BADVERS");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_packets),
		cmocka_unit_test(test_name_too_long),
		cmocka_unit_test(test_pointer_hops),
		cmocka_unit_test(test_query_plain),
		cmocka_unit_test(test_query_edns),
		cmocka_unit_test(test_name_text),
		cmocka_unit_test(test_reply_a),
		cmocka_unit_test(test_reply_blocked),
		cmocka_unit_test(test_reply_truncated),
		cmocka_unit_test(test_reply_errors),
		cmocka_unit_test(test_reply_ptr),
		cmocka_unit_test(test_relay),
		cmocka_unit_test(test_relay_mismatch),
		cmocka_unit_test(test_names),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
