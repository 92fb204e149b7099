/*
 * Fuzz the control protocol (proxy/escalate/control-proto.c, and the JSON reader
 * of lib/json.c): the input is lines, each handled in turn by
 * control_handle() against one queue holding two requests (one filed from
 * a sandbox, one joined from it) and a blocked attempt ("ID0" and "ID1" in
 * a line stand for the requests' ids, so decisions are reached).  Checks
 * what clients rely on:
 *  - every reply line is one flat JSON object our reader accepts, with
 *    no raw control character;
 *  - a parsed object written back out parses to the same members.
 * Corpus: tests/fuzz/control/.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"
#include "proxy/escalate/control.h"
#include "proxy/escalate/control-proto.h"
#include "proxy/escalate/escalate.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* Stop loudly when an invariant breaks. */
static void
check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz_control: invariant broken: %s\n", what);
		abort();
	}
}

/* Each output line parses, and holds no raw control character. */
static void
check_output(const struct json_writer *w)
{
	static struct json_obj	 o;
	const char		*p = w->buf, *nl, *err;
	size_t			 i;

	if (w->len == 0)
		return;
	check(!w->failed && w->buf[w->len - 1] == '\n', "output ends a line");
	for (; p < w->buf + w->len; p = nl + 1) {
		nl = memchr(p, '\n', w->buf + w->len - p);
		for (i = 0; p + i < nl; i++)
			check((unsigned char)p[i] >= 0x20 && p[i] != 0x7f,
			    "raw control character in a reply");
		check(json_parse(p, nl - p, &o, &err) == 0, "reply parses");
	}
}

/* A parsed object, written back, parses to the same members. */
static void
check_roundtrip(const char *line, size_t len)
{
	static struct json_obj	 a, b;
	struct json_writer	 w;
	const char		*err;
	size_t			 i;

	if (json_parse(line, len, &a, &err) == -1)
		return;
	json_writer_init(&w, 0);
	json_open(&w);
	for (i = 0; i < a.n; i++) {
		if (a.m[i].type == JSON_STRING)
			json_put_str(&w, a.m[i].key, a.m[i].str);
		else if (a.m[i].type == JSON_INT)
			json_put_int(&w, a.m[i].key, a.m[i].num);
		else if (a.m[i].type == JSON_BOOL)
			json_put_bool(&w, a.m[i].key, (int)a.m[i].num);
		else
			json_put_null(&w, a.m[i].key);
	}
	json_close(&w);
	if (w.len <= JSON_TEXT_MAX) {
		check(json_parse(w.buf, w.len, &b, &err) == 0, "rewritten parses");
		check(a.n == b.n, "same member count");
		for (i = 0; i < a.n; i++) {
			check(strcmp(a.m[i].key, b.m[i].key) == 0, "same key");
			check(a.m[i].type == b.m[i].type, "same type");
			if (a.m[i].type == JSON_STRING)
				check(strcmp(a.m[i].str, b.m[i].str) == 0,
				    "same string");
			else
				check(a.m[i].num == b.m[i].num, "same number");
		}
	}
	json_writer_free(&w);
}

/* Copy a line, writing the requests' ids for ID0 and ID1. */
static size_t
subst(char *out, size_t max, const char *in, size_t len, const char *id0,
    const char *id1)
{
	const char	*id;
	size_t		 i, o = 0;

	for (i = 0; i < len && o + ESCALATE_ID_LEN < max; i++) {
		if (len - i >= 3 && in[i] == 'I' && in[i + 1] == 'D' &&
		    (in[i + 2] == '0' || in[i + 2] == '1')) {
			id = in[i + 2] == '0' ? id0 : id1;
			memcpy(out + o, id, strlen(id));
			o += strlen(id);
			i += 2;
		} else
			out[o++] = in[i];
	}
	return (o);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char			 line[CONTROL_LINE_MAX + 64];
	static struct sandbox		*sb;
	struct escalate			*e;
	struct escalate_request		*r0, *r1;
	struct control_peer		 peer = { 1000, 0 };
	struct json_writer		 w;
	struct host			 h;
	uint16_t			 port;
	const char			*p = (const char *)data, *end, *err;
	size_t				 n;

	if (sb == NULL && (sb = sandbox_new("sb1", "sh -c 'echo \x1b[2J'",
	    4242, NULL)) == NULL)
		abort();
	if (size > 4 * CONTROL_LINE_MAX ||
	    (e = escalate_create(NULL, "f0000000", NULL)) == NULL)
		return (0);
	host_port_parse("a.test", &h, &port, 443, &err);
	escalate_file(e, &h, port, "why \x1b[2J", 8, "agent", sb, &r0);
	host_port_parse("[2001:db8::1]:22", &h, &port, 443, &err);
	escalate_file(e, &h, port, "", 0, "connect", NULL, &r1);
	escalate_file(e, &h, port, "", 0, "agent", sb, &r1);
	escalate_blocked(e, NULL, &h, port, "dns", NULL);
	for (; p < (const char *)data + size; p = end + 1) {
		if ((end = memchr(p, '\n', (const char *)data + size - p)) ==
		    NULL)
			end = (const char *)data + size;
		if ((size_t)(end - p) > CONTROL_LINE_MAX)
			continue;
		n = subst(line, sizeof line, p, end - p, r0->id, r1->id);
		check_roundtrip(line, n);
		json_writer_init(&w, 0);
		control_handle(e, &peer, NULL, line, n, &w);
		check_output(&w);
		json_writer_free(&w);
	}
	escalate_free(e);
	return (0);
}
