/*
 * Unit tests for live policy reload, with a real event loop and real
 * files: a rename, an in-place write, an include, `pinhole allow`'s own
 * rename, a directory that appears later and a symlink each bring one
 * reload within a second; a bad edit is refused and the old policy
 * kept; bursts are debounced; other files in the directory are ignored;
 * a file dropped in a watched directory (policy.d) reloads, and a broken
 * one keeps the old policy whole.
 * The test owns the reload and swap, as the gateway does.
 */
#include "config.h"

#include <sys/stat.h>

#include <event2/event.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon/policywatch.h"
#include "rules/rules.h"

#define FILES_MAX	32

/* The gateway's side: the policy in force and what reloads did. */
struct state {
	struct event_base	*base;
	struct policywatch	*pw;
	char			 top[256];
	char			 sys[256];	/* the system layer, or "" */
	struct rules		*rules;
	int			 calls;
	int			 failed;
	int			 stop_on_call;
	char			 err[1024];
};

static char		dir[] = "/tmp/test_policywatch.XXXXXX";
static struct state	st;

/* Watch a policy's files, and its directories as "DIR/". */
static void
watch(struct state *s, const struct rules *r)
{
	const char	*files[FILES_MAX + 1];
	char		 dirs[FILES_MAX][300];
	size_t		 n, nd, i;

	n = rules_files(r, files, FILES_MAX);
	nd = rules_dirs(r, files + n, FILES_MAX - n);
	assert_true(n + nd <= FILES_MAX);
	for (i = 0; i < nd; i++) {
		snprintf(dirs[i], sizeof dirs[i], "%s/", files[n + i]);
		files[n + i] = dirs[i];
	}
	files[n + nd] = NULL;
	assert_int_equal(policywatch_set_files(s->pw, files), 0);
}

/* Load the system layer (if any), then the top file. */
static int
load(struct state *s, struct rules *r)
{
	if (s->sys[0] != '\0' && rules_load_system(r, s->sys, s->err,
	    sizeof s->err) == -1)
		return (-1);
	return (rules_load_file(r, s->top, s->err, sizeof s->err));
}

/* Reload: parse the whole policy, swap it in only if it parsed. */
static void
reload_cb(void *arg)
{
	struct state	*s = arg;
	struct rules	*r = rules_create();

	assert_non_null(r);
	s->calls++;
	if (load(s, r) == -1) {
		rules_free(r);
		s->failed++;
	} else {
		rules_free(s->rules);
		s->rules = r;
		watch(s, r);
	}
	if (s->stop_on_call)
		event_base_loopbreak(s->base);
}

/* Stop the loop: the wait is over. */
static void
timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	event_base_loopbreak(arg);
}

/* Milliseconds on the monotonic clock. */
static long
now_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}

/*
 * Run the loop until a reload (stop) or for ms; return how many reloads
 * happened.
 */
static int
run(int ms, int stop)
{
	struct event	*t = evtimer_new(st.base, timeout_cb, st.base);
	struct timeval	 tv = { ms / 1000, (ms % 1000) * 1000 };
	int		 before = st.calls;
	long		 start = now_ms();

	assert_non_null(t);
	st.stop_on_call = stop;
	evtimer_add(t, &tv);
	event_base_dispatch(st.base);
	event_free(t);
	if (stop && st.calls > before)
		printf("# reload after %ld ms\n", now_ms() - start);
	return (st.calls - before);
}

/* Write a file in place (truncate and write, as `>` does). */
static void
write_in_place(const char *path, const char *text)
{
	FILE	*f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

/* Replace a file by rename, as editors do. */
static void
write_by_rename(const char *path, const char *text)
{
	char	tmp[300];

	snprintf(tmp, sizeof tmp, "%s.swp", path);
	write_in_place(tmp, text);
	assert_int_equal(rename(tmp, path), 0);
}

/* Does the policy in force allow host on port 443? */
static int
allows(const char *host)
{
	struct rules_verdict	 v;
	struct host		 h;
	const char		*errstr;

	if (st.rules == NULL)
		return (0);
	assert_int_equal(host_parse(host, strlen(host), &h, &errstr), 0);
	return (rules_match(st.rules, &h, 443, &v));
}

/* A path in the test directory. */
static const char *
path(const char *name)
{
	static char	buf[4][300];
	static int	i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof buf[i], "%s/%s", dir, name);
	return (buf[i]);
}

