/*
 * The decider's protocol: its URL, the question, the answer.  Pure.
 */
#include "config.h"

#include <arpa/inet.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"
#include "proxy/wire/decidermsg.h"
#include "rules/rules.h"

/* Read "[ADDR]" or "ADDR" up to the port or path; checked numeric. */
static int
decider_url_addr(const char *s, struct decider_url *u, const char **rest,
    const char **errstr)
{
	struct host	 h;
	const char	*end;
	size_t		 len;
	unsigned char	 buf[16];
	int		 af = AF_INET;

	if (*s == '[') {
		if ((end = strchr(s, ']')) == NULL) {
			*errstr = "an IPv6 address lacks its ']'";
			return (-1);
		}
		s++;
		af = AF_INET6;
		*rest = end + 1;
	} else {
		end = s + strcspn(s, ":/");
		*rest = end;
	}
	if ((len = end - s) == 0 || len >= sizeof u->addr) {
		*errstr = "no address, or too long";
		return (-1);
	}
	memcpy(u->addr, s, len);
	u->addr[len] = '\0';
	if (inet_pton(af, u->addr, buf) == 1)
		return (0);
	if (u->kind == DECIDER_TLS && af == AF_INET &&
	    host_parse(u->addr, len, &h, errstr) == 0 && h.kind == HOST_NAME) {
		snprintf(u->addr, sizeof u->addr, "%s", h.text);
		return (0);
	}
	*errstr = u->kind == DECIDER_TLS ? "the host must be a name or an "
	    "address" : "the host must be a numeric address (127.0.0.1, "
	    "[::1]); a name needs https://";
	return (-1);
}

/* Read ":PORT" (or nothing: 80, or 443 for https). */
static int
decider_url_port(const char *s, struct decider_url *u, const char **rest,
    const char **errstr)
{
	char	*end;
	long	 v;

	u->port = u->kind == DECIDER_TLS ? 443 : 80;
	*rest = s;
	if (*s != ':')
		return (0);
	if (s[1] < '0' || s[1] > '9' || (v = strtol(s + 1, &end, 10)) < 1 ||
	    v > 65535 || (*end != '\0' && *end != '/')) {
		*errstr = "the port must be a number from 1 to 65535";
		return (-1);
	}
	u->port = v;
	*rest = end;
	return (0);
}

/* Is every byte of s printable ASCII without blanks? */
static int
decider_url_plain(const char *s)
{
	for (; *s != '\0'; s++) {
		if (*s <= ' ' || *s > '~')
			return (0);
	}
	return (1);
}

/* Read a decider's location. */
int
decider_url_parse(const char *s, struct decider_url *u,
    const char **errstr)
{
	const char	*rest;

	memset(u, 0, sizeof *u);
	if (strlen(s) >= DECIDER_URL_MAX || !decider_url_plain(s)) {
		*errstr = "too long, or not printable ASCII";
		return (-1);
	}
	if (strncmp(s, "unix:", 5) == 0)
		s += 5;
	if (*s == '/') {
		if (strlen(s) >= sizeof u->sock) {
			*errstr = "the socket's path is too long";
			return (-1);
		}
		u->kind = DECIDER_UNIX;
		snprintf(u->sock, sizeof u->sock, "%s", s);
		snprintf(u->path, sizeof u->path, "/");
		return (0);
	}
	if (strncmp(s, "https://", 8) == 0) {
		u->kind = DECIDER_TLS;
		s += 8;
	} else if (strncmp(s, "http://", 7) == 0) {
		u->kind = DECIDER_TCP;
		s += 7;
	} else {
		*errstr = "must be http://ADDR:PORT/PATH, "
		    "https://HOST:PORT/PATH, unix:/PATH or /PATH";
		return (-1);
	}
	if (decider_url_addr(s, u, &rest, errstr) == -1 ||
	    decider_url_port(rest, u, &rest, errstr) == -1)
		return (-1);
	if (*rest != '\0' && *rest != '/') {
		*errstr = "the address must be followed by :PORT or /PATH";
		return (-1);
	}
	snprintf(u->path, sizeof u->path, "%s", *rest == '\0' ? "/" : rest);
	return (0);
}

/* Write a string member when there is one. */
static void
decider_put(struct json_writer *w, const char *key, const char *value)
{
	if (value != NULL)
		json_put_str(w, key, value);
}

/* Write the question as one JSON object. */
void
decider_question_write(struct json_writer *w,
    const struct decider_question *q)
{
	json_open(w);
	decider_put(w, "request", q->request);
	decider_put(w, "session", q->session);
	decider_put(w, "sandbox", q->sandbox);
	decider_put(w, "cmd", q->cmd);
	if (q->pid >= 0)
		json_put_int(w, "pid", q->pid);
	decider_put(w, "host", q->host);
	json_put_int(w, "port", q->port);
	decider_put(w, "via", q->via);
	decider_put(w, "method", q->method);
	decider_put(w, "path", q->path);
	decider_put(w, "refused", q->refused);
	decider_put(w, "reason", q->reason);
	json_put_int(w, "timeout", q->timeout);
	json_close(w);
}

