/*
 * The attach protocol's messages (proxy/wire/attachmsg.h): read strictly,
 * written with lib/json.  Pure.
 */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"
#include "proxy/wire/attachmsg.h"

static const char *const attach_ops[] = {
	[ATTACH_ATTACH] = "attach",
	[ATTACH_CONFIG] = "config",
	[ATTACH_LISTENERS] = "listeners",
	[ATTACH_OK] = "ok",
	[ATTACH_EXIT] = "exit",
	[ATTACH_ERROR] = "error",
	[ATTACH_NOTICE] = "notice"
};

static const char *const attach_notice_kinds[] = {
	[ATTACH_NOTICE_REFUSED] = "refused",
	[ATTACH_NOTICE_HELD] = "held",
	[ATTACH_NOTICE_ASKED] = "asked",
	[ATTACH_NOTICE_DECIDED] = "decided"
};

static const char *const attach_fd_names[] = {
	[ATTACH_FD_PROXY] = "proxy",
	[ATTACH_FD_DNS] = "dns",
	[ATTACH_FD_CAPTURE] = "capture",
	[ATTACH_FD_UDP] = "udp",
	[ATTACH_FD_RAW] = "raw"
};

#define NITEMS(a)	(sizeof (a) / sizeof (a)[0])

/* An empty message of one kind (numbers -1). */
void
attach_msg_init(struct attach_msg *m, enum attach_op op)
{
	memset(m, 0, sizeof *m);
	m->op = op;
	m->pid = -1;
	m->status = -1;
}

/* Copy a string member that must fit (and, if required, be there). */
static int
attach_str(const struct json_member *m, size_t n, const char *key, char *dst,
    size_t len, int required, const char **errstr)
{
	const struct json_member	*v = json_find(m, n, key);

	if (v == NULL && !required)
		return (0);
	if (v == NULL || v->type != JSON_STRING || v->len >= len) {
		*errstr = v == NULL ? "a member is missing" :
		    "a member is not a string or too long";
		return (-1);
	}
	memcpy(dst, v->str, v->len + 1);
	return (0);
}

/* An integer member from min to max. */
static int
attach_int(const struct json_member *m, size_t n, const char *key,
    long long min, long long max, long long *out, const char **errstr)
{
	const struct json_member	*v = json_find(m, n, key);

	if (v == NULL || v->type != JSON_INT || v->num < min || v->num > max) {
		*errstr = "a number is missing or out of range";
		return (-1);
	}
	*out = v->num;
	return (0);
}

/* A boolean member: 0 when absent. */
static int
attach_bool(const struct json_member *m, size_t n, const char *key)
{
	const struct json_member	*v = json_find(m, n, key);

	return (v != NULL && v->type == JSON_BOOL && v->num != 0);
}

/* The index of name in a table of n names, or -1. */
static int
attach_lookup(const char *const *names, size_t n, const char *name)
{
	size_t	i;

	for (i = 0; name != NULL && i < n; i++) {
		if (strcmp(name, names[i]) == 0)
			return ((int)i);
	}
	return (-1);
}

/* A notice's host, canonical; its port, 0 (a name) to 65535. */
static int
attach_notice_host(const struct json_member *m, size_t n,
    struct attach_notice *t, const char **errstr)
{
	const char	*host = json_str(json_find(m, n, "host"));
	long long	 port;

	if (host == NULL || host_parse(host, strlen(host), &t->host,
	    errstr) == -1) {
		*errstr = "a notice names no host";
		return (-1);
	}
	if (attach_int(m, n, "port", 0, 65535, &port, errstr) == -1)
		return (-1);
	t->port = (uint16_t)port;
	return (0);
}

/* Read a notice's members: the kind, the host, then the kind's own. */
static int
attach_notice_read(const struct json_member *m, size_t n,
    struct attach_notice *t, const char **errstr)
{
	long long	secs = 0;
	int		kind;

	kind = attach_lookup(attach_notice_kinds, NITEMS(attach_notice_kinds),
	    json_str(json_find(m, n, "kind")));
	if (kind == -1) {
		*errstr = "unknown notice";
		return (-1);
	}
	t->kind = (enum attach_notice_kind)kind;
	t->ask = attach_bool(m, n, "ask");
	if (attach_notice_host(m, n, t, errstr) == -1 ||
	    attach_str(m, n, "via", t->via, sizeof t->via, 0, errstr) == -1 ||
	    attach_str(m, n, "what", t->what, sizeof t->what, 0,
	    errstr) == -1 ||
	    attach_str(m, n, "text", t->text, sizeof t->text, 0,
	    errstr) == -1 ||
	    attach_str(m, n, "fix", t->fix, sizeof t->fix, 0, errstr) == -1 ||
	    attach_str(m, n, "request", t->request, sizeof t->request,
	    t->kind != ATTACH_NOTICE_REFUSED, errstr) == -1 ||
	    attach_str(m, n, "state", t->state, sizeof t->state, 0,
	    errstr) == -1 ||
	    attach_str(m, n, "scope", t->scope, sizeof t->scope, 0,
	    errstr) == -1 ||
	    attach_str(m, n, "by", t->by, sizeof t->by, 0, errstr) == -1 ||
	    (json_find(m, n, "secs") != NULL && attach_int(m, n, "secs", 0,
	    ATTACH_SECS_MAX, &secs, errstr) == -1))
		return (-1);
	if (t->kind != ATTACH_NOTICE_REFUSED && t->request[0] == '\0') {
		*errstr = "a notice names no request";
		return (-1);
	}
	t->secs = (int)secs;
	return (0);
}

