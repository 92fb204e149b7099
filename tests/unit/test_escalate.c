/*
 * Unit tests for the escalation queue: coalescing, the bound on open
 * requests, the rate limit, states and their audit lines, waiters,
 * subscribers, the blocked ring, and the cleaning of untrusted text.
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <event2/event.h>

#include "proxy/audit/audit.h"
#include "proxy/escalate/control.h"
#include "proxy/escalate/escalate.h"
#include "rules/policy.h"

static time_t	fake_now = 1000000;

/* The test clock. */
static time_t
fake_clock(void)
{
	return (fake_now);
}

/* A queue on the test clock, without timers. */
static struct escalate *
new_queue(void)
{
	struct escalate	*e;

	fake_now = 1000000;
	assert_non_null(e = escalate_create(NULL, "abcd1234", NULL));
	escalate_set_clock(e, fake_clock);
	return (e);
}

static uint64_t	fake_ms = 5000;

/* The grants' test clock. */
static uint64_t
fake_clock_ms(void)
{
	return (fake_ms);
}

/*
 * Give the queue a policy on the test clock, with rules (kept in *rules
 * too, for the test to add to) and no grants.
 */
static struct policy *
policy_setup(struct escalate *e, struct rules *rules)
{
	struct policy	*pol;

	assert_non_null(pol = policy_create(fake_clock_ms));
	policy_set_rules(pol, rules);
	escalate_set_policy(e, pol);
	return (pol);
}

/* File host:port with a reason. */
static enum escalate_filed
file(struct escalate *e, const char *target, const char *reason,
    struct escalate_request **r)
{
	struct host	 h;
	uint16_t	 port;
	const char	*err;

	assert_int_equal(host_port_parse(target, &h, &port, 443, &err), 0);
	return (escalate_file(e, &h, port, reason, strlen(reason), "agent",
	    NULL, r));
}

/* Requests for the same (host, port) coalesce; others do not. */
static void
test_coalesce(void **state)
{
	struct escalate		*e = new_queue();
	struct escalate_request	*a, *b, *c, *d;

	assert_int_equal(file(e, "PyPI.org.", "first", &a), ESCALATE_FILED_NEW);
	assert_int_equal(file(e, "pypi.org:443", "second", &b),
	    ESCALATE_FILED_SAME);
	assert_ptr_equal(a, b);
	assert_int_equal(a->count, 2);
	assert_string_equal(a->reason, "first");
	assert_int_equal(file(e, "pypi.org:80", "", &c), ESCALATE_FILED_NEW);
	assert_ptr_not_equal(a, c);
	assert_int_equal(file(e, "0x7f.1:443", "", &d), ESCALATE_FILED_NEW);
	assert_string_equal(d->host.text, "127.0.0.1");
	assert_int_equal(escalate_npending(e), 3);
	assert_ptr_equal(escalate_find(e, a->id), a);
	assert_int_equal(a->id[0], 'r');
	assert_int_equal(strlen(a->id), 17);
	assert_int_equal(strspn(a->id + 1, "0123456789abcdef"), 16);
	escalate_free(e);
}

/*
 * Another sandbox asking for an open request is told of a request of its
 * own: its id, reason and time, limited as a new one is; the person sees
 * one request, which either id approves (once: for that id's sandbox).
 */
static void
test_joined(void **state)
{
	struct escalate			*e = new_queue();
	struct escalate_request		*a, *b;
	const struct escalate_asker	*x;
	struct sandbox		*one, *two;
	struct host			 h;
	uint16_t			 port;
	const char			*errstr;
	char				 err[256], id[ESCALATE_ID_LEN];
	int				 i;

	assert_non_null(one = sandbox_new("1", "sh", 1, NULL));
	assert_non_null(two = sandbox_new("2", "sh", 2, NULL));
	host_port_parse("hidden.test:8443", &h, &port, 443, &errstr);
	assert_int_equal(escalate_file(e, &h, port, "A private", 9, "agent",
	    one, &a), ESCALATE_FILED_NEW);
	fake_now += 7;
	assert_int_equal(escalate_file(e, &h, port, "B's", 3, "agent", two,
	    &b), ESCALATE_FILED_JOINED);
	assert_ptr_equal(a, b);
	assert_int_equal(escalate_npending(e), 1);
	assert_non_null(x = escalate_asker_of(a, "2"));
	assert_string_equal(x->reason, "B's");
	assert_int_equal(x->since, fake_now);
	assert_string_not_equal(x->id, a->id);
	snprintf(id, sizeof id, "%s", x->id);
	assert_string_equal(a->reason, "A private");
	assert_int_equal(a->since, fake_now - 7);
	assert_ptr_equal(escalate_find(e, id), a);
	assert_ptr_equal(escalate_find_for(e, id, "2"), a);
	assert_null(escalate_find_for(e, a->id, "2"));
	assert_null(escalate_find_for(e, id, "1"));
	/* Asked again: the same, its own. */
	assert_int_equal(escalate_file(e, &h, port, "", 0, "agent", two, &b),
	    ESCALATE_FILED_SAME);
	assert_string_equal(escalate_id_for(a, "2"), id);
	/* Joining takes a token as filing does. */
	for (i = 0; i < ESCALATE_BURST - 2; i++) {
		snprintf(err, sizeof err, "t%d.test", i);
		assert_int_equal(file(e, err, "", &b), ESCALATE_FILED_NEW);
	}
	host_port_parse("t0.test", &h, &port, 443, &errstr);
	assert_int_equal(escalate_file(e, &h, port, "", 0, "agent", two, &b),
	    ESCALATE_FILED_RATE);
	assert_null(b);
	/* Approved once by the id sandbox 2 was given: for sandbox 2. */
	assert_int_equal(escalate_approve(e, id, ESCALATE_SCOPE_ONCE, 0, NULL,
	    "t", err, sizeof err), 0);
	assert_string_equal(a->sandbox, "2");
	assert_int_equal(a->state, ESCALATE_APPROVED);
	assert_non_null(b = escalate_find(e, a->moved));
	assert_ptr_equal(escalate_find_for(e, a->id, "1"), b);
	assert_int_equal(b->state, ESCALATE_PENDING);
	sandbox_unref(one);
	sandbox_unref(two);
	escalate_free(e);
}

