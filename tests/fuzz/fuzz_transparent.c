/*
 * Fuzz the capture's judgement of a connection's first bytes
 * (transparent_check): the first input byte picks the host the
 * connection was made for and its destination address, the rest is
 * what the client sent.  It checks what the connection code relies on:
 *  - an undecided verdict asks for more bytes than it was given;
 *  - a malformed one says why, a named one carries a name;
 *  - a match names the expected host (or, for an address literal, the
 *    destination address), and anything else named is fronting;
 *  - more bytes never change a decided verdict.
 * Corpus: tests/fuzz/transparent/ (the sniffers' inputs, with a byte
 * before each).
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/wire/transparent.h"
#include "rules/rules.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static const char *const wants[] = {
	"example.com", "origin.test", "127.0.0.1", "[::1]"
};
static const char *const addrs[] = { NULL, "127.0.0.1", "198.18.0.1" };

/* Stop loudly when an invariant breaks. */
static void
check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz_transparent: invariant broken: %s\n",
		    what);
		abort();
	}
}

/* Does a name the client sent stand for the address (127.0.01. does)? */
static int
same_addr(const char *name, const char *addr)
{
	struct host	 a, b;
	const char	*errstr;

	return (addr != NULL &&
	    host_parse(name, strlen(name), &a, &errstr) == 0 &&
	    host_parse(addr, strlen(addr), &b, &errstr) == 0 &&
	    a.kind != HOST_NAME && strcmp(a.text, b.text) == 0);
}

/* Hold one verdict to the invariants. */
static void
check_one(enum transparent_verdict v, const struct transparent_sniff *t,
    size_t len, const struct host *want, const char *addr)
{
	check(strcmp(transparent_verdict_name(v), "unknown") != 0, "name");
	switch (v) {
	case TRANSPARENT_NEED_MORE:
		check(t->need > len, "need");
		break;
	case TRANSPARENT_MALFORMED:
		check(t->error != NULL, "error");
		break;
	case TRANSPARENT_MATCH:
		check(t->name[0] != '\0', "match without a name");
		check(strcmp(t->name, want->text) == 0 ||
		    (addr != NULL && strstr(t->name, addr) != NULL) ||
		    same_addr(t->name, addr) ||
		    (want->kind != HOST_NAME && t->name[0] == '['),
		    "match names another host");
		break;
	case TRANSPARENT_FRONTING:
		check(t->name[0] != '\0', "fronting without a name");
		check(want->kind != HOST_NAME ||
		    strcmp(t->name, want->text) != 0, "fronting as itself");
		break;
	default:
		break;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct transparent_sniff	 full, part;
	enum transparent_verdict	 v, pv;
	struct host			 want;
	const char			*addr, *errstr, *w;
	size_t				 k, step;

	if (size < 1 || size > 2 * SNI_PEEK_MAX + 1)
		return (0);
	w = wants[data[0] % (sizeof wants / sizeof *wants)];
	addr = addrs[(data[0] >> 2) % (sizeof addrs / sizeof *addrs)];
	check(host_parse(w, strlen(w), &want, &errstr) == 0, "want");
	data++;
	size--;
	v = transparent_check(data, size, &want, addr, &full);
	check_one(v, &full, size, &want, addr);
	step = size / 64 + 1;
	for (k = 0; k < size; k += step) {
		pv = transparent_check(data, k, &want, addr, &part);
		check_one(pv, &part, k, &want, addr);
		if (pv == TRANSPARENT_NEED_MORE)
			continue;
		check(pv == v, "prefix decided otherwise");
		check(strcmp(part.name, full.name) == 0, "prefix name");
	}
	return (0);
}
