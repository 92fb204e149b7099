/*
 * Unit tests for the flat JSON reader and writer, the control protocol
 * (a table of request lines and the replies they get) and the agent
 * endpoint's request handling.
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lib/json.h"
#include "proxy/escalate/agent.h"
#include "proxy/escalate/control.h"
#include "proxy/escalate/control-proto.h"
#include "proxy/escalate/escalate.h"
#include "rules/policy.h"

/* JSON texts the reader accepts or refuses. */
static void
test_json_table(void **state)
{
	static const struct {
		const char	*in;
		int		 ok;
	} t[] = {
		{ "{}", 1 },
		{ " {\"a\":1} \n", 1 },
		{ "{\"a\":\"x\",\"b\":-12,\"c\":true,\"d\":false,\"e\":null}", 1 },
		{ "{\"a\":\"\\u00e9\\ud83d\\ude00\\n\\\"\\\\\\/\"}", 1 },
		{ "{\"a\":0}", 1 },
		{ "", 0 },
		{ "[]", 0 },
		{ "{", 0 },
		{ "{\"a\"}", 0 },
		{ "{\"a\":}", 0 },
		{ "{\"a\":1,}", 0 },
		{ "{\"a\":1}{}", 0 },
		{ "{\"a\":1,\"a\":2}", 0 },
		{ "{\"a\":{}}", 0 },
		{ "{\"a\":[1]}", 0 },
		{ "{\"a\":1.5}", 0 },
		{ "{\"a\":1e3}", 0 },
		{ "{\"a\":01}", 0 },
		{ "{\"a\":-}", 0 },
		{ "{\"a\":1234567890123456}", 0 },
		{ "{\"a\":tru}", 0 },
		{ "{\"a\":\"\\u0000\"}", 0 },
		{ "{\"a\":\"\\ud800\"}", 0 },
		{ "{\"a\":\"\\udc00\"}", 0 },
		{ "{\"a\":\"\\ud800\\u0041\"}", 0 },
		{ "{\"a\":\"\\x41\"}", 0 },
		{ "{\"a\":\"tab\there\"}", 0 },
		{ "{\"a\":\"\xff\"}", 0 },
		{ "{\"a\":\"\xc0\xaf\"}", 0 },
		{ "{'a':1}", 0 },
	};
	struct json_obj	 o;
	const char	*err;
	size_t		 i;

	for (i = 0; i < sizeof t / sizeof t[0]; i++) {
		if ((json_parse(t[i].in, strlen(t[i].in), &o, &err) == 0) !=
		    t[i].ok)
			fail_msg("json_parse(%s): expected %s", t[i].in,
			    t[i].ok ? "ok" : "error");
	}
}

/* Values come out decoded and typed. */
static void
test_json_values(void **state)
{
	static const char	 in[] = "{\"s\":\"caf\\u00e9 \\ud83d\\ude00\","
	    "\"n\":-42,\"b\":true,\"z\":null}";
	struct json_obj		 o;
	const char		*err;
	int64_t			 n;

	assert_int_equal(json_parse(in, strlen(in), &o, &err), 0);
	assert_string_equal(json_get_str(&o, "s"), "caf\xc3\xa9 \xf0\x9f\x98\x80");
	assert_int_equal(json_get_int(&o, "n", &n), 0);
	assert_int_equal(n, -42);
	assert_int_equal(json_get(&o, "b")->type, JSON_BOOL);
	assert_int_equal(json_get(&o, "z")->type, JSON_NULL);
	assert_null(json_get_str(&o, "n"));
	assert_int_equal(json_get_int(&o, "s", &n), -1);
}