/* At most ESCALATE_PENDING_MAX requests are open; the rate limit holds. */
static void
test_bound_and_rate(void **state)
{
	struct escalate		*e = new_queue();
	struct escalate_request	*r;
	char			 name[64];
	int			 i, n_new = 0;

	for (i = 0; i < ESCALATE_BURST; i++) {
		snprintf(name, sizeof name, "h%d.test", i);
		assert_int_equal(file(e, name, "", &r), ESCALATE_FILED_NEW);
	}
	assert_int_equal(file(e, "more.test", "", &r), ESCALATE_FILED_RATE);
	assert_null(r);
	/* Asking again for an open request is never limited. */
	assert_int_equal(file(e, "h0.test", "", &r), ESCALATE_FILED_SAME);
	fake_now += 60 / ESCALATE_RATE;
	assert_int_equal(file(e, "more.test", "", &r), ESCALATE_FILED_NEW);
	assert_int_equal(file(e, "more2.test", "", &r), ESCALATE_FILED_RATE);
	/* Fill up to the bound, a minute at a time. */
	for (i = 0; i < 100 && escalate_npending(e) < ESCALATE_PENDING_MAX;
	    i++) {
		fake_now += 60;
		snprintf(name, sizeof name, "fill%d.test", i);
		if (file(e, name, "", &r) == ESCALATE_FILED_NEW)
			n_new++;
	}
	assert_int_equal(escalate_npending(e), ESCALATE_PENDING_MAX);
	fake_now += 60;
	assert_int_equal(file(e, "full.test", "", &r), ESCALATE_FILED_FULL);
	escalate_free(e);
}

/* Approve, deny, expire: states, audit lines, errors. */
static void
test_states(void **state)
{
	struct escalate		*e = new_queue();
	struct escalate_request	*a, *b, *c;
	struct policy		*pol;
	struct grant		 list[4];
	struct audit		*au;
	char			 err[256], path[] = "/tmp/test_escalate.XXXXXX";
	char			 line[4096];
	FILE			*f;
	int			 fd, n = 0;

	assert_true((fd = mkstemp(path)) != -1);
	close(fd);
	assert_non_null(au = audit_open(path, err, sizeof err));
	escalate_set_audit(e, au);
	pol = policy_setup(e, NULL);
	file(e, "a.test", "why a", &a);
	file(e, "b.test", "why b", &b);
	file(e, "c.test", "", &c);
	/* always, with no file to write it to, fails: still pending. */
	assert_int_equal(escalate_approve(e, a->id, ESCALATE_SCOPE_ALWAYS,
	    60, NULL, "uid 1 via cli", err, sizeof err), -1);
	assert_int_equal(a->state, ESCALATE_PENDING);
	assert_int_equal(a->scope, ESCALATE_SCOPE_NONE);
	assert_int_equal(escalate_approve(e, a->id, ESCALATE_SCOPE_SESSION,
	    60, NULL, "uid 1 via cli", err, sizeof err), 0);
	assert_int_equal(grants_list(policy_grants(pol), list, 4), 1);
	assert_string_equal(list[0].id, a->id);
	assert_int_equal(a->state, ESCALATE_APPROVED);
	assert_int_equal(escalate_approve(e, a->id, ESCALATE_SCOPE_ONCE, 0,
	    NULL, "x", err, sizeof err), -1);
	assert_non_null(strstr(err, "already approved"));
	assert_int_equal(escalate_deny(e, b->id, "not \x1b[1mnow", "uid 1 "
	    "via watch", err, sizeof err), 0);
	assert_string_equal(b->answer, "not \\x1b[1mnow");
	assert_int_equal(escalate_deny(e, "rzzzz", NULL, "x", err, sizeof err),
	    -1);
	fake_now += ESCALATE_EXPIRE;
	escalate_sweep(e);
	assert_int_equal(c->state, ESCALATE_EXPIRED);
	assert_int_equal(a->state, ESCALATE_EXPIRED);	/* ttl 60 ran out */
	assert_int_equal(escalate_npending(e), 0);
	audit_close(au);
	assert_non_null(f = fopen(path, "r"));
	while (fgets(line, sizeof line, f) != NULL) {
		n++;
		if (strstr(line, "\"event\":\"grant\"") != NULL) {
			assert_non_null(strstr(line, "\"scope\":\"session\""));
			assert_non_null(strstr(line, "\"ttl\":60"));
			assert_non_null(strstr(line, "\"by\":\"uid 1 via cli\""));
		}
		if (strstr(line, "\"event\":\"deny\"") != NULL)
			assert_non_null(strstr(line, "not \\\\x1b[1mnow"));
	}
	fclose(f);
	unlink(path);
	/* 3 requests, 1 grant, 1 deny, 2 expires. */
	assert_int_equal(n, 7);
	escalate_free(e);
	policy_free(pol);
}

static int	woken, woken_timeout;

/* Note a wake-up. */
static void
wake_cb(const struct escalate_request *r, int timed_out, void *arg)
{
	woken++;
	woken_timeout += timed_out;
}

static int	notes[ESCALATE_NOTE_REFUSED + 1];

/* Count notes by kind. */
static void
note_cb(const struct escalate_event *ev, void *arg)
{
	notes[ev->note]++;
}

static struct escalate_event	last_event;
static char			last_sandbox[AUDIT_SANDBOX_ID_LEN];

/* Keep the last event (and its sandbox, which may not outlive it). */
static void
event_cb(const struct escalate_event *ev, void *arg)
{
	last_event = *ev;
	snprintf(last_sandbox, sizeof last_sandbox, "%s",
	    ev->sandbox != NULL ? ev->sandbox : "(null)");
	notes[ev->note]++;
}

