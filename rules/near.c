/*
 * "Did you mean": the nearest of a few words to one that is none of
 * them, for the policy's directives and presets and the command line's
 * commands and options.  Pure.
 */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "rules/rules.h"

#define NEAR_WORD_MAX	32		/* longer words are compared to none */

/* The edit distance between two short words; SIZE_MAX for long ones. */
size_t
rules_distance(const char *a, const char *b)
{
	size_t	row[NEAR_WORD_MAX + 1], i, j, diag, up;
	size_t	alen = strlen(a), blen = strlen(b);

	if (alen > NEAR_WORD_MAX || blen > NEAR_WORD_MAX)
		return (SIZE_MAX);
	for (j = 0; j <= blen; j++)
		row[j] = j;
	for (i = 1; i <= alen; i++) {
		diag = row[0];
		row[0] = i;
		for (j = 1; j <= blen; j++) {
			up = row[j];
			row[j] = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < row[j])
				row[j] = up + 1;
			if (row[j - 1] + 1 < row[j])
				row[j] = row[j - 1] + 1;
			diag = up;
		}
	}
	return (row[blen]);
}

/*
 * The name nearest to word, if it is near enough to be what was meant:
 * two edits at most, one for a word of four letters or fewer.  names
 * ends with NULL.  NULL when none is near, or word is one of them.
 */
const char *
rules_nearest(const char *word, const char *const *names)
{
	const char	*best = NULL;
	size_t		 d, bestd = (strlen(word) <= 4 ? 1 : 2) + 1;

	for (; *names != NULL; names++) {
		if ((d = rules_distance(word, *names)) == 0)
			return (NULL);
		if (d < bestd) {
			bestd = d;
			best = *names;
		}
	}
	return (best);
}