/* The writer escapes, and its output reads back the same. */
static void
test_json_writer(void **state)
{
	struct json_writer	 w;
	struct json_obj		 o;
	const char		*err;
	static const char	 nasty[] = "q\" b\\ \x1b[2J \xe2\x80\xae \xff";

	json_writer_init(&w, 0);
	json_open(&w);
	json_put_str(&w, "s", nasty);
	json_put_int(&w, "n", 7);
	json_put_bool(&w, "b", 0);
	json_close(&w);
	assert_false(w.failed);
	assert_string_equal(w.buf, "{\"s\":\"q\\\" b\\\\ \\u001b[2J \\u202e "
	    "\\ufffd\",\"n\":7,\"b\":false}");
	assert_int_equal(json_parse(w.buf, w.len, &o, &err), 0);
	assert_string_equal(json_get_str(&o, "s"),
	    "q\" b\\ \x1b[2J \xe2\x80\xae \xef\xbf\xbd");
	json_writer_free(&w);
	json_writer_init(&w, 8);
	json_put_raw(&w, "123456789", 9);
	assert_true(w.failed);
	json_writer_free(&w);
}

/* Run one control line and return the reply text (static buffer). */
static const char *
control_run(struct escalate *e, struct control_peer *peer, const char *line,
    int *want)
{
	static char		buf[65536];
	struct json_writer	w;

	json_writer_init(&w, 0);
	*want = control_handle(e, peer, "http://10.0.0.1:3128", line,
	    strlen(line), &w);
	snprintf(buf, sizeof buf, "%s", w.buf != NULL ? w.buf : "");
	json_writer_free(&w);
	return (buf);
}

/* Copy a line, writing the ids for the placeholders ID0 and ID1. */
static void
subst(char *out, size_t len, const char *in, const char *id0,
    const char *id1)
{
	size_t	o = 0;

	for (; *in != '\0' && o + ESCALATE_ID_LEN < len; in++) {
		if (strncmp(in, "ID0", 3) == 0 || strncmp(in, "ID1", 3) == 0) {
			o += snprintf(out + o, len - o, "%s",
			    in[2] == '0' ? id0 : id1);
			in += 2;
		} else
			out[o++] = *in;
	}
	out[o] = '\0';
}

/* The epoch, for times the table can name. */
static time_t
zero_clock(void)
{
	return (0);
}

static time_t	fake_now;

/* A clock the test moves. */
static time_t
fake_clock(void)
{
	return (fake_now);
}