/*
 * A sandbox's refusal is kept for it alone and told, with the sandbox;
 * a held connection is told with its sandbox and time; a sandbox gone,
 * its refusals are forgotten.
 */
static void
test_refused_events(void **state)
{
	struct escalate		*e = new_queue();
	struct escalate_sub	*sub;
	struct sandbox_refusal	 f;
	struct sandbox	*sb;
	enum escalate_filed	 fl;
	const char		*errstr;

	(void)state;
	memset(notes, 0, sizeof notes);
	assert_non_null(sub = escalate_subscribe(e, event_cb, NULL));
	assert_non_null(sb = sandbox_new("5", "curl x", 42, NULL));
	memset(&f, 0, sizeof f);
	host_parse("x.test", 6, &f.host, &errstr);
	f.port = 443;
	snprintf(f.why, sizeof f.why, "no rule");
	escalate_refused(e, sb, &f);
	escalate_refused(e, sb, &f);
	assert_int_equal(notes[ESCALATE_NOTE_REFUSED], 2);
	assert_int_equal(last_event.refusal->count, 2);
	assert_string_equal(last_sandbox, "5");
	assert_non_null(escalate_refused_find(e, "5", &f.host, 443));
	assert_null(escalate_refused_find(e, "", &f.host, 443));
	assert_null(escalate_refused_at(e, "6", 0));
	assert_non_null(escalate_ask(e, &f.host, 443, "connect", sb, NULL, NULL, 30,
	    wake_cb, NULL, &fl));
	assert_int_equal(notes[ESCALATE_NOTE_HELD], 1);
	assert_int_equal(last_event.secs, 30);
	assert_string_equal(last_sandbox, "5");
	assert_string_equal(last_event.request->host.text, "x.test");
	escalate_drop_sandbox(e, "5", 0);
	assert_null(escalate_refused_at(e, "5", 0));
	escalate_unsubscribe(sub);
	sandbox_unref(sb);
	escalate_free(e);
}

/*
 * A request keeps a copy of the sandbox that filed it first; joined from
 * another, it keeps the first and counts the other; its audit lines name
 * it.  One filed from no sandbox names none.  Approved once, it is the
 * first sandbox's alone: the other's held connection waits on, as a new
 * request of its own, which names it.
 */
static void
test_sandbox(void **state)
{
	struct escalate		*e = new_queue();
	struct escalate_request	*a, *b, *c, *m;
	struct sandbox	*one, *two;
	struct audit		*au;
	struct host		 h;
	uint16_t		 port;
	enum escalate_filed	 f;
	char *const		 argv1[] = { "pip", "install", "a b", NULL };
	char *const		 argv2[] = { "curl", NULL };
	char			 cmd[AUDIT_CMD_LEN];
	char			 err[256], path[] = "/tmp/test_escalate.XXXXXX";
	char			 line[4096], mid[ESCALATE_ID_LEN];
	char			 tid[ESCALATE_ID_LEN];
	const char		*errstr;
	FILE			*fp;
	int			 fd, named = 0, unnamed = 0, moved = 0;

	assert_true((fd = mkstemp(path)) != -1);
	close(fd);
	assert_non_null(au = audit_open(path, err, sizeof err));
	escalate_set_audit(e, au);
	audit_cmdline(argv1, cmd, sizeof cmd);
	assert_non_null(one = sandbox_new("sb1", cmd, 4242, NULL));
	audit_cmdline(argv2, cmd, sizeof cmd);
	assert_non_null(two = sandbox_new("sb2", cmd, 4343, NULL));
	host_port_parse("a.test", &h, &port, 443, &errstr);
	assert_int_equal(escalate_file(e, &h, port, "", 0, "agent", one, &a),
	    ESCALATE_FILED_NEW);
	sandbox_unref(one);	/* the request keeps a copy */
	assert_non_null(escalate_ask(e, &h, port, "connect", two, NULL, NULL, 60, wake_cb,
	    NULL, &f));
	assert_int_equal(f, ESCALATE_FILED_JOINED);
	assert_int_equal(escalate_file(e, &h, port, "", 0, "agent", two, &b),
	    ESCALATE_FILED_SAME);
	assert_ptr_equal(a, b);
	snprintf(tid, sizeof tid, "%s", escalate_id_for(a, "sb2"));
	assert_string_not_equal(tid, a->id);
	assert_string_equal(escalate_id_for(a, "sb1"), a->id);
	assert_string_equal(a->sandbox, "sb1");
	assert_string_equal(a->cmd, "pip install 'a b'");
	assert_int_equal(a->pid, 4242);
	assert_int_equal(a->count, 3);
	assert_int_equal(a->others, 2);
	host_port_parse("c.test", &h, &port, 443, &errstr);
	assert_int_equal(escalate_file(e, &h, port, "", 0, "agent", NULL, &c),
	    ESCALATE_FILED_NEW);
	assert_string_equal(c->sandbox, "");
	assert_string_equal(c->cmd, "");
	assert_int_equal(c->pid, -1);
	assert_int_equal(escalate_file(e, &h, port, "", 0, "agent", two, &b),
	    ESCALATE_FILED_JOINED);
	assert_string_equal(c->sandbox, "");
	assert_int_equal(c->others, 1);
	woken = 0;
	assert_int_equal(escalate_approve(e, a->id, ESCALATE_SCOPE_ONCE, 0,
	    NULL, "t", err, sizeof err), 0);
	assert_int_equal(woken, 0);	/* sb2's connection waits on */
	assert_int_equal(a->state, ESCALATE_APPROVED);
	assert_string_equal(a->sandbox, "sb1");
	assert_true(escalate_asked(a, "sb1"));
	assert_false(escalate_asked(a, "sb2"));
	assert_non_null(m = escalate_find(e, a->moved));
	snprintf(mid, sizeof mid, "%s", m->id);
	assert_int_equal(m->state, ESCALATE_PENDING);
	assert_string_equal(m->sandbox, "sb2");
	assert_string_equal(m->cmd, "curl");
	assert_int_equal(m->pid, 4343);
	assert_int_equal(m->count, 1);
	assert_int_equal(escalate_npending(e), 2);
	/* Each sandbox, asking by its own id, is shown its own. */
	assert_ptr_equal(escalate_find_for(e, a->id, "sb1"), a);
	assert_ptr_equal(escalate_find_for(e, tid, "sb2"), m);
	assert_null(escalate_find_for(e, a->id, "sb2"));
	assert_null(escalate_find_for(e, tid, "sb1"));
	assert_null(escalate_find_for(e, m->id, "sb1"));
	assert_null(escalate_find_for(e, m->id, "sb2"));
	assert_null(escalate_find_for(e, a->id, ""));
	assert_int_equal(escalate_deny(e, mid, NULL, "t", err, sizeof err), 0);
	assert_int_equal(woken, 1);
	assert_int_equal(escalate_deny(e, c->id, NULL, "t", err, sizeof err),
	    0);
	sandbox_unref(two);
	audit_close(au);
	assert_non_null(fp = fopen(path, "r"));
	while (fgets(line, sizeof line, fp) != NULL) {
		if (strstr(line, a->id) != NULL) {
			assert_non_null(strstr(line, "\"sandbox\":\"sb1\","
			    "\"cmd\":\"pip install 'a b'\",\"pid\":4242"));
			named++;
		} else if (strstr(line, mid) != NULL) {
			assert_non_null(strstr(line, "\"sandbox\":\"sb2\","
			    "\"cmd\":\"curl\",\"pid\":4343"));
			moved++;
		} else {
			assert_null(strstr(line, "\"sandbox\""));
			assert_null(strstr(line, "\"pid\""));
			unnamed++;
		}
	}
	fclose(fp);
	unlink(path);
	assert_int_equal(named, 2);	/* request, grant */
	assert_int_equal(moved, 2);	/* request, deny */
	assert_int_equal(unnamed, 2);	/* request, deny */
	escalate_free(e);
}

