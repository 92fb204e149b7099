/*
 * Fuzz policy editing: the first line of the input is a rule, the rest
 * the policy text.  Adding keeps the old text as a prefix, a rule just
 * added is found again, and removing it takes out at least that line.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rules/rules.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* Add the rule, check the result, then remove it again. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct rules_edit	 add, again, rm;
	const uint8_t		*nl = memchr(data, '\n', len);
	const char		*text;
	char			 rule[256], err[512];
	size_t			 rlen, tlen;
	int			 rv;

	rlen = nl != NULL ? (size_t)(nl - data) : len;
	if (rlen >= sizeof rule || memchr(data, '\0', rlen) != NULL)
		return (0);
	memcpy(rule, data, rlen);
	rule[rlen] = '\0';
	text = nl != NULL ? (const char *)nl + 1 : "";
	tlen = nl != NULL ? len - rlen - 1 : 0;
	if ((rv = rules_edit_add(text, tlen, rule, "fuzz", &add, err,
	    sizeof err)) != 1) {
		if (rv == 0 && add.line == 0)
			abort();	/* found, but nowhere */
		return (0);
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
	return (0);
}