/* A table of control lines and what their replies must contain. */
static void
test_control_table(void **state)
{
	struct escalate		*e;
	struct escalate_request	*r;
	struct sandbox	*sb;
	struct control_peer	 peer = { 1000, 0 };
	struct host		 h;
	uint16_t		 port;
	struct json_obj		 obj;
	const char		*err, *out, *nl;
	char *const		 argv[] = { "sh", "-c", "echo \x1b[2J",
				    NULL };
	char			 cmd[AUDIT_CMD_LEN];
	char			 line[512];
	int			 want = 0;
	size_t			 i;
	static const struct {
		const char	*line;
		const char	*reply;
	} t[] = {
		{ "{\"op\":\"hello\",\"id\":1}",
		    "{\"id\":1,\"ok\":true,\"session\":\"s0000001\",\"version\":1" },
		{ "{\"op\":\"status\",\"id\":2}", "\"pending\":2" },
		{ "{\"op\":\"status\",\"id\":2}", "\"agent\":\"http://10.0.0.1:3128\"" },
		{ "not json", "{\"ok\":false,\"error\":\"bad JSON: object expected\"}" },
		{ "{\"id\":3}", "{\"id\":3,\"ok\":false,\"error\":\"\\\"op\\\" missing\"}" },
		{ "{\"op\":\"fly\",\"id\":4}", "\"error\":\"unknown op\"" },
		{ "{\"op\":\"hello\",\"id\":\"x\"}", "\"id\\\" must be an integer" },
		{ "{\"op\":\"pending\",\"id\":5}", "\"item\":\"request\"" },
		{ "{\"op\":\"pending\",\"id\":5}", "\"count\":1,"
		    "\"sandbox\":\"sb1\",\"cmd\":\"sh -c 'echo \\u001b[2J'\","
		    "\"pid\":4242,\"state\":\"pending\"" },
		{ "{\"op\":\"pending\",\"id\":5}", "\"host\":\"b.test\","
		    "\"port\":443,\"reason\":\"r b\",\"via\":\"agent\","
		    "\"since\":\"1970-01-01T00:00:00Z\",\"count\":2,"
		    "\"others\":1,\"sandboxes\":\"- sb1\","
		    "\"state\":\"pending\"" },
		{ "{\"op\":\"pending\",\"id\":5}", "\"requests\":2,\"blocked\":1}" },
		{ "{\"op\":\"pending\",\"id\":5,\"all\":1}", "\"all\\\" must be" },
		{ "{\"op\":\"approve\",\"id\":6}", "must name a request id" },
		{ "{\"op\":\"approve\",\"id\":6,\"request\":\"rzzzz\"}",
		    "no request rzzzz in session s0000001" },
		{ "{\"op\":\"approve\",\"id\":6,\"request\":\"ID0\",\"scope\":\"forever\"}",
		    "\"scope\\\" must be" },
		{ "{\"op\":\"approve\",\"id\":6,\"request\":\"ID0\",\"ttl\":\"soon\"}",
		    "\"ttl\\\" must be" },
		{ "{\"op\":\"approve\",\"id\":7,\"request\":\"ID0\",\"scope\":\"session\",\"ttl\":\"15m\"}",
		    "\"state\":\"approved\",\"decided\":" },
		{ "{\"op\":\"approve\",\"id\":8,\"request\":\"ID0\"}",
		    "already approved" },
		{ "{\"op\":\"deny\",\"id\":9,\"request\":\"ID1\",\"reason\":5}",
		    "\"reason\\\" must be a string" },
		{ "{\"op\":\"deny\",\"id\":9,\"request\":\"ID1\",\"reason\":\"no\\u001b[1m\",\"via\":\"watch\"}",
		    "\"answer\":\"no\\\\x1b[1m\"" },
		{ "{\"op\":\"pending\",\"id\":10,\"all\":true}",
		    "\"by\":\"uid 1000 via watch\"" },
		{ "{\"op\":\"subscribe\",\"id\":11}", "{\"id\":11,\"ok\":true" },
	};

	assert_non_null(e = escalate_create(NULL, "s0000001", NULL));
	escalate_set_clock(e, zero_clock);
	audit_cmdline(argv, cmd, sizeof cmd);
	assert_non_null(sb = sandbox_new("sb1", cmd, 4242, NULL));
	host_port_parse("a.test", &h, &port, 443, &err);
	escalate_file(e, &h, port, "r a", 3, "agent", sb, &r);
	host_port_parse("b.test", &h, &port, 443, &err);
	escalate_file(e, &h, port, "r b", 3, "agent", NULL, &r);
	escalate_file(e, &h, port, "", 0, "connect", sb, &r);
	sandbox_unref(sb);
	escalate_blocked(e, NULL, &h, 443, "connect", NULL);
	for (i = 0; i < sizeof t / sizeof t[0]; i++) {
		/* ID0 and ID1 stand for the two requests' ids. */
		const struct escalate_request	*r0 = escalate_next(e, NULL);
		const struct escalate_request	*r1 = escalate_next(e, r0);

		subst(line, sizeof line, t[i].line, r0->id, r1->id);
		out = control_run(e, &peer, line, &want);
		if (strstr(out, t[i].reply) == NULL)
			fail_msg("%s\n  got: %s\n  want: %s", line, out,
			    t[i].reply);
	}
	assert_true(want & CONTROL_WANT_SUBSCRIBE);
	assert_true(peer.subscribed);
	/* Every line, with all a decided request's members, reads back. */
	out = control_run(e, &peer, "{\"op\":\"pending\",\"all\":true}",
	    &want);
	assert_non_null(strstr(out, "\"sandbox\":\"sb1\""));
	assert_non_null(strstr(out, "\"scope\":\"session\""));
	for (; (nl = strchr(out, '\n')) != NULL; out = nl + 1)
		assert_int_equal(json_parse(out, nl - out, &obj, &err), 0);
	escalate_free(e);
}

