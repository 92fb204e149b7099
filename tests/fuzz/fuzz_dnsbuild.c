/*
 * Fuzz target: parse a query, build replies to it (answers, errors,
 * EDE, truncation) and relay it back as an upstream answer; every
 * message built must parse again and keep the client's ID and question.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/wire/dnsmsg.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define CHECK(x)	do { if (!(x)) abort(); } while (0)

/* The built message parses, answers q, and fits. */
static void
check_reply(const struct dns_msg *q, const uint8_t *out, size_t n,
    size_t limit, struct dns_msg *back)
{
	const char	*errstr;

	CHECK(n >= DNS_HEADER_LEN && n <= limit);
	CHECK(dns_msg_parse(out, n, back, &errstr) == 0);
	CHECK(back->id == q->id);
	CHECK(back->flags & DNS_F_QR);
	CHECK(back->qdcount == 1);
	CHECK(back->qwire_len == q->qwire_len);
	CHECK(memcmp(out + DNS_HEADER_LEN, q->qwire, q->qwire_len) == 0);
	CHECK(back->edns.present == q->edns.present);
}

/* Build a reply with n addresses and check it. */
static void
check_build(const struct dns_msg *q, const uint8_t *data, size_t len,
    size_t limit)
{
	static uint8_t		 out[DNS_MSG_MAX];
	static struct dns_addr	 addr[64];
	struct dns_reply	 r;
	struct dns_msg		 back;
	size_t			 n, i;

	memset(&r, 0, sizeof r);
	r.naddr = len > 0 ? data[0] % 64 : 0;
	r.rcode = len > 1 ? data[1] % 6 : 0;
	r.ttl = 5;
	r.ede = len > 2 && data[2] & 1 ? DNS_EDE_BLOCKED : -1;
	r.ede_text = "blocked by pinhole policy; ask: pinhole request x";
	for (i = 0; i < r.naddr; i++) {
		addr[i].type = (data[i % len] & 1) ? DNS_T_AAAA : DNS_T_A;
		memset(addr[i].a, (int)i, sizeof addr[i].a);
	}
	r.addr = addr;
	n = dns_reply_build(q, &r, limit, out, sizeof out);
	check_reply(q, out, n, limit, &back);
	CHECK(DNS_RCODE(back.flags) == r.rcode);
	if (back.flags & DNS_F_TC)
		CHECK(back.ancount == 0 && r.naddr > 0);
	else {
		CHECK(back.ancount == r.naddr);
		for (i = 0; i < back.nans; i++) {
			CHECK(back.ans[i].type == addr[i].type);
			CHECK(memcmp(out + back.ans[i].rdoff, addr[i].a,
			    back.ans[i].rdlen) == 0);
		}
	}
	if (q->edns.present && r.ede >= 0 && back.edns.nopts == 1)
		CHECK(back.edns.opts[0].code == DNS_OPT_EDE);
}

/* Send the query back as its own upstream answer and relay it. */
static void
check_relay(const struct dns_msg *q, const uint8_t *data, size_t len,
    size_t limit)
{
	static uint8_t	 up[DNS_MSG_MAX], out[DNS_MSG_MAX];
	struct dns_msg	 back;
	const char	*errstr;
	size_t		 n;

	memcpy(up, data, len);
	up[0] ^= 0x5a;
	up[2] |= 0x80;
	n = dns_relay_build(q, up, len, limit, out, sizeof out, &errstr);
	if (n == 0)
		return;		/* only when even the question does not fit */
	check_reply(q, out, n, limit, &back);
}

/* Relay the input as an upstream answer to a fixed MX question. */
static void
check_upstream(const uint8_t *data, size_t len)
{
	static const uint8_t	 qp[] = "\x12\x34\x01\x00\x00\x01\x00\x00"
				    "\x00\x00\x00\x00\x07" "ExAmPlE" "\x03" "com"
				    "\x00\x00\x0f\x00\x01";
	static const uint8_t	 qe[] = "\x12\x34\x01\x00\x00\x01\x00\x00"
				    "\x00\x00\x00\x01\x07" "ExAmPlE" "\x03" "com"
				    "\x00\x00\x0f\x00\x01"
				    "\x00\x00\x29\x04\xd0\x00\x00\x00\x00\x00\x00";
	static uint8_t		 out[DNS_MSG_MAX];
	struct dns_msg		 q, back;
	const char		*errstr;
	size_t			 n;

	CHECK(dns_query_parse(qp, sizeof qp - 1, &q, &errstr) == 0);
	if ((n = dns_relay_build(&q, data, len, 512, out, sizeof out,
	    &errstr)) != 0)
		check_reply(&q, out, n, 512, &back);
	CHECK(dns_query_parse(qe, sizeof qe - 1, &q, &errstr) == 0);
	if ((n = dns_relay_build(&q, data, len, DNS_MSG_MAX, out, sizeof out,
	    &errstr)) != 0)
		check_reply(&q, out, n, DNS_MSG_MAX, &back);
}

/* Parse, build, re-parse. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct dns_msg	 q;
	const char	*errstr;

	if (len > DNS_MSG_MAX)
		return (0);
	check_upstream(data, len);
	if (dns_query_parse(data, len, &q, &errstr) != 0)
		return (0);
	check_build(&q, data, len, dns_query_limit(&q));
	check_build(&q, data + len / 2, len - len / 2, DNS_MSG_MAX);
	check_relay(&q, data, len, dns_query_limit(&q));
	check_relay(&q, data, len, DNS_MSG_MAX);
	return (0);
}
