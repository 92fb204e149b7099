/*
 * Fuzz the scrubber of responses with bodies cut into pieces, checking
 * what the gateway relies on:
 *  - the output does not depend on where the pieces were cut: the first
 *    input byte picks the cuts, and the same bytes scrubbed whole give
 *    the same output and the same count;
 *  - no more than scrub_overlap() bytes are ever held back, none after
 *    the last piece;
 *  - the output holds no value any more: scrubbed again, nothing is
 *    replaced (the values' first and last characters are none a
 *    placeholder has, so no match can straddle one), and the raw value
 *    is not in it;
 *  - the output's length is the input's, less what was replaced, plus
 *    the placeholders.
 * Corpus: tests/fuzz/scrub/ (raw, base64, percent and JSON forms).
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/wire/scrub.h"

/*
 * The values: neither they nor any of their base64 digits begin or end
 * with a character of the placeholders ([A-Z-]).
 */
#define A_VALUE	"h@lue:1+2/3=?&x bh"	/* a space: '+' is one too */
#define B_VALUE	"oth%er\\bh"		/* '%' and '\\': read raw too */
#define A_PH	"PINHOLE-SECRET-TOKEN-MASKED"
#define B_PH	"PINHOLE-SECRET-OTHER-MASKED"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

struct out {
	unsigned char	*p;
	size_t		 len;
	size_t		 cap;
	size_t		 phs;		/* placeholders seen */
};

/* Stop loudly when an invariant breaks. */
static void
check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz_scrub: invariant broken: %s\n", what);
		abort();
	}
}

/* Collect the output. */
static void
collect(void *arg, const void *p, size_t n)
{
	struct out	*o = arg;

	check(o->len + n <= o->cap, "output too long");
	memcpy(o->p + o->len, p, n);
	o->len += n;
	if ((n == strlen(A_PH) && memcmp(p, A_PH, n) == 0) ||
	    (n == strlen(B_PH) && memcmp(p, B_PH, n) == 0))
		o->phs++;
}

/* Scrub data in pieces of the sizes the cut byte gives; the count. */
static size_t
scrub_pieces(struct scrub *s, const uint8_t *data, size_t size,
    unsigned int cut, struct out *o)
{
	size_t	pos = 0, n, count = 0;

	scrub_reset(s);
	while (pos < size) {
		n = cut == 0 ? size - pos : 1 + (pos * 7 + cut) % (cut + 1);
		if (n > size - pos)
			n = size - pos;
		count += scrub_feed(s, data + pos, n, pos + n == size,
		    collect, o);
		check(scrub_held(s) <= scrub_overlap(s), "held too much");
		pos += n;
	}
	if (size == 0)
		count += scrub_feed(s, "", 0, 1, collect, o);
	check(scrub_held(s) == 0, "held after the last piece");
	return (count);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct scrub	*s;
	struct out		 one = { 0 }, cut = { 0 }, again = { 0 };
	size_t			 n, m, cap;

	if (s == NULL) {
		if ((s = scrub_create()) == NULL ||
		    scrub_add(s, "TOKEN", A_VALUE, strlen(A_VALUE)) == -1 ||
		    scrub_add(s, "OTHER", B_VALUE, strlen(B_VALUE)) == -1)
			abort();
	}
	if (size < 1)
		return (0);
	/* Each input byte becomes a placeholder at most. */
	cap = (size + 1) * strlen(A_PH);
	if ((one.p = malloc(cap)) == NULL || (cut.p = malloc(cap)) == NULL ||
	    (again.p = malloc(cap * 2)) == NULL)
		abort();
	one.cap = cut.cap = cap;
	again.cap = cap * 2;
	n = scrub_pieces(s, data + 1, size - 1, 0, &one);
	m = scrub_pieces(s, data + 1, size - 1, data[0], &cut);
	check(n == m && one.len == cut.len &&
	    memcmp(one.p, cut.p, one.len) == 0, "the cuts changed the output");
	check(one.phs >= n, "a replacement without its placeholder");
	check(scrub_pieces(s, one.p, one.len, 0, &again) == 0,
	    "a value left in the output");
	check(again.len == one.len, "nothing replaced, yet changed");
	check(memmem(one.p, one.len, A_VALUE, strlen(A_VALUE)) == NULL &&
	    memmem(one.p, one.len, B_VALUE, strlen(B_VALUE)) == NULL,
	    "a raw value in the output");
	free(one.p);
	free(cut.p);
	free(again.p);
	return (0);
}
