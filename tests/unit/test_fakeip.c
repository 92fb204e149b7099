/*
 * Unit tests: the fake-address map (proxy/dns/fakeip.c).
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "proxy/dns/fakeip.h"

/* Create a map or fail the test. */
static struct fakeip *
map(const char *cidr, size_t max, uint32_t grace)
{
	struct fakeip	*f;
	char		 err[128];

	f = fakeip_create(cidr, max, grace, err, sizeof err);
	if (f == NULL)
		fail_msg("%s", err);
	return (f);
}

/* One stable address per name, inside the prefix, found both ways. */
static void
test_stable(void **state)
{
	struct fakeip	*f = map(NULL, 0, FAKEIP_GRACE);
	uint8_t		 a[4], b[4], c[4];

	assert_int_equal(fakeip_assign(f, "pypi.org", "", 100, 5, a), 0);
	assert_int_equal(fakeip_assign(f, "github.com", "", 100, 5, b), 0);
	assert_int_equal(fakeip_assign(f, "pypi.org", "", 5000, 5, c), 0);
	assert_memory_equal(a, c, 4);
	assert_memory_not_equal(a, b, 4);
	assert_int_equal(a[0], 198);
	assert_true(a[1] == 18 || a[1] == 19);
	assert_true(fakeip_contains(f, a, 4));
	assert_string_equal(fakeip_lookup_name(f, a, 4, ""), "pypi.org");
	assert_string_equal(fakeip_lookup_name(f, b, 4, ""), "github.com");
	assert_int_equal(fakeip_lookup_addr(f, "github.com", c), 0);
	assert_memory_equal(b, c, 4);
	assert_int_equal(fakeip_lookup_addr(f, "nope.test", c), -1);
	assert_int_equal(fakeip_count(f), 2);
	fakeip_free(f);
}

/* Addresses outside the map, or not given out, name nothing. */
static void
test_lookup_misses(void **state)
{
	struct fakeip	*f = map(NULL, 0, FAKEIP_GRACE);
	uint8_t		 a[4];
	uint8_t		 mapped[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
			    0xff, 0xff };
	static const uint8_t out[4] = { 10, 0, 0, 1 };
	static const uint8_t unused[4] = { 198, 19, 255, 254 };
	static const uint8_t first[4] = { 198, 18, 0, 0 };

	assert_int_equal(fakeip_assign(f, "a.test", "", 1, 5, a), 0);
	memcpy(mapped + 12, a, 4);
	assert_string_equal(fakeip_lookup_name(f, mapped, 16, ""), "a.test");
	assert_null(fakeip_lookup_name(f, out, 4, ""));
	assert_false(fakeip_contains(f, out, 4));
	assert_null(fakeip_lookup_name(f, unused, 4, ""));
	assert_true(fakeip_contains(f, unused, 4));
	assert_null(fakeip_lookup_name(f, first, 4, ""));
	assert_null(fakeip_lookup_name(f, a, 3, ""));
	assert_null(fakeip_lookup_name(NULL, a, 4, ""));
	fakeip_free(f);
}

/* Full: no address until the least recently answered one is long expired. */
static void
test_recycle(void **state)
{
	struct fakeip	*f = map(NULL, 3, 100);
	uint8_t		 a[4], b[4], c[4], d[4];

	assert_int_equal(fakeip_assign(f, "a.test", "", 0, 5, a), 0);
	assert_int_equal(fakeip_assign(f, "b.test", "", 1, 5, b), 0);
	assert_int_equal(fakeip_assign(f, "c.test", "", 2, 5, c), 0);
	/* a.test answered again: b.test is now the oldest. */
	assert_int_equal(fakeip_assign(f, "a.test", "", 10, 5, d), 0);
	assert_int_equal(fakeip_assign(f, "d.test", "", 20, 5, d), -1);
	assert_int_equal(fakeip_assign(f, "d.test", "", 1 + 5 + 99, 5, d), -1);
	assert_int_equal(fakeip_assign(f, "d.test", "", 1 + 5 + 100, 5, d), 0);
	assert_memory_equal(b, d, 4);
	assert_string_equal(fakeip_lookup_name(f, d, 4, ""), "d.test");
	assert_int_equal(fakeip_lookup_addr(f, "b.test", d), -1);
	assert_string_equal(fakeip_lookup_name(f, a, 4, ""), "a.test");
	assert_int_equal(fakeip_count(f), 3);
	/* b.test comes back: it takes c.test's address (oldest now). */
	assert_int_equal(fakeip_assign(f, "b.test", "", 1000, 5, d), 0);
	assert_memory_equal(c, d, 4);
	fakeip_free(f);
}