/* A session's name is kept whole: a harness's UUID, the longest name. */
static void
test_session_whole(void **state)
{
	static const char	*uuid = "50b3b6dd-2673-4c68-96f5-efb9b059071d";
	char			 longest[CONTROL_NAME_MAX + 1];
	struct escalate		*e;

	(void)state;
	assert_non_null(e = escalate_create(NULL, uuid, NULL));
	assert_string_equal(escalate_session(e), uuid);
	escalate_free(e);
	memset(longest, 'n', CONTROL_NAME_MAX);
	longest[CONTROL_NAME_MAX] = '\0';
	assert_true(control_session_name_ok(longest));
	assert_non_null(e = escalate_create(NULL, longest, NULL));
	assert_string_equal(escalate_session(e), longest);
	escalate_free(e);
}

/* Waiters wake on a decision or a timeout; subscribers hear it all. */
static void
test_waiters(void **state)
{
	struct event_base	*base = event_base_new();
	struct escalate		*e;
	struct escalate_request	*a, *b;
	struct escalate_sub	*sub;
	struct escalate_waiter	*w;
	struct host		 h;
	uint16_t		 port;
	const char		*errstr;
	char			 err[128];

	assert_non_null(e = escalate_create(base, NULL, NULL));
	assert_int_equal(strlen(escalate_session(e)), 8);
	memset(notes, 0, sizeof notes);
	assert_non_null(sub = escalate_subscribe(e, note_cb, NULL));
	woken = woken_timeout = 0;
	host_port_parse("a.test", &h, &port, 443, &errstr);
	escalate_file(e, &h, port, "", 0, "agent", NULL, &a);
	host_port_parse("b.test", &h, &port, 443, &errstr);
	escalate_file(e, &h, port, "", 0, "connect", NULL, &b);
	assert_non_null(escalate_wait(e, a, "", 60, wake_cb, NULL));
	assert_non_null(escalate_wait(e, a, "", 60, wake_cb, NULL));
	assert_non_null(escalate_wait(e, b, "", 0, wake_cb, NULL));
	assert_non_null(w = escalate_wait(e, b, "", 60, wake_cb, NULL));
	escalate_wait_cancel(w);
	assert_int_equal(escalate_approve(e, a->id, ESCALATE_SCOPE_ONCE, 0,
	    NULL, "t", err, sizeof err), 0);
	assert_int_equal(woken, 2);
	assert_int_equal(woken_timeout, 0);
	event_base_loop(base, EVLOOP_NONBLOCK);
	event_base_loop(base, EVLOOP_NONBLOCK);
	assert_int_equal(woken, 3);
	assert_int_equal(woken_timeout, 1);
	escalate_blocked(e, NULL, &h, 443, "dns", NULL);
	assert_int_equal(notes[ESCALATE_NOTE_REQUEST], 2);
	assert_int_equal(notes[ESCALATE_NOTE_DECIDED], 1);
	assert_int_equal(notes[ESCALATE_NOTE_BLOCKED], 1);
	escalate_unsubscribe(sub);
	/* Ask mode: a held connection joins the open request. */
	{
		enum escalate_filed	f;

		assert_non_null(escalate_ask(e, &b->host, b->port, "connect",
		    NULL, NULL, NULL, 60, wake_cb, NULL, &f));
		assert_int_equal(f, ESCALATE_FILED_SAME);
		assert_int_equal(b->count, 2);
		assert_int_equal(escalate_deny(e, b->id, NULL, "t", err,
		    sizeof err), 0);
		assert_int_equal(woken, 4);
		woken = 3;
	}
	/* A waiter left at free is freed without a call. */
	escalate_file(e, &h, 8443, "", 0, "agent", NULL, &b);
	assert_non_null(escalate_wait(e, b, "", 60, wake_cb, NULL));
	escalate_free(e);
	assert_int_equal(woken, 3);
	event_base_free(base);
}

