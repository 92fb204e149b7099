/*
 * The audit log writer: fields and their order, escaping, truncation,
 * failures (/dev/full, a short write) and the loss lines after them,
 * reopening after rotation.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <ctype.h>
#include <fcntl.h>
#include <iconv.h>
#include <regex.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <event2/event.h>

#include "lib/metrics.h"
#include "proxy/audit/audit.h"
#include "proxy/audit/budget.h"
#include "proxy/audit/verify.h"

struct fixture {
	char	dir[64];
	char	path[128];
	char	errpath[128];
	int	saved_stderr;
};

/* Make a private directory for the files of one test. */
static int
setup(void **state)
{
	struct fixture	*f;

	f = calloc(1, sizeof *f);
	assert_non_null(f);
	snprintf(f->dir, sizeof f->dir, "/tmp/pinhole-audit.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->path, sizeof f->path, "%s/audit.log", f->dir);
	snprintf(f->errpath, sizeof f->errpath, "%s/stderr", f->dir);
	f->saved_stderr = -1;
	*state = f;
	return (0);
}

/* Remove the files of one test. */
static int
teardown(void **state)
{
	struct fixture	*f = *state;
	char		 cmd[160];

	snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->dir);
	assert_int_equal(system(cmd), 0);
	free(f);
	return (0);
}

/* Read a whole file into a string. */
static char *
slurp(const char *path)
{
	FILE	*fp;
	char	*buf;
	long	 len;

	fp = fopen(path, "r");
	assert_non_null(fp);
	fseek(fp, 0, SEEK_END);
	len = ftell(fp);
	rewind(fp);
	buf = calloc(1, len + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, len, fp), (size_t)len);
	fclose(fp);
	return (buf);
}

/*
 * Read a log file, checking each whole line ends with the chain fields
 * (,"seq":N,"chain":"HEX"}) and taking them out, so the rest can be
 * compared as it was written.  A torn line (no chain) is kept as it is.
 */
static char *
slurp_log(const char *path)
{
	regex_t		re;
	regmatch_t	m[1];
	char		*buf = slurp(path), *line, *end;

	assert_int_equal(regcomp(&re, "(,\"prev_chain\":\"[0-9a-f]{64}\")?"
	    ",\"seq\":[1-9][0-9]*,\"chain\":\"[0-9a-f]{64}\"}$",
	    REG_EXTENDED), 0);
	for (line = buf; (end = strchr(line, '\n')) != NULL; line = end + 1) {
		*end = '\0';
		if (regexec(&re, line, 1, m, 0) == 0) {
			memmove(line + m[0].rm_so, "}\n", 2);
			memmove(line + m[0].rm_so + 1, end,
			    strlen(end + 1) + 2);
			end = line + m[0].rm_so + 1;
		}
		*end = '\n';
	}
	regfree(&re);
	return (buf);
}

/* Count the lines of a string that contain a text. */
static int
count_lines(const char *s, const char *text)
{
	const char	*end;
	int		 n = 0;
	size_t		 len = strlen(text);

	for (; *s != '\0'; s = end + 1) {
		if ((end = strchr(s, '\n')) == NULL)
			end = s + strlen(s);
		if (memmem(s, end - s, text, len) != NULL)
			n++;
		if (*end == '\0')
			break;
	}
	return (n);
}

struct json {
	const char	*p;
};

static int	json_value(struct json *, int);

/* Skip white space. */
static void
json_ws(struct json *j)
{
	while (*j->p == ' ' || *j->p == '\t')
		j->p++;
}

/* Take one string: no raw controls, known escapes only. */
static int
json_string(struct json *j)
{
	int	i;

	if (*j->p++ != '"')
		return (-1);
	for (; *j->p != '"'; j->p++) {
		if ((unsigned char)*j->p < 0x20)
			return (-1);
		if (*j->p != '\\')
			continue;
		j->p++;
		if (*j->p == 'u') {
			for (i = 1; i <= 4; i++)
				if (!isxdigit((unsigned char)j->p[i]))
					return (-1);
			j->p += 4;
		} else if (strchr("\"\\/bfnrt", *j->p) == NULL ||
		    *j->p == '\0')
			return (-1);
	}
	j->p++;
	return (0);
}

/* Take one object or array. */
static int
json_members(struct json *j, int obj, int depth)
{
	char	close = obj ? '}' : ']';

	j->p++;
	json_ws(j);
	if (*j->p == close) {
		j->p++;
		return (0);
	}
	for (;;) {
		if (obj) {
			if (json_string(j) == -1)
				return (-1);
			json_ws(j);
			if (*j->p++ != ':')
				return (-1);
		}
		if (json_value(j, depth + 1) == -1)
			return (-1);
		json_ws(j);
		if (*j->p == close) {
			j->p++;
			return (0);
		}
		if (*j->p++ != ',')
			return (-1);
		json_ws(j);
	}
}

