/*
 * The agent endpoint's request handling: paths under /pinhole/, query
 * strings and form or JSON bodies, answered in text or JSON.  No I/O:
 * the gateway parses the HTTP request and sends what this builds.
 */
#include "config.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/json.h"
#include "proxy/escalate/agent.h"
#include "proxy/escalate/control-proto.h"
#include "proxy/escalate/escalate.h"
#include "proxy/wire/http.h"

#define AGENT_VALUE_MAX	1024

/* A request being handled. */
struct agent_ctx {
	struct escalate			*e;
	const struct agent_request	*req;
	struct agent_response		*resp;
	const char			*path;		/* after the prefix */
	size_t				 pathlen;
	const char			*query;
	size_t				 querylen;
};

struct agent_wait {
	struct escalate		*e;
	struct escalate_waiter	*w;
	char			 id[ESCALATE_ID_LEN];
	char			 sandbox[AUDIT_SANDBOX_ID_LEN];
	int			 json;
	void			(*cb)(struct agent_response *, void *);
	void			*arg;
};

/* Does this origin-form target belong to the agent endpoint? */
int
agent_match(const char *t, size_t len)
{
	size_t	n = strlen(AGENT_PREFIX);

	return (len >= n && memcmp(t, AGENT_PREFIX, n) == 0 &&
	    (len == n || t[n] == '/' || t[n] == '?'));
}

/* Percent-decode src into out (NUL-terminated); -1 on a bad escape. */
static int
agent_decode(const char *s, size_t len, char *out, size_t outlen)
{
	size_t	i, o = 0;
	int	hi, lo;
	char	c;

	for (i = 0; i < len; i++) {
		c = s[i];
		if (c == '+')
			c = ' ';
		else if (c == '%') {
			if (len - i < 3 ||
			    (hi = http_hexval((unsigned char)s[i + 1])) == -1 ||
			    (lo = http_hexval((unsigned char)s[i + 2])) == -1)
				return (-1);
			c = (char)(hi << 4 | lo);
			i += 2;
		}
		if (c == '\0' || o + 1 >= outlen)
			return (-1);
		out[o++] = c;
	}
	out[o] = '\0';
	return ((int)o);
}

/* Decode the value of key in a query string or form body. */
int
agent_form_get(const char *s, size_t len, const char *key, char *out,
    size_t outlen)
{
	size_t		 klen = strlen(key), n;
	const char	*end, *amp, *p = s;

	if (s == NULL)
		return (-1);	/* no query, no body: nothing to find */
	end = s + len;
	while (p < end) {
		amp = memchr(p, '&', end - p);
		n = (amp != NULL ? amp : end) - p;
		if (n > klen && memcmp(p, key, klen) == 0 && p[klen] == '=')
			return (agent_decode(p + klen + 1, n - klen - 1, out,
			    outlen));
		if (n == klen && memcmp(p, key, klen) == 0) {
			out[0] = '\0';
			return (0);
		}
		p += n + 1;
	}
	return (-1);
}

/* Does a header value (case-insensitive) contain a word? */
static int
agent_str_has(const struct agent_str *s, const char *word)
{
	size_t	n = strlen(word), i;

	for (i = 0; i + n <= s->len; i++) {
		if (strncasecmp(s->p + i, word, n) == 0)
			return (1);
	}
	return (0);
}

/* Does a method equal name? */
static int
agent_method_is(const struct agent_request *req, const char *name)
{
	return (req->method.len == strlen(name) &&
	    memcmp(req->method.p, name, req->method.len) == 0);
}

/* Start a response. */
static void
agent_response_init(struct agent_response *resp, int json)
{
	memset(resp, 0, sizeof *resp);
	json_writer_init(&resp->body, 0);
	resp->json = json;
	resp->status = 200;
	resp->ctype = json ? "application/json" : "text/plain; charset=utf-8";
}

/* Free a response's body. */
void
agent_response_free(struct agent_response *resp)
{
	json_writer_free(&resp->body);
}

/* Append text to a body. */
static void
agent_puts(struct agent_response *resp, const char *s)
{
	json_put_raw(&resp->body, s, strlen(s));
}

