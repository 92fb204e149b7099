/*
 * Fuzz the sniffers through the classifier and each parser directly,
 * checking what callers rely on:
 *  - an undecided answer asks for more bytes than it was given, never
 *    more than SNI_PEEK_MAX, and none of the inputs shorter than that
 *    is decided: the caller need not look again before;
 *  - a prefix is either undecided or decided exactly as the whole input
 *    (same status, name, flags): more bytes never change an answer;
 *  - a name is lowercase letters, digits, '-' and '.', or a bracketed
 *    IPv6 literal from HTTP, and fits.
 * Corpus: tests/fuzz/sni/ (captured ClientHellos, HTTP request heads).
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/wire/sni.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

typedef enum sni_status (*parse_fn)(const uint8_t *, size_t,
    struct sni_result *);

/* Stop loudly when an invariant breaks. */
static void
check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz_sni: invariant broken: %s\n", what);
		abort();
	}
}

/* Check a name is one the sniffers may report. */
static void
check_name(const struct sni_result *r)
{
	size_t	i, n = strlen(r->name);

	check(n > 0 && n <= SNI_NAME_MAX, "name length");
	if (r->name[0] == '[') {
		check(r->iplit && r->proto != SNI_PROTO_TLS, "v6 literal");
		return;
	}
	for (i = 0; i < n; i++) {
		check((r->name[i] >= 'a' && r->name[i] <= 'z') ||
		    (r->name[i] >= '0' && r->name[i] <= '9') ||
		    r->name[i] == '-' || r->name[i] == '.', "name character");
	}
	check(r->name[0] != '.' && r->name[n - 1] != '.' &&
	    strstr(r->name, "..") == NULL, "empty label");
}

/* Check one answer on its own. */
static void
check_one(enum sni_status st, const struct sni_result *r, size_t len)
{
	if (st == SNI_NEED_MORE) {
		check(r->need > len && r->need <= SNI_PEEK_MAX, "need");
		return;
	}
	check(st == SNI_ERROR ? r->error != NULL : r->error == NULL, "error");
	check((st == SNI_NAME) == (r->name[0] != '\0'), "name iff NAME");
	if (st == SNI_NAME)
		check_name(r);
	if (st == SNI_NAME || st == SNI_NO_NAME)
		check(r->used > 0 && r->used <= len, "used");
}

/* Parse data whole, then prefixes, and hold them to the invariants. */
static void
run(parse_fn fn, const uint8_t *data, size_t size)
{
	struct sni_result	 full, part;
	enum sni_status		 st, pst;
	size_t			 k, step = size / 64 + 1;

	st = fn(data, size, &full);
	check_one(st, &full, size);
	for (k = 0; k < size; k += step) {
		pst = fn(data, k, &part);
		check_one(pst, &part, k);
		if (pst == SNI_NEED_MORE) {
			check(st == SNI_NEED_MORE || part.need <= size,
			    "need past a decided input");
			/* Nothing is decided before need bytes. */
			if (part.need - 1 < size && part.need - 1 > k)
				check(fn(data, part.need - 1, &part) ==
				    SNI_NEED_MORE, "decided before need");
			continue;
		}
		check(pst == st, "prefix decided otherwise");
		check(strcmp(part.name, full.name) == 0, "prefix name");
		check(part.proto == full.proto && part.ech == full.ech &&
		    part.iplit == full.iplit && part.port == full.port &&
		    part.sslv2 == full.sslv2 && part.used == full.used,
		    "prefix flags");
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 2 * SNI_PEEK_MAX)
		return (0);
	run(sni_sniff, data, size);
	run(sni_tls_parse, data, size);
	run(sni_http_parse, data, size);
	return (0);
}
