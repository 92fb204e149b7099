/*
 * pinhole run's notices (daemon/notice.c): the queue's events made into
 * notices, each one line saying what, why and what to do, cleaned for a
 * terminal; and the limit: one line per host and reason a window, the
 * repeats counted, a cap a second, a DNS lookup's echoes taken as one.
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "daemon/notice.h"

/* A refusal of host:port: why, and ask (fix NULL) or what to change. */
static struct attach_notice *
refused(const char *host, uint16_t port, const char *why, const char *fix)
{
	static struct attach_notice	n;
	const char			*err;

	memset(&n, 0, sizeof n);
	n.kind = ATTACH_NOTICE_REFUSED;
	assert_int_equal(host_parse(host, strlen(host), &n.host, &err), 0);
	n.port = port;
	snprintf(n.text, sizeof n.text, "%s", why);
	snprintf(n.fix, sizeof n.fix, "%s", fix != NULL ? fix : "");
	n.ask = fix == NULL;
	return (&n);
}

/* The line of a notice. */
static const char *
line(const struct attach_notice *n, const char *session, unsigned int count,
    int shown)
{
	static char	buf[NOTICE_LINE_MAX];
	size_t		len;

	len = notice_format(n, session, count, shown, buf, sizeof buf);
	assert_int_equal(len, strlen(buf));
	assert_true(len > 0 && buf[len - 1] == '\n');
	assert_null(memchr(buf, '\n', len - 1));
	return (buf);
}

/* How a refusal's line says to wait for the answer. */
#define WAIT	", then wait for the answer: pinhole request --status ID " \
		"--wait (ID is what it prints)"

/* A refusal says what, why, and how to ask and wait, or what to change. */
static void
test_refused_lines(void **state)
{
	struct attach_notice	*n;

	(void)state;
	assert_string_equal(line(refused("x.test", 443, "no rule matches",
	    NULL), NULL, 0, 0), "pinhole: refused x.test:443 (no rule "
	    "matches); ask: pinhole request x.test:443"
	    WAIT "\n");
	assert_string_equal(line(refused("x.test", 0, "no rule allows this "
	    "name", NULL), NULL, 0, 0), "pinhole: refused the name x.test (no "
	    "rule allows this name); ask: pinhole request x.test --any-port"
	    WAIT "\n");
	assert_string_equal(line(refused("::1", 80, "why", "change it"), NULL,
	    0, 0), "pinhole: refused [::1]:80: change it\n");
	n = refused("x.test", 443, "read-only", NULL);
	snprintf(n->what, sizeof n->what, "POST /up");
	assert_string_equal(line(n, NULL, 0, 0), "pinhole: refused POST /up "
	    "on x.test:443 (read-only); ask: pinhole request x.test:443"
	    WAIT "\n");
	n->ask = 0;
	assert_string_equal(line(n, NULL, 0, 0), "pinhole: refused POST /up "
	    "on x.test:443 (read-only)\n");
	/* Repeats: counted, said shortly. */
	assert_string_equal(line(refused("x.test", 443, "no", NULL), NULL, 49,
	    1), "pinhole: refused x.test:443 again, 49 times (no)\n");
	assert_string_equal(line(refused("x.test", 443, "no", NULL), NULL, 3,
	    0), "pinhole: refused x.test:443 3 times (no); ask: pinhole "
	    "request x.test:443" WAIT "\n");
}

/* What came from the sandbox reaches the terminal escaped, cut to fit. */
static void
test_clean_cut(void **state)
{
	struct attach_notice	*n = refused("x.test", 443, "a\033[2Jb\nc",
				    NULL);
	const char		*l;
	size_t			 i;

	(void)state;
	l = line(n, NULL, 0, 0);
	assert_non_null(strstr(l, "a\\x1b[2Jb\\x0ac"));
	for (i = 0; i < sizeof n->what - 1; i++)
		n->what[i] = 'p';
	memset(n->text, '\001', sizeof n->text - 1);
	l = line(n, NULL, 0, 0);
	assert_int_equal(strlen(l), NOTICE_LINE_MAX - 1);
	assert_string_equal(l + strlen(l) - 4, "...\n");
}

