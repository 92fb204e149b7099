/*
 * The control protocol: one JSON object a line each way.  A request
 * {"op":"...","id":N,...} gets item lines {"id":N,"item":...} (for
 * lists) and then one reply {"id":N,"ok":true,...} or
 * {"id":N,"ok":false,"error":"..."}.  No I/O here: lines in, lines out.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/json.h"
#include "proxy/escalate/control-proto.h"
#include "proxy/escalate/escalate.h"

/* One request being handled. */
struct control_ctx {
	struct escalate		*e;
	struct control_peer	*peer;
	const char		*agent;
	const struct json_obj	*obj;
	int64_t			 id;
	int			 has_id;
	struct json_writer	*out;
	int			 want;
};

struct control_op {
	const char	*name;
	int		(*fn)(struct control_ctx *);
};

/* Format a time as RFC 3339 UTC. */
void
control_time(time_t t, char *buf, size_t len)
{
	struct tm	tm;

	gmtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* Put a time member. */
static void
control_put_time(struct json_writer *w, const char *key, time_t t)
{
	char	buf[32];

	control_time(t, buf, sizeof buf);
	json_put_str(w, key, buf);
}

/*
 * Put the sandboxes that asked for a request and have not gone, when
 * more than one did: by id ("-" for none), space-separated, the first
 * CONTROL_ASKERS_SHOWN, then "...".
 */
static void
control_put_askers(struct json_writer *w, const struct escalate_request *r)
{
	char	buf[CONTROL_ASKERS_SHOWN * AUDIT_SANDBOX_ID_LEN + 8];
	size_t	i, off = 0;

	if (r->naskers < 2)
		return;
	buf[0] = '\0';
	for (i = 0; i < r->naskers && i < CONTROL_ASKERS_SHOWN; i++)
		off += snprintf(buf + off, sizeof buf - off, "%s%s",
		    i > 0 ? " " : "", r->askers[i].sandbox[0] != '\0' ?
		    r->askers[i].sandbox : "-");
	if (i < r->naskers)
		snprintf(buf + off, sizeof buf - off, " ...");
	json_put_str(w, "sandboxes", buf);
}

/* Put the members of a request (key names the id member). */
void
control_put_request(struct json_writer *w, const char *key,
    const struct escalate_request *r)
{
	json_put_str(w, key, r->id);
	json_put_str(w, "host", r->host.text);
	json_put_int(w, "port", r->port);
	json_put_str(w, "reason", r->reason);
	json_put_str(w, "via", r->via);
	control_put_time(w, "since", r->since);
	json_put_int(w, "count", r->count);
	if (r->sandbox[0] != '\0') {
		json_put_str(w, "sandbox", r->sandbox);
		json_put_str(w, "cmd", r->cmd);
		if (r->pid >= 0)
			json_put_int(w, "pid", r->pid);
	}
	if (r->others > 0)
		json_put_int(w, "others", r->others);
	control_put_askers(w, r);
	if (r->lifts[0] != '\0')
		json_put_str(w, "lifts", r->lifts);
	json_put_str(w, "state", escalate_state_name(r->state));
	if (r->state == ESCALATE_PENDING)
		return;
	control_put_time(w, "decided", r->decided);
	if (r->scope != ESCALATE_SCOPE_NONE) {
		json_put_str(w, "scope", escalate_scope_name(r->scope));
		json_put_int(w, "ttl", r->ttl);
	}
	if (r->by[0] != '\0')
		json_put_str(w, "by", r->by);
	if (r->decider[0] != '\0')
		json_put_str(w, "decider", r->decider);
	if (r->answer[0] != '\0')
		json_put_str(w, "answer", r->answer);
	if (r->written[0] != '\0')
		json_put_str(w, "written", r->written);
}

/*
 * Put what was refused and how often, then the command that asks for a
 * grant (hint, when ask) or what the policy must change (fix).
 */
static void
control_put_refused(struct json_writer *w, const struct host *h,
    uint16_t port, const char *via, unsigned int count, time_t first,
    time_t last, const char *fix, int ask)
{
	char	hint[HOST_TEXT_LEN + 32];

	json_put_str(w, "host", h->text);
	json_put_int(w, "port", port);
	json_put_str(w, "via", via);
	json_put_int(w, "count", count);
	control_put_time(w, "first", first);
	control_put_time(w, "last", last);
	if (fix[0] != '\0')
		json_put_str(w, "fix", fix);
	else if (ask) {
		escalate_hint(h, port, hint, sizeof hint);
		json_put_str(w, "hint", hint);
	}
}

/* Put the members of a blocked attempt. */
void
control_put_blocked(struct json_writer *w, const struct escalate_blocked *b)
{
	if (b->sandbox[0] != '\0')
		json_put_str(w, "sandbox", b->sandbox);
	control_put_refused(w, &b->host, b->port, b->via, b->count, b->first,
	    b->last, b->fix, 1);
}

/* Put the members of a sandbox's refusal: those, what and why. */
void
control_put_refusal(struct json_writer *w, const struct sandbox_refusal *f)
{
	control_put_refused(w, &f->host, f->port, f->via, f->count, f->first,
	    f->last, f->fix, f->ask);
	if (f->what[0] != '\0')
		json_put_str(w, "what", f->what);
	json_put_str(w, "why", f->why);
}

/* Start a line answering the current request. */
static void
control_begin(struct control_ctx *c)
{
	json_open(c->out);
	if (c->has_id)
		json_put_int(c->out, "id", c->id);
}

/* End a line. */
static void
control_end(struct control_ctx *c)
{
	json_close(c->out);
	json_put_raw(c->out, "\n", 1);
}

/* Reply with an error; returns 0 (handled). */
static int
control_error(struct control_ctx *c, const char *err)
{
	control_begin(c);
	json_put_bool(c->out, "ok", 0);
	json_put_str(c->out, "error", err);
	control_end(c);
	return (0);
}

/* Start an ok reply (the caller adds members and ends it). */
static void
control_ok(struct control_ctx *c)
{
	control_begin(c);
	json_put_bool(c->out, "ok", 1);
	json_put_str(c->out, "session", escalate_session(c->e));
}

/* hello: say who we are. */
static int
control_op_hello(struct control_ctx *c)
{
	control_ok(c);
	json_put_int(c->out, "version", CONTROL_VERSION);
	json_put_str(c->out, "program", PACKAGE_NAME " " PACKAGE_VERSION);
	control_end(c);
	return (0);
}

/* status: the session at a glance. */
static int
control_op_status(struct control_ctx *c)
{
	size_t	nblocked = 0;

	while (escalate_blocked_at(c->e, nblocked) != NULL)
		nblocked++;
	control_ok(c);
	json_put_int(c->out, "version", CONTROL_VERSION);
	json_put_int(c->out, "pid", getpid());
	json_put_int(c->out, "pending", escalate_npending(c->e));
	json_put_int(c->out, "blocked", nblocked);
	json_put_str(c->out, "agent", c->agent);
	json_put_bool(c->out, "subscribed", c->peer->subscribed);
	control_end(c);
	return (0);
}

/* pending: item lines for open requests (all with "all") and blocks. */
static int
control_op_pending(struct control_ctx *c)
{
	const struct escalate_request	*r = NULL;
	const struct escalate_blocked	*b;
	const struct json_member	*all = json_get(c->obj, "all");
	size_t				 i, nr = 0, nb = 0;

	if (all != NULL && all->type != JSON_BOOL)
		return (control_error(c, "\"all\" must be true or false"));
	while ((r = escalate_next(c->e, r)) != NULL) {
		if (r->state != ESCALATE_PENDING && (all == NULL || !all->num))
			continue;
		control_begin(c);
		json_put_str(c->out, "item", "request");
		json_put_str(c->out, "session", escalate_session(c->e));
		control_put_request(c->out, "request", r);
		control_end(c);
		nr++;
	}
	for (i = 0; (b = escalate_blocked_at(c->e, i)) != NULL; i++) {
		control_begin(c);
		json_put_str(c->out, "item", "blocked");
		json_put_str(c->out, "session", escalate_session(c->e));
		control_put_blocked(c->out, b);
		control_end(c);
		nb++;
	}
	control_ok(c);
	json_put_int(c->out, "requests", nr);
	json_put_int(c->out, "blocked", nb);
	control_end(c);
	return (0);
}

/* Say who decides: "uid U via HOW" (cli, watch, or protocol). */
static void
control_by(struct control_ctx *c, char *buf, size_t len)
{
	const char	*via = json_get_str(c->obj, "via");

	if (via == NULL || (strcmp(via, "cli") != 0 &&
	    strcmp(via, "watch") != 0))
		via = "protocol";
	snprintf(buf, len, "uid %lu via %s", (unsigned long)c->peer->uid, via);
}

/* The "request" member every decision names. */
static const char *
control_request_id(struct control_ctx *c)
{
	const char	*id = json_get_str(c->obj, "request");

	if (id == NULL || id[0] == '\0' || strlen(id) >= ESCALATE_ID_LEN)
		return (NULL);
	return (id);
}

/* Reply to a decision with the request as it now stands. */
static int
control_decided(struct control_ctx *c, const char *id)
{
	struct escalate_request	*r = escalate_find(c->e, id);

	control_ok(c);
	if (r != NULL)
		control_put_request(c->out, "request", r);
	control_end(c);
	return (0);
}

/* Read the scope and ttl of an approval. */
static const char *
control_scope_ttl(struct control_ctx *c, enum escalate_scope *scope,
    long *ttl)
{
	const char			*s = json_get_str(c->obj, "scope");
	const struct json_member	*t = json_get(c->obj, "ttl");

	*scope = ESCALATE_SCOPE_ONCE;
	*ttl = 0;
	if (json_get(c->obj, "scope") != NULL &&
	    (s == NULL || escalate_scope_parse(s, scope) == -1))
		return ("\"scope\" must be \"once\", \"session\" or "
		    "\"always\"");
	if (t == NULL)
		return (NULL);
	if (t->type == JSON_INT && t->num >= 0 && t->num <= ESCALATE_TTL_MAX)
		*ttl = t->num;
	else if (t->type != JSON_STRING ||
	    (*ttl = escalate_duration_parse(t->str)) == -1)
		return ("\"ttl\" must be seconds, or a duration like \"15m\"");
	return (NULL);
}

/* Read the sandbox a once approval is for: absent, or a sandbox's id. */
static const char *
control_sandbox(struct control_ctx *c, const char **sandbox)
{
	const struct json_member	*m = json_get(c->obj, "sandbox");

	*sandbox = NULL;
	if (m == NULL)
		return (NULL);
	if (m->type != JSON_STRING || m->str[0] == '\0' ||
	    strlen(m->str) >= AUDIT_SANDBOX_ID_LEN)
		return ("\"sandbox\" must name a sandbox of the session");
	*sandbox = m->str;
	return (NULL);
}

/* approve: grant a pending request. */
static int
control_op_approve(struct control_ctx *c)
{
	enum escalate_scope	 scope;
	long			 ttl;
	const char		*id, *bad, *sandbox;
	char			 by[ESCALATE_BY_LEN], err[256];

	if ((id = control_request_id(c)) == NULL)
		return (control_error(c, "\"request\" must name a request id"));
	if ((bad = control_scope_ttl(c, &scope, &ttl)) != NULL ||
	    (bad = control_sandbox(c, &sandbox)) != NULL)
		return (control_error(c, bad));
	control_by(c, by, sizeof by);
	if (escalate_approve(c->e, id, scope, ttl, sandbox, by, err,
	    sizeof err) == -1)
		return (control_error(c, err));
	return (control_decided(c, id));
}

/* deny: refuse a pending request, with a reason for the agent. */
static int
control_op_deny(struct control_ctx *c)
{
	const struct json_member	*m = json_get(c->obj, "reason");
	const char			*id;
	char				 by[ESCALATE_BY_LEN], err[256];

	if ((id = control_request_id(c)) == NULL)
		return (control_error(c, "\"request\" must name a request id"));
	if (m != NULL && m->type != JSON_STRING)
		return (control_error(c, "\"reason\" must be a string"));
	control_by(c, by, sizeof by);
	if (escalate_deny(c->e, id, m != NULL ? m->str : NULL, by, err,
	    sizeof err) == -1)
		return (control_error(c, err));
	return (control_decided(c, id));
}

/* subscribe: events from now on, the open requests first. */
static int
control_op_subscribe(struct control_ctx *c)
{
	const struct escalate_request	*r = NULL;

	control_ok(c);
	control_end(c);
	if (!c->peer->subscribed) {
		while ((r = escalate_next(c->e, r)) != NULL) {
			if (r->state == ESCALATE_PENDING)
				control_format_note(c->e,
				    ESCALATE_NOTE_REQUEST, r, NULL, c->out);
		}
	}
	c->peer->subscribed = 1;
	c->want |= CONTROL_WANT_SUBSCRIBE;
	return (0);
}

static const struct control_op control_ops[] = {
	{ "hello", control_op_hello },
	{ "status", control_op_status },
	{ "pending", control_op_pending },
	{ "approve", control_op_approve },
	{ "deny", control_op_deny },
	{ "subscribe", control_op_subscribe },
};

/* Read the message id: an integer, or absent. */
static const char *
control_read_id(struct control_ctx *c)
{
	const struct json_member	*m = json_get(c->obj, "id");

	if (m == NULL)
		return (NULL);
	if (m->type != JSON_INT)
		return ("\"id\" must be an integer");
	c->id = m->num;
	c->has_id = 1;
	return (NULL);
}

/* Handle one request line. */
int
control_handle(struct escalate *e, struct control_peer *peer,
    const char *agent, const char *line, size_t len, struct json_writer *out)
{
	struct json_obj		 obj;
	struct control_ctx	 c = { e, peer, agent, &obj, 0, 0, out, 0 };
	const char		*op, *err;
	char			 msg[128];
	size_t			 i;

	if (json_parse(line, len, &obj, &err) == -1) {
		snprintf(msg, sizeof msg, "bad JSON: %s", err);
		control_error(&c, msg);
		return (0);
	}
	if ((err = control_read_id(&c)) != NULL) {
		control_error(&c, err);
		return (0);
	}
	if ((op = json_get_str(&obj, "op")) == NULL) {
		control_error(&c, "\"op\" missing");
		return (0);
	}
	for (i = 0; i < sizeof control_ops / sizeof control_ops[0]; i++) {
		if (strcmp(control_ops[i].name, op) == 0) {
			control_ops[i].fn(&c);
			return (c.want);
		}
	}
	control_error(&c, "unknown op");
	return (0);
}

/* Write the event line of a note. */
void
control_format_note(struct escalate *e, enum escalate_note n,
    const struct escalate_request *r, const struct escalate_blocked *b,
    struct json_writer *out)
{
	static const char	*names[] = { "request", "blocked", "decided" };

	json_open(out);
	json_put_str(out, "event", names[n]);
	json_put_str(out, "session", escalate_session(e));
	if (r != NULL)
		control_put_request(out, "request", r);
	if (b != NULL)
		control_put_blocked(out, b);
	json_close(out);
	json_put_raw(out, "\n", 1);
}
