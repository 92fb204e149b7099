/*
 * Unit tests for secret placeholders: their form, finding them in any
 * case, putting values back in plain and Basic header values, and the
 * refusals (another secret, a bare prefix, a lowercased placeholder).
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

#include "proxy/wire/placeholder.h"

/* GH_TOKEN may go; every other name may not. */
static const char *
lookup(void *arg, const char *name, size_t len, size_t *vlen)
{
	(void)arg;
	if (len == 8 && memcmp(name, "GH_TOKEN", 8) == 0) {
		*vlen = 10;
		return ("ghp_s3cr3t");
	}
	return (NULL);
}

/* Swap one value; the result (or "" for none) in out. */
static int
swap(const char *in, char *out, size_t len, char *bad)
{
	char	*p;
	size_t	 n;
	int	 rv;

	rv = secret_swap(in, strlen(in), lookup, NULL, &p, &n, bad,
	    SECRET_NAME_MAX + 1);
	snprintf(out, len, "%s", p != NULL ? p : "");
	free(p);
	return (rv);
}

static void
test_placeholder(void **state)
{
	char	buf[SECRET_PLACEHOLDER_MAX];

	(void)state;
	assert_int_equal(secret_placeholder("GH_TOKEN", buf, sizeof buf),
	    (int)strlen("PINHOLE-SECRET-GH_TOKEN-MASKED"));
	assert_string_equal(buf, "PINHOLE-SECRET-GH_TOKEN-MASKED");
	assert_int_equal(secret_placeholder("", buf, sizeof buf), -1);
	assert_int_equal(secret_placeholder("1X", buf, sizeof buf), -1);
	assert_int_equal(secret_placeholder("A-B", buf, sizeof buf), -1);
	assert_int_equal(secret_placeholder("A B", buf, sizeof buf), -1);
}

static void
test_find(void **state)
{
	const char	*s = "x PINHOLE-SECRET-A_1-MASKED y", *name, *p;
	size_t		 nlen, plen;

	(void)state;
	p = secret_find(s, strlen(s), &name, &nlen, &plen);
	assert_ptr_equal(p, s + 2);
	assert_int_equal(nlen, 3);
	assert_memory_equal(name, "A_1", 3);
	assert_int_equal(plen, strlen("PINHOLE-SECRET-A_1-MASKED"));
	s = "pinhole-secret-a-masked";
	assert_non_null(secret_find(s, strlen(s), &name, &nlen, &plen));
	assert_int_equal(nlen, 0);	/* not whole: refused, never swapped */
	s = "PINHOLE-SECRET";
	assert_null(secret_find(s, strlen(s), &name, &nlen, &plen));
	assert_null(secret_find("", 0, &name, &nlen, &plen));
}

static void
test_swap(void **state)
{
	char	out[512], bad[SECRET_NAME_MAX + 1], in[512], b64[256];

	(void)state;
	assert_int_equal(swap("Bearer abc", out, sizeof out, bad), 0);
	assert_int_equal(swap("Bearer PINHOLE-SECRET-GH_TOKEN-MASKED", out,
	    sizeof out, bad), 1);
	assert_string_equal(out, "Bearer ghp_s3cr3t");
	assert_int_equal(swap("PINHOLE-SECRET-GH_TOKEN-MASKED,"
	    "PINHOLE-SECRET-GH_TOKEN-MASKED", out, sizeof out, bad), 1);
	assert_string_equal(out, "ghp_s3cr3t,ghp_s3cr3t");
	/* "x:PINHOLE-SECRET-GH_TOKEN-MASKED" in Basic, and back. */
	snprintf(in, sizeof in, "Basic %s",
	    "eDpQSU5IT0xFLVNFQ1JFVC1HSF9UT0tFTi1NQVNLRUQ=");
	assert_int_equal(swap(in, out, sizeof out, bad), 1);
	snprintf(b64, sizeof b64, "Basic %s", "eDpnaHBfczNjcjN0");
	assert_string_equal(out, b64);
	assert_int_equal(swap("Basic dXNlcjpwYXNz", out, sizeof out, bad), 0);
	assert_int_equal(swap("Basic !!!!", out, sizeof out, bad), 0);
}

static void
test_refuse(void **state)
{
	char	out[512], bad[SECRET_NAME_MAX + 1];

	(void)state;
	assert_int_equal(swap("token PINHOLE-SECRET-OTHER-MASKED", out,
	    sizeof out, bad), -1);
	assert_string_equal(bad, "OTHER");
	assert_string_equal(out, "");
	assert_int_equal(swap("PINHOLE-SECRET-", out, sizeof out, bad), -1);
	assert_string_equal(bad, "");
	assert_int_equal(swap("pinhole-secret-gh_token-masked", out,
	    sizeof out, bad), -1);
	/* "u:PINHOLE-SECRET-OTHER-MASKED" in Basic. */
	assert_int_equal(swap("Basic dTpQSU5IT0xFLVNFQ1JFVC1PVEhFUi1NQVNLRUQ=",
	    out, sizeof out, bad), -1);
	assert_string_equal(bad, "OTHER");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_placeholder),
		cmocka_unit_test(test_find),
		cmocka_unit_test(test_swap),
		cmocka_unit_test(test_refuse),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