/* "80 443 22": ports, blank-separated. */
static int
attach_ports(const char *s, struct attach_msg *msg, const char **errstr)
{
	char	*end;
	long	 v;

	while (*s != '\0') {
		if (*s == ' ') {
			s++;
			continue;
		}
		v = strtol(s, &end, 10);
		if (end == s || (*end != ' ' && *end != '\0') || v < 1 ||
		    v > 65535 || *s < '0' || *s > '9' ||
		    msg->nports == ATTACH_PORTS_MAX) {
			*errstr = "bad port list";
			return (-1);
		}
		msg->ports[msg->nports++] = (uint16_t)v;
		s = end;
	}
	return (0);
}

/* "proxy dns capture": what each descriptor is for, in order. */
static int
attach_fds(const char *s, struct attach_msg *msg, const char **errstr)
{
	size_t	i, len;

	while (*s != '\0') {
		if (*s == ' ') {
			s++;
			continue;
		}
		len = strcspn(s, " ");
		for (i = 0; i < NITEMS(attach_fd_names); i++) {
			if (strlen(attach_fd_names[i]) == len &&
			    strncmp(s, attach_fd_names[i], len) == 0)
				break;
		}
		if (i == NITEMS(attach_fd_names) ||
		    msg->nfds == ATTACH_FDS_MAX) {
			*errstr = "bad descriptor list";
			return (-1);
		}
		msg->fds[msg->nfds++] = (enum attach_fd)i;
		s += len;
	}
	return (0);
}

/*
 * Does a guard line's text start right for its kind: "e NAME" with NAME
 * an environment variable's, "s PATH" with PATH absolute or starting
 * with $ or ~/ (expanded by the run), "K /PATH" for the others?
 */
static int
attach_guard_text(char kind, const char *t)
{
	if (kind == 'e')
		return (t[0] == '_' || isalpha((unsigned char)t[0]));
	if (kind == 's')
		return (t[0] == '/' || t[0] == '$' || (t[0] == '~' &&
		    t[1] == '/'));
	return (t[0] == '/');
}

/* Every guard line is "K TEXT" with K one of d f l r h c t e s. */
static int
attach_guards_ok(const char *s, const char **errstr)
{
	const char	*nl;

	for (; *s != '\0'; s = nl + 1) {
		if ((nl = strchr(s, '\n')) == NULL || s[0] == '\0' ||
		    strchr("dflrhctes", s[0]) == NULL || s[1] != ' ' ||
		    !attach_guard_text(s[0], s + 2)) {
			*errstr = "bad guard line";
			return (-1);
		}
	}
	return (0);
}

/* Read the members an op has. */
static int
attach_members(const struct json_member *m, size_t n, struct attach_msg *msg,
    const char **errstr)
{
	const struct json_member	*v;
	char				 list[1024];
	long long			 num;

	switch (msg->op) {
	case ATTACH_ATTACH:
		msg->notices = attach_bool(m, n, "notices");
		return (attach_str(m, n, "cmd", msg->cmd, sizeof msg->cmd, 1,
		    errstr));
	case ATTACH_NOTICE:
		return (attach_notice_read(m, n, &msg->notice, errstr));
	case ATTACH_CONFIG:
		list[0] = '\0';
		if (attach_str(m, n, "sandbox", msg->sandbox,
		    sizeof msg->sandbox, 1, errstr) == -1 ||
		    attach_str(m, n, "ports", list, sizeof list, 0,
		    errstr) == -1 || attach_ports(list, msg, errstr) == -1 ||
		    attach_str(m, n, "guards", msg->guards,
		    sizeof msg->guards, 0, errstr) == -1 ||
		    attach_guards_ok(msg->guards, errstr) == -1)
			return (-1);
		if ((v = json_find(m, n, "vsock")) != NULL &&
		    v->type == JSON_BOOL)
			msg->vsock = (int)v->num;
		return (0);
	case ATTACH_LISTENERS:
		if (attach_int(m, n, "pid", 1, 0x7fffffff, &msg->pid,
		    errstr) == -1 ||
		    attach_str(m, n, "fds", list, sizeof list, 1, errstr) == -1)
			return (-1);
		return (attach_fds(list, msg, errstr));
	case ATTACH_EXIT:
		if (attach_int(m, n, "status", 0, 255, &num, errstr) == -1)
			return (-1);
		msg->status = (int)num;
		return (0);
	case ATTACH_ERROR:
		return (attach_str(m, n, "error", msg->error,
		    sizeof msg->error, 1, errstr));
	case ATTACH_OK:
		return (0);
	}
	return (0);
}

