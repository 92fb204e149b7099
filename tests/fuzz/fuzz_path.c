/*
 * Fuzz the canonical path, checking what the request rules rely on:
 *  - a path taken starts with '/', holds no "//", no "." or ".."
 *    segment, no '%', '\', NUL or control byte;
 *  - it is its own canonical form: a second reading changes nothing, so
 *    no server that decodes again can see another path;
 *  - a request whose path leaves /p/ is never allowed by a rule
 *    `path /p/` followed by two stars.
 * Corpus: tests/fuzz/path/ (escape attempts).
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rules/rules.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static struct rules	*prefix_rules;

/* Stop loudly when an invariant breaks. */
static void
check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz_path: invariant broken: %s\n", what);
		abort();
	}
}

/* Is the canonical path free of what must not be in one? */
static void
check_shape(const char *p, size_t n)
{
	size_t	i;

	check(n > 0 && p[0] == '/', "starts with '/'");
	check(strstr(p, "//") == NULL, "no //");
	check(strstr(p, "/./") == NULL && strstr(p, "/../") == NULL,
	    "no dot segments");
	check(!(n >= 2 && strcmp(p + n - 2, "/.") == 0) &&
	    !(n >= 3 && strcmp(p + n - 3, "/..") == 0), "no final dot segment");
	for (i = 0; i < n; i++)
		check(p[i] != '%' && p[i] != '\\' && (unsigned char)p[i] >= 0x20 &&
		    p[i] != 0x7f, "no escapes or controls");
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char			 out[RULES_PATH_LEN], again[RULES_PATH_LEN];
	char			 err[256];
	const char		*errstr;
	struct rules_request	 rq;
	struct rules_verdict	 v;
	struct host		 h;
	int			 n, m, rv;

	if (prefix_rules == NULL) {
		prefix_rules = rules_create();
		check(rules_load_text(prefix_rules, "fuzz",
		    "allow p.example path /p/**\n", 27, err, sizeof err) == 0,
		    "policy loads");
	}
	n = rules_path_canon((const char *)data, size, out, sizeof out,
	    &errstr);
	if (n >= 0) {
		check((size_t)n == strlen(out), "length");
		check_shape(out, (size_t)n);
		m = rules_path_canon(out, (size_t)n, again, sizeof again,
		    &errstr);
		check(m == n && strcmp(out, again) == 0, "idempotent");
	}
	memset(&rq, 0, sizeof rq);
	rq.method = "GET";
	rq.method_len = 3;
	rq.target = (const char *)data;
	rq.target_len = size;
	host_parse("p.example", 9, &h, &errstr);
	rv = rules_match_request(prefix_rules, &h, 443, &rq, &v);
	if (rv == 1)
		check(n >= 0 && (strcmp(out, "/p") == 0 ||
		    strncmp(out, "/p/", 3) == 0), "prefix kept");
	return (0);
}