/*
 * Start watching top (after the system layer sys, unless NULL), with
 * the policy they hold now (if any) in force.
 */
static void
start_layered(const char *sys, const char *top)
{
	const char	*files[2] = { top, NULL };

	memset(&st, 0, sizeof st);
	assert_non_null(st.base = event_base_new());
	snprintf(st.top, sizeof st.top, "%s", top);
	snprintf(st.sys, sizeof st.sys, "%s", sys != NULL ? sys : "");
	st.rules = rules_create();
	if (load(&st, st.rules) == -1) {
		rules_free(st.rules);
		st.rules = NULL;
	}
	assert_non_null(st.pw = policywatch_start(st.base, files, reload_cb,
	    &st));
	if (st.rules != NULL)
		watch(&st, st.rules);
}

/* Start watching top alone. */
static void
start(const char *top)
{
	start_layered(NULL, top);
}

/* Stop watching and free everything. */
static void
stop(void)
{
	policywatch_stop(st.pw);
	rules_free(st.rules);
	event_base_free(st.base);
}

/* Rename and in-place edits each reload; a bad edit keeps the old policy. */
static void
test_edits(void **state)
{
	(void)state;
	write_in_place(path("policy"), "allow a.example\n");
	start(path("policy"));
	assert_true(allows("a.example"));

	write_by_rename(path("policy"), "# renamed\nallow b.example\n");
	assert_int_equal(run(1000, 1), 1);
	assert_true(allows("b.example"));
	assert_false(allows("a.example"));

	write_in_place(path("policy"), "allow c.example\n");
	assert_int_equal(run(1000, 1), 1);
	assert_true(allows("c.example"));

	write_in_place(path("policy"), "alow d.example\n");
	assert_int_equal(run(1000, 1), 1);
	assert_int_equal(st.failed, 1);
	assert_non_null(strstr(st.err, "policy:1: unknown directive 'alow'"));
	assert_true(allows("c.example"));		/* old policy kept */
	assert_false(allows("d.example"));

	write_in_place(path("policy"), "allow d.example\n");
	assert_int_equal(run(1000, 1), 1);
	assert_true(allows("d.example"));

	/* pinhole allow's own edit: temp file, rename. */
	assert_int_equal(rules_file_append(path("policy"), "e.example",
	    NULL, st.err, sizeof st.err), 1);
	assert_int_equal(run(1000, 1), 1);
	assert_true(allows("e.example"));
	assert_true(allows("d.example"));
	stop();
}

/* An included file is watched once a reload has read the include. */
static void
test_include(void **state)
{
	(void)state;
	write_in_place(path("inc.policy"), "allow i1.example\n");
	write_in_place(path("top"), "allow t.example\n");
	start(path("top"));
	write_by_rename(path("top"), "allow t.example\ninclude inc.policy\n");
	assert_int_equal(run(1000, 1), 1);
	assert_true(allows("i1.example"));

	write_in_place(path("inc.policy"), "allow i2.example\n");
	assert_int_equal(run(1000, 1), 1);
	assert_true(allows("i2.example"));
	assert_false(allows("i1.example"));

	write_in_place(path("inc.policy"), "allow *.com\n");	/* refused */
	assert_int_equal(run(1000, 1), 1);
	assert_true(allows("i2.example"));
	stop();
}

