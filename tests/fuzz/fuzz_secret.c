/*
 * Fuzz the secret placeholders' finder and swapper with header values,
 * checking what the gateway relies on:
 *  - a value that changed holds no placeholder any more, nor the prefix
 *    of one, in clear (Basic credentials are looked into by the swapper
 *    itself);
 *  - a refusal names a secret the lookup refused, or none (a bare
 *    prefix); nothing leaks.
 * Corpus: tests/fuzz/secret/ (Bearer and Basic values, placeholders).
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/wire/placeholder.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* Stop loudly when an invariant breaks. */
static void
check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz_secret: invariant broken: %s\n", what);
		abort();
	}
}

/* TOKEN may go (its value has no placeholder in it), OTHER may not. */
static const char *
lookup(void *arg, const char *name, size_t len, size_t *vlen)
{
	(void)arg;
	if (len == 5 && memcmp(name, "TOKEN", 5) == 0) {
		*vlen = 9;
		return ("v@lue:123");
	}
	return (NULL);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char	*name;
	char		*out, bad[SECRET_NAME_MAX + 1];
	size_t		 outlen, nlen, plen;
	int		 rv;

	rv = secret_swap((const char *)data, size, lookup, NULL, &out,
	    &outlen, bad, sizeof bad);
	check(rv >= -2 && rv <= 1, "return value");
	if (rv == 1) {
		check(out != NULL && out[outlen] == '\0', "output length");
		check(secret_find(out, outlen, &name, &nlen, &plen) == NULL,
		    "a placeholder left in a changed value");
		free(out);
	} else
		check(out == NULL, "output without a change");
	if (rv == -1)
		check(strcmp(bad, "TOKEN") != 0, "refused a secret that may go");
	return (0);
}