/* Is s (len bytes) printable text: no controls, valid UTF-8? */
static int
decider_text_ok(const char *s, size_t len, int ascii)
{
	uint32_t	cp;
	size_t		n;

	while (len > 0) {
		if ((unsigned char)*s < 0x80) {
			if (*s < ' ' || *s == 0x7f)
				return (0);
			s++;
			len--;
			continue;
		}
		if (ascii || (n = json_utf8((const uint8_t *)s, len,
		    &cp)) == 0 || json_must_escape(cp) || cp < 0xa0)
			return (0);
		s += n;
		len -= n;
	}
	return (1);
}

/* Read the members that go with an allow. */
static int
decider_answer_allow(const struct json_obj *o, struct decider_answer *a,
    const char **errstr)
{
	const struct json_member	*m;

	if ((m = json_get(o, "scope")) != NULL) {
		if (m->type != JSON_STRING)
			goto bad_scope;
		if (strcmp(m->str, "once") == 0)
			a->scope = DECIDER_ONCE;
		else if (strcmp(m->str, "session") == 0)
			a->scope = DECIDER_SESSION;
		else if (strcmp(m->str, "always") == 0)
			a->scope = DECIDER_ALWAYS;
		else
			goto bad_scope;
	}
	if ((m = json_get(o, "ttl")) != NULL) {
		if (m->type != JSON_INT || m->num < 0 ||
		    m->num > DECIDER_TTL_MAX) {
			*errstr = "\"ttl\" must be seconds from 0 to a year";
			return (-1);
		}
		a->ttl = m->num;
	}
	return (0);
bad_scope:
	*errstr = "\"scope\" must be \"once\", \"session\" or \"always\"";
	return (-1);
}

/* Check that every member belongs to the decision. */
static int
decider_answer_members(const struct json_obj *o, enum decider_decision d,
    const char **errstr)
{
	const char	*k;
	size_t		 i;

	for (i = 0; i < o->n; i++) {
		k = o->m[i].key;
		if (strcmp(k, "decision") == 0 || strcmp(k, "approver") == 0)
			continue;
		if (d == DECIDER_ALLOW && (strcmp(k, "scope") == 0 ||
		    strcmp(k, "ttl") == 0))
			continue;
		if (d == DECIDER_DENY && strcmp(k, "note") == 0)
			continue;
		*errstr = "a member that does not belong to the decision";
		return (-1);
	}
	return (0);
}

/* Read a string member of at most max bytes of printable text. */
static int
decider_answer_text(const struct json_obj *o, const char *key, int ascii,
    char *dst, size_t max, const char **errstr)
{
	const struct json_member	*m;

	if ((m = json_get(o, key)) == NULL)
		return (0);
	if (m->type != JSON_STRING || m->len > max ||
	    !decider_text_ok(m->str, m->len, ascii)) {
		*errstr = ascii ? "\"approver\" must be printable ASCII, 32 "
		    "bytes at most" : "\"note\" must be printable text, 200 "
		    "bytes at most";
		return (-1);
	}
	memcpy(dst, m->str, m->len + 1);
	return (0);
}

/* Read an answer. */
int
decider_answer_parse(const char *buf, size_t len, struct decider_answer *a,
    const char **errstr)
{
	struct json_obj	*o;
	const char	*d;
	int		 rv = -1;

	memset(a, 0, sizeof *a);
	if ((o = malloc(sizeof *o)) == NULL) {
		*errstr = "out of memory";
		return (-1);
	}
	if (len > DECIDER_BODY_MAX) {
		*errstr = "the answer is too long";
		goto out;
	}
	if (json_parse(buf, len, o, errstr) == -1)
		goto out;
	if ((d = json_get_str(o, "decision")) == NULL) {
		*errstr = "\"decision\" is missing or not a string";
		goto out;
	}
	if (strcmp(d, "allow") == 0)
		a->decision = DECIDER_ALLOW;
	else if (strcmp(d, "deny") == 0)
		a->decision = DECIDER_DENY;
	else if (strcmp(d, "ask") == 0)
		a->decision = DECIDER_ASK;
	else {
		*errstr = "\"decision\" must be \"allow\", \"deny\" or \"ask\"";
		goto out;
	}
	if (decider_answer_members(o, a->decision, errstr) == -1 ||
	    (a->decision == DECIDER_ALLOW &&
	    decider_answer_allow(o, a, errstr) == -1) ||
	    decider_answer_text(o, "approver", 1, a->approver,
	    DECIDER_APPROVER_MAX, errstr) == -1 ||
	    decider_answer_text(o, "note", 0, a->note, DECIDER_NOTE_MAX,
	    errstr) == -1)
		goto out;
	rv = 0;
out:
	free(o);
	if (rv == -1)
		memset(a, 0, sizeof *a);
	return (rv);
}

/* Name a decision. */
const char *
decider_decision_name(enum decider_decision d)
{
	switch (d) {
	case DECIDER_ALLOW:
		return ("allow");
	case DECIDER_DENY:
		return ("deny");
	default:
		return ("ask");
	}
}

/* Name a scope. */
const char *
decider_scope_name(enum decider_scope s)
{
	switch (s) {
	case DECIDER_SESSION:
		return ("session");
	case DECIDER_ALWAYS:
		return ("always");
	default:
		return ("once");
	}
}