/* Bursts make one reload; other files of the directory none. */
static void
test_debounce(void **state)
{
	char	text[64];
	int	i;

	(void)state;
	write_in_place(path("burst"), "allow a.example\n");
	start(path("burst"));
	for (i = 0; i < 5; i++) {
		snprintf(text, sizeof text, "allow b%d.example\n", i);
		write_in_place(path("burst"), text);
	}
	assert_int_equal(run(600, 0), 1);
	assert_true(allows("b4.example"));

	write_in_place(path("unrelated"), "allow z.example\n");
	write_by_rename(path("burst.orig"), "x\n");
	assert_int_equal(run(300, 0), 0);
	stop();
}

/* A directory that does not exist yet is waited for. */
static void
test_missing_dir(void **state)
{
	long	end;

	(void)state;
	start(path("later/sub/policy"));
	assert_null(st.rules);
	assert_int_equal(mkdir(path("later"), 0700), 0);
	assert_int_equal(mkdir(path("later/sub"), 0700), 0);
	write_in_place(path("later/sub/policy"), "allow late.example\n");
	for (end = now_ms() + 1500; !allows("late.example") && now_ms() < end;)
		run(end - now_ms(), 1);
	assert_true(allows("late.example"));
	stop();
}

/* A symlinked policy is watched where the link points as well. */
static void
test_symlink(void **state)
{
	(void)state;
	assert_int_equal(mkdir(path("real"), 0700), 0);
	write_in_place(path("real/policy"), "allow r1.example\n");
	assert_int_equal(symlink("real/policy", path("link")), 0);
	start(path("link"));
	assert_true(allows("r1.example"));
	write_by_rename(path("real/policy"), "allow r2.example\n");
	assert_int_equal(run(1000, 1), 1);
	assert_true(allows("r2.example"));
	stop();
}

/*
 * The system layer: a policy.d made later, a file dropped in it, a
 * broken one (the old policy stays whole), their removal.
 */
static void
test_policy_d(void **state)
{
	long	end;

	(void)state;
	assert_int_equal(mkdir(path("sys"), 0755), 0);
	write_in_place(path("sys/policy"), "deny evil.example\n");
	write_in_place(path("user"), "allow evil.example\nallow u.example\n");
	start_layered(path("sys"), path("user"));
	assert_true(allows("u.example"));
	assert_false(allows("evil.example"));

	assert_int_equal(mkdir(path("sys/policy.d"), 0755), 0);
	write_by_rename(path("sys/policy.d/10-u.policy"), "deny u.example\n");
	for (end = now_ms() + 1500; allows("u.example") && now_ms() < end;)
		run(end - now_ms(), 1);
	assert_false(allows("u.example"));

	write_by_rename(path("sys/policy.d/20-bad.policy"),
	    "deny other.example\nalow x\n");
	assert_int_equal(run(1000, 1), 1);
	assert_int_equal(st.failed, 1);
	assert_non_null(strstr(st.err, "sys/policy.d/20-bad.policy:2: "
	    "unknown directive 'alow'"));
	assert_false(allows("u.example"));		/* old policy kept */
	assert_false(allows("evil.example"));

	assert_int_equal(unlink(path("sys/policy.d/20-bad.policy")), 0);
	assert_int_equal(unlink(path("sys/policy.d/10-u.policy")), 0);
	assert_int_equal(run(1000, 1), 1);
	assert_true(allows("u.example"));
	stop();
}

/* Make the test directory. */
static int
setup(void **state)
{
	(void)state;
	return (mkdtemp(dir) == NULL ? -1 : 0);
}

/* Remove the test directory. */
static int
teardown(void **state)
{
	char	cmd[300];

	(void)state;
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	return (system(cmd) == 0 ? 0 : -1);
}

int
main(void)
{
	const struct CMUnitTest	tests[] = {
		cmocka_unit_test(test_edits),
		cmocka_unit_test(test_include),
		cmocka_unit_test(test_debounce),
		cmocka_unit_test(test_missing_dir),
		cmocka_unit_test(test_symlink),
		cmocka_unit_test(test_policy_d),
	};

	return (cmocka_run_group_tests(tests, setup, teardown));
}
