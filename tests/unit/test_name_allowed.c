/*
 * Unit tests: rules_name_allowed(), the question the DNS server asks of
 * the policy: is this name allowed on any port?
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "rules/rules.h"

static const char policy[] =
    "allow pypi.org\n"
    "allow *.pythonhosted.org\n"
    "allow github.com:22\n"
    "allow api.example.com:8000-8100\n"
    "deny api.example.com:8000-8050\n"
    "deny api.example.com:8051-8100\n"
    "allow mixed.example.com:443,8443\n"
    "deny mixed.example.com:443\n"
    "allow *.corp.test:*\n"
    "deny secret.corp.test:*\n"
    "deny upload.pypi.org\n"
    "allow 203.0.113.0/24:443\n";

/* One name and whether it is answered. */
struct name_case {
	const char	*name;
	int		 allow;
};

static const struct name_case cases[] = {
	{ "pypi.org", 1 },
	{ "upload.pypi.org", 0 },
	{ "files.pythonhosted.org", 1 },
	{ "a.b.pythonhosted.org", 1 },
	{ "pythonhosted.org", 0 },		/* the apex is not a subdomain */
	{ "github.com", 1 },			/* on port 22 only: still a name */
	{ "api.example.com", 0 },		/* every allowed port denied */
	{ "mixed.example.com", 1 },		/* 8443 is left */
	{ "x.corp.test", 1 },
	{ "secret.corp.test", 0 },
	{ "example.com", 0 },
	{ "evil.test", 0 },
	{ "pypi.org.evil.test", 0 },
};

/* Each name gets the verdict the policy implies. */
static void
test_names(void **state)
{
	struct rules		*r;
	struct rules_verdict	 v;
	struct host		 h;
	const char		*errstr;
	char			 err[256];
	size_t			 i;

	assert_non_null(r = rules_create());
	assert_int_equal(rules_load_text(r, "test", policy, strlen(policy),
	    err, sizeof err), 0);
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		assert_int_equal(host_parse(cases[i].name,
		    strlen(cases[i].name), &h, &errstr), 0);
		if (rules_name_allowed(r, &h, &v) != cases[i].allow)
			fail_msg("%s: want %d", cases[i].name, cases[i].allow);
		assert_int_equal(v.allow, cases[i].allow);
		assert_non_null(v.why);
	}
	assert_int_equal(host_parse("upload.pypi.org", 15, &h, &errstr), 0);
	rules_name_allowed(r, &h, &v);
	assert_non_null(v.file);
	assert_int_equal(v.line, 11);
	assert_int_equal(host_parse("mixed.example.com", 17, &h, &errstr), 0);
	rules_name_allowed(r, &h, &v);
	assert_int_equal(v.line, 7);
	assert_int_equal(host_parse("evil.test", 9, &h, &errstr), 0);
	rules_name_allowed(r, &h, &v);
	assert_null(v.file);
	assert_int_equal(host_parse("203.0.113.5", 11, &h, &errstr), 0);
	assert_int_equal(rules_name_allowed(r, &h, &v), 0);
	assert_int_equal(rules_name_allowed(NULL, &h, &v), 0);
	rules_free(r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
