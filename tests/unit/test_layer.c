/*
 * Unit tests for the system layer of the policy: it comes first, its
 * deny wins over the user's rules and over grants (and says it is the
 * system's), policy.d is read in byte order and only NAME.policy files,
 * a broken file adds nothing of the layer, include takes glob patterns,
 * and the fuzzer's policies read no file.
 */
#include "config.h"

#include <sys/stat.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "rules/policy.h"
#include "rules/rules.h"

static char	tmpdir[] = "/tmp/test_layer.XXXXXX";
static char	errbuf[1024];

/* A path in the test's temp dir (one of four static buffers). */
static const char *
path(const char *name)
{
	static char	buf[4][512];
	static int	n;
	char		*p = buf[n++ % 4];

	snprintf(p, 512, "%s/%s", tmpdir, name);
	return (p);
}

/* Write a file in the test's temp dir; return its path. */
static const char *
write_file(const char *name, const char *text)
{
	const char	*p = path(name);
	FILE		*f;

	assert_non_null(f = fopen(p, "w"));
	fputs(text, f);
	fclose(f);
	return (p);
}

/* Make a directory in the test's temp dir; its path goes in buf. */
static const char *
make_dir(const char *name, char *buf)
{
	const char	*p = path(name);

	assert_int_equal(mkdir(p, 0755), 0);
	if (buf == NULL)
		return (p);
	snprintf(buf, 512, "%s", p);
	return (buf);
}

/* The verdict for "HOST[:PORT]" (default port 443). */
static int
verdict(const struct rules *r, const char *target, struct rules_verdict *v)
{
	struct host	 h;
	uint16_t	 port;
	const char	*errstr;

	if (host_port_parse(target, &h, &port, 443, &errstr) != 0)
		fail_msg("bad target %s: %s", target, errstr);
	return (rules_match(r, &h, port, v));
}

/* The system layer of dir, then the user's text; both must load. */
static struct rules *
layered(const char *dir, const char *user)
{
	struct rules	*r = rules_create();

	assert_non_null(r);
	if (rules_load_system(r, dir, errbuf, sizeof errbuf) != 0)
		fail_msg("system refused: %s", errbuf);
	if (rules_load_text(r, "user", user, strlen(user), errbuf,
	    sizeof errbuf) != 0)
		fail_msg("user refused: %s", errbuf);
	return (r);
}

/*
 * A system deny beats a user allow, a user deny beats a system allow,
 * and each verdict names its layer.
 */
static void
test_precedence(void **state)
{
	struct rules_verdict	 v;
	struct rules		*r;
	char			 sys[512], want[600], text[600];

	make_dir("prec", sys);
	write_file("prec/policy", "# fleet\ndeny evil.example\n"
	    "allow both.example\n");
	r = layered(sys, "allow evil.example\nallow *.evil.example\n"
	    "deny both.example:80\nallow mine.example\n");
	assert_false(verdict(r, "evil.example", &v));
	assert_int_equal(v.layer, RULES_SYSTEM);
	assert_int_equal(v.line, 2);
	assert_string_equal(v.text, "deny evil.example");
	snprintf(want, sizeof want, "system %s/policy:2", sys);
	policy_rule_text(&v, text, sizeof text);
	assert_string_equal(text, want);
	assert_true(verdict(r, "a.evil.example", &v));
	assert_int_equal(v.layer, RULES_USER);
	assert_true(verdict(r, "both.example", &v));
	assert_int_equal(v.layer, RULES_SYSTEM);
	assert_false(verdict(r, "both.example:80", &v));
	assert_int_equal(v.layer, RULES_USER);
	policy_rule_text(&v, text, sizeof text);
	assert_string_equal(text, "user:3");
	assert_true(verdict(r, "mine.example", &v));
	assert_int_equal(v.layer, RULES_USER);
	rules_free(r);
}