/* A held connection and the agent's request name the approve command. */
static void
test_request_lines(void **state)
{
	struct attach_notice	n;
	const char		*err;

	(void)state;
	memset(&n, 0, sizeof n);
	n.kind = ATTACH_NOTICE_HELD;
	assert_int_equal(host_parse("x.test", 6, &n.host, &err), 0);
	n.port = 443;
	n.secs = 60;
	snprintf(n.request, sizeof n.request, "r1a2b");
	assert_string_equal(line(&n, "run-0123456789ab", 0, 0), "pinhole: "
	    "holding x.test:443 for approval (60 s): pinhole approve "
	    "run-0123456789ab/r1a2b [--session|--always]\n");
	n.kind = ATTACH_NOTICE_ASKED;
	snprintf(n.text, sizeof n.text, "pip install");
	assert_string_equal(line(&n, "work", 0, 0), "pinhole: the command "
	    "asks for x.test:443 (\"pip install\"): pinhole approve work/r1a2b "
	    "[--session|--always]\n");
	n.port = 0;			/* every port: not "the name" */
	assert_string_equal(line(&n, "work", 0, 0), "pinhole: the command "
	    "asks for x.test (any port) (\"pip install\"): pinhole approve "
	    "work/r1a2b [--session|--always]\n");
	n.port = 443;
	n.kind = ATTACH_NOTICE_DECIDED;
	snprintf(n.state, sizeof n.state, "approved");
	snprintf(n.scope, sizeof n.scope, "once");
	snprintf(n.by, sizeof n.by, "uid 0 via cli");
	n.text[0] = '\0';
	assert_string_equal(line(&n, NULL, 0, 0), "pinhole: approved "
	    "x.test:443 (once, by uid 0 via cli)\n");
	snprintf(n.state, sizeof n.state, "denied");
	n.scope[0] = '\0';
	snprintf(n.text, sizeof n.text, "not today");
	assert_string_equal(line(&n, NULL, 0, 0), "pinhole: denied x.test:443 "
	    "(by uid 0 via cli): not today\n");
	snprintf(n.state, sizeof n.state, "expired");
	assert_string_equal(line(&n, NULL, 0, 0), "pinhole: request r1a2b for "
	    "x.test:443 expired unanswered\n");
}

