/*
 * Fuzz policy editing: the first line of the input is a command line's
 * rules, its arguments split at tabs (as rules_args_lines() reads
 * `pinhole allow`'s), the rest the policy text.  For each policy line
 * the arguments make: adding keeps the old text as a prefix, a line just
 * added is found again, and removing it takes out at least that line.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rules/rules.h"

#define FUZZ_ARGS	16

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* Add one line, check the result, then remove it again. */
static void
fuzz_line(const char *text, size_t tlen, const char *rule)
{
	struct rules_edit	 add, again, rm;
	char			 err[512];
	int			 rv;

	if ((rv = rules_edit_add(text, tlen, rule, "fuzz", &add, err,
	    sizeof err)) != 1) {
		if (rv == 0 && add.line == 0)
			abort();	/* found, but nowhere */
		return;
	}
	if (add.len <= tlen || memcmp(add.text, text, tlen) != 0)
		abort();		/* the old text is kept */
	if (rules_edit_add(add.text, add.len, rule, "fuzz", &again, err,
	    sizeof err) != 0 || again.text != NULL)
		abort();		/* added once, found after */
	if (rules_edit_remove(add.text, add.len, rule, "fuzz", &rm, err,
	    sizeof err) < 1 || rm.len >= add.len)
		abort();		/* removed again */
	free(rm.text);
	free(add.text);
}

/* Make the lines of the first line's arguments; edit the rest with each. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct rules_lines	 l;
	const uint8_t		*nl = memchr(data, '\n', len);
	const char		*text, *args[FUZZ_ARGS];
	char			 first[256], err[512], *s, *tab;
	size_t			 rlen, tlen, n = 0, i;

	rlen = nl != NULL ? (size_t)(nl - data) : len;
	if (rlen >= sizeof first || memchr(data, '\0', rlen) != NULL)
		return (0);
	memcpy(first, data, rlen);
	first[rlen] = '\0';
	for (s = first; n < FUZZ_ARGS; s = tab + 1) {
		args[n++] = s;
		if ((tab = strchr(s, '\t')) == NULL)
			break;
		*tab = '\0';
	}
	text = nl != NULL ? (const char *)nl + 1 : "";
	tlen = nl != NULL ? len - rlen - 1 : 0;
	if (rules_args_lines(args, n, &l, err, sizeof err) == -1)
		return (0);
	if (l.n == 0)
		abort();		/* no rule, and no error */
	for (i = 0; i < l.n; i++) {
		if (strlen(l.v[i]) >= RULES_RULE_LEN)
			abort();	/* longer than a policy line */
		fuzz_line(text, tlen, l.v[i]);
	}
	rules_lines_free(&l);
	return (0);
}