/* The sandbox agent requests come from (NULL: none). */
static struct sandbox	*agent_sandbox;

/* Handle one agent request; the reply body is returned (static). */
static const char *
agent_run(struct escalate *e, const char *method, const char *target,
    const char *ctype, const char *body, int *status, int *wait)
{
	static char		buf[16384];
	struct agent_request	req;
	struct agent_response	resp;

	memset(&req, 0, sizeof req);
	req.method.p = method;
	req.method.len = strlen(method);
	req.target.p = target;
	req.target.len = strlen(target);
	req.content_type.p = ctype;
	req.content_type.len = strlen(ctype);
	req.body.p = body;
	req.body.len = strlen(body);
	req.sandbox = agent_sandbox;
	agent_handle(e, &req, &resp);
	*status = resp.status;
	*wait = resp.wait;
	snprintf(buf, sizeof buf, "%s", resp.body.buf != NULL ?
	    resp.body.buf : "");
	agent_response_free(&resp);
	return (buf);
}

/* The agent endpoint: filing, status, long poll, listings, errors. */
static void
test_agent(void **state)
{
	static const char	 form[] = "application/x-www-form-urlencoded";
	struct escalate		*e;
	struct sandbox	*sb;
	const char		*out;
	char *const		 argv[] = { "pip", NULL };
	char			 cmd[AUDIT_CMD_LEN];
	char			 target[128], id[ESCALATE_ID_LEN], err[64];
	int			 status, wait;

	assert_non_null(e = escalate_create(NULL, "s0000002", NULL));
	audit_cmdline(argv, cmd, sizeof cmd);
	assert_non_null(sb = sandbox_new("sb7", cmd, 77, NULL));
	agent_sandbox = sb;
	out = agent_run(e, "POST", "/pinhole/request?format=json", form,
	    "host=PyPI.org&reason=pip+install+%1b%5b2J", &status, &wait);
	agent_sandbox = NULL;
	sandbox_unref(sb);
	assert_int_equal(status, 201);
	assert_non_null(strstr(out, "\"host\":\"pypi.org\",\"port\":443,"
	    "\"state\":\"pending\""));
	assert_non_null(strstr(out, "\"reason\":\"pip install \\\\x1b[2J\""));
	memcpy(id, strstr(out, "\"request\":\"") + 11, 17);
	id[17] = '\0';
	assert_int_equal(strspn(id + 1, "0123456789abcdef"), 16);
	/* The request names the sandbox it came from. */
	assert_string_equal(escalate_find(e, id)->sandbox, "sb7");
	assert_string_equal(escalate_find(e, id)->cmd, "pip");
	assert_int_equal(escalate_find(e, id)->pid, 77);
	/* Asked from elsewhere: a request of its own, by an id of its own. */
	out = agent_run(e, "POST", "/pinhole/request", "application/json",
	    "{\"host\":\"pypi.org\",\"port\":443}", &status, &wait);
	assert_int_equal(status, 201);
	assert_null(strstr(out, id));
	assert_null(strstr(out, "pip install"));
	assert_int_equal(out[0], 'r');
	memcpy(id, out, 17);
	assert_int_equal(strspn(id + 1, "0123456789abcdef"), 16);
	assert_int_equal(escalate_npending(e), 1);
	out = agent_run(e, "POST", "/pinhole/request?host=x.test&port=99999",
	    "", "", &status, &wait);
	assert_int_equal(status, 400);
	out = agent_run(e, "POST", "/pinhole/request", form, "reason=x",
	    &status, &wait);
	assert_int_equal(status, 400);
	assert_non_null(strstr(out, "no host given"));
	out = agent_run(e, "POST", "/pinhole/request", "application/json",
	    "{\"host\":", &status, &wait);
	assert_int_equal(status, 400);
	snprintf(target, sizeof target, "/pinhole/request/%s?wait=30", id);
	out = agent_run(e, "GET", target, "", "", &status, &wait);
	assert_int_equal(status, 200);
	assert_int_equal(wait, 30);
	snprintf(target, sizeof target, "/pinhole/request/%s?wait=9999", id);
	agent_run(e, "GET", target, "", "", &status, &wait);
	assert_int_equal(wait, ESCALATE_WAIT_MAX);
	assert_int_equal(escalate_deny(e, id, "no", "t", err, sizeof err), 0);
	out = agent_run(e, "GET", target, "", "", &status, &wait);
	assert_int_equal(wait, 0);
	assert_non_null(strstr(out, "denied: no"));
	agent_run(e, "GET", "/pinhole/request/rnone", "", "", &status, &wait);
	assert_int_equal(status, 404);
	agent_run(e, "GET", "/pinhole/request", "", "", &status, &wait);
	assert_int_equal(status, 405);
	agent_run(e, "POST", "/pinhole/allowed", "", "", &status, &wait);
	assert_int_equal(status, 405);
	out = agent_run(e, "GET", "/pinhole/allowed?format=json", "", "",
	    &status, &wait);
	assert_int_equal(status, 200);
	assert_non_null(strstr(out, "\"policy\":[],\"approved\":[]"));
	out = agent_run(e, "GET", "/pinhole/blocked", "", "", &status, &wait);
	assert_non_null(strstr(out, "nothing blocked"));
	agent_run(e, "GET", "/pinhole/nope", "", "", &status, &wait);
	assert_int_equal(status, 404);
	agent_run(e, "GET", "/pinholes", "", "", &status, &wait);
	assert_int_equal(status, 404);
	/* There is no way to approve from the agent's side. */
	agent_run(e, "POST", "/pinhole/approve", form, "request=x", &status,
	    &wait);
	assert_int_equal(status, 405);
	assert_true(agent_match("/pinhole", 8));
	assert_true(agent_match("/pinhole/x", 10));
	assert_false(agent_match("/pinholex", 9));
	escalate_free(e);
}