/* No grant lifts a system deny, and the refusal says whose it is. */
static void
test_grants(void **state)
{
	struct policy_decision	 d;
	struct policy		*p = policy_create(NULL);
	struct policy_ask	 q = { .port = 443 };
	const struct rules	*r;
	struct host		 h;
	const char		*errstr;
	char			 sys[512], fix[POLICY_FIX_LEN], want[1200];
	char			 why[1536];

	make_dir("grant", sys);
	write_file("grant/policy", "deny evil.example\n");
	assert_non_null(p);
	policy_set_rules(p, layered(sys, "deny mine.example\n"));
	r = policy_rules(p);
	assert_int_equal(host_parse("evil.example", 12, &h, &errstr), 0);
	assert_int_equal(policy_grant(p, NULL, &h, 443, GRANT_SESSION, 0,
	    NULL, "me", NULL), 0);
	q.host = &h;
	assert_false(policy_decide(p, &q, &d));
	policy_decision_why(&d, &h, why, sizeof why);
	snprintf(want, sizeof want, "denied by rule system %s/policy:1; "
	    "a grant cannot override it", sys);
	assert_string_equal(why, want);
	assert_false(policy_grantable(r, &h, 443, fix, sizeof fix));
	snprintf(want, sizeof want, "denied by the rule 'deny evil.example' "
	    "(system %s/policy:1), which no approval nor rule of yours can "
	    "override: it is the system policy, and only an administrator "
	    "can change that file", sys);
	assert_string_equal(fix, want);
	assert_int_equal(host_parse("mine.example", 12, &h, &errstr), 0);
	assert_false(policy_grantable(r, &h, 0, fix, sizeof fix));
	assert_non_null(strstr(fix, "(user:1), which no approval can "
	    "override: to allow it, that rule must be removed"));
	assert_int_equal(host_parse("other.example", 13, &h, &errstr), 0);
	assert_true(policy_grantable(r, &h, 443, fix, sizeof fix));
	policy_free(p);
}

/*
 * policy, then policy.d/NAME.policy in byte order; dotfiles, backups,
 * other names and directories are passed by.
 */
static void
test_policy_d(void **state)
{
	struct rules_verdict	 v;
	struct rules		*r;
	const char		*files[8];
	char			 sys[512], want[600];

	make_dir("order", sys);
	make_dir("order/policy.d", NULL);
	make_dir("order/policy.d/sub.policy", NULL);
	write_file("order/policy", "allow top.example\n");
	write_file("order/policy.d/20-b.policy", "deny x.example\n");
	write_file("order/policy.d/10-a.policy", "deny x.example:443\n");
	write_file("order/policy.d/Z.policy", "allow z.example\n");
	write_file("order/policy.d/.hidden.policy", "alow\n");
	write_file("order/policy.d/10-a.policy~", "alow\n");
	write_file("order/policy.d/10-a.policy.dpkg-old", "alow\n");
	write_file("order/policy.d/notes.txt", "alow\n");
	r = layered(sys, "");
	assert_int_equal(rules_files(r, files, 8), 4);
	snprintf(want, sizeof want, "%s/policy", sys);
	assert_string_equal(files[0], want);
	snprintf(want, sizeof want, "%s/policy.d/10-a.policy", sys);
	assert_string_equal(files[1], want);
	snprintf(want, sizeof want, "%s/policy.d/20-b.policy", sys);
	assert_string_equal(files[2], want);
	snprintf(want, sizeof want, "%s/policy.d/Z.policy", sys);
	assert_string_equal(files[3], want);
	assert_false(verdict(r, "x.example", &v));
	assert_non_null(strstr(v.file, "/10-a.policy"));
	assert_true(verdict(r, "top.example", &v));
	assert_true(verdict(r, "z.example", &v));
	assert_int_equal(rules_dirs(r, files, 8), 2);
	assert_string_equal(files[0], sys);
	snprintf(want, sizeof want, "%s/policy.d", sys);
	assert_string_equal(files[1], want);
	rules_free(r);
}

/* A missing directory, file or policy.d is an empty layer. */
static void
test_missing(void **state)
{
	struct rules	*r;
	const char	*files[4];

	r = layered(path("nothere"), "allow a.example\n");
	assert_int_equal(rules_files(r, files, 4), 0);
	assert_int_equal(rules_dirs(r, files, 4), 2);
	rules_free(r);
	r = layered(make_dir("empty", NULL), "");
	assert_int_equal(rules_files(r, files, 4), 0);
	rules_free(r);
}

/*
 * A broken file anywhere refuses the whole layer with FILE:LINE, and
 * adds nothing of it.
 */
static void
test_broken(void **state)
{
	struct rules_verdict	 v;
	struct rules		*r = rules_create();
	const char		*files[4];
	char			 sys[512], want[600];

	make_dir("broken", sys);
	make_dir("broken/policy.d", NULL);
	write_file("broken/policy", "deny evil.example\n");
	write_file("broken/policy.d/10-ok.policy", "allow ok.example\n");
	write_file("broken/policy.d/30-bad.policy", "allow fine.example\n"
	    "\nalow typo.example\n");
	assert_int_equal(rules_load_system(r, sys, errbuf, sizeof errbuf), -1);
	snprintf(want, sizeof want, "%s/policy.d/30-bad.policy:3: unknown "
	    "directive 'alow' (did you mean 'allow'?)", sys);
	assert_string_equal(errbuf, want);
	assert_int_equal(rules_files(r, files, 4), 0);
	assert_int_equal(rules_dirs(r, files, 4), 0);
	assert_false(verdict(r, "ok.example", &v));
	assert_null(v.file);
	rules_free(r);
}