/* Append formatted text to a body. */
static void __attribute__((format(printf, 2, 3)))
agent_printf(struct agent_response *resp, const char *fmt, ...)
{
	char	buf[2048];
	va_list	ap;
	int	n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (n > 0)
		json_put_raw(&resp->body, buf, (size_t)n < sizeof buf ?
		    (size_t)n : sizeof buf - 1);
}

/* Answer an error, in text or JSON (with how many wait, when >= 0). */
static void
agent_error_pending(struct agent_response *resp, int status, const char *msg,
    long pending)
{
	json_writer_free(&resp->body);
	json_writer_init(&resp->body, 0);
	resp->status = status;
	resp->wait = 0;
	if (!resp->json) {
		agent_printf(resp, "pinhole: %s\n", msg);
		return;
	}
	json_open(&resp->body);
	json_put_bool(&resp->body, "ok", 0);
	json_put_int(&resp->body, "status", status);
	json_put_str(&resp->body, "error", msg);
	if (pending >= 0)
		json_put_int(&resp->body, "pending", pending);
	json_close(&resp->body);
	agent_puts(resp, "\n");
}

/* Answer an error, in text or JSON. */
static void
agent_error(struct agent_response *resp, int status, const char *msg)
{
	agent_error_pending(resp, status, msg, -1);
}

/*
 * Write a request's state for the agent of a sandbox that asked (JSON
 * members): its id, time and reason are that sandbox's own.
 */
static void
agent_put_request(struct json_writer *w, const struct escalate_request *r,
    const struct escalate_asker *a)
{
	char	since[32];

	json_put_str(w, "request", a->id);
	json_put_str(w, "host", r->host.text);
	json_put_int(w, "port", r->port);
	json_put_str(w, "state", escalate_state_name(r->state));
	control_time(a->since, since, sizeof since);
	json_put_str(w, "since", since);
	if (a->reason[0] != '\0')
		json_put_str(w, "reason", a->reason);
	if (r->state == ESCALATE_APPROVED || (r->state == ESCALATE_EXPIRED &&
	    r->scope != ESCALATE_SCOPE_NONE)) {
		json_put_str(w, "scope", escalate_scope_name(r->scope));
		json_put_int(w, "ttl", r->ttl);
	}
	if (r->answer[0] != '\0')
		json_put_str(w, "answer", r->answer);
}

/* A request's HOST:PORT as text; port 0 "HOST (any port)". */
static void
agent_target_text(const struct host *h, uint16_t port, char *buf, size_t len)
{
	escalate_target(h, port, buf, len);
	if (port == 0)
		snprintf(buf + strlen(buf), len - strlen(buf), " (any port)");
}

/* Write a request's state in one line of text, as a sandbox knows it. */
static void
agent_text_request(struct agent_response *resp,
    const struct escalate_request *r, const struct escalate_asker *a)
{
	char	target[HOST_TEXT_LEN + 16];

	agent_target_text(&r->host, r->port, target, sizeof target);
	agent_printf(resp, "%s %s %s", a->id, target,
	    escalate_state_name(r->state));
	if (r->state == ESCALATE_APPROVED)
		agent_printf(resp, " (%s%s)", escalate_scope_name(r->scope),
		    r->ttl > 0 ? ", with a time limit" : "");
	if (r->answer[0] != '\0')
		agent_printf(resp, ": %s", r->answer);
	agent_puts(resp, "\n");
}

/* Render the status of a request, as a sandbox sees it. */
void
agent_status(struct escalate *e, const char *id, const char *sandbox,
    int json, struct agent_response *resp)
{
	const struct escalate_request	*r;
	const struct escalate_asker	*a;

	agent_response_init(resp, json);
	escalate_sweep(e);
	if ((r = escalate_find_for(e, id, sandbox)) == NULL ||
	    (a = escalate_asker_of(r, sandbox)) == NULL) {
		agent_error(resp, 404, "no such request");
		return;
	}
	if (!json) {
		agent_text_request(resp, r, a);
		return;
	}
	json_open(&resp->body);
	json_put_bool(&resp->body, "ok", 1);
	agent_put_request(&resp->body, r, a);
	json_close(&resp->body);
	agent_puts(resp, "\n");
}