/* Handle one agent request from sandbox sb; the body, its status first. */
static const char *
agent_from(struct escalate *e, struct sandbox *sb,
    const char *method, const char *target, const char *body, int *wait)
{
	static char	 buf[16384];
	const char	*out;
	int		 status;

	agent_sandbox = sb;
	out = agent_run(e, method, target, body[0] != '\0' ?
	    "application/x-www-form-urlencoded" : "", body, &status, wait);
	agent_sandbox = NULL;
	snprintf(buf, sizeof buf, "%d %s", status, out);
	return (buf);
}

/*
 * Each sandbox of a session sees its own requests, blocked attempts and
 * once approvals, and no other's: another's request id is answered as
 * one that does not exist, in text and JSON, for a status or a long
 * poll.  A request it joined is its own.  Approved once for another, its
 * own ask is shown under the new id, and waited for there.
 */
static void
test_agent_sandboxes(void **state)
{
	struct escalate		*e;
	struct sandbox	*one, *two;
	struct host		 h;
	uint16_t		 port;
	const char		*out, *errstr;
	char			 id[ESCALATE_ID_LEN], target[128], none[128];
	char			 id2[ESCALATE_ID_LEN], target2[128];
	char			 want[512], err[128];
	int			 wait, json;

	assert_non_null(e = escalate_create(NULL, "s0000003", NULL));
	assert_non_null(one = sandbox_new("1", "pip", 11, NULL));
	assert_non_null(two = sandbox_new("2", "npm", 22, NULL));
	out = agent_from(e, one, "POST", "/pinhole/request?format=json",
	    "host=a.test&reason=mine", &wait);
	assert_int_equal(strncmp(out, "201 ", 4), 0);
	memcpy(id, strstr(out, "\"request\":\"") + 11, 17);
	id[17] = '\0';
	host_port_parse("b.test", &h, &port, 443, &errstr);
	escalate_blocked(e, one, &h, 443, "connect", NULL);
	for (json = 0; json < 2; json++) {
		snprintf(target, sizeof target, "/pinhole/request/%s%s", id,
		    json ? "?format=json&wait=30" : "?wait=30");
		snprintf(none, sizeof none, "/pinhole/request/r%016x%s", 7,
		    json ? "?format=json&wait=30" : "?wait=30");
		out = agent_from(e, two, "GET", none, "", &wait);
		assert_true(strlen(out) < sizeof want);
		memcpy(want, out, strlen(out) + 1);
		assert_int_equal(strncmp(want, "404 ", 4), 0);
		assert_string_equal(agent_from(e, two, "GET", target, "",
		    &wait), want);
		assert_int_equal(wait, 0);
		assert_string_equal(agent_from(e, NULL, "GET", target, "",
		    &wait), want);
		out = agent_from(e, one, "GET", target, "", &wait);
		assert_int_equal(strncmp(out, "200 ", 4), 0);
		assert_int_equal(wait, 30);
	}
	out = agent_from(e, two, "GET", "/pinhole/blocked", "", &wait);
	assert_string_equal(out, "200 nothing blocked lately\n");
	out = agent_from(e, one, "GET", "/pinhole/blocked", "", &wait);
	assert_non_null(strstr(out, "b.test:443 via connect"));
	/*
	 * Asked for by sandbox 2 too: a new request to it, with an id, a
	 * reason and a time of its own, and nothing of sandbox 1's.
	 */
	out = agent_from(e, two, "POST", "/pinhole/request?format=json",
	    "host=a.test&reason=theirs", &wait);
	assert_int_equal(strncmp(out, "201 ", 4), 0);
	assert_null(strstr(out, id));
	assert_null(strstr(out, "mine"));
	assert_null(strstr(out, "coalesced\":true"));
	assert_non_null(strstr(out, "\"reason\":\"theirs\""));
	memcpy(id2, strstr(out, "\"request\":\"") + 11, 17);
	id2[17] = '\0';
	assert_string_not_equal(id2, id);
	out = agent_from(e, two, "GET", target, "", &wait);
	assert_int_equal(strncmp(out, "404 ", 4), 0);
	snprintf(target2, sizeof target2, "/pinhole/request/%s?format=json&"
	    "wait=30", id2);
	out = agent_from(e, two, "GET", target2, "", &wait);
	assert_int_equal(strncmp(out, "200 ", 4), 0);
	assert_null(strstr(out, "mine"));
	assert_int_equal(strncmp(agent_from(e, one, "GET", target2, "",
	    &wait), "404 ", 4), 0);
	/* Once, for sandbox 1: sandbox 2's ask goes on under its id. */
	assert_int_equal(escalate_approve(e, id, ESCALATE_SCOPE_ONCE, 0, NULL,
	    "t", err, sizeof err), 0);
	out = agent_from(e, one, "GET", target, "", &wait);
	assert_non_null(strstr(out, "\"state\":\"approved\",\"since\""));
	out = agent_from(e, two, "GET", target2, "", &wait);
	assert_non_null(strstr(out, "\"state\":\"pending\""));
	assert_non_null(strstr(out, id2));
	assert_null(strstr(out, id));
	assert_int_equal(wait, 30);
	out = agent_from(e, one, "GET", "/pinhole/allowed?format=json", "",
	    &wait);
	assert_non_null(strstr(out, id));
	out = agent_from(e, two, "GET", "/pinhole/allowed?format=json", "",
	    &wait);
	assert_non_null(strstr(out, "\"approved\":[]"));
	sandbox_unref(one);
	sandbox_unref(two);
	escalate_free(e);
}