/* The blocked ring counts repeats and keeps the newest. */
static void
test_blocked(void **state)
{
	struct escalate			*e = new_queue();
	const struct escalate_blocked	*b;
	struct host			 h;
	uint16_t			 port;
	const char			*err;
	char				 name[32];
	int				 i;

	host_port_parse("x.test", &h, &port, 443, &err);
	escalate_blocked(e, NULL, &h, 443, "connect", NULL);
	fake_now++;
	escalate_blocked(e, NULL, &h, 443, "connect", NULL);
	assert_non_null(b = escalate_blocked_at(e, 0));
	assert_int_equal(b->count, 2);
	assert_null(escalate_blocked_at(e, 1));
	for (i = 0; i < ESCALATE_BLOCKED_MAX + 5; i++) {
		fake_now++;
		snprintf(name, sizeof name, "n%d.test", i);
		host_port_parse(name, &h, &port, 443, &err);
		escalate_blocked(e, NULL, &h, 443, "dns", NULL);
	}
	assert_non_null(b = escalate_blocked_at(e, 0));
	snprintf(name, sizeof name, "n%d.test", ESCALATE_BLOCKED_MAX + 4);
	assert_string_equal(b->host.text, name);
	assert_non_null(escalate_blocked_at(e, ESCALATE_BLOCKED_MAX - 1));
	assert_null(escalate_blocked_at(e, ESCALATE_BLOCKED_MAX));
	escalate_free(e);
}

/* Each sandbox's blocked attempts are its own entries, naming it. */
static void
test_blocked_sandbox(void **state)
{
	struct escalate			*e = new_queue();
	const struct escalate_blocked	*b;
	struct sandbox		*one, *two;
	struct host			 h;
	uint16_t			 port;
	const char			*err;

	assert_non_null(one = sandbox_new("1", "a", 1, NULL));
	assert_non_null(two = sandbox_new("2", "b", 2, NULL));
	host_port_parse("x.test", &h, &port, 443, &err);
	escalate_blocked(e, one, &h, 443, "connect", NULL);
	fake_now++;
	escalate_blocked(e, two, &h, 443, "connect", NULL);
	fake_now++;
	escalate_blocked(e, one, &h, 443, "connect", NULL);
	assert_non_null(b = escalate_blocked_at(e, 0));
	assert_string_equal(b->sandbox, "1");
	assert_int_equal(b->count, 2);
	assert_non_null(b = escalate_blocked_at(e, 1));
	assert_string_equal(b->sandbox, "2");
	assert_int_equal(b->count, 1);
	assert_null(escalate_blocked_at(e, 2));
	sandbox_unref(one);
	sandbox_unref(two);
	escalate_free(e);
}

/* Untrusted text: controls escaped, UTF-8 kept, cut at a boundary. */
static void
test_clean(void **state)
{
	static const struct {
		const char	*in;
		size_t		 max;
		const char	*out;
	} t[] = {
		{ "plain text", 200, "plain text" },
		{ "\x1b[31mred", 200, "\\x1b[31mred" },
		{ "bell\a, tab\t, nl\n, del\x7f", 200,
		    "bell\\x07, tab\\x09, nl\\x0a, del\\x7f" },
		{ "c1 \xc2\x9b" "31m", 200, "c1 \\u009b31m" },
		{ "bidi \xe2\x80\xae" "evil", 200, "bidi \\u202eevil" },
		{ "caf\xc3\xa9", 200, "caf\xc3\xa9" },
		{ "bad \xff\xfe utf", 200, "bad \\xff\\xfe utf" },
		{ "overlong \xc0\xaf", 200, "overlong \\xc0\\xaf" },
		{ "caf\xc3\xa9", 4, "caf" },
		{ "abcdef", 3, "abc" },
	};
	char	out[ESCALATE_TEXT_LEN];
	size_t	i;

	for (i = 0; i < sizeof t / sizeof t[0]; i++) {
		escalate_clean(t[i].in, strlen(t[i].in), t[i].max, out,
		    sizeof out);
		assert_string_equal(out, t[i].out);
	}
	/* The worst case fits 4 * max + 1. */
	memset(out, 0, sizeof out);
	{
		char	in[ESCALATE_REASON_MAX];

		memset(in, 0x1b, sizeof in);
		assert_int_equal(escalate_clean(in, sizeof in,
		    ESCALATE_REASON_MAX, out, sizeof out),
		    4 * ESCALATE_REASON_MAX);
	}
}

/* Durations and scopes. */
static void
test_parse(void **state)
{
	enum escalate_scope	sc;

	assert_int_equal(escalate_duration_parse("90"), 90);
	assert_int_equal(escalate_duration_parse("90s"), 90);
	assert_int_equal(escalate_duration_parse("15m"), 900);
	assert_int_equal(escalate_duration_parse("2h"), 7200);
	assert_int_equal(escalate_duration_parse("7d"), 7 * 86400);
	assert_int_equal(escalate_duration_parse(""), -1);
	assert_int_equal(escalate_duration_parse("m"), -1);
	assert_int_equal(escalate_duration_parse("5x"), -1);
	assert_int_equal(escalate_duration_parse("5mm"), -1);
	assert_int_equal(escalate_duration_parse("-5"), -1);
	assert_int_equal(escalate_duration_parse("9999999999"), -1);
	assert_int_equal(escalate_duration_parse("400d"), -1);
	assert_int_equal(escalate_scope_parse("session", &sc), 0);
	assert_int_equal(sc, ESCALATE_SCOPE_SESSION);
	assert_int_equal(escalate_scope_parse("forever", &sc), -1);
}

/* The hint names the exact command. */
static void
test_hint(void **state)
{
	struct host	 h;
	uint16_t	 port;
	const char	*err;
	char		 buf[300];

	host_port_parse("[2001:db8::1]:8443", &h, &port, 443, &err);
	escalate_hint(&h, port, buf, sizeof buf);
	assert_string_equal(buf, "pinhole request [2001:db8::1]:8443");
	host_port_parse("PyPI.org", &h, &port, 443, &err);
	escalate_hint(&h, port, buf, sizeof buf);
	assert_string_equal(buf, "pinhole request pypi.org:443");
}

