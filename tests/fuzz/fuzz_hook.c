/*
 * Fuzz the harness hook's reading of a call and its answer.  The input
 * is the call.  Checks, for a call read as a Bash PreToolUse:
 *  - the answer is JSON the reader takes back, and its updatedInput has
 *    as many members as tool_input;
 *  - the command in it ends in the original command single-quoted, and
 *    unquoting that gives back the original byte for byte;
 *  - the session name is one pinhole session takes.
 * Corpus: tests/fuzz/hook/.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/hook.h"
#include "lib/json.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* Stop loudly when an invariant breaks. */
static void
check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz_hook: invariant broken: %s\n", what);
		abort();
	}
}

/* Read an object with nested members into m, n of them. */
static int
reread(const char *p, size_t len, char *store, struct json_member *m,
    size_t *n)
{
	struct json_reader	 r = { .m = m, .max = HOOK_MEMBERS_MAX,
				    .store = store, .size = len + 1,
				    .full_range = 1, .nested = 1 };
	const char		*err;

	return (json_read(&r, p, len, n, &err));
}

/* Find the member key of the nested object member m; its members in out. */
static const struct json_member *
inner(const struct json_member *m, size_t n, const char *key, char *store,
    struct json_member *out, size_t *nout)
{
	const struct json_member	*o = json_find(m, n, key);

	check(o != NULL && o->nested == '{', key);
	check(reread(o->raw, o->rawlen, store, out, nout) == 0, "reread");
	return (o);
}

/* Undo hook_quote() on the command word of s; the result in out. */
static void
unquote_last(const char *s, size_t len, char *out, size_t *outlen)
{
	const char	*q = strstr(s, " -c '");

	/* The word starts after the first " -c ": the words before it are ours. */
	check(q != NULL, "command quoted");
	q += 4;
	*outlen = 0;
	for (q++; q < s + len; q++) {
		if (*q != '\'') {
			out[(*outlen)++] = *q;
			continue;
		}
		if (q + 1 == s + len)
			return;
		check(memcmp(q, "'\\''", 4) == 0, "quote escaped");
		out[(*outlen)++] = '\'';
		q += 3;
	}
	check(0, "quote closed");
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hook_call	 c;
	struct json_writer	 w;
	struct json_member	 top[HOOK_MEMBERS_MAX], out[HOOK_MEMBERS_MAX];
	struct json_member	 in[HOOK_MEMBERS_MAX];
	char			*store, *s1, *s2, *s3, *back, name[HOOK_NAME_MAX + 1];
	const char		*err, *cmd;
	size_t			 ntop, nout, nin, backlen;

	if (size > HOOK_INPUT_MAX)
		return (0);
	store = malloc(HOOK_STORE_SIZE(size));
	if (hook_parse((const char *)data, size, store, &c, &err) == -1 ||
	    !hook_wraps(&c)) {
		free(store);
		return (0);
	}
	hook_session_name(c.session, name);
	check(strlen(name) >= 1 && strlen(name) <= HOOK_NAME_MAX &&
	    name[0] != '.' && strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "abcdefghijklmnopqrstuvwxyz0123456789._-") == strlen(name),
	    "session name");
	json_writer_init(&w, 0);
	hook_answer(&w, &c, "/usr/bin/pinhole", name, "/bin/bash", "ask");
	check(!w.failed, "answer written");
	s1 = malloc(w.len + 1);
	s2 = malloc(w.len + 1);
	s3 = malloc(w.len + 1);
	back = malloc(w.len + 1);
	check(reread(w.buf, w.len, s1, top, &ntop) == 0, "answer is JSON");
	inner(top, ntop, "hookSpecificOutput", s2, out, &nout);
	inner(out, nout, "updatedInput", s3, in, &nin);
	check(nin == c.ninput, "members kept");
	cmd = json_str(json_find(in, nin, "command"));
	check(cmd != NULL, "command kept");
	unquote_last(cmd, strlen(cmd), back, &backlen);
	check(backlen == strlen(c.command) &&
	    memcmp(back, c.command, backlen) == 0, "command unquoted");
	free(back);
	free(s3);
	free(s2);
	free(s1);
	json_writer_free(&w);
	free(store);
	return (0);
}
