/*
 * Unit tests for lib/log's lines: the program's name on a terminal or
 * a file, a syslog priority and no name when stderr is the journal's
 * stream that $JOURNAL_STREAM names.
 */
#include "config.h"

#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib/log.h"

/* A pipe in place of stderr, and the stderr it stands in for. */
struct capture {
	int	p[2];
	int	saved;
};

/*
 * Put a pipe in place of stderr.  $JOURNAL_STREAM is fixed, or when that
 * is NULL the pipe's "DEVICE:INODE" followed by suffix.
 */
static void
capture_start(struct capture *c, const char *fixed, const char *suffix)
{
	struct stat	st;
	char		env[64];

	assert_int_equal(pipe(c->p), 0);
	assert_true((c->saved = dup(STDERR_FILENO)) != -1);
	assert_int_equal(dup2(c->p[1], STDERR_FILENO), STDERR_FILENO);
	assert_int_equal(fstat(c->p[1], &st), 0);
	snprintf(env, sizeof env, "%llu:%llu%s", (unsigned long long)st.st_dev,
	    (unsigned long long)st.st_ino, suffix);
	assert_int_equal(setenv("JOURNAL_STREAM", fixed != NULL ? fixed : env,
	    1), 0);
	log_init("pinhole", 2);
}

/* Put stderr back; return what was written meanwhile. */
static const char *
capture_stop(struct capture *c)
{
	static char	buf[4096];
	ssize_t		n;

	assert_int_equal(dup2(c->saved, STDERR_FILENO), STDERR_FILENO);
	close(c->saved);
	close(c->p[1]);
	n = read(c->p[0], buf, sizeof buf - 1);
	assert_true(n >= 0);
	buf[n] = '\0';
	close(c->p[0]);
	unsetenv("JOURNAL_STREAM");
	log_init("pinhole", 0);
	return (buf);
}

/* On the journal: each line's priority, no name. */
static void
test_log_journal(void **state)
{
	struct capture	c;

	capture_start(&c, NULL, "");
	log_warnx("warned %d", 1);
	errno = ENOENT;
	log_warn("%s", "/nowhere");
	log_info("informed");
	log_debug("debugged");
	assert_string_equal(capture_stop(&c),
	    "<4>warned 1\n"
	    "<4>/nowhere: No such file or directory\n"
	    "<6>informed\n"
	    "<7>debugged\n");
}

/* fatalx() is an error, and exits. */
static void
test_log_journal_fatal(void **state)
{
	struct capture	c;
	pid_t		pid;
	int		status;

	capture_start(&c, NULL, "");
	fflush(NULL);
	if ((pid = fork()) == 0)
		fatalx("gave up");
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 1);
	assert_string_equal(capture_stop(&c), "<3>gave up\n");
}

/* Another stream, or a malformed variable: the name, as on a terminal. */
static void
test_log_not_journal(void **state)
{
	static const char	*env[] = { "1:2", "", "1:", ":1", "x:y" };
	struct capture		 c;
	size_t			 i;

	for (i = 0; i < sizeof env / sizeof env[0]; i++) {
		capture_start(&c, env[i], "");
		log_warnx("plain");
		assert_string_equal(capture_stop(&c), "pinhole: plain\n");
	}
}

/* The stream's numbers with text after them do not name it. */
static void
test_log_journal_trailing(void **state)
{
	struct capture	c;

	capture_start(&c, NULL, "x");
	log_warnx("plain");
	assert_string_equal(capture_stop(&c), "pinhole: plain\n");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_log_journal),
		cmocka_unit_test(test_log_journal_fatal),
		cmocka_unit_test(test_log_not_journal),
		cmocka_unit_test(test_log_journal_trailing),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
