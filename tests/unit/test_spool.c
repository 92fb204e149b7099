/*
 * Shipping's pure parts: the spool (lines kept in order until
 * acknowledged, across a reopen, bounded, compacted without losing a
 * line due), the stream framing, and the audit log's hook that hands
 * each line on.
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

#include "proxy/audit/audit.h"
#include "proxy/audit/sink.h"
#include "proxy/audit/spool.h"

#include "tests/unit/tmpdir.h"

/* Append "line N\n". */
static int
put(struct spool *sp, int n)
{
	char	line[32], err[256];
	int	len;

	len = snprintf(line, sizeof line, "line %d\n", n);
	return (spool_append(sp, line, len, NULL, err, sizeof err));
}

/* Read everything from off as one string. */
static char *
get(struct spool *sp, uint64_t off)
{
	static char	buf[4096];
	ssize_t		n;

	n = spool_read(sp, off, buf, sizeof buf - 1);
	assert_true(n >= 0);
	buf[n] = '\0';
	return (buf);
}

/* Lines come back in order, from any offset of the undelivered ones. */
static void
test_order(void **state)
{
	struct fixture	*f = *state;
	struct spool	*sp;
	char		 err[256];

	sp = spool_open(f->dir, "a", 1024, err, sizeof err);
	assert_non_null(sp);
	assert_int_equal(spool_head(sp), 0);
	assert_int_equal(put(sp, 1), 0);
	assert_int_equal(put(sp, 2), 0);
	assert_string_equal(get(sp, 0), "line 1\nline 2\n");
	assert_string_equal(get(sp, 7), "line 2\n");
	assert_int_equal(spool_ack(sp, 7), 0);
	assert_int_equal(spool_head(sp), 7);
	assert_int_equal(spool_read(sp, 0, err, sizeof err), -1);
	assert_string_equal(get(sp, 7), "line 2\n");
	/* All delivered: the file starts again, offsets go on. */
	assert_int_equal(spool_ack(sp, 14), 0);
	assert_int_equal(spool_head(sp), 14);
	assert_int_equal(spool_tail(sp), 14);
	assert_int_equal(put(sp, 3), 0);
	assert_string_equal(get(sp, 14), "line 3\n");
	spool_close(sp);
}

/* What was not acknowledged is there after a reopen; a torn end is not. */
static void
test_reopen(void **state)
{
	struct fixture	*f = *state;
	struct spool	*sp;
	char		 err[256], path[128];
	FILE		*fp;

	sp = spool_open(f->dir, "b", 1024, err, sizeof err);
	assert_non_null(sp);
	assert_int_equal(put(sp, 1), 0);
	assert_int_equal(put(sp, 2), 0);
	assert_int_equal(put(sp, 3), 0);
	assert_int_equal(spool_ack(sp, 7), 0);
	spool_close(sp);
	snprintf(path, sizeof path, "%s/b.spool", f->dir);
	fp = fopen(path, "a");
	assert_non_null(fp);
	fputs("line 4 cut sh", fp);
	fclose(fp);
	sp = spool_open(f->dir, "b", 1024, err, sizeof err);
	assert_non_null(sp);
	assert_string_equal(get(sp, spool_head(sp)), "line 2\nline 3\n");
	assert_int_equal(put(sp, 5), 0);
	assert_string_equal(get(sp, spool_head(sp)),
	    "line 2\nline 3\nline 5\n");
	spool_close(sp);
}

/* A full spool keeps what it has and counts what it could not keep. */
static void
test_full(void **state)
{
	struct fixture		*f = *state;
	struct spool		*sp;
	struct spool_stats	 st;
	char			 err[256];
	int			 i;

	sp = spool_open(f->dir, "c", 21, err, sizeof err);
	assert_non_null(sp);
	for (i = 1; i <= 3; i++)
		assert_int_equal(put(sp, i), 0);
	assert_int_equal(spool_append(sp, "line 4\n", 7, NULL, err, sizeof err),
	    -1);
	assert_non_null(strstr(err, "full"));
	spool_stats(sp, &st);
	assert_int_equal(st.dropped, 1);
	assert_int_equal(st.dropped_bytes, 7);
	assert_int_equal(st.pending, 21);
	/* Room made by an acknowledgement: compacted, offsets go on. */
	assert_int_equal(spool_ack(sp, 7), 0);
	assert_int_equal(put(sp, 5), 0);
	assert_int_equal(spool_head(sp), 7);
	assert_string_equal(get(sp, 7), "line 2\nline 3\nline 5\n");
	spool_close(sp);
	/* The compacted file and its mark agree after a reopen. */
	sp = spool_open(f->dir, "c", 21, err, sizeof err);
	assert_non_null(sp);
	assert_string_equal(get(sp, spool_head(sp)),
	    "line 2\nline 3\nline 5\n");
	spool_close(sp);
}

/*
 * Several lines at once: kept together when they fit; when they do not,
 * each line that fits is kept, in order, and the rest counted.
 */