/* Read one message. */
int
attach_parse(const char *buf, size_t len, struct attach_msg *msg,
    const char **errstr)
{
	struct json_member	 m[JSON_MEMBERS_MAX];
	struct json_reader	 r;
	char			*store;
	const char		*op;
	size_t			 n;
	int			 i, rv = -1;

	if (len > ATTACH_MSG_MAX) {
		*errstr = "message too long";
		return (-1);
	}
	if ((store = malloc(ATTACH_MSG_MAX + 2 * JSON_MEMBERS_MAX)) == NULL) {
		*errstr = "out of memory";
		return (-1);
	}
	memset(&r, 0, sizeof r);
	r.m = m;
	r.max = JSON_MEMBERS_MAX;
	r.store = store;
	r.size = ATTACH_MSG_MAX + 2 * JSON_MEMBERS_MAX;
	if (json_read(&r, buf, len, &n, errstr) == -1)
		goto out;
	if ((op = json_str(json_find(m, n, "op"))) == NULL) {
		*errstr = "no op";
		goto out;
	}
	if ((i = attach_lookup(attach_ops, NITEMS(attach_ops), op)) == -1) {
		*errstr = "unknown op";
		goto out;
	}
	attach_msg_init(msg, (enum attach_op)i);
	rv = attach_members(m, n, msg, errstr);
out:
	free(store);
	return (rv);
}

/* Write a list of ports or descriptor kinds, blank-separated. */
static void
attach_put_list(struct json_writer *w, const char *key,
    const struct attach_msg *msg)
{
	char	list[1024];
	size_t	i, n = 0;

	list[0] = '\0';
	if (msg->op == ATTACH_CONFIG) {
		for (i = 0; i < msg->nports && n < sizeof list; i++)
			n += snprintf(list + n, sizeof list - n, "%s%u",
			    i ? " " : "", msg->ports[i]);
	} else {
		for (i = 0; i < msg->nfds && n < sizeof list; i++)
			n += snprintf(list + n, sizeof list - n, "%s%s",
			    i ? " " : "", attach_fd_names[msg->fds[i]]);
	}
	json_put_str(w, key, list);
}

/* Write a string member unless it is empty. */
static void
attach_put_text(struct json_writer *w, const char *key, const char *s)
{
	if (s[0] != '\0')
		json_put_str(w, key, s);
}

/* Write a notice's members. */
static void
attach_notice_put(struct json_writer *w, const struct attach_notice *t)
{
	json_put_str(w, "kind", attach_notice_kinds[t->kind]);
	json_put_str(w, "host", t->host.text);
	json_put_int(w, "port", t->port);
	attach_put_text(w, "via", t->via);
	attach_put_text(w, "what", t->what);
	attach_put_text(w, "text", t->text);
	attach_put_text(w, "fix", t->fix);
	if (t->ask)
		json_put_bool(w, "ask", 1);
	attach_put_text(w, "request", t->request);
	if (t->secs > 0)
		json_put_int(w, "secs", t->secs);
	attach_put_text(w, "state", t->state);
	attach_put_text(w, "scope", t->scope);
	attach_put_text(w, "by", t->by);
}

/* Write one message. */
size_t
attach_build(const struct attach_msg *msg, char *buf, size_t len)
{
	struct json_writer	w;

	json_writer_buf(&w, buf, len);
	json_open(&w);
	json_put_str(&w, "op", attach_ops[msg->op]);
	switch (msg->op) {
	case ATTACH_ATTACH:
		json_put_str(&w, "cmd", msg->cmd);
		if (msg->notices)
			json_put_bool(&w, "notices", 1);
		break;
	case ATTACH_NOTICE:
		attach_notice_put(&w, &msg->notice);
		break;
	case ATTACH_CONFIG:
		json_put_str(&w, "sandbox", msg->sandbox);
		attach_put_list(&w, "ports", msg);
		json_put_bool(&w, "vsock", msg->vsock);
		json_put_str(&w, "guards", msg->guards);
		break;
	case ATTACH_LISTENERS:
		json_put_int(&w, "pid", msg->pid);
		attach_put_list(&w, "fds", msg);
		break;
	case ATTACH_EXIT:
		json_put_int(&w, "status", msg->status);
		break;
	case ATTACH_ERROR:
		json_put_str(&w, "error", msg->error);
		break;
	case ATTACH_OK:
		break;
	}
	json_close(&w);
	return (w.failed || w.cut ? 0 : w.len);
}