/* The queue's events: which make a notice, and for which sandbox. */
static void
test_from_event(void **state)
{
	struct escalate_event	ev;
	struct escalate_request	r;
	struct escalate_asker	a;
	struct sandbox_refusal	f;
	struct attach_notice	n;
	const char		*sb, *err;

	(void)state;
	memset(&ev, 0, sizeof ev);
	memset(&r, 0, sizeof r);
	memset(&f, 0, sizeof f);
	assert_int_equal(host_parse("x.test", 6, &f.host, &err), 0);
	snprintf(f.sandbox, sizeof f.sandbox, "7");
	snprintf(f.fix, sizeof f.fix, "no grant");
	f.ask = 1;
	ev.note = ESCALATE_NOTE_REFUSED;
	ev.refusal = &f;
	assert_int_equal(notice_from_event(&ev, &n, &sb), 0);
	assert_string_equal(sb, "7");
	assert_false(n.ask);	/* a fix wins */
	r.host = f.host;
	r.count = 1;
	snprintf(r.id, sizeof r.id, "r1");
	snprintf(r.via, sizeof r.via, "agent");
	snprintf(r.sandbox, sizeof r.sandbox, "3");
	ev.note = ESCALATE_NOTE_REQUEST;
	ev.request = &r;
	assert_int_equal(notice_from_event(&ev, &n, &sb), 0);
	assert_int_equal(n.kind, ATTACH_NOTICE_ASKED);
	assert_string_equal(sb, "3");
	r.count = 2;	/* asked again: said once */
	assert_int_equal(notice_from_event(&ev, &n, &sb), -1);
	r.count = 1;
	snprintf(r.via, sizeof r.via, "connect");	/* held: said so */
	assert_int_equal(notice_from_event(&ev, &n, &sb), -1);
	/* Joined by sandbox 4: to it, a request of its own. */
	memset(&a, 0, sizeof a);
	snprintf(a.sandbox, sizeof a.sandbox, "4");
	snprintf(a.id, sizeof a.id, "r4");
	snprintf(a.reason, sizeof a.reason, "its own");
	snprintf(a.via, sizeof a.via, "agent");
	snprintf(r.reason, sizeof r.reason, "the first's");
	r.count = 2;
	ev.asker = &a;
	assert_int_equal(notice_from_event(&ev, &n, &sb), 0);
	assert_int_equal(n.kind, ATTACH_NOTICE_ASKED);
	assert_string_equal(sb, "4");
	assert_string_equal(n.request, "r4");
	assert_string_equal(n.text, "its own");
	snprintf(a.via, sizeof a.via, "connect");	/* held: said so */
	assert_int_equal(notice_from_event(&ev, &n, &sb), -1);
	ev.asker = NULL;
	r.count = 1;
	r.askers = &a;
	r.naskers = 1;
	ev.note = ESCALATE_NOTE_HELD;
	ev.sandbox = "4";
	ev.secs = 30;
	assert_int_equal(notice_from_event(&ev, &n, &sb), 0);
	assert_string_equal(sb, "4");
	assert_string_equal(n.request, "r4");	/* the id it was given */
	assert_int_equal(n.secs, 30);
	ev.note = ESCALATE_NOTE_DECIDED;
	r.state = ESCALATE_DENIED;
	assert_int_equal(notice_from_event(&ev, &n, &sb), 0);
	assert_null(sb);
	assert_string_equal(n.state, "denied");
	/* Approved once: for its sandbox alone, the others still wait. */
	r.state = ESCALATE_APPROVED;
	r.scope = ESCALATE_SCOPE_ONCE;
	assert_int_equal(notice_from_event(&ev, &n, &sb), 0);
	assert_string_equal(sb, "3");
	r.scope = ESCALATE_SCOPE_SESSION;
	assert_int_equal(notice_from_event(&ev, &n, &sb), 0);
	assert_null(sb);
	ev.note = ESCALATE_NOTE_BLOCKED;
	assert_int_equal(notice_from_event(&ev, &n, &sb), -1);
}

/* Said once a window; the repeats counted and said when it ends. */
static void
test_limit_window(void **state)
{
	struct notice_limit	l;
	struct notice_due	d;
	int			i, shown = 0;

	(void)state;
	notice_limit_init(&l, 1000);
	for (i = 0; i < 50; i++)
		shown += notice_limit_admit(&l, refused("x.test", 443, "no",
		    NULL), 1000 + i * 10);
	assert_int_equal(shown, 1);
	assert_int_equal(notice_limit_next(&l, 1500), NOTICE_WINDOW_MS - 500);
	assert_int_equal(notice_limit_due(&l, 1500, 0, &d), 0);
	assert_int_equal(notice_limit_due(&l, 1000 + NOTICE_WINDOW_MS, 0, &d),
	    1);
	assert_int_equal(d.count, 49);
	assert_true(d.shown);
	assert_int_equal(notice_limit_next(&l, 1000 + NOTICE_WINDOW_MS), -1);
	/* Another port, or a name's lookup, of the same host: the same. */
	assert_int_equal(notice_limit_admit(&l, refused("x.test", 80, "other",
	    NULL), 1000 + NOTICE_WINDOW_MS + 1), 0);
	/* Another fix is another line. */
	assert_int_equal(notice_limit_admit(&l, refused("x.test", 80, "no",
	    "change"), 1000 + NOTICE_WINDOW_MS + 2), 1);
	/* After a quiet window, said again. */
	assert_int_equal(notice_limit_due(&l, 1000 + 3 * NOTICE_WINDOW_MS, 0,
	    &d), 1);
	assert_int_equal(d.count, 1);
	assert_int_equal(notice_limit_admit(&l, refused("x.test", 443, "no",
	    NULL), 1000 + 5 * NOTICE_WINDOW_MS), 1);
}