static void
test_block(void **state)
{
	struct fixture		*f = *state;
	struct spool		*sp;
	struct spool_stats	 st;
	char			 err[256];
	uint64_t		 kept;

	sp = spool_open(f->dir, "b", 28, err, sizeof err);
	assert_non_null(sp);
	assert_int_equal(spool_append(sp, "line 1\nline 2\n", 14, &kept, err,
	    sizeof err), 0);
	assert_int_equal(kept, 2);
	/* 14 bytes of room: "line 3" fits, "long line 4" does not, "x" does. */
	assert_int_equal(spool_append(sp, "line 3\nlong line 4\nx\n", 21,
	    &kept, err, sizeof err), -1);
	assert_int_equal(kept, 2);
	assert_non_null(strstr(err, "full"));
	spool_stats(sp, &st);
	assert_int_equal(st.lines, 4);
	assert_int_equal(st.dropped, 1);
	assert_int_equal(st.dropped_bytes, 12);
	assert_string_equal(get(sp, spool_head(sp)),
	    "line 1\nline 2\nline 3\nx\n");
	spool_close(sp);
}

/* Names of destinations become safe file names. */
static void
test_name(void **state)
{
	struct fixture	*f = *state;
	char		 name[SPOOL_NAME_MAX], err[256];

	spool_name("syslog+tls://log.example:6514", name, sizeof name);
	assert_string_equal(name, "syslog+tls_log.example_6514");
	spool_name("syslog+tcp://[::1]:514", name, sizeof name);
	assert_string_equal(name, "syslog+tcp____1__514");
	assert_null(spool_open(f->dir, "../x", 10, err, sizeof err));
	assert_null(spool_open(f->dir, "", 10, err, sizeof err));
}

/* Octet counting: "LEN SP MSG", LEN the message's bytes. */
static void
test_frame(void **state)
{
	struct audit_rec	 rec;
	const char		*line = "{\"schema\":2,\"ts\":\"T\",\"event\":"
	    "\"connect\",\"verdict\":\"deny\",\"host\":\"a]b\",\"seq\":7}";
	char			 buf[1024], store[256], *sp;
	size_t			 n, len;

	(void)state;
	assert_int_equal(audit_rec_parse(line, strlen(line), store,
	    sizeof store, &rec), 0);
	n = audit_syslog_format(buf + AUDIT_FRAME_HEAD, sizeof buf -
	    AUDIT_FRAME_HEAD, line, strlen(line), &rec, "gw", 42);
	assert_true(n > 0);
	len = audit_frame(buf, n);
	buf[len] = '\0';
	sp = strchr(buf, ' ');
	assert_non_null(sp);
	assert_int_equal(strtoul(buf, NULL, 10), n);
	assert_int_equal(len, (size_t)(sp - buf) + 1 + n);
	assert_true(strncmp(sp + 1, "<85>1 T gw pinhole 42 connect "
	    "[pinhole@32473 schema=\"2\" ts=\"T\"", 56) == 0);
	assert_non_null(strstr(buf, "host=\"a\\]b\""));
	assert_string_equal(buf + len - strlen(line), line);
}

struct seen {
	char	buf[4096];
	size_t	len;
	int	lines;
};

static void
hook_cb(void *arg, const char *line, size_t len)
{
	struct seen	*s = arg;

	assert_true(s->len + len < sizeof s->buf);
	memcpy(s->buf + s->len, line, len);
	s->len += len;
	s->lines++;
}

/* Every line written, and only those, is handed on as written. */
static void
test_hook(void **state)
{
	struct fixture		*f = *state;
	struct audit_event	 ev;
	struct audit		*a;
	struct seen		 seen;
	char			 path[128], err[256], file[4096];
	FILE			*fp;
	size_t			 n;

	memset(&seen, 0, sizeof seen);
	snprintf(path, sizeof path, "%s/audit.log", f->dir);
	a = audit_open(path, err, sizeof err);
	assert_non_null(a);
	audit_set_hook(a, hook_cb, &seen);
	audit_event_init(&ev);
	ev.event = "start";
	audit_write(a, &ev);
	ev.event = "connect";
	ev.host = "example.org";
	audit_write(a, &ev);
	audit_close(a);
	fp = fopen(path, "r");
	assert_non_null(fp);
	n = fread(file, 1, sizeof file, fp);
	fclose(fp);
	assert_int_equal(seen.lines, 2);
	assert_int_equal(seen.len, n);
	assert_memory_equal(seen.buf, file, n);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reopen, setup, teardown),
		cmocka_unit_test_setup_teardown(test_full, setup, teardown),
		cmocka_unit_test_setup_teardown(test_block, setup, teardown),
		cmocka_unit_test_setup_teardown(test_name, setup, teardown),
		cmocka_unit_test(test_frame),
		cmocka_unit_test_setup_teardown(test_hook, setup, teardown),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