/* A system file that cannot be read is an error, not an empty layer. */
static void
test_unreadable(void **state)
{
	struct rules	*r = rules_create();
	char		 sys[512];

	make_dir("unread", sys);
	make_dir("unread/policy", NULL);
	assert_int_equal(rules_load_system(r, sys, errbuf, sizeof errbuf), -1);
	assert_non_null(strstr(errbuf, "unread/policy: not a regular file"));
	rules_free(r);
}

/*
 * include PATTERN: the regular files it matches in byte order, relative
 * to the including file; no match is no error, a missing plain file is;
 * a system file's includes are of the system layer.
 */
static void
test_glob(void **state)
{
	struct rules_verdict	 v;
	struct rules		*r = rules_create();
	const char		*top, *files[8];
	char			 want[600];

	make_dir("glob", NULL);
	make_dir("glob/conf.d", NULL);
	make_dir("glob/conf.d/dir.policy", NULL);
	write_file("glob/conf.d/b.policy", "deny x.example\n");
	write_file("glob/conf.d/a.policy", "allow x.example\ndeny x.example\n");
	write_file("glob/conf.d/.a.policy", "alow\n");
	top = write_file("glob/top", "include conf.d/*.policy\n"
	    "include none.d/*.policy\ninclude conf.d/[c-z]*.policy\n");
	assert_int_equal(rules_load_file(r, top, errbuf, sizeof errbuf), 0);
	assert_int_equal(rules_files(r, files, 8), 3);
	assert_non_null(strstr(files[1], "/glob/conf.d/a.policy"));
	assert_non_null(strstr(files[2], "/glob/conf.d/b.policy"));
	assert_false(verdict(r, "x.example", &v));
	assert_non_null(strstr(v.file, "/a.policy"));
	assert_int_equal(v.line, 2);
	assert_int_equal(v.layer, RULES_USER);
	assert_int_equal(rules_dirs(r, files, 8), 3);
	snprintf(want, sizeof want, "%s/glob/conf.d", tmpdir);
	assert_string_equal(files[0], want);
	rules_free(r);

	r = rules_create();
	top = write_file("glob/plain", "\ninclude nothere.policy\n");
	assert_int_equal(rules_load_file(r, top, errbuf, sizeof errbuf), -1);
	snprintf(want, sizeof want, "%s:2: cannot read", top);
	assert_non_null(strstr(errbuf, want));
	rules_free(r);

	make_dir("glob/sys", NULL);
	write_file("glob/sys/policy", "include ../conf.d/b*.policy\n");
	r = layered(path("glob/sys"), "allow x.example\n");
	assert_false(verdict(r, "x.example", &v));
	assert_int_equal(v.layer, RULES_SYSTEM);
	rules_free(r);
}

/* With includes off, their arguments are checked and no file is read. */
static void
test_no_includes(void **state)
{
	struct rules	*r = rules_create();
	const char	*text = "include /*/*\ninclude /nothere\n"
	    "include preset:python\nallow a.example\n", *files[2];

	rules_no_includes(r);
	assert_int_equal(rules_load_text(r, "fuzz", text, strlen(text), errbuf,
	    sizeof errbuf), 0);
	assert_int_equal(rules_files(r, files, 2), 0);
	text = "include preset:Not/a/name\n";
	assert_int_equal(rules_load_text(r, "fuzz", text, strlen(text), errbuf,
	    sizeof errbuf), -1);
	assert_non_null(strstr(errbuf, "fuzz:1: bad preset name"));
	rules_free(r);
}

/* Count the rules rules_dead() finds, and those dead on every port. */
static int
dead_cb(const struct rules_dead *d, void *arg)
{
	int	*all = arg;

	*all += d->all;
	return (0);
}

/*
 * What `pinhole allow` asks of the policy after an edit: a system deny
 * leaves the user's rule for the same host nothing (refused), or some
 * of its ports (said); a wildcard or another port is not dead.
 */
