/*
 * The harness hook's pure half: reading a PreToolUse call, naming its
 * session, and writing the call again with its command run in pinhole.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <openssl/sha.h>

#include "cli/hook.h"
#include "lib/json.h"


/* Tell whether any of the bytes of set is among the n bytes of s. */
static int
memcspn(const char *s, size_t n, const char *set)
{
	size_t	i;

	for (i = 0; i < n; i++)
		if (strchr(set, s[i]) != NULL)
			return (1);
	return (0);
}

/* Read an object of len bytes, nested members kept as text. */
static int
hook_read(const char *buf, size_t len, char *store, struct json_member *m,
    size_t *n, const char **errstr)
{
	struct json_reader	r = { .m = m, .max = HOOK_MEMBERS_MAX,
				    .store = store, .size = len + 1,
				    .full_range = 1, .nested = 1 };

	return (json_read(&r, buf, len, n, errstr));
}

/* Read one call: the event, tool and session, and a Bash call's input. */
int
hook_parse(const char *buf, size_t len, char *store, struct hook_call *c,
    const char **errstr)
{
	const struct json_member	*in;

	memset(c, 0, sizeof *c);
	if (len > HOOK_INPUT_MAX) {
		*errstr = "input too long";
		return (-1);
	}
	if (hook_read(buf, len, store, c->top, &c->ntop, errstr) == -1)
		return (-1);
	c->event = json_str(json_find(c->top, c->ntop, "hook_event_name"));
	c->tool = json_str(json_find(c->top, c->ntop, "tool_name"));
	c->session = json_str(json_find(c->top, c->ntop, "session_id"));
	if (c->event == NULL || c->tool == NULL || c->session == NULL ||
	    c->session[0] == '\0') {
		*errstr = "hook_event_name, tool_name or session_id missing";
		return (-1);
	}
	if (!hook_wraps(c))
		return (0);
	in = json_find(c->top, c->ntop, "tool_input");
	if (in == NULL || in->nested != '{') {
		*errstr = "tool_input is not an object";
		return (-1);
	}
	if (hook_read(in->raw, in->rawlen, store + len + 1, c->input,
	    &c->ninput, errstr) == -1)
		return (-1);
	if ((c->command = json_str(json_find(c->input, c->ninput,
	    "command"))) == NULL) {
		c->ninput = 0;
		*errstr = "tool_input.command is not a string";
		return (-1);
	}
	return (0);
}

/* Is this a PreToolUse call of the Bash tool? */
int
hook_wraps(const struct hook_call *c)
{
	return (strcmp(c->event, "PreToolUse") == 0 &&
	    strcmp(c->tool, "Bash") == 0);
}

/* Name a harness session: its id, or h- and a hash of it. */
void
hook_session_name(const char *id, char *buf)
{
	static const char	hex[] = "0123456789abcdef";
	unsigned char		md[SHA256_DIGEST_LENGTH];
	size_t			n = strlen(id), i;

	if (control_session_name_ok(id)) {
		memcpy(buf, id, n + 1);
		return;
	}
	SHA256((const unsigned char *)id, n, md);
	buf[0] = 'h';
	buf[1] = '-';
	for (i = 0; i < 16; i++) {
		buf[2 + 2 * i] = hex[md[i] >> 4];
		buf[3 + 2 * i] = hex[md[i] & 0xf];
	}
	buf[34] = '\0';
}

/*
 * Unquote one shell word of n bytes ('...', "..." without expansions,
 * \c and plain characters) into buf of len bytes, cut to fit; -1 when
 * it is not one such word.
 */
static int
hook_unquote_word(const char *w, size_t n, char *buf, size_t len)
{
	const char	*end = w + n, *q;
	size_t		 o = 0;

	while (w < end) {
		if (*w == '\'' || *w == '"') {
			if ((q = memchr(w + 1, *w, end - w - 1)) == NULL ||
			    (*w == '"' && memcspn(w + 1, q - w - 1, "$`\\")))
				return (-1);
			for (w++; w < q; w++)
				if (o + 1 < len)
					buf[o++] = *w;
			w++;
		} else if (*w == '\\' && w + 1 < end) {
			if (o + 1 < len)
				buf[o++] = w[1];
			w += 2;
		} else if (strchr(" \t\n;&|<>()$`*?[#~\\", *w) != NULL)
			return (-1);
		else {
			if (o + 1 < len)
				buf[o++] = *w;
			w++;
		}
	}
	buf[o] = '\0';
	return (0);
}

/* The tool call in Claude Code's shell string: what its eval runs. */
int
hook_shell_label(const char *s, char *buf, size_t len)
{
	static const char	head[] = " && eval ";
	static const char	tail[] = " < /dev/null && pwd -P >| ";
	const char		*b, *e = NULL, *p;
	size_t			 n;

	if (len == 0 || (b = strstr(s, head)) == NULL)
		return (-1);
	b += sizeof head - 1;
	for (p = b; (p = strstr(p, tail)) != NULL; p++)
		e = p;
	if (e == NULL || e == b)
		return (-1);
	n = e - b;
	if (hook_unquote_word(b, n, buf, len) == 0)
		return (0);
	if (n >= len)
		n = len - 1;
	memcpy(buf, b, n);
	buf[n] = '\0';
	return (0);
}

/* Append s single-quoted: every ' closes, is escaped, and reopens. */
void
hook_quote(struct json_writer *w, const char *s)
{
	const char	*q;

	json_put_raw(w, "'", 1);
	while ((q = strchr(s, '\'')) != NULL) {
		json_put_raw(w, s, q - s);
		json_put_raw(w, "'\\''", 4);
		s = q + 1;
	}
	json_put_raw(w, s, strlen(s));
	json_put_raw(w, "'", 1);
}

/* Write the answer: tool_input again, its command run in the session. */
void
hook_answer(struct json_writer *w, const struct hook_call *c,
    const char *pinhole, const char *name, const char *shell,
    const char *decision)
{
	struct json_writer	cmd;
	struct json_member	m = { .type = JSON_STRING };
	char			why[HOOK_NAME_MAX + 32];
	size_t			i;

	json_writer_init(&cmd, 0);
	hook_quote(&cmd, pinhole);
	json_put_raw(&cmd, " run --session ", 15);
	hook_quote(&cmd, name);
	json_put_raw(&cmd, " -- ", 4);
	hook_quote(&cmd, shell);
	json_put_raw(&cmd, " -c ", 4);
	hook_quote(&cmd, c->command);
	json_open(w);
	json_open_member(w, "hookSpecificOutput");
	json_put_str(w, "hookEventName", "PreToolUse");
	json_put_str(w, "permissionDecision", decision);
	snprintf(why, sizeof why, "runs in pinhole session %s", name);
	json_put_str(w, "permissionDecisionReason", why);
	json_open_member(w, "updatedInput");
	for (i = 0; i < c->ninput; i++) {
		if (strcmp(c->input[i].key, "command") != 0)
			json_put_member(w, c->input[i].key, &c->input[i]);
		else if (cmd.failed)
			w->failed = 1;
		else {
			m.str = cmd.buf;
			m.len = cmd.len;
			json_put_member(w, "command", &m);
		}
	}
	json_close(w);
	json_close(w);
	json_close(w);
	json_writer_free(&cmd);
}