/* Take one value. */
static int
json_value(struct json *j, int depth)
{
	const char	*words[] = { "true", "false", "null" };
	size_t		 i;

	json_ws(j);
	if (depth > 8)
		return (-1);
	if (*j->p == '{' || *j->p == '[')
		return (json_members(j, *j->p == '{', depth));
	if (*j->p == '"')
		return (json_string(j));
	for (i = 0; i < 3; i++) {
		if (strncmp(j->p, words[i], strlen(words[i])) == 0) {
			j->p += strlen(words[i]);
			return (0);
		}
	}
	if (*j->p == '-')
		j->p++;
	if (!isdigit((unsigned char)*j->p) || (j->p[0] == '0' &&
	    isdigit((unsigned char)j->p[1])))
		return (-1);
	while (isdigit((unsigned char)*j->p))
		j->p++;
	return (0);
}

/* Tell whether a line (up to its newline) is one JSON object in UTF-8. */
static int
json_line_ok(char *line, size_t len)
{
	struct json	 j;
	iconv_t		 cd;
	char		 buf[16384], *in = line, *out = buf;
	size_t		 inlen = len, outlen = sizeof buf;
	int		 ok;

	cd = iconv_open("UTF-8", "UTF-8");
	assert_true(cd != (iconv_t)-1);
	ok = iconv(cd, &in, &inlen, &out, &outlen) != (size_t)-1;
	iconv_close(cd);
	j.p = line;
	if (!ok || *j.p != '{' || json_value(&j, 0) == -1)
		return (0);
	return (*j.p == '\n');
}

/* Check every line of a file is a JSON object, but skip_torn of them. */
static void
check_json(const char *path, int skip_torn)
{
	char	*buf = slurp(path), *line, *end;
	int	 bad = 0, n = 0;

	for (line = buf; *line != '\0'; line = end + 1) {
		end = strchr(line, '\n');
		assert_non_null(end);
		if (!json_line_ok(line, end - line + 1))
			bad++;
		n++;
	}
	assert_true(n > 0);
	assert_int_equal(bad, skip_torn);
	free(buf);
}

/* Check a file with an independent parser too (python3). */
static void
check_json_python(const char *path)
{
	char	cmd[512];

	snprintf(cmd, sizeof cmd, "python3 -c 'import json,sys\n"
	    "for l in open(sys.argv[1],encoding=\"utf-8\"):\n"
	    " assert isinstance(json.loads(l),dict)' '%s'", path);
	assert_int_equal(system(cmd), 0);
}

/* Check no byte below 0x20 or DEL appears except line ends. */
static void
check_no_controls(const char *s)
{
	for (; *s != '\0'; s++)
		assert_true(*s == '\n' || ((unsigned char)*s >= 0x20 &&
		    *s != 0x7f));
}

/* Send stderr to a file. */
static void
capture_stderr(struct fixture *f)
{
	int	fd;

	fd = open(f->errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	f->saved_stderr = dup(STDERR_FILENO);
	dup2(fd, STDERR_FILENO);
	close(fd);
}

/* Give stderr back. */
static void
restore_stderr(struct fixture *f)
{
	dup2(f->saved_stderr, STDERR_FILENO);
	close(f->saved_stderr);
	f->saved_stderr = -1;
}

/* Replace the timestamp of a line by "TS", checking its form. */
static void
strip_ts(char *line)
{
	regex_t		re;
	regmatch_t	m[2];

	assert_int_equal(regcomp(&re, "\"ts\":\"(20[0-9]{2}-[01][0-9]-[0-3][0-9]"
	    "T[0-2][0-9]:[0-5][0-9]:[0-6][0-9]\\.[0-9]{3}Z)\"", REG_EXTENDED), 0);
	assert_int_equal(regexec(&re, line, 2, m, 0), 0);
	memmove(line + m[1].rm_so + 2, line + m[1].rm_eo,
	    strlen(line + m[1].rm_eo) + 1);
	memcpy(line + m[1].rm_so, "TS", 2);
	regfree(&re);
}

/* The line checker itself tells good lines from bad ones. */
static void
test_checker(void **state)
{
	const char	*good[] = {
		"{\"a\":1,\"b\":\"x\\u0001\\\"\",\"c\":true,\"d\":[]}\n",
		"{\"e\":\"\xc3\xa9\xf0\x9f\x98\x80\"}\n",
	};
	const char	*bad[] = {
		"{\"a\":\"\x01\"}\n", "{\"a\":\"\xff\"}\n",
		"{\"a\":\"\xed\xa0\x80\"}\n", "{\"a\":1\n",
		"{\"a\":1}x\n", "{\"a\":\"\\x\"}\n", "{\"a\":01}\n",
		"{\"schema\":1,\"ev\n",
	};
	char		 buf[128];
	size_t		 i;

	for (i = 0; i < sizeof good / sizeof good[0]; i++) {
		snprintf(buf, sizeof buf, "%s", good[i]);
		assert_true(json_line_ok(buf, strlen(buf)));
	}
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		snprintf(buf, sizeof buf, "%s", bad[i]);
		assert_false(json_line_ok(buf, strlen(buf)));
	}
}

