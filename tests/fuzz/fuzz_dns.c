/*
 * Fuzz target: the DNS query parser (proxy/wire/dnsmsg.c), and the error
 * reply built for whatever it rejects.  fuzz_dnsbuild fuzzes the builder,
 * fuzz_dnsserver the server whole (proxy/dns/server.c, answer.c, querylog.c).
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/wire/dnsmsg.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* Parse one message as the server would, and answer it. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	static uint8_t		 out[DNS_MSG_MAX];
	struct dns_msg		 m, back;
	struct dns_reply	 r = { DNS_R_NXDOMAIN, 0, 0, NULL,
				    DNS_EDE_BLOCKED, "blocked", NULL };
	const char		*errstr;
	size_t			 n;
	int			 rv;

	(void)dns_msg_parse(data, len, &m, &errstr);
	rv = dns_query_parse(data, len, &m, &errstr);
	if (rv == DNS_DROP)
		return (0);
	if (rv != 0)
		r.rcode = rv;
	if (m.has_question && strlen(m.qname) >= DNS_NAME_TEXT)
		abort();
	n = dns_reply_build(&m, &r, dns_query_limit(&m), out, sizeof out);
	if (n == 0 || n > dns_query_limit(&m))
		abort();
	if (dns_msg_parse(out, n, &back, &errstr) == -1 || back.id != m.id)
		abort();
	return (0);
}