/* Read host, port and reason from a JSON body. */
static const char *
agent_fields_json(const struct agent_str *body, char *host, char *port,
    char *reason)
{
	struct json_obj			 obj;
	const struct json_member	*m;
	const char			*err;

	if (json_parse(body->p, body->len, &obj, &err) == -1)
		return ("the body is not a flat JSON object");
	if ((m = json_get(&obj, "host")) != NULL && m->type == JSON_STRING)
		snprintf(host, AGENT_VALUE_MAX, "%s", m->str);
	if ((m = json_get(&obj, "port")) != NULL && m->type == JSON_INT)
		snprintf(port, AGENT_VALUE_MAX, "%lld", (long long)m->num);
	else if (m != NULL && m->type == JSON_STRING)
		snprintf(port, AGENT_VALUE_MAX, "%s", m->str);
	if ((m = json_get(&obj, "reason")) != NULL && m->type == JSON_STRING)
		snprintf(reason, AGENT_VALUE_MAX, "%s", m->str);
	return (NULL);
}

/* Read host, port and reason from the query, then a form or JSON body. */
static const char *
agent_fields(struct agent_ctx *c, char *host, char *port, char *reason)
{
	const struct agent_request	*req = c->req;
	const char			*keys[] = { "host", "port", "reason" };
	char				*vals[] = { host, port, reason };
	size_t				 i;

	host[0] = port[0] = reason[0] = '\0';
	if (agent_str_has(&req->content_type, "json"))
		return (agent_fields_json(&req->body, host, port, reason));
	for (i = 0; i < 3; i++) {
		if (agent_form_get(req->body.p, req->body.len, keys[i],
		    vals[i], AGENT_VALUE_MAX) == -1 &&
		    agent_form_get(c->query, c->querylen, keys[i], vals[i],
		    AGENT_VALUE_MAX) == -1)
			vals[i][0] = '\0';
	}
	return (NULL);
}

/*
 * Combine host and port fields into a canonical host and port: port "*"
 * (or host "HOST:*") is every port, 0.
 */
static const char *
agent_target(char *host, const char *port, struct host *h, uint16_t *pnum)
{
	const char	*err;
	size_t		 n = strlen(host);
	int		 any = strcmp(port, "*") == 0;

	if (n > 2 && strcmp(host + n - 2, ":*") == 0) {
		host[n - 2] = '\0';
		any = 1;
	}
	if (host[0] == '\0')
		return ("no host given");
	if (host_port_parse(host, h, pnum, 443, &err) == -1)
		return (err);
	if (any)
		*pnum = 0;
	else if (port[0] != '\0' && port_parse(port, strlen(port), pnum) == -1)
		return ("invalid port (1 to 65535, or * for every port)");
	return (NULL);
}

/* The id of the sandbox the request came from ("" for none). */
static const char *
agent_sandbox(const struct agent_ctx *c)
{
	return (sandbox_id(c->req->sandbox));
}

/*
 * Answer a filed request, with its last refusal, as the sandbox asking
 * knows it: one it joined is new to it, its own.
 */
static void
agent_filed(struct agent_ctx *c, const struct escalate_request *r,
    enum escalate_filed f)
{
	struct agent_response		*resp = c->resp;
	const struct sandbox_refusal	*last;
	const struct escalate_asker	*a;
	char				 when[32] = "";
	char				 lifts[ESCALATE_LIFTS_LEN];

	if ((a = escalate_asker_of(r, agent_sandbox(c))) == NULL) {
		agent_error(resp, 500, "out of memory");
		return;
	}
	resp->status = f == ESCALATE_FILED_SAME ? 200 : 201;
	escalate_lifts_for(c->e, &r->host, r->port, agent_sandbox(c), lifts,
	    sizeof lifts);
	if ((last = escalate_refused_find(c->e, agent_sandbox(c), &r->host,
	    r->port)) != NULL)
		control_time(last->last, when, sizeof when);
	if (resp->json) {
		json_open(&resp->body);
		json_put_bool(&resp->body, "ok", 1);
		json_put_bool(&resp->body, "coalesced",
		    f == ESCALATE_FILED_SAME);
		agent_put_request(&resp->body, r, a);
		json_put_str(&resp->body, "session", escalate_session(c->e));
		if (lifts[0] != '\0')
			json_put_str(&resp->body, "lifts", lifts);
		if (last != NULL) {
			json_put_str(&resp->body, "refused", last->why);
			json_put_str(&resp->body, "refused_at", when);
		}
		json_close(&resp->body);
		agent_puts(resp, "\n");
		return;
	}
	agent_text_request(resp, r, a);
	if (last != NULL)
		agent_printf(resp, "It answers the refusal at %s: %s\n", when,
		    last->why);
	if (lifts[0] != '\0')
		agent_printf(resp, "Approving it lifts %s\n", lifts);
	agent_printf(resp, "Asked the person running the sandbox%s. Check "
	    "with: pinhole request --status %s (or GET /pinhole/request/%s"
	    "?wait=60)\n", f == ESCALATE_FILED_SAME ?
	    " (joined the open request)" : "", a->id, a->id);
}