/* A longer TTL given earlier is not shortened by a later answer. */
static void
test_expiry_kept(void **state)
{
	struct fakeip	*f = map(NULL, 1, 0);
	uint8_t		 a[4];

	assert_int_equal(fakeip_assign(f, "a.test", "", 0, 300, a), 0);
	assert_int_equal(fakeip_assign(f, "a.test", "", 10, 5, a), 0);
	assert_int_equal(fakeip_assign(f, "b.test", "", 100, 5, a), -1);
	assert_int_equal(fakeip_assign(f, "b.test", "", 300, 5, a), 0);
	fakeip_free(f);
}

/* Another prefix, its size bounding the map; bad prefixes refused. */
static void
test_prefix(void **state)
{
	struct fakeip	*f = map("10.9.8.4/30", 0, 0);
	uint8_t		 a[4];
	char		 err[128];

	assert_int_equal(fakeip_assign(f, "a.test", "", 0, 1, a), 0);
	assert_memory_equal(a, "\x0a\x09\x08\x05", 4);
	assert_int_equal(fakeip_assign(f, "b.test", "", 0, 1, a), 0);
	assert_memory_equal(a, "\x0a\x09\x08\x06", 4);
	assert_int_equal(fakeip_assign(f, "c.test", "", 0, 1, a), -1);
	fakeip_free(f);
	assert_null(fakeip_create("10.0.0.0", 0, 0, err, sizeof err));
	assert_null(fakeip_create("10.0.0.0/31", 0, 0, err, sizeof err));
	assert_null(fakeip_create("10.0.0.0/7", 0, 0, err, sizeof err));
	assert_null(fakeip_create("10.0.0.300/16", 0, 0, err, sizeof err));
	assert_null(fakeip_create("::1/64", 0, 0, err, sizeof err));
	assert_null(fakeip_create("10.0.0.0/1x", 0, 0, err, sizeof err));
}

/* Many names: all distinct, all found again. */
static void
test_many(void **state)
{
	struct fakeip	*f = map(NULL, 0, FAKEIP_GRACE);
	char		 name[32];
	uint8_t		 a[4];
	int		 i;

	for (i = 0; i < 20000; i++) {
		snprintf(name, sizeof name, "n%d.test", i);
		assert_int_equal(fakeip_assign(f, name, "", 0, 5, a), 0);
	}
	for (i = 0; i < 20000; i += 997) {
		snprintf(name, sizeof name, "n%d.test", i);
		assert_int_equal(fakeip_lookup_addr(f, name, a), 0);
		assert_string_equal(fakeip_lookup_name(f, a, 4, ""), name);
	}
	assert_int_equal(fakeip_count(f), 20000);
	fakeip_free(f);
}

/*
 * Each sandbox reads back only the names it was given: not another's,
 * not a name given since at an address it was given before, and nothing
 * once it has gone.
 */
static void
test_views(void **state)
{
	struct fakeip	*f = map(NULL, 2, 0);
	uint8_t		 a[4], b[4], c[4];
	char		 sb[16];
	int		 i;

	assert_int_equal(fakeip_assign(f, "secret.test", "1", 0, 5, a), 0);
	assert_int_equal(fakeip_assign(f, "shared.test", "1", 0, 5, b), 0);
	assert_int_equal(fakeip_assign(f, "shared.test", "2", 0, 5, c), 0);
	assert_memory_equal(b, c, 4);
	assert_string_equal(fakeip_lookup_name(f, a, 4, "1"), "secret.test");
	assert_null(fakeip_lookup_name(f, a, 4, "2"));
	assert_null(fakeip_lookup_name(f, a, 4, ""));
	assert_string_equal(fakeip_lookup_name(f, b, 4, "2"), "shared.test");
	/* secret.test's address goes to a name only sandbox 2 is given. */
	assert_int_equal(fakeip_assign(f, "other.test", "2", 100, 5, c), 0);
	assert_memory_equal(a, c, 4);
	assert_null(fakeip_lookup_name(f, a, 4, "1"));
	assert_string_equal(fakeip_lookup_name(f, a, 4, "2"), "other.test");
	fakeip_drop_sandbox(f, "2");
	fakeip_drop_sandbox(f, "none");
	assert_null(fakeip_lookup_name(f, a, 4, "2"));
	assert_string_equal(fakeip_lookup_name(f, b, 4, "1"), "shared.test");
	/* Many sandboxes, each with its own view. */
	for (i = 0; i < 1000; i++) {
		snprintf(sb, sizeof sb, "%d", i + 10);
		assert_int_equal(fakeip_assign(f, "shared.test", sb, 200, 5,
		    c), 0);
	}
	assert_string_equal(fakeip_lookup_name(f, b, 4, "509"), "shared.test");
	assert_null(fakeip_lookup_name(f, b, 4, "9"));
	fakeip_free(f);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stable),
		cmocka_unit_test(test_lookup_misses),
		cmocka_unit_test(test_recycle),
		cmocka_unit_test(test_expiry_kept),
		cmocka_unit_test(test_prefix),
		cmocka_unit_test(test_many),
		cmocka_unit_test(test_views),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
