/*
 * Each sandbox's recent refusals (its ring, proxy/sandbox/sandbox.c, and
 * the queue's index of them, proxy/escalate/refused.c): the same
 * refusal counted, the newest first, the ring bounded, a DNS refusal of
 * a name found for any port, one sandbox never seeing another's, an
 * ended one's seen by those attached later, the sandboxes kept bounded.
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "proxy/escalate/refused.h"

static struct sandbox	*made[REFUSED_SANDBOXES + 16];
static size_t		 nmade;

/* The sandbox of an id ("": none), made on first use. */
static struct sandbox *
sandbox_of(const char *id)
{
	size_t	i;

	if (*id == '\0')
		return (NULL);
	for (i = 0; i < nmade; i++) {
		if (strcmp(sandbox_id(made[i]), id) == 0)
			return (made[i]);
	}
	assert_true(nmade < sizeof made / sizeof made[0]);
	assert_non_null(made[nmade] = sandbox_new(id, "sh", 1, NULL));
	return (made[nmade++]);
}

/* Keep a refusal met by the sandbox it names. */
static const struct sandbox_refusal *
add(struct refused *rf, const struct sandbox_refusal *f, time_t now)
{
	return (refused_add(rf, sandbox_of(f->sandbox), f, now));
}

/* Free the index, and the sandboxes made. */
static void
done(struct refused *rf)
{
	refused_free(rf);
	while (nmade > 0)
		sandbox_unref(made[--nmade]);
}

/* A refusal of host:port met by a sandbox. */
static struct sandbox_refusal *
refusal(const char *sandbox, const char *host, uint16_t port, const char *why)
{
	static struct sandbox_refusal	f;
	const char			*err;

	memset(&f, 0, sizeof f);
	snprintf(f.sandbox, sizeof f.sandbox, "%s", sandbox);
	assert_int_equal(host_parse(host, strlen(host), &f.host, &err), 0);
	f.port = port;
	snprintf(f.via, sizeof f.via, "%s", port == 0 ? "dns" : "connect");
	snprintf(f.why, sizeof f.why, "%s", why);
	f.ask = 1;
	return (&f);
}

/* The same refusal is counted; another goes first. */
static void
test_count_order(void **state)
{
	struct refused			*rf = refused_create();
	const struct sandbox_refusal	*r;
	struct sandbox_refusal		*f;

	(void)state;
	assert_non_null(rf);
	r = add(rf, refusal("1", "a.test", 443, "no"), 100);
	assert_int_equal(r->count, 1);
	r = add(rf, refusal("1", "a.test", 443, "no"), 105);
	assert_int_equal(r->count, 2);
	assert_int_equal(r->first, 100);
	assert_int_equal(r->last, 105);
	add(rf, refusal("1", "b.test", 443, "no"), 106);
	assert_string_equal(refused_at(rf, "1", 0)->host.text, "b.test");
	assert_string_equal(refused_at(rf, "1", 1)->host.text, "a.test");
	assert_null(refused_at(rf, "1", 2));
	/* Met again, it is the newest. */
	add(rf, refusal("1", "a.test", 443, "no"), 107);
	assert_string_equal(refused_at(rf, "1", 0)->host.text, "a.test");
	assert_int_equal(refused_at(rf, "1", 0)->count, 3);
	/* Another request of the same host and reason: counted, kept. */
	f = refusal("1", "a.test", 443, "no");
	snprintf(f->what, sizeof f->what, "GET /x");
	r = add(rf, f, 107);
	assert_int_equal(r->count, 4);
	assert_string_equal(r->what, "GET /x");
	/* Another reason is another entry. */
	add(rf, refusal("1", "a.test", 443, "other"), 108);
	assert_string_equal(refused_at(rf, "1", 0)->why, "other");
	assert_int_equal(refused_at(rf, "1", 0)->count, 1);
	done(rf);
}

/* The ring keeps the newest SANDBOX_REFUSED_MAX. */
static void
test_ring_bounded(void **state)
{
	struct refused	*rf = refused_create();
	char		 host[32];
	int		 i;

	(void)state;
	for (i = 0; i < SANDBOX_REFUSED_MAX + 3; i++) {
		snprintf(host, sizeof host, "h%d.test", i);
		add(rf, refusal("1", host, 443, "no"), 100 + i);
	}
	snprintf(host, sizeof host, "h%d.test", SANDBOX_REFUSED_MAX + 2);
	assert_string_equal(refused_at(rf, "1", 0)->host.text, host);
	assert_string_equal(refused_at(rf, "1",
	    SANDBOX_REFUSED_MAX - 1)->host.text, "h3.test");
	assert_null(refused_at(rf, "1", SANDBOX_REFUSED_MAX));
	done(rf);
}