/* Every field, in the documented order. */
static void
test_fields(void **state)
{
	struct fixture		*f = *state;
	struct audit		*a;
	struct audit_event	 ev;
	char			 err[256], *out;
	struct stat		 st;

	a = audit_open(f->path, err, sizeof err);
	assert_non_null(a);
	audit_event_init(&ev);
	ev.event = "close";
	ev.verdict = "allow";
	ev.reason = "rule";
	ev.session = "s1";
	ev.client = "10.0.0.2:4242";
	ev.host = "pypi.org";
	ev.port = 443;
	ev.addr = "151.101.0.223";
	ev.via = "connect";
	ev.rule = "policy:3";
	ev.status = 200;
	ev.bytes_up = 1234;
	ev.bytes_down = 5000000000LL;
	ev.ms = 0;
	ev.qname = "pypi.org";
	ev.qtype = "A";
	ev.answer = "198.18.0.1";
	ev.detail = "ok";
	audit_write(a, &ev);
	audit_event_init(&ev);
	ev.event = "start";
	audit_write(a, &ev);
	audit_close(a);
	assert_int_equal(stat(f->path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	out = slurp_log(f->path);
	strip_ts(out);
	strip_ts(strchr(out, '\n') + 1);
	assert_string_equal(out,
	    "{\"schema\":2,\"ts\":\"TS\",\"event\":\"close\",\"verdict\":\"allow\","
	    "\"reason\":\"rule\",\"session\":\"s1\",\"client\":\"10.0.0.2:4242\","
	    "\"host\":\"pypi.org\",\"port\":443,\"addr\":\"151.101.0.223\","
	    "\"via\":\"connect\",\"rule\":\"policy:3\",\"status\":200,"
	    "\"bytes_up\":1234,\"bytes_down\":5000000000,\"ms\":0,"
	    "\"qname\":\"pypi.org\",\"qtype\":\"A\",\"answer\":\"198.18.0.1\","
	    "\"detail\":\"ok\"}\n"
	    "{\"schema\":2,\"ts\":\"TS\",\"event\":\"start\"}\n");
	free(out);
	check_json(f->path, 0);
}

/* Quotes, backslashes, controls, invalid UTF-8 and friends. */
static void
test_escape(void **state)
{
	struct fixture		*f = *state;
	struct audit		*a;
	struct audit_event	 ev;
	char			 err[256], *out, *p;

	a = audit_open(f->path, err, sizeof err);
	assert_non_null(a);
	audit_event_init(&ev);
	ev.event = "request";
	ev.host = "a\"b\\c";
	ev.detail = "nl\n tab\t esc\033[31m del\177 ff\377 cut\xe2\x82"
	    " over\xc0\xaf sur\xed\xa0\x80 ok\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"
	    " c1\xc2\x9b ls\xe2\x80\xa8 rlo\xe2\x80\xae big\xf4\x90\x80\x80";
	audit_write(a, &ev);
	audit_close(a);
	out = slurp_log(f->path);
	check_no_controls(out);
	assert_non_null(strstr(out, "\"host\":\"a\\\"b\\\\c\""));
	p = strstr(out, "\"detail\":");
	assert_non_null(p);
	assert_string_equal(p, "\"detail\":\"nl\\u000a tab\\u0009 "
	    "esc\\u001b[31m del\\u007f ff\\ufffd cut\\ufffd\\ufffd "
	    "over\\ufffd\\ufffd sur\\ufffd\\ufffd\\ufffd "
	    "ok\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80 c1\\u009b ls\\u2028 "
	    "rlo\\u202e big\\ufffd\\ufffd\\ufffd\\ufffd\"}\n");
	free(out);
	check_json(f->path, 0);
	check_json_python(f->path);
}

/* Long values are cut at a character boundary and flagged. */
static void
test_truncate(void **state)
{
	struct fixture		*f = *state;
	struct audit		*a;
	struct audit_event	 ev;
	char			 err[256], *out, *big, *p, *q;
	size_t			 i;

	big = malloc(5001);
	assert_non_null(big);
	for (i = 0; i < 5000; i += 2)
		memcpy(big + i, "\xc3\xa9", 2);
	big[5000] = '\0';
	a = audit_open(f->path, err, sizeof err);
	assert_non_null(a);
	audit_event_init(&ev);
	ev.event = "request";
	ev.host = big + 1;	/* starts mid-character: one \ufffd */
	ev.detail = "short";
	audit_write(a, &ev);
	audit_close(a);
	free(big);
	out = slurp_log(f->path);
	p = strstr(out, "\"host\":\"") + 8;
	q = strstr(p, "...\"");
	assert_non_null(q);
	assert_true(q - p <= 1024 + 6);
	assert_int_equal(strncmp(q - 2, "\xc3\xa9", 2), 0);
	assert_non_null(strstr(out, ",\"detail\":\"short\",\"truncated\":true}\n"));
	free(out);
	check_json(f->path, 0);
}

/* A full disk is reported once, and writing goes on. */
static void
test_dev_full(void **state)
{
	struct fixture		*f = *state;
	struct audit		*a;
	struct audit_event	 ev;
	char			 err[256], *out;
	int			 i;

	a = audit_open("/dev/full", err, sizeof err);
	assert_non_null(a);
	audit_event_init(&ev);
	ev.event = "connect";
	capture_stderr(f);
	for (i = 0; i < 5; i++)
		audit_write(a, &ev);
	restore_stderr(f);
	audit_close(a);
	out = slurp(f->errpath);
	assert_int_equal(count_lines(out,
	    "audit log: /dev/full: No space left on device"), 1);
	assert_int_equal(count_lines(out, "audit log"), 1);
	free(out);
}

/*
 * In a child limited in file size: a line that fits, one cut short, one
 * refused, then (limit lifted) one that fits.  Returns the child's status.
 */
static int
short_write_child(struct fixture *f, const char *path, int use_stdout)
{
	struct audit		*a;
	struct audit_event	 ev;
	struct rlimit		 rl, small;
	char			 err[256], pad[300];
	int			 status, fd;
	pid_t			 pid;

	if ((pid = fork()) != 0) {
		assert_true(pid > 0);
		assert_int_equal(waitpid(pid, &status, 0), pid);
		return (status);
	}
	capture_stderr(f);
	signal(SIGXFSZ, SIG_IGN);
	if (use_stdout) {
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		dup2(fd, STDOUT_FILENO);
		close(fd);
		path = "-";
	}
	if ((a = audit_open(path, err, sizeof err)) == NULL)
		_exit(2);
	audit_event_init(&ev);
	ev.event = "first";
	audit_write(a, &ev);
	getrlimit(RLIMIT_FSIZE, &rl);
	small = rl;
	small.rlim_cur = 300;
	setrlimit(RLIMIT_FSIZE, &small);
	memset(pad, 'x', sizeof pad - 1);
	pad[sizeof pad - 1] = '\0';
	ev.event = "second";
	ev.detail = pad;
	audit_write(a, &ev);
	ev.event = "third";
	audit_write(a, &ev);
	setrlimit(RLIMIT_FSIZE, &rl);
	ev.event = "fourth";
	ev.detail = NULL;
	audit_write(a, &ev);
	audit_close(a);
	_exit(0);
}

/* A short write to an appended file is cut back: only whole lines. */
static void
test_short_write(void **state)
{
	struct fixture	*f = *state;
	char		*out, *err;

	assert_int_equal(short_write_child(f, f->path, 0), 0);
	out = slurp_log(f->path);
	assert_int_equal(count_lines(out, "\"schema\""), 3);
	assert_non_null(strstr(out, "\"event\":\"first\"}\n{"));
	assert_non_null(strstr(out, "\"event\":\"loss\",\"reason\":"
	    "\"File too large (after a short write, cut back)\","));
	assert_non_null(strstr(out, ",\"lost\":2,"));
	assert_non_null(strstr(out, "\"event\":\"fourth\"}\n"));
	assert_null(strstr(out, "second"));
	check_json(f->path, 0);
	free(out);
	err = slurp(f->errpath);
	assert_int_equal(count_lines(err, "short write"), 1);
	assert_int_equal(count_lines(err, "writing again; 2 line(s)"), 1);
	assert_int_equal(count_lines(err, "audit log"), 2);
	free(err);
}

/* Where the fragment cannot be cut, it is left alone on its own line. */
static void
test_short_write_torn(void **state)
{
	struct fixture	*f = *state;
	char		*out;

	assert_int_equal(short_write_child(f, f->path, 1), 0);
	out = slurp_log(f->path);
	assert_int_equal(count_lines(out, "\"schema\""), 4);
	assert_int_equal(count_lines(out, "\"event\":\"loss\""), 1);
	assert_int_equal(count_lines(out, "\"event\":\"second\""), 1);
	assert_non_null(strstr(out, "\"event\":\"first\"}\n{"));
	assert_non_null(strstr(out, "\n{\"schema\":2,"));
	assert_non_null(strstr(out, "\"event\":\"fourth\"}\n"));
	check_json(f->path, 1);
	free(out);
}

/* Run one pass of an event loop (NULL: none), as the gateway's would. */
static void
loop_pass(struct event_base *base)
{
	if (base != NULL)
		event_base_loop(base, EVLOOP_NONBLOCK);
}

/*
 * In a child limited in file size: one line, then three that do not fit
 * (audit_ready() says no, unless fail_open), then (limit lifted) one more.
 * The child's exit status says what audit_ready() said: bit 0 before,
 * bit 1 while failing, bit 2 after.
 */
static int
loss_child(struct fixture *f, int fail_open, int lift, int batch)
{
	struct event_base	*base = NULL;
	struct audit		*a;
	struct audit_event	 ev;
	struct metrics		 m;
	struct rlimit		 rl, small;
	struct stat		 st;
	char			 err[256], buf[4096];
	int			 status, rv = 0, i, p[2], fd;
	ssize_t			 n;
	pid_t			 pid;

	assert_int_equal(pipe(p), 0);
	if ((pid = fork()) != 0) {
		assert_true(pid > 0);
		close(p[1]);
		fd = open(f->errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		assert_true(fd >= 0);
		while ((n = read(p[0], buf, sizeof buf)) > 0)
			assert_int_equal(write(fd, buf, n), n);
		close(fd);
		close(p[0]);
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFEXITED(status));
		return (WEXITSTATUS(status));
	}
	/* A pipe: the file size limit would cut a file short. */
	dup2(p[1], STDERR_FILENO);
	close(p[0]);
	close(p[1]);
	signal(SIGXFSZ, SIG_IGN);
	if ((a = audit_open(f->path, err, sizeof err)) == NULL)
		_exit(64);
	metrics_init(&m, 0);
	audit_set_metrics(a, &m);
	if (batch && ((base = event_base_new()) == NULL ||
	    audit_set_base(a, base) == -1))
		_exit(66);
	audit_set_fail_open(a, fail_open);
	audit_event_init(&ev);
	ev.event = "start";
	audit_write(a, &ev);
	loop_pass(base);
	rv |= audit_ready(a);
	if (stat(f->path, &st) == -1)
		_exit(65);
	getrlimit(RLIMIT_FSIZE, &rl);
	small = rl;
	small.rlim_cur = st.st_size;	/* not one byte more: EFBIG */
	setrlimit(RLIMIT_FSIZE, &small);
	ev.event = "connect";
	ev.host = "lost.example";
	for (i = 0; i < 3; i++)
		audit_write(a, &ev);
	loop_pass(base);
	rv |= audit_ready(a) << 1;
	if (lift) {
		setrlimit(RLIMIT_FSIZE, &rl);
		rv |= audit_ready(a) << 2;
		ev.event = "stop";
		ev.host = NULL;
		audit_write(a, &ev);
	}
	fprintf(stderr, "metrics: audit_lost %llu audit_errors %llu\n",
	    (unsigned long long)m.audit_lost,
	    (unsigned long long)m.audit_errors);
	audit_close(a);
	if (base != NULL)
		event_base_free(base);
	_exit(rv);
}

/* Check the chain of a log, counting its loss lines. */
static void
verify_log(const char *path, unsigned long long losses,
    unsigned long long lost)
{
	struct audit_verify	 v;
	char			*buf = slurp(path);

	assert_int_equal(audit_verify_init(&v, NULL, 0), 0);
	assert_int_equal(audit_verify_file(&v, path, buf, strlen(buf)), 0);
	assert_int_equal(v.losses, losses);
	assert_int_equal(v.lost, lost);
	if (losses > 0)
		assert_non_null(strstr(v.loss[0], "audit.log:2: 3 line(s), "));
	audit_verify_free(&v);
	free(buf);
}

/*
 * Lines that cannot be written are counted, lines and bytes, in the log
 * and in the metrics; the first line written afterwards is a "loss" line
 * in the chain; meanwhile audit_ready() refuses new traffic unless
 * fail_open.  The same when the lines are held for the end of the loop's
 * pass and written as one.
 */
static void
check_loss(void **state, int batch)
{
	struct fixture	*f = *state;
	char		*out, *err, *p;
	long long	 bytes;

	assert_int_equal(loss_child(f, 0, 1, batch), 1 | 4);
	out = slurp(f->path);
	assert_int_equal(count_lines(out, "\"schema\""), 3);
	assert_int_equal(count_lines(out, "lost.example"), 0);
	assert_non_null(p = strstr(out, "\n{\"schema\":2,\"ts\":"));
	assert_non_null(p = strstr(p, "\"event\":\"loss\",\"reason\":"
	    "\"File too large\",\"detail\":\"the log could not be written; "
	    "new connections were refused meanwhile\",\"lost\":3,"
	    "\"lost_bytes\":"));
	bytes = strtoll(p + strlen("\"event\":\"loss\",\"reason\":"
	    "\"File too large\",\"detail\":\"the log could not be written; "
	    "new connections were refused meanwhile\",\"lost\":3,"
	    "\"lost_bytes\":"), NULL, 10);
	assert_true(bytes > 3 * 100 && bytes < 3 * 250);
	assert_non_null(strstr(p, ",\"lost_first\":\"20"));
	assert_non_null(strstr(p, ",\"lost_last\":\"20"));
	assert_non_null(strstr(p, "\n{\"schema\":2,\"ts\":"));
	assert_non_null(strstr(out, "\"event\":\"stop\""));
	verify_log(f->path, 1, 3);
	free(out);
	err = slurp(f->errpath);
	assert_int_equal(count_lines(err, "File too large: lines are being "
	    "lost; new connections are refused"), 1);
	assert_int_equal(count_lines(err, "writing again; 3 line(s)"), 1);
	assert_int_equal(count_lines(err, "audit log"), 2);
	/* The metrics count the lost lines as the loss line does, and the
	 * writes that failed (held lines fail in one). */
	assert_non_null(p = strstr(err, "metrics: audit_lost 3 audit_errors "));
	assert_true(strtoll(p + strlen("metrics: audit_lost 3 audit_errors "),
	    NULL, 10) >= 1);
	free(err);
}

static void
test_loss(void **state)
{
	check_loss(state, 0);
}

static void
test_loss_batch(void **state)
{
	check_loss(state, 1);
}

/*
 * Held lines reach the file at the end of the loop's pass, all in one
 * chain, or at once when asked (audit_flush()) or at close.
 */
static void
test_batch(void **state)
{
	struct fixture		*f = *state;
	struct event_base	*base;
	struct audit		*a;
	struct audit_event	 ev;
	struct stat		 st;
	char			 err[256], *out;
	int			 i;

	assert_non_null(base = event_base_new());
	assert_non_null(a = audit_open(f->path, err, sizeof err));
	assert_int_equal(audit_set_base(a, base), 0);
	audit_event_init(&ev);
	ev.event = "connect";
	for (i = 0; i < 3; i++)
		audit_write(a, &ev);
	assert_int_equal(stat(f->path, &st), 0);
	assert_int_equal(st.st_size, 0);
	loop_pass(base);
	out = slurp(f->path);
	assert_int_equal(count_lines(out, "\"event\":\"connect\""), 3);
	free(out);
	ev.event = "close";
	audit_write(a, &ev);
	assert_int_equal(audit_flush(a), 0);
	ev.event = "stop";
	audit_write(a, &ev);
	audit_close(a);
	out = slurp(f->path);
	assert_int_equal(count_lines(out, "\"event\":\"close\""), 1);
	assert_int_equal(count_lines(out, "\"event\":\"stop\""), 1);
	free(out);
	verify_log(f->path, 0, 0);
	event_base_free(base);
}

/*
 * The log budget: a sandbox's lines within it are written, the rest
 * counted by kind and written as one line each, with their count and
 * bytes; another sandbox has a budget of its own.  --log-budget's
 * forms.
 */
static void
test_budget(void **state)
{
	struct fixture		*f = *state;
	struct event_base	*base;
	struct audit_ident	 sb1 = { "sb1", "flood", 1 };
	struct audit_ident	 sb2 = { "sb2", "quiet", 2 };
	struct audit_bucket	 k1 = { 0 }, k2 = { 0 };
	struct audit_budget	*b;
	struct audit		*a;
	struct audit_event	 ev;
	char			 err[256], *out, *p;
	uint64_t		 lines, bytes;
	int			 i, single, summed = 0;

	assert_non_null(base = event_base_new());
	assert_non_null(a = audit_open(f->path, err, sizeof err));
	/* One line and 1K a second: ten lines, and 10K, at first. */
	assert_non_null(b = audit_budget_create(base, a, 1, 1024));
	audit_event_init(&ev);
	ev.event = "request";
	ev.verdict = "allow";
	ev.host = "origin.test";
	ev.port = 80;
	ev.method = "GET";
	ev.bytes_up = 10;
	ev.bytes_down = 100;
	audit_event_sandbox(&ev, &sb1);
	for (i = 0; i < 50; i++)
		audit_budget_write(b, &sb1, &k1, &ev);
	ev.host = "other.test";
	audit_event_sandbox(&ev, &sb2);
	audit_budget_write(b, &sb2, &k2, &ev);
	audit_budget_free(b);
	audit_close(a);
	out = slurp(f->path);
	single = count_lines(out, "\"sandbox\":\"sb1\"") -
	    count_lines(out, "\"count\":");
	for (p = out; (p = strstr(p, "\"count\":")) != NULL; p++)
		summed += atoi(p + 8);
	assert_true(single >= 10 && single < 50);
	assert_int_equal(single + summed, 50);
	assert_int_equal(count_lines(out, "\"count\":"), 1);
	assert_int_equal(count_lines(out, "\"sandbox\":\"sb2\""), 1);
	assert_int_equal(count_lines(out, "\"detail\":\"summed up: over the "
	    "log budget of 1 lines and 1024 bytes a second\""), 1);
	assert_non_null(strstr(out, "\"bytes_up\":"));
	assert_non_null(strstr(out, "\"first\":\"20"));
	free(out);
	verify_log(f->path, 0, 0);
	event_base_free(base);

	assert_int_equal(audit_budget_parse("100,128K", &lines, &bytes), 0);
	assert_true(lines == 100 && bytes == 128 * 1024);
	assert_int_equal(audit_budget_parse("0", &lines, &bytes), 0);
	assert_true(lines == 0 && bytes == 0);
	assert_int_equal(audit_budget_parse("100", &lines, &bytes), -1);
	assert_int_equal(audit_budget_parse(",1K", &lines, &bytes), -1);
	assert_int_equal(audit_budget_parse("0,1K", &lines, &bytes), -1);
	assert_int_equal(audit_budget_parse("10,100", &lines, &bytes), -1);
	assert_int_equal(audit_budget_parse("-1,1K", &lines, &bytes), -1);
	assert_int_equal(audit_budget_parse("1x,1K", &lines, &bytes), -1);
}

/* With fail_open, traffic may go on; the loss is recorded all the same. */
static void
test_loss_fail_open(void **state)
{
	struct fixture	*f = *state;
	char		*out, *err;

	assert_int_equal(loss_child(f, 1, 1, 0), 1 | 2 | 4);
	out = slurp(f->path);
	assert_int_equal(count_lines(out, "traffic went on (--log-fail=open)"
	    "\",\"lost\":3,"), 1);
	free(out);
	verify_log(f->path, 1, 3);
	err = slurp(f->errpath);
	assert_int_equal(count_lines(err, "File too large: lines are being "
	    "lost\n"), 0);
	assert_int_equal(count_lines(err, "lines are being lost"), 1);
	assert_null(strstr(err, "refused"));
	free(err);
}

/* Closed while still failing: the loss is said on stderr at least. */
static void
test_loss_at_close(void **state)
{
	struct fixture	*f = *state;
	char		*err;

	assert_int_equal(loss_child(f, 0, 0, 0), 1);
	verify_log(f->path, 0, 0);
	err = slurp(f->errpath);
	assert_int_equal(count_lines(err, "closed while it cannot be written: "
	    "3 line(s)"), 1);
	assert_int_equal(count_lines(err, "the log has no record of it "
	    "(File too large)"), 1);
	free(err);
}

/*
 * The default log: under XDG_STATE_HOME when it is an absolute path,
 * else under HOME; neither, or no room for the name: -1.
 */
static void
test_default_path(void **state)
{
	char	buf[128];

	(void)state;
	setenv("HOME", "/home/u", 1);
	setenv("XDG_STATE_HOME", "/var/state", 1);
	assert_int_equal(audit_default_path(buf, sizeof buf), 0);
	assert_string_equal(buf, "/var/state/pinhole/audit.log");
	setenv("XDG_STATE_HOME", "relative", 1);
	assert_int_equal(audit_default_path(buf, sizeof buf), 0);
	assert_string_equal(buf, "/home/u/.local/state/pinhole/audit.log");
	unsetenv("XDG_STATE_HOME");
	assert_int_equal(audit_default_path(buf, sizeof buf), 0);
	assert_string_equal(buf, "/home/u/.local/state/pinhole/audit.log");
	assert_int_equal(audit_default_path(buf, 20), -1);
	unsetenv("HOME");
	assert_int_equal(audit_default_path(buf, sizeof buf), -1);
}

/* After a rename, reopen writes to a new file under the old name. */
static void
test_reopen(void **state)
{
	struct fixture		*f = *state;
	struct audit		*a;
	struct audit_event	 ev;
	char			 err[256], old[160], *out;

	a = audit_open(f->path, err, sizeof err);
	assert_non_null(a);
	audit_event_init(&ev);
	ev.event = "before";
	audit_write(a, &ev);
	snprintf(old, sizeof old, "%s.1", f->path);
	assert_int_equal(rename(f->path, old), 0);
	ev.event = "between";
	audit_write(a, &ev);
	assert_int_equal(audit_reopen(a), 0);
	ev.event = "after";
	audit_write(a, &ev);
	audit_close(a);
	out = slurp_log(old);
	assert_int_equal(count_lines(out, "\"schema\""), 2);
	assert_non_null(strstr(out, "before"));
	assert_non_null(strstr(out, "between"));
	free(out);
	out = slurp_log(f->path);
	assert_int_equal(count_lines(out, "\"schema\""), 1);
	assert_non_null(strstr(out, "after"));
	free(out);
}

/* No log: everything is a no-op; a bad path is an error. */
static void
test_none(void **state)
{
	struct fixture		*f = *state;
	struct audit		*a;
	struct audit_event	 ev;
	char			 err[256], bad[160];

	a = audit_open(NULL, err, sizeof err);
	assert_non_null(a);
	audit_event_init(&ev);
	ev.event = "start";
	audit_write(a, &ev);
	audit_write(NULL, &ev);
	assert_int_equal(audit_reopen(a), 0);
	audit_close(a);
	audit_close(NULL);
	snprintf(bad, sizeof bad, "%s/no/such/dir/log", f->dir);
	assert_null(audit_open(bad, err, sizeof err));
	assert_non_null(strstr(err, "No such file or directory"));
}

/* "-" writes to stdout. */
static void
test_stdout(void **state)
{
	struct fixture		*f = *state;
	struct audit		*a;
	struct audit_event	 ev;
	char			 err[256], *out;
	int			 saved, fd;

	fflush(stdout);
	saved = dup(STDOUT_FILENO);
	fd = open(f->path, O_WRONLY | O_CREAT | O_APPEND, 0600);
	assert_true(fd >= 0);
	dup2(fd, STDOUT_FILENO);
	close(fd);
	a = audit_open("-", err, sizeof err);
	audit_event_init(&ev);
	ev.event = "dns";
	ev.qname = "example.org";
	audit_write(a, &ev);
	assert_int_equal(audit_reopen(a), 0);
	audit_close(a);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	assert_non_null(a);
	out = slurp_log(f->path);
	assert_non_null(strstr(out, "\"event\":\"dns\",\"qname\":\"example.org\"}\n"));
	free(out);
}

/* argv comes back as a shell would read it, cut to fit. */
static void
test_cmdline(void **state)
{
	char	*plain[] = { "uv", "lock", "--frozen", NULL };
	char	*odd[] = { "sh", "-c", "echo 'a b' $HOME", "", NULL };
	char	*big[] = { "x", NULL, NULL };
	char	 buf[AUDIT_CMD_LEN], longarg[400];
	struct audit_ident	 who;
	struct audit_event	 ev;

	(void)state;
	audit_cmdline(plain, buf, sizeof buf);
	assert_string_equal(buf, "uv lock --frozen");
	audit_cmdline(odd, buf, sizeof buf);
	assert_string_equal(buf, "sh -c 'echo '\\''a b'\\'' $HOME' ''");
	memset(longarg, 'a', sizeof longarg - 1);
	longarg[sizeof longarg - 1] = '\0';
	memcpy(longarg + 152, "\xc3\xa9", 2);
	big[1] = longarg;
	audit_cmdline(big, buf, sizeof buf);
	assert_int_equal(strlen(buf), sizeof buf - 2);
	assert_string_equal(buf + strlen(buf) - 3, "...");
	audit_cmdline(big, buf, 8);
	assert_string_equal(buf, "x 'a...");
	audit_cmdline(plain, buf, sizeof buf);
	snprintf(who.id, sizeof who.id, "3");
	snprintf(who.cmd, sizeof who.cmd, "%s", buf);
	who.pid = 4242;
	audit_event_init(&ev);
	audit_event_sandbox(&ev, &who);
	assert_string_equal(ev.sandbox, "3");
	assert_string_equal(ev.cmd, "uv lock --frozen");
	assert_int_equal(ev.pid, 4242);
	audit_event_init(&ev);
	audit_event_sandbox(&ev, NULL);
	assert_null(ev.sandbox);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_checker),
		cmocka_unit_test(test_cmdline),
		cmocka_unit_test_setup_teardown(test_fields, setup, teardown),
		cmocka_unit_test_setup_teardown(test_escape, setup, teardown),
		cmocka_unit_test_setup_teardown(test_truncate, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dev_full, setup, teardown),
		cmocka_unit_test_setup_teardown(test_short_write, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_short_write_torn, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_loss, setup, teardown),
		cmocka_unit_test_setup_teardown(test_loss_batch, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_batch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_budget, setup, teardown),
		cmocka_unit_test_setup_teardown(test_loss_fail_open, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_loss_at_close, setup,
		    teardown),
		cmocka_unit_test(test_default_path),
		cmocka_unit_test_setup_teardown(test_reopen, setup, teardown),
		cmocka_unit_test_setup_teardown(test_none, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stdout, setup, teardown),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