/* Give the queue the policy "allow ok.test". */
static struct policy *
grants_setup(struct escalate *e, struct rules **rules)
{
	char	err[256];

	assert_non_null(*rules = rules_create());
	assert_int_equal(rules_load_text(*rules, "--allow", "allow ok.test",
	    13, err, sizeof err), 0);
	return (policy_setup(e, *rules));
}

/* Approvals become the policy's grants; "allowed" asks the policy. */
static void
test_grants_policy(void **state)
{
	struct escalate		*e = new_queue();
	struct escalate_request	*a, *b;
	struct policy		*pol;
	struct rules		*rules;
	struct grant		 g;
	char			 err[256];

	pol = grants_setup(e, &rules);
	file(e, "new.test:8443", "", &a);
	file(e, "other.test", "", &b);
	assert_int_equal(escalate_allowed(e, &a->host, 8443, NULL), 0);
	assert_int_equal(escalate_allowed(e, &b->host, 443, NULL), 0);
	assert_int_equal(escalate_approve(e, a->id, ESCALATE_SCOPE_SESSION, 60,
	    NULL, "uid 1 via cli", err, sizeof err), 0);
	assert_int_equal(escalate_allowed(e, &a->host, 8443, NULL), 1);
	assert_int_equal(grants_match(policy_grants(pol), &a->host, 8443, "", fake_ms,
	    &g), 1);
	assert_string_equal(g.id, a->id);
	assert_string_equal(g.who, "uid 1 via cli");
	fake_ms += 61000;
	assert_int_equal(escalate_allowed(e, &a->host, 8443, NULL), 0);
	/* always without a policy file is refused, and stays pending. */
	assert_int_equal(escalate_approve(e, b->id, ESCALATE_SCOPE_ALWAYS, 0,
	    NULL, "x", err, sizeof err), -1);
	assert_non_null(strstr(err, "no policy file"));
	assert_int_equal(b->state, ESCALATE_PENDING);
	escalate_free(e);
	policy_free(pol);
}

static struct escalate_request	*woken_on;

/* Note the request a wait ended on. */
static void
wake_on_cb(const struct escalate_request *r, int timed_out, void *arg)
{
	woken_on = (struct escalate_request *)r;
	woken++;
}

/* File host:port from a sandbox. */
static struct escalate_request *
file_from(struct escalate *e, const char *target, struct sandbox *sb)
{
	struct escalate_request	*r;
	struct host		 h;
	uint16_t		 port;
	const char		*err;

	assert_int_equal(host_port_parse(target, &h, &port, 443, &err), 0);
	assert_true(escalate_file(e, &h, port, "", 0, "agent", sb, &r) <=
	    ESCALATE_FILED_JOINED);
	return (r);
}

/*
 * A once approval opens the host for one sandbox: the first that asked,
 * or the one named, which must have asked; it never takes the place of
 * another sandbox's once grant.  The others that asked wait on, their
 * waiters moved to a new request, told as new; its own waiter wakes.  A
 * session approval serves every sandbox.
 */