static void
test_edit_denied(void **state)
{
	struct rules	*r;
	char		 sys[512];
	int		 all = 0;

	make_dir("edit", sys);
	write_file("edit/policy", "deny evil.example\ndeny 192.0.2.1:22\n"
	    "deny *.bad.example:443\n");
	r = layered(sys, "allow evil.example:8080\n"
	    "allow 192.0.2.1:20-30 until 2099-01-01T00:00:00Z\n"
	    "allow a.bad.example\nallow a.bad.example:80\n"
	    "allow good.example\nallow *.evil.example\n"
	    "allow 192.0.2.0/24:22\n");
	assert_int_equal(rules_dead(r, dead_cb, &all), 3);
	assert_int_equal(all, 1);
	rules_free(r);
}

/* Load one more line, as the command line adds --upstream. */
static void
more(struct rules *r, const char *origin, const char *line)
{
	if (rules_load_text(r, origin, line, strlen(line), errbuf,
	    sizeof errbuf) != 0)
		fail_msg("%s refused: %s", origin, errbuf);
}

/*
 * The upstream: a later layer's replaces an earlier one's, credentials
 * stay only with the upstream they were given for, `upstream none`
 * removes it, and no-upstream lists add up across layers.
 */
static void
test_upstream(void **state)
{
	const struct rules_upstream	*u;
	struct rules			*r;
	struct host			 h;
	const char			*errstr, *list[4];
	char				 sys[512], want[600];

	make_dir("up", sys);
	write_file("up/policy", "upstream http://proxy.corp.example:8080\n"
	    "upstream-auth corp.auth\nno-upstream *.corp.example\n");
	r = layered(sys, "no-upstream 10.0.0.0/8,git.example\n");
	assert_non_null(u = rules_upstream(r));
	assert_string_equal(u->url, "http://proxy.corp.example:8080");
	assert_string_equal(u->host, "proxy.corp.example");
	assert_int_equal(u->port, 8080);
	snprintf(want, sizeof want, "%s/corp.auth", sys);
	assert_string_equal(u->auth, want);
	snprintf(want, sizeof want, "%s/policy:1", sys);
	assert_string_equal(u->origin, want);
	assert_int_equal(rules_no_upstream_list(r, list, 4), 3);
	assert_string_equal(list[0], "*.corp.example");
	assert_string_equal(list[2], "git.example");
	assert_int_equal(host_parse("a.corp.example", 14, &h, &errstr), 0);
	assert_true(rules_no_upstream(r, &h));
	assert_int_equal(host_parse("10.1.2.3", 8, &h, &errstr), 0);
	assert_true(rules_no_upstream(r, &h));
	assert_int_equal(host_parse("corp.example", 12, &h, &errstr), 0);
	assert_false(rules_no_upstream(r, &h));

	/* The same upstream again keeps its credentials ... */
	more(r, "--upstream", "upstream http://PROXY.corp.example.:8080/");
	assert_non_null(u = rules_upstream(r));
	assert_non_null(u->auth);
	assert_string_equal(u->origin, "--upstream");
	/* ... another drops them: they were not given for it ... */
	more(r, "--upstream", "upstream http://[::1]:3128");
	assert_non_null(u = rules_upstream(r));
	assert_string_equal(u->host, "::1");
	assert_null(u->auth);
	/* ... unless a later load gives them. */
	more(r, "--upstream-auth", "upstream-auth /etc/other.auth");
	assert_string_equal(rules_upstream(r)->auth, "/etc/other.auth");
	assert_string_equal(rules_upstream(r)->auth_origin, "--upstream-auth");
	more(r, "--upstream", "upstream none");
	assert_null(rules_upstream(r));
	rules_free(r);

	/* Twice in one load, the system's files together, is refused. */
	make_dir("up/policy.d", NULL);
	write_file("up/policy.d/20-more.policy", "upstream http://b.example:1\n");
	r = rules_create();
	assert_int_equal(rules_load_system(r, sys, errbuf, sizeof errbuf), -1);
	assert_non_null(strstr(errbuf, "upstream is given twice (first at "));
	assert_null(rules_upstream(r));
	rules_free(r);
}

/* Make the temp dir. */
static int
setup(void **state)
{
	return (mkdtemp(tmpdir) == NULL ? -1 : 0);
}

/* Remove the temp dir. */
static int
teardown(void **state)
{
	char	cmd[600];

	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	return (system(cmd) == 0 ? 0 : -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_precedence),
		cmocka_unit_test(test_grants),
		cmocka_unit_test(test_policy_d),
		cmocka_unit_test(test_missing),
		cmocka_unit_test(test_broken),
		cmocka_unit_test(test_unreadable),
		cmocka_unit_test(test_glob),
		cmocka_unit_test(test_no_includes),
		cmocka_unit_test(test_edit_denied),
		cmocka_unit_test(test_upstream),
	};

	return (cmocka_run_group_tests(tests, setup, teardown));
}
