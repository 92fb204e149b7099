/*
 * Fuzz the attach protocol's reader (proxy/wire/attachmsg.c): any bytes
 * are a message or an error, never a crash; an error says why; what was
 * read keeps its bounds (ports 1-65535, descriptor kinds known, guard
 * lines "K /PATH", a notice's kind known and its host canonical), and a
 * message written back reads back the same.
 * Corpus: tests/fuzz/attach/ (one message of each kind, a notice of each).
 */
#include "config.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/wire/attachmsg.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* Stop loudly when an invariant breaks. */
#define CHECK(x) do {							\
	if (!(x)) {							\
		fprintf(stderr, "fuzz_attach: %s\n", #x);		\
		abort();						\
	}								\
} while (0)

/* The guard lines are what the reader promised. */
static void
check_guards(const char *g)
{
	const char	*nl;

	for (; *g != '\0'; g = nl + 1) {
		CHECK((nl = strchr(g, '\n')) != NULL);
		CHECK(g[0] != '\0' && g[1] == ' ');
		if (g[0] == 'e')	/* an environment variable's name */
			CHECK(g[2] == '_' || isalpha((unsigned char)g[2]));
		else if (g[0] == 's')	/* a path, or one to expand */
			CHECK(g[2] == '/' || g[2] == '$' ||
			    (g[2] == '~' && g[3] == '/'));
		else			/* a path */
			CHECK(strchr("dflrhct", g[0]) != NULL && g[2] == '/');
	}
}

/* A notice read back is the notice written. */
static void
check_notice(const struct attach_notice *a, const struct attach_notice *b)
{
	CHECK(a->kind <= ATTACH_NOTICE_DECIDED && a->host.text[0] != '\0');
	CHECK(b->kind == a->kind && b->port == a->port &&
	    b->ask == a->ask && b->secs == a->secs);
	CHECK(strcmp(b->host.text, a->host.text) == 0 &&
	    strcmp(b->via, a->via) == 0 && strcmp(b->what, a->what) == 0 &&
	    strcmp(b->text, a->text) == 0 && strcmp(b->fix, a->fix) == 0 &&
	    strcmp(b->request, a->request) == 0 &&
	    strcmp(b->state, a->state) == 0 &&
	    strcmp(b->scope, a->scope) == 0 && strcmp(b->by, a->by) == 0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct attach_msg	m, back;
	static char			buf[ATTACH_MSG_MAX * 2];
	const char			*errstr = NULL;
	size_t				i, len;

	if (attach_parse((const char *)data, size, &m, &errstr) == -1) {
		CHECK(errstr != NULL && errstr[0] != '\0');
		return (0);
	}
	CHECK(m.op <= ATTACH_NOTICE);
	CHECK(m.nports <= ATTACH_PORTS_MAX && m.nfds <= ATTACH_FDS_MAX);
	for (i = 0; i < m.nports; i++)
		CHECK(m.ports[i] != 0);
	for (i = 0; i < m.nfds; i++)
		CHECK(m.fds[i] <= ATTACH_FD_RAW);
	CHECK(memchr(m.cmd, '\0', sizeof m.cmd) != NULL);
	check_guards(m.guards);
	if (m.op == ATTACH_LISTENERS)
		CHECK(m.pid >= 1);
	if (m.op == ATTACH_EXIT)
		CHECK(m.status >= 0 && m.status <= 255);
	/* Written back, it reads back the same. */
	len = attach_build(&m, buf, sizeof buf);
	CHECK(len > 0);
	CHECK(attach_parse(buf, len, &back, &errstr) == 0);
	CHECK(back.op == m.op && back.nports == m.nports &&
	    back.nfds == m.nfds && back.pid == m.pid &&
	    back.status == m.status);
	CHECK(memcmp(back.ports, m.ports, m.nports * sizeof m.ports[0]) == 0);
	CHECK(memcmp(back.fds, m.fds, m.nfds * sizeof m.fds[0]) == 0);
	if (m.op == ATTACH_CONFIG)
		CHECK(strcmp(back.guards, m.guards) == 0 &&
		    strcmp(back.sandbox, m.sandbox) == 0);
	if (m.op == ATTACH_ATTACH)
		CHECK(back.notices == m.notices);
	if (m.op == ATTACH_NOTICE)
		check_notice(&m.notice, &back.notice);
	return (0);
}