/*
 * Where no grant can help the agent is told at once why and what must
 * change, never to run pinhole request: a deny rule, a special-purpose
 * address, a name refused for the address it resolved to.  The rules
 * given on the command line are listed as allowed.
 */
static void
test_agent_fixed(void **state)
{
	static const char	 form[] = "application/x-www-form-urlencoded";
	static const char	*rules_given[] = { "allow ok.test",
	    "deny bad.test" };
	struct policy		*pol;
	struct control_peer	 peer;
	struct escalate		*e;
	struct rules		*rules;
	struct host		 h;
	const char		*out, *es;
	char			 err[256];
	int			 status, wait, want;
	size_t			 i;

	(void)state;
	memset(&peer, 0, sizeof peer);
	assert_non_null(rules = rules_create());
	for (i = 0; i < 2; i++)
		assert_int_equal(rules_load_text(rules, "--allow",
		    rules_given[i], strlen(rules_given[i]), err, sizeof err),
		    0);
	assert_non_null(pol = policy_create(NULL));
	policy_set_rules(pol, rules);
	assert_non_null(e = escalate_create(NULL, "s0000003", NULL));
	escalate_set_policy(e, pol);

	out = agent_run(e, "POST", "/pinhole/request", form,
	    "host=bad.test&reason=x", &status, &wait);
	assert_int_equal(status, 403);
	assert_non_null(strstr(out, "denied by the rule 'deny bad.test' "
	    "(--allow), which no approval can override"));
	assert_null(strstr(out, "pinhole request"));
	out = agent_run(e, "POST", "/pinhole/request?format=json", form,
	    "host=169.254.169.254&port=80", &status, &wait);
	assert_int_equal(status, 403);
	assert_non_null(strstr(out, "'allow-private 169.254.169.254'"));
	assert_int_equal(escalate_npending(e), 0);

	/* ok.test resolved to loopback when the gateway dialed it. */
	assert_int_equal(host_parse("ok.test", 7, &h, &es), 0);
	escalate_blocked(e, NULL, &h, 8080, "connect", "127.0.0.1 is a "
	    "special-purpose address (loopback), which no approval can open");
	out = agent_run(e, "POST", "/pinhole/request", form,
	    "host=ok.test&port=8080", &status, &wait);
	assert_int_equal(status, 403);
	assert_non_null(strstr(out, "127.0.0.1 is a special-purpose"));
	assert_null(strstr(out, "allowed already"));
	out = agent_run(e, "GET", "/pinhole/blocked", "", "", &status, &wait);
	assert_non_null(strstr(out, "ok.test:8080 via connect, 1 time, last "));
	assert_non_null(strstr(out, "; 127.0.0.1 is a special-purpose"));
	assert_null(strstr(out, "pinhole request"));
	out = control_run(e, &peer, "{\"op\":\"pending\"}", &want);
	assert_non_null(strstr(out, "\"fix\":\"127.0.0.1 is a special-"));
	assert_null(strstr(out, "\"hint\""));
	out = agent_run(e, "GET", "/pinhole/allowed", "", "", &status, &wait);
	assert_non_null(strstr(out, "policy:\n  allow ok.test\n"
	    "  deny bad.test\napproved:\n"));
	escalate_free(e);
	policy_free(pol);
}

