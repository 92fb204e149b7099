/*
 * Fuzz host canonicalisation: parsing the canonical text again gives the
 * same host (the form is a fixed point), and it classifies.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rules/rules.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* Canonicalise the input, then check the result parses to itself. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct host	 h, again;
	const char	*errstr;
	char		 buf[512];
	uint16_t	 port;

	if (host_parse((const char *)data, len, &h, &errstr) == 0) {
		if (strlen(h.text) > HOST_NAME_LEN)
			abort();
		if (host_parse(h.text, strlen(h.text), &again, &errstr) != 0 ||
		    again.kind != h.kind || strcmp(again.text, h.text) != 0 ||
		    memcmp(again.addr, h.addr, sizeof h.addr) != 0)
			abort();
		if (h.kind != HOST_NAME)
			addr_class_name(addr_classify(h.addr,
			    h.kind == HOST_IPV4 ? 4 : 16));
	}
	if (len < sizeof buf) {
		memcpy(buf, data, len);
		buf[len] = '\0';
		host_port_parse(buf, &h, &port, 443, &errstr);
	}
	return (0);
}