/* Say that a host is allowed already. */
static void
agent_already(struct agent_ctx *c, const struct host *h, uint16_t port)
{
	struct agent_response	*resp = c->resp;
	char			 target[HOST_TEXT_LEN + 16];

	if (!resp->json) {
		agent_target_text(h, port, target, sizeof target);
		agent_printf(resp, "%s is allowed already, every request to it: "
		    "nothing to ask for\n", target);
		return;
	}
	json_open(&resp->body);
	json_put_bool(&resp->body, "ok", 1);
	json_put_str(&resp->body, "host", h->text);
	json_put_int(&resp->body, "port", port);
	json_put_str(&resp->body, "state", "allowed");
	json_close(&resp->body);
	agent_puts(resp, "\n");
}

/* Say that too many requests wait already, how many, and what to do. */
static void
agent_full(struct agent_ctx *c)
{
	char	msg[256];

	snprintf(msg, sizeof msg, "too many open requests: %zu wait for the "
	    "person's answer already, the most there may be; wait for an "
	    "answer (pinhole request --status ID --wait), then ask again",
	    escalate_npending(c->e));
	agent_error_pending(c->resp, 429, msg, escalate_npending(c->e));
}

/* POST /pinhole/request: file a request. */
static void
agent_post_request(struct agent_ctx *c)
{
	struct escalate_request		*r;
	enum escalate_filed		 f;
	struct host			 h;
	uint16_t			 port;
	const char			*err;
	char				 host[AGENT_VALUE_MAX];
	char				 pstr[AGENT_VALUE_MAX];
	char				 reason[AGENT_VALUE_MAX];
	char				 fix[ESCALATE_FIX_LEN];

	if ((err = agent_fields(c, host, pstr, reason)) != NULL ||
	    (err = agent_target(host, pstr, &h, &port)) != NULL) {
		agent_error(c->resp, 400, err);
		return;
	}
	if (escalate_fixed(c->e, agent_sandbox(c), &h, port, fix,
	    sizeof fix)) {
		agent_error(c->resp, 403, fix);
		return;
	}
	if (escalate_allowed(c->e, &h, port, c->req->sandbox)) {
		agent_already(c, &h, port);
		return;
	}
	f = escalate_file(c->e, &h, port, reason, strlen(reason), "agent",
	    c->req->sandbox, &r);
	if (f == ESCALATE_FILED_NEW || f == ESCALATE_FILED_SAME ||
	    f == ESCALATE_FILED_JOINED)
		agent_filed(c, r, f);
	else if (f == ESCALATE_FILED_FULL)
		agent_full(c);
	else
		agent_error(c->resp, f == ESCALATE_FILED_NOMEM ? 503 :
		    f == ESCALATE_FILED_FIXED ? 403 : 429,
		    escalate_filed_text(f));
}

/* GET /pinhole/request/ID[?wait=S]: a request's state, or wait for it. */
static void
agent_get_request(struct agent_ctx *c, const char *id, size_t idlen)
{
	const struct escalate_request	*r;
	char				 idbuf[ESCALATE_ID_LEN], wait[16];
	long				 secs = 0;

	if (idlen == 0 || idlen >= sizeof idbuf) {
		agent_error(c->resp, 404, "no such request");
		return;
	}
	memcpy(idbuf, id, idlen);
	idbuf[idlen] = '\0';
	if (agent_form_get(c->query, c->querylen, "wait", wait,
	    sizeof wait) >= 0 && (secs = escalate_duration_parse(wait)) < 0) {
		agent_error(c->resp, 400, "wait: seconds expected");
		return;
	}
	agent_response_free(c->resp);
	agent_status(c->e, idbuf, agent_sandbox(c), c->resp->json, c->resp);
	r = escalate_find_for(c->e, idbuf, agent_sandbox(c));
	if (r != NULL && r->state == ESCALATE_PENDING && secs > 0) {
		c->resp->wait = secs > ESCALATE_WAIT_MAX ? ESCALATE_WAIT_MAX :
		    (int)secs;
		memcpy(c->resp->wait_id, idbuf, sizeof c->resp->wait_id);
		snprintf(c->resp->wait_sandbox, sizeof c->resp->wait_sandbox,
		    "%s", agent_sandbox(c));
	}
}