/*
 * A host the policy allows only with request checks: a request for it is
 * filed (not "allowed already"), the answer, pending and the request
 * events saying what approving it lifts; a host allowed as it is is
 * allowed already.  When too many wait, the 429 says how many.
 */
static void
test_agent_lifts(void **state)
{
	static const char	 form[] = "application/x-www-form-urlencoded";
	static const char	 rule[] = "allow ro.test read-only";
	struct policy		*pol;
	struct control_peer	 peer;
	struct escalate		*e;
	struct rules		*rules;
	const char		*out;
	char			 err[256], body[64];
	int			 status, wait, want, i;

	(void)state;
	memset(&peer, 0, sizeof peer);
	assert_non_null(rules = rules_create());
	assert_int_equal(rules_load_text(rules, "--allow", rule, strlen(rule),
	    err, sizeof err), 0);
	assert_non_null(pol = policy_create(NULL));
	policy_set_rules(pol, rules);
	assert_non_null(e = escalate_create(NULL, "s0000004", NULL));
	fake_now = 1000000;
	escalate_set_clock(e, fake_clock);
	escalate_set_policy(e, pol);

	out = agent_run(e, "POST", "/pinhole/request", form,
	    "host=ro.test&reason=upload", &status, &wait);
	assert_int_equal(status, 201);
	assert_non_null(strstr(out, "Approving it lifts the request checks of "
	    "the rule 'allow ro.test read-only' (--allow)\n"));
	out = agent_run(e, "POST", "/pinhole/request?format=json", form,
	    "host=ro.test", &status, &wait);
	assert_int_equal(status, 200);
	assert_non_null(strstr(out, "\"lifts\":\"the request checks of the "
	    "rule 'allow ro.test read-only' (--allow)\""));
	out = control_run(e, &peer, "{\"op\":\"pending\"}", &want);
	assert_non_null(strstr(out, "\"lifts\":\"the request checks of"));
	out = agent_run(e, "POST", "/pinhole/request", form,
	    "host=ro.test&port=8443", &status, &wait);
	assert_int_equal(status, 201);		/* no rule for 8443: nothing */
	assert_null(strstr(out, "lifts"));
	for (i = 0; escalate_npending(e) < ESCALATE_PENDING_MAX && i < 64;
	    i++) {
		snprintf(body, sizeof body, "host=h%d.test", i);
		agent_run(e, "POST", "/pinhole/request", form, body, &status,
		    &wait);
		fake_now += 13;		/* a token every 12 s */
	}
	out = agent_run(e, "POST", "/pinhole/request?format=json", form,
	    "host=more.test", &status, &wait);
	assert_int_equal(status, 429);
	assert_non_null(strstr(out, "16 wait for the person's answer"));
	assert_non_null(strstr(out, "\"pending\":16"));
	escalate_free(e);
	policy_free(pol);
}