static void
test_once_sandbox(void **state)
{
	struct escalate		*e = new_queue();
	struct escalate_request	*a, *m, *m2;
	struct policy		*pol;
	struct sandbox	*sb[3];
	struct rules		*rules;
	struct grant		 g;
	char			 err[256];
	char			 id2[ESCALATE_ID_LEN], id3[ESCALATE_ID_LEN];
	int			 i;

	pol = grants_setup(e, &rules);
	for (i = 0; i < 3; i++) {
		snprintf(err, sizeof err, "%d", i + 1);
		assert_non_null(sb[i] = sandbox_new(err, "sh", 100 + i, NULL));
	}
	a = file_from(e, "new.test", sb[0]);
	assert_ptr_equal(file_from(e, "new.test", sb[1]), a);
	assert_ptr_equal(file_from(e, "new.test", sb[2]), a);
	assert_int_equal(a->naskers, 3);
	snprintf(id2, sizeof id2, "%s", escalate_id_for(a, "2"));
	snprintf(id3, sizeof id3, "%s", escalate_id_for(a, "3"));
	assert_string_not_equal(id2, a->id);
	assert_string_not_equal(id3, a->id);
	assert_string_not_equal(id2, id3);
	woken = 0;
	woken_on = NULL;
	for (i = 0; i < 3; i++)
		assert_non_null(escalate_wait(e, a, sandbox_id(sb[i]), 60, wake_on_cb,
		    NULL));
	memset(notes, 0, sizeof notes);
	assert_non_null(escalate_subscribe(e, note_cb, NULL));
	assert_int_equal(escalate_approve(e, a->id, ESCALATE_SCOPE_ONCE, 0,
	    NULL, "t", err, sizeof err), 0);
	assert_int_equal(woken, 1);	/* sandbox 1's */
	assert_ptr_equal(woken_on, a);
	assert_int_equal(notes[ESCALATE_NOTE_DECIDED], 1);
	assert_int_equal(notes[ESCALATE_NOTE_REQUEST], 1);
	assert_int_equal(escalate_allowed(e, &a->host, 443, sb[0]), 1);
	assert_int_equal(escalate_allowed(e, &a->host, 443, sb[1]), 0);
	assert_int_equal(escalate_allowed(e, &a->host, 443, NULL), 0);
	assert_int_equal(grants_match(sb[0]->once, &a->host, 443, "1", fake_ms,
	    &g), 1);
	assert_string_equal(g.id, a->id);
	assert_string_equal(g.sandbox, "1");
	/* Sandboxes 2 and 3 wait on the request their ask went on as. */
	assert_non_null(m = escalate_find(e, a->moved));
	assert_int_equal(m->state, ESCALATE_PENDING);
	assert_int_equal(m->naskers, 2);
	assert_string_equal(m->sandbox, "2");
	assert_int_equal(m->others, 1);
	/* Named: it must have asked, and only once grants name one. */
	assert_int_equal(escalate_approve(e, m->id, ESCALATE_SCOPE_ONCE, 0,
	    "1", "t", err, sizeof err), -1);
	assert_non_null(strstr(err, "sandbox 1 has not asked"));
	assert_int_equal(escalate_approve(e, m->id, ESCALATE_SCOPE_SESSION, 0,
	    "3", "t", err, sizeof err), -1);
	assert_non_null(strstr(err, "only for a once approval"));
	assert_int_equal(m->state, ESCALATE_PENDING);
	assert_int_equal(escalate_approve(e, m->id, ESCALATE_SCOPE_ONCE, 0,
	    "3", "t", err, sizeof err), 0);
	assert_int_equal(woken, 2);	/* sandbox 3's */
	assert_ptr_equal(woken_on, m);
	assert_string_equal(m->sandbox, "3");
	assert_int_equal(escalate_allowed(e, &a->host, 443, sb[2]), 1);
	assert_int_equal(escalate_allowed(e, &a->host, 443, sb[0]), 1);
	assert_int_equal(escalate_allowed(e, &a->host, 443, sb[1]), 0);
	/* Used up by sandbox 1: the others' stay. */
	assert_int_equal(grants_consume(sb[0]->once, a->id), 0);
	assert_int_equal(escalate_allowed(e, &a->host, 443, sb[0]), 0);
	assert_int_equal(escalate_allowed(e, &a->host, 443, sb[2]), 1);
	/* Sandbox 2 finds its request by its own id, and wakes on it. */
	assert_non_null(m2 = escalate_find(e, m->moved));
	assert_ptr_equal(escalate_find_for(e, id2, "2"), m2);
	assert_ptr_equal(escalate_find_for(e, id3, "3"), m);
	assert_null(escalate_find_for(e, a->id, "2"));
	assert_null(escalate_find_for(e, m2->id, "3"));
	assert_null(escalate_find_for(e, id2, "3"));
	assert_ptr_equal(escalate_find(e, id2), m2);
	assert_int_equal(escalate_approve(e, m2->id, ESCALATE_SCOPE_SESSION, 0,
	    NULL, "t", err, sizeof err), 0);
	assert_int_equal(woken, 3);
	assert_ptr_equal(woken_on, m2);
	assert_int_equal(escalate_allowed(e, &a->host, 443, sb[0]), 1);
	assert_int_equal(escalate_allowed(e, &a->host, 443, NULL), 1);
	/* A sandbox gone: no longer its; an open one names the next. */
	a = file_from(e, "gone.test", sb[0]);
	file_from(e, "gone.test", sb[1]);
	escalate_drop_sandbox(e, "1", 0);
	assert_false(escalate_asked(a, "1"));
	assert_string_equal(a->sandbox, "2");
	assert_int_equal(a->pid, 101);
	assert_null(escalate_find_for(e, a->id, "1"));
	for (i = 0; i < 3; i++)
		sandbox_unref(sb[i]);
	escalate_free(e);
	policy_free(pol);
}

/* always with a TTL writes the rule with its end; ended rules are not
 * listed as allowed. */
static void
test_grants_always(void **state)
{
	struct escalate		*e = new_queue();
	struct escalate_request	*a;
	struct policy		*pol;
	struct rules		*rules;
	char			 path[] = "/tmp/test_escalate.XXXXXX";
	char			 err[256], text[1024];
	FILE			*f;
	int			 fd;

	(void)state;
	assert_true((fd = mkstemp(path)) != -1);
	assert_non_null(f = fdopen(fd, "w"));
	fputs("allow old.test until 2001-01-01T00:00:00Z\n"
	    "allow kept.test until 2999-01-01T00:00:00Z\n", f);
	fclose(f);
	assert_non_null(rules = rules_create());
	assert_int_equal(rules_load_file(rules, path, err, sizeof err), 0);
	pol = policy_setup(e, rules);
	assert_int_equal(policy_set_always(pol, path), 0);
	rules_text(policy_rules(pol), text, sizeof text);
	assert_string_equal(text, "allow kept.test until 2999-01-01T00:00:00Z\n");
	file(e, "new.test:8443", "", &a);
	assert_int_equal(escalate_approve(e, a->id, ESCALATE_SCOPE_ALWAYS, 3600,
	    NULL, "uid 1 via cli", err, sizeof err), 0);
	assert_non_null(f = fopen(path, "r"));
	text[fread(text, 1, sizeof text - 1, f)] = '\0';
	fclose(f);
	assert_non_null(strstr(text, "\nallow new.test:8443 until 2"));
	/* The approval says where: the file, the line, the rule. */
	snprintf(text, sizeof text, "%s:3: allow new.test:8443 until 2", path);
	assert_memory_equal(a->written, text, strlen(text));
	unlink(path);
	escalate_free(e);
	policy_free(pol);
}

static void	load_rule(struct rules *, const char *, const char *);

/*
 * A host the policy allows only with request checks is not allowed
 * already: a request for it is filed, saying what a grant lifts and the
 * request the checks refused the sandbox last; once granted it is
 * allowed.  A host allowed without checks is allowed already.
 */