/* At most NOTICE_BURST at once; the others said later, counted. */
static void
test_limit_burst(void **state)
{
	struct notice_limit	 l;
	struct notice_due	 d;
	char			 host[32], buf[NOTICE_LINE_MAX];
	int			 i, shown = 0, due = 0;

	(void)state;
	notice_limit_init(&l, 0);
	for (i = 0; i < NOTICE_SLOTS + 8; i++) {
		snprintf(host, sizeof host, "h%d.test", i);
		shown += notice_limit_admit(&l, refused(host, 443, "no", NULL),
		    5);
	}
	assert_int_equal(shown, NOTICE_BURST);
	/* One held back is said as soon as a token comes, with its count. */
	assert_int_equal(notice_limit_next(&l, 5), 1000 / NOTICE_RATE);
	assert_int_equal(notice_limit_due(&l, 5, 0, &d), 0);
	assert_int_equal(notice_limit_due(&l, 5 + 1000 / NOTICE_RATE, 0, &d),
	    1);
	assert_false(d.shown);
	assert_int_equal(d.count, 1);
	assert_int_equal(notice_limit_due(&l, 5 + 1000 / NOTICE_RATE, 0, &d),
	    0);
	while (notice_limit_due(&l, 10 * NOTICE_WINDOW_MS, 1, &d)) {
		due++;
		notice_due_format(&d, buf, sizeof buf);
		if (d.others) {
			assert_int_equal(d.count, 8);
			assert_string_equal(buf, "pinhole: 8 more refusals not "
			    "shown (pinhole log --blocked lists them)\n");
		} else
			assert_non_null(strstr(buf, " (no); ask: "));
	}
	assert_int_equal(due, NOTICE_SLOTS - NOTICE_BURST);
	/* Tokens come back with time. */
	assert_int_equal(notice_limit_admit(&l, refused("new.test", 443, "no",
	    NULL), 10 * NOTICE_WINDOW_MS + 1000), 1);
}

/* A name's other record types and the connection that follows: one. */
static void
test_limit_echo(void **state)
{
	struct notice_limit	l;
	struct notice_due	d;

	(void)state;
	notice_limit_init(&l, 0);
	assert_int_equal(notice_limit_admit(&l, refused("x.test", 0, "dns",
	    NULL), 100), 1);
	assert_int_equal(notice_limit_admit(&l, refused("x.test", 0, "dns",
	    NULL), 101), 0);
	assert_int_equal(notice_limit_admit(&l, refused("x.test", 443, "no",
	    NULL), 300), 0);
	assert_int_equal(notice_limit_due(&l, 100 + NOTICE_WINDOW_MS, 1, &d),
	    0);
	/* After the echo, repeats count. */
	assert_int_equal(notice_limit_admit(&l, refused("x.test", 443, "no",
	    NULL), 100 + NOTICE_ECHO_MS), 0);
	assert_int_equal(notice_limit_due(&l, 100 + NOTICE_WINDOW_MS, 0, &d),
	    1);
	assert_int_equal(d.count, 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refused_lines),
		cmocka_unit_test(test_clean_cut),
		cmocka_unit_test(test_request_lines),
		cmocka_unit_test(test_from_event),
		cmocka_unit_test(test_limit_window),
		cmocka_unit_test(test_limit_burst),
		cmocka_unit_test(test_limit_echo),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