/* Form decoding. */
static void
test_form(void **state)
{
	static const char	q[] = "a=1&host=py%50i.org&empty&r=a+b%21&bad=%zz";
	char			out[64];

	assert_int_equal(agent_form_get(q, strlen(q), "host", out, sizeof out),
	    8);
	assert_string_equal(out, "pyPi.org");
	assert_int_equal(agent_form_get(q, strlen(q), "r", out, sizeof out), 4);
	assert_string_equal(out, "a b!");
	assert_int_equal(agent_form_get(q, strlen(q), "empty", out,
	    sizeof out), 0);
	assert_int_equal(agent_form_get(q, strlen(q), "bad", out, sizeof out),
	    -1);
	assert_int_equal(agent_form_get(q, strlen(q), "none", out, sizeof out),
	    -1);
	assert_int_equal(agent_form_get("n=%00", 5, "n", out, sizeof out), -1);
	assert_int_equal(agent_form_get("n=abcdef", 8, "n", out, 4), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_table),
		cmocka_unit_test(test_json_values),
		cmocka_unit_test(test_json_writer),
		cmocka_unit_test(test_control_table),
		cmocka_unit_test(test_agent),
		cmocka_unit_test(test_agent_fixed),
		cmocka_unit_test(test_agent_lifts),
		cmocka_unit_test(test_agent_sandboxes),
		cmocka_unit_test(test_form),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
