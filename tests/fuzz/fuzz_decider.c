/*
 * Fuzz the decider's answer reader (proxy/wire/decidermsg.c): the input is
 * an answer's body.  It checks what the queue relies on:
 *  - a refused answer says why and leaves nothing behind;
 *  - an accepted one has a known decision and scope, a ttl in range,
 *    and an approver and note that fit, are NUL-ended and hold no
 *    control characters;
 *  - only an allow carries a scope or ttl, only a deny a note.
 * Corpus: tests/fuzz/decider/ (answers a decider sends, good and bad).
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/wire/decidermsg.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* Stop loudly when an invariant breaks. */
static void
check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz_decider: invariant broken: %s\n", what);
		abort();
	}
}

/* Is s free of control characters? */
static int
plain(const char *s)
{
	for (; *s != '\0'; s++) {
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return (0);
	}
	return (1);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct decider_answer	 a;
	const char		*errstr = NULL;

	if (decider_answer_parse((const char *)data, size, &a, &errstr) ==
	    -1) {
		check(errstr != NULL, "refused without why");
		check(a.approver[0] == '\0' && a.note[0] == '\0' &&
		    a.ttl == 0, "a refused answer left something");
		return (0);
	}
	check(a.decision == DECIDER_ALLOW || a.decision == DECIDER_DENY ||
	    a.decision == DECIDER_ASK, "decision");
	check(a.scope == DECIDER_ONCE || a.scope == DECIDER_SESSION ||
	    a.scope == DECIDER_ALWAYS, "scope");
	check(a.ttl >= 0 && a.ttl <= DECIDER_TTL_MAX, "ttl");
	check(memchr(a.approver, '\0', sizeof a.approver) != NULL &&
	    strlen(a.approver) <= DECIDER_APPROVER_MAX, "approver length");
	check(memchr(a.note, '\0', sizeof a.note) != NULL &&
	    strlen(a.note) <= DECIDER_NOTE_MAX, "note length");
	check(plain(a.approver) && plain(a.note), "control characters");
	check(a.decision == DECIDER_ALLOW || (a.scope == DECIDER_ONCE &&
	    a.ttl == 0), "scope or ttl without allow");
	check(a.decision == DECIDER_DENY || a.note[0] == '\0',
	    "note without deny");
	return (0);
}