/* Write the policy text the owner gives, one rule a line. */
static void
agent_policy_lines(struct agent_ctx *c, int json)
{
	const struct policy		*p = escalate_policy(c->e);
	char				 text[16384], *line, *save = NULL;
	int				 first = 1;

	if (p == NULL)
		return;
	text[0] = '\0';
	if (policy_rules(p) != NULL)
		rules_text(policy_rules(p), text, sizeof text);
	for (line = strtok_r(text, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		if (!json) {
			agent_printf(c->resp, "  %s\n", line);
			continue;
		}
		if (!first)
			agent_puts(c->resp, ",");
		json_put_quoted(&c->resp->body, line, strlen(line));
		first = 0;
	}
}

/*
 * Is an approval in force for the sandbox asking: approved, not used up
 * nor overtaken by the policy, and, once, for this sandbox?
 */
static int
agent_grant_in_force(struct agent_ctx *c, const struct escalate_request *r)
{
	if (r->state != ESCALATE_APPROVED || (r->scope == ESCALATE_SCOPE_ONCE &&
	    !escalate_asked(r, agent_sandbox(c))))
		return (0);
	return (escalate_policy(c->e) == NULL || escalate_allowed(c->e,
	    &r->host, r->port, c->req->sandbox));
}

/* Write the approvals in force; the request's id when it is ours. */
static void
agent_grant_lines(struct agent_ctx *c, int json)
{
	const struct escalate_request	*r = NULL;
	struct json_writer		*w = &c->resp->body;
	const char			*id;
	char				 target[HOST_TEXT_LEN + 16];
	int				 first = 1, ours;

	while ((r = escalate_next(c->e, r)) != NULL) {
		if (!agent_grant_in_force(c, r))
			continue;
		ours = escalate_asked(r, agent_sandbox(c));
		id = escalate_id_for(r, agent_sandbox(c));
		if (!json) {
			agent_target_text(&r->host, r->port, target,
			    sizeof target);
			agent_printf(c->resp, "  %s %s", target,
			    escalate_scope_name(r->scope));
			if (ours)
				agent_printf(c->resp, " (request %s)", id);
			agent_puts(c->resp, "\n");
			continue;
		}
		if (!first)
			agent_puts(c->resp, ",");
		json_open(w);
		json_put_str(w, "host", r->host.text);
		json_put_int(w, "port", r->port);
		json_put_str(w, "scope", escalate_scope_name(r->scope));
		json_put_int(w, "ttl", r->ttl);
		if (ours)
			json_put_str(w, "request", id);
		json_close(w);
		first = 0;
	}
}

/* GET /pinhole/allowed: the policy and the approvals in force. */
static void
agent_get_allowed(struct agent_ctx *c)
{
	struct json_writer	*w = &c->resp->body;

	escalate_sweep(c->e);
	if (!c->resp->json) {
		agent_puts(c->resp, "policy:\n");
		agent_policy_lines(c, 0);
		agent_puts(c->resp, "approved:\n");
		agent_grant_lines(c, 0);
		agent_puts(c->resp, "Anything else is blocked: ask with "
		    "pinhole request HOST[:PORT] --reason TEXT\n");
		return;
	}
	json_open(w);
	json_put_bool(w, "ok", 1);
	json_put_str(w, "session", escalate_session(c->e));
	agent_puts(c->resp, ",\"policy\":[");
	agent_policy_lines(c, 1);
	agent_puts(c->resp, "],\"approved\":[");
	agent_grant_lines(c, 1);
	agent_puts(c->resp, "]}\n");
}

/* Open a JSON answer listing items under key. */
static void
agent_list_open(struct agent_ctx *c, const char *key)
{
	if (c->resp->json)
		agent_printf(c->resp, "{\"ok\":true,\"%s\":[", key);
}

/* Start the JSON object of item i of a list. */
static void
agent_list_item(struct agent_ctx *c, size_t i)
{
	if (i > 0)
		agent_puts(c->resp, ",");
	json_open(&c->resp->body);
}

/* Close a list of n items; in text, say empty when there were none. */
static void
agent_list_close(struct agent_ctx *c, size_t n, const char *empty)
{
	if (c->resp->json)
		agent_puts(c->resp, "]}\n");
	else if (n == 0)
		agent_printf(c->resp, "%s\n", empty);
}

/* GET /pinhole/blocked: this sandbox's recent blocked attempts. */
static void
agent_get_blocked(struct agent_ctx *c)
{
	const struct escalate_blocked	*b;
	char				 last[32], hint[HOST_TEXT_LEN + 32];
	char				 target[HOST_TEXT_LEN + 16];
	size_t				 i, n = 0;

	agent_list_open(c, "blocked");
	for (i = 0; (b = escalate_blocked_at(c->e, i)) != NULL; i++) {
		if (strcmp(b->sandbox, agent_sandbox(c)) != 0)
			continue;
		escalate_hint(&b->host, b->port, hint, sizeof hint);
		escalate_target(&b->host, b->port, target, sizeof target);
		control_time(b->last, last, sizeof last);
		if (!c->resp->json) {
			agent_printf(c->resp, "%s via %s, %u time%s, last "
			    "%s; %s%s\n", target,
			    b->via, b->count, b->count == 1 ? "" : "s", last,
			    b->fix[0] != '\0' ? "" : "ask with: ",
			    b->fix[0] != '\0' ? b->fix : hint);
			continue;
		}
		agent_list_item(c, n++);
		control_put_blocked(&c->resp->body, b);
		json_close(&c->resp->body);
	}
	agent_list_close(c, n, "nothing blocked lately");
}

/* Write a refusal in a line of text: what, when, why, what to do. */
static void
agent_text_refusal(struct agent_response *resp,
    const struct sandbox_refusal *f)
{
	char	last[32], hint[HOST_TEXT_LEN + 32];
	char	target[HOST_TEXT_LEN + 16];

	escalate_target(&f->host, f->port, target, sizeof target);
	control_time(f->last, last, sizeof last);
	agent_printf(resp, "%s%s%s via %s, %u time%s, last %s: %s", f->what,
	    f->what[0] != '\0' ? " on " : "", target, f->via, f->count,
	    f->count == 1 ? "" : "s", last, f->fix[0] != '\0' ? f->fix :
	    f->why);
	if (f->fix[0] == '\0' && f->ask) {
		escalate_hint(&f->host, f->port, hint, sizeof hint);
		agent_printf(resp, "; ask with: %s", hint);
	}
	agent_puts(resp, "\n");
}

/* GET /pinhole/refused: this sandbox's recent refusals, and why. */
static void
agent_get_refused(struct agent_ctx *c)
{
	const struct sandbox_refusal	*f;
	unsigned long long		 below = ~0ULL;
	size_t				 i;

	agent_list_open(c, "refused");
	for (i = 0; (f = escalate_refused_next(c->e, agent_sandbox(c),
	    &below)) != NULL; i++) {
		if (!c->resp->json) {
			agent_text_refusal(c->resp, f);
			continue;
		}
		agent_list_item(c, i);
		control_put_refusal(&c->resp->body, f);
		json_close(&c->resp->body);
	}
	agent_list_close(c, i, "nothing refused lately");
}

/* GET /pinhole: what the endpoint offers. */
static void
agent_get_index(struct agent_ctx *c)
{
	agent_puts(c->resp,
	    "pinhole agent endpoint: ask for network access.\n"
	    "  POST /pinhole/request  host=HOST&port=PORT&reason=TEXT "
	    "(form or JSON; port=* for every port)\n"
	    "  GET  /pinhole/request/ID[?wait=SECONDS]\n"
	    "  GET  /pinhole/allowed\n"
	    "  GET  /pinhole/blocked\n"
	    "  GET  /pinhole/refused\n"
	    "Add ?format=json (or Accept: application/json) for JSON.\n"
	    "Or run: pinhole request HOST[:PORT] --reason TEXT --wait\n");
}

/* Route by path and method. */
static void
agent_route(struct agent_ctx *c)
{
	static const char	 rq[] = "/request/";
	int			 get = agent_method_is(c->req, "GET") ||
				    agent_method_is(c->req, "HEAD");
	int			 post = agent_method_is(c->req, "POST");
	const char		*p = c->path;
	size_t			 n = c->pathlen;

	if (n == 8 && memcmp(p, "/request", 8) == 0) {
		if (post)
			agent_post_request(c);
		else
			agent_error(c->resp, 405, "POST a request here");
	} else if (n > sizeof rq - 1 && memcmp(p, rq, sizeof rq - 1) == 0) {
		if (get)
			agent_get_request(c, p + sizeof rq - 1,
			    n - (sizeof rq - 1));
		else
			agent_error(c->resp, 405, "use GET");
	} else if (!get)
		agent_error(c->resp, 405, "use GET");
	else if (n == 8 && memcmp(p, "/allowed", 8) == 0)
		agent_get_allowed(c);
	else if (n == 8 && memcmp(p, "/blocked", 8) == 0)
		agent_get_blocked(c);
	else if (n == 8 && memcmp(p, "/refused", 8) == 0)
		agent_get_refused(c);
	else if (n <= 1 && !c->resp->json)
		agent_get_index(c);
	else
		agent_error(c->resp, 404,
		    "no such endpoint (try GET /pinhole)");
}

/* Handle a request to the agent endpoint. */
void
agent_handle(struct escalate *e, const struct agent_request *req,
    struct agent_response *resp)
{
	struct agent_ctx	 c = { e, req, resp, NULL, 0, NULL, 0 };
	const char		*t = req->target.p, *q;
	size_t			 tlen = req->target.len;
	size_t			 plen = strlen(AGENT_PREFIX);
	char			 fmt[16];
	int			 json = agent_str_has(&req->accept,
				    "application/json");

	if ((q = memchr(t, '?', tlen)) != NULL) {
		c.query = q + 1;
		c.querylen = tlen - (q + 1 - t);
		tlen = q - t;
		if (agent_form_get(c.query, c.querylen, "format", fmt,
		    sizeof fmt) >= 0)
			json = strcmp(fmt, "json") == 0;
	}
	agent_response_init(resp, json);
	if (!agent_match(req->target.p, req->target.len)) {
		agent_error(resp, 404, "not an agent endpoint path");
		return;
	}
	if (req->body.len > AGENT_BODY_MAX) {
		agent_error(resp, 413, "body too long");
		return;
	}
	c.path = t + plen;
	c.pathlen = tlen - plen;
	agent_route(&c);
	if (resp->body.failed)
		agent_error(resp, 500, "out of memory");
}

/* A waited request (or the one it moved to) was decided, or time is up. */
static void
agent_wait_cb(const struct escalate_request *r, int timed_out, void *arg)
{
	struct agent_wait	*aw = arg;
	struct agent_response	 final;

	(void)r;
	agent_status(aw->e, aw->id, aw->sandbox, aw->json, &final);
	aw->cb(&final, aw->arg);
	free(aw);
}

/* Hold for the decision of resp->wait_id. */
struct agent_wait *
agent_wait_start(struct escalate *e, const struct agent_response *resp,
    void (*cb)(struct agent_response *, void *), void *arg)
{
	struct escalate_request	*r;
	struct agent_wait	*aw;

	if ((r = escalate_find_for(e, resp->wait_id,
	    resp->wait_sandbox)) == NULL || r->state != ESCALATE_PENDING)
		return (NULL);
	if ((aw = calloc(1, sizeof *aw)) == NULL)
		return (NULL);
	aw->e = e;
	memcpy(aw->id, resp->wait_id, sizeof aw->id);
	memcpy(aw->sandbox, resp->wait_sandbox, sizeof aw->sandbox);
	aw->json = resp->json;
	aw->cb = cb;
	aw->arg = arg;
	if ((aw->w = escalate_wait(e, r, aw->sandbox, resp->wait,
	    agent_wait_cb, aw)) == NULL) {
		free(aw);
		return (NULL);
	}
	return (aw);
}

/* Cancel a wait: its callback never runs. */
void
agent_wait_cancel(struct agent_wait *aw)
{
	if (aw == NULL)
		return;
	escalate_wait_cancel(aw->w);
	free(aw);
}