static void
test_grants_lifts(void **state)
{
	struct escalate		*e = new_queue();
	struct escalate_request	*a;
	struct policy		*pol;
	struct sandbox_refusal	 f;
	struct sandbox	*sb;
	struct rules		*rules;
	struct host		 h;
	const char		*errstr;
	char			 err[256];

	(void)state;
	pol = grants_setup(e, &rules);
	load_rule(rules, "--allow", "allow ro.test read-only");

	assert_non_null(sb = sandbox_new("7", "agent", 42, NULL));
	assert_int_equal(host_parse("ro.test", 7, &h, &errstr), 0);
	assert_int_equal(escalate_allowed(e, &h, 443, sb), 0);
	assert_int_equal(escalate_allowed(e, &h, 443, NULL), 0);
	memset(&f, 0, sizeof f);
	f.host = h;
	f.port = 443;
	snprintf(f.via, sizeof f.via, "connect");
	snprintf(f.what, sizeof f.what, "POST /up");
	snprintf(f.why, sizeof f.why, "read-only: POST is not a read");
	f.ask = 1;
	escalate_refused(e, sb, &f);
	a = file_from(e, "ro.test", sb);
	assert_string_equal(a->lifts, "the request checks of the rule "
	    "'allow ro.test read-only' (--allow), which refused POST /up: "
	    "read-only: POST is not a read");
	assert_int_equal(escalate_approve(e, a->id, ESCALATE_SCOPE_SESSION, 0,
	    NULL, "uid 1 via cli", err, sizeof err), 0);
	assert_int_equal(escalate_allowed(e, &h, 443, sb), 1);
	assert_string_equal(a->written, "");
	a = file_from(e, "ok.test", sb);
	assert_string_equal(a->lifts, "");
	assert_int_equal(escalate_allowed(e, &a->host, 443, sb), 1);
	sandbox_unref(sb);
	escalate_free(e);
	policy_free(pol);
}

/* Load one rule as if given on the command line. */
static void
load_rule(struct rules *rules, const char *origin, const char *rule)
{
	char	err[256];

	assert_int_equal(rules_load_text(rules, origin, rule, strlen(rule),
	    err, sizeof err), 0);
}

/*
 * A target no grant can open is refused when filed, with the reason;
 * approving a request the policy has since put beyond any grant fails
 * and leaves it pending; a name the gateway refused for its private
 * address is refused too.  The agent sees rules given on the command
 * line among the policy.
 */
static void
test_grants_fixed(void **state)
{
	struct escalate		*e = new_queue();
	struct escalate_request	*a, *r;
	struct policy		*pol;
	struct rules		*rules;
	struct grant		 g;
	struct host		 h;
	const char		*es;
	char			 err[1024], text[256];

	(void)state;
	assert_non_null(rules = rules_create());
	load_rule(rules, "--allow", "allow ok.test");
	load_rule(rules, "--deny", "deny bad.test");
	load_rule(rules, "--allow", "allow-private 10.9.0.0/16");
	pol = policy_setup(e, rules);
	rules_text(policy_rules(pol), text, sizeof text);
	assert_string_equal(text, "allow ok.test\ndeny bad.test\n"
	    "allow-private 10.9.0.0/16\n");

	assert_int_equal(file(e, "bad.test", "", &r), ESCALATE_FILED_FIXED);
	assert_null(r);
	assert_int_equal(escalate_npending(e), 0);
	assert_int_equal(host_parse("bad.test", 8, &h, &es), 0);
	assert_int_equal(escalate_fixed(e, "", &h, 443, err, sizeof err), 1);
	assert_string_equal(err, "denied by the rule 'deny bad.test' (--deny), "
	    "which no approval can override: to allow it, that rule must be "
	    "removed from the policy");
	assert_int_equal(file(e, "10.1.2.3:80", "", &r), ESCALATE_FILED_FIXED);
	assert_int_equal(file(e, "169.254.169.254:80", "", &r),
	    ESCALATE_FILED_FIXED);
	assert_int_equal(file(e, "10.9.1.1:80", "", &r), ESCALATE_FILED_NEW);

	/* A deny rule added after filing: approve fails, still pending. */
	assert_int_equal(file(e, "late.test", "", &a), ESCALATE_FILED_NEW);
	load_rule(rules, "--deny", "deny late.test");
	assert_int_equal(escalate_approve(e, a->id, ESCALATE_SCOPE_SESSION, 0,
	    NULL, "uid 1 via cli", err, sizeof err), -1);
	assert_non_null(strstr(err, "cannot approve "));
	assert_non_null(strstr(err, ": denied by the rule 'deny late.test'"));
	assert_int_equal(a->state, ESCALATE_PENDING);
	assert_int_equal(grants_match(policy_grants(pol), &a->host, 443, "", fake_ms, &g),
	    0);

	/* The gateway refused a name for its address: no request for it. */
	assert_int_equal(host_parse("ok.test", 7, &h, &es), 0);
	escalate_blocked(e, NULL, &h, 8080, "connect", "127.0.0.1 is ...");
	assert_int_equal(file(e, "ok.test:8080", "", &r), ESCALATE_FILED_FIXED);
	assert_int_equal(escalate_fixed(e, "", &h, 8080, err, sizeof err), 1);
	assert_string_equal(err, "127.0.0.1 is ...");
	assert_int_equal(escalate_fixed(e, "", &h, 443, err, sizeof err), 0);
	/* Another sandbox's refusal is not this one's; the person sees it. */
	assert_int_equal(escalate_fixed(e, "7", &h, 8080, err, sizeof err), 0);
	assert_int_equal(escalate_fixed(e, NULL, &h, 8080, err, sizeof err),
	    1);
	escalate_blocked(e, NULL, &h, 8080, "connect", NULL);
	assert_int_equal(escalate_fixed(e, "", &h, 8080, err, sizeof err), 0);
	escalate_free(e);
	policy_free(pol);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_coalesce),
		cmocka_unit_test(test_joined),
		cmocka_unit_test(test_bound_and_rate),
		cmocka_unit_test(test_states),
		cmocka_unit_test(test_session_whole),
		cmocka_unit_test(test_waiters),
		cmocka_unit_test(test_sandbox),
		cmocka_unit_test(test_refused_events),
		cmocka_unit_test(test_blocked),
		cmocka_unit_test(test_blocked_sandbox),
		cmocka_unit_test(test_once_sandbox),
		cmocka_unit_test(test_clean),
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_hint),
		cmocka_unit_test(test_grants_policy),
		cmocka_unit_test(test_grants_always),
		cmocka_unit_test(test_grants_fixed),
		cmocka_unit_test(test_grants_lifts),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
