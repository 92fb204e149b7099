/*
 * Fuzz what the metrics listener does with a request: find the end of
 * the head as bytes arrive, then decide it (http_request_route()).
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>

#include "proxy/scrape.h"
#include "proxy/wire/http.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	static struct http_request	r;
	struct http_limits		lim = { SCRAPE_HEAD_MAX,
					    SCRAPE_HEADERS_MAX };
	struct http_scan		sc;
	size_t				end;
	int				st;

	if (len > SCRAPE_HEAD_MAX)
		len = SCRAPE_HEAD_MAX;
	http_scan_init(&sc);
	if ((end = http_scan_feed(&sc, data, len)) == 0)
		return (0);
	st = http_request_route((const char *)data, end, &lim, "/metrics",
	    &r);
	if (st != 200 && st != 400 && st != 404 && st != 405 && st != 431 &&
	    st != 501 && st != 505)
		abort();
	return (0);
}