/* Found by host and port; a name's DNS refusal counts for any port. */
static void
test_find(void **state)
{
	struct refused			*rf = refused_create();
	const struct sandbox_refusal	*r;
	struct host			 h;
	const char			*err;

	(void)state;
	assert_int_equal(host_parse("a.test", 6, &h, &err), 0);
	assert_null(refused_find(rf, "1", &h, 443));
	add(rf, refusal("1", "a.test", 0, "by dns"), 100);
	assert_non_null(r = refused_find(rf, "1", &h, 443));
	assert_string_equal(r->why, "by dns");
	add(rf, refusal("1", "a.test", 8080, "on 8080"), 101);
	assert_string_equal(refused_find(rf, "1", &h, 8080)->why, "on 8080");
	assert_string_equal(refused_find(rf, "1", &h, 443)->why, "by dns");
	done(rf);
}

/* A sandbox sees only its own; a dropped one has none. */
static void
test_per_sandbox(void **state)
{
	struct refused	*rf = refused_create();
	struct host	 h;
	const char	*err;

	(void)state;
	assert_int_equal(host_parse("a.test", 6, &h, &err), 0);
	add(rf, refusal("1", "a.test", 443, "no"), 100);
	add(rf, refusal("2", "b.test", 443, "no"), 100);
	assert_null(refused_find(rf, "2", &h, 443));
	assert_string_equal(refused_at(rf, "2", 0)->host.text, "b.test");
	assert_null(refused_at(rf, "2", 1));
	assert_null(refused_at(rf, "", 0));
	refused_drop(rf, "1", 0);
	assert_null(refused_at(rf, "1", 0));
	assert_int_equal(refused_nsandboxes(rf), 1);
	done(rf);
}

/*
 * An ended sandbox's refusals are seen by the sandboxes attached after it
 * ended, never by those that were live with it.
 */
static void
test_ended(void **state)
{
	struct refused	*rf = refused_create();
	struct host	 h;
	const char	*err;

	(void)state;
	assert_int_equal(host_parse("a.test", 6, &h, &err), 0);
	add(rf, refusal("1", "a.test", 443, "no"), 100);
	add(rf, refusal("2", "b.test", 443, "no"), 101);
	refused_drop(rf, "1", 3);	/* 2 and 3 were live */
	assert_string_equal(refused_at(rf, "2", 0)->host.text, "b.test");
	assert_null(refused_at(rf, "2", 1));
	assert_null(refused_at(rf, "3", 0));
	assert_null(refused_find(rf, "3", &h, 443));
	assert_string_equal(refused_at(rf, "4", 0)->host.text, "a.test");
	assert_non_null(refused_find(rf, "4", &h, 443));
	assert_null(refused_at(rf, "", 0));
	add(rf, refusal("4", "c.test", 443, "no"), 102);
	assert_string_equal(refused_at(rf, "4", 0)->host.text, "c.test");
	assert_string_equal(refused_at(rf, "4", 1)->host.text, "a.test");
	assert_null(refused_at(rf, "4", 2));
	refused_drop(rf, "2", 4);
	assert_string_equal(refused_at(rf, "5", 0)->host.text, "b.test");
	assert_string_equal(refused_at(rf, "5", 1)->host.text, "a.test");
	assert_null(refused_at(rf, "4", 2));
	done(rf);
}

/* Rings are kept for the sandboxes met most recently. */
static void
test_sandboxes_bounded(void **state)
{
	struct refused	*rf = refused_create();
	char		 id[16];
	int		 i;

	(void)state;
	for (i = 0; i < REFUSED_SANDBOXES + 5; i++) {
		snprintf(id, sizeof id, "%d", i);
		add(rf, refusal(id, "a.test", 443, "no"), 100);
		if (i == REFUSED_SANDBOXES - 1)	/* met again */
			add(rf, refusal("0", "a.test", 443, "no"), 100);
	}
	assert_int_equal(refused_nsandboxes(rf), REFUSED_SANDBOXES);
	assert_non_null(refused_at(rf, "0", 0));
	assert_null(refused_at(rf, "1", 0));
	done(rf);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_count_order),
		cmocka_unit_test(test_ring_bounded),
		cmocka_unit_test(test_find),
		cmocka_unit_test(test_per_sandbox),
		cmocka_unit_test(test_ended),
		cmocka_unit_test(test_sandboxes_bounded),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
