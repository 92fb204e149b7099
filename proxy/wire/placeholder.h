/*
 * Secrets the sandbox sees only as placeholders (policy: `secret NAME
 * for HOSTS`).  A placeholder names its secret, PINHOLE-SECRET-NAME-MASKED;
 * the gateway puts the real value back in a request's header values
 * (inside Basic credentials too) for the hosts the secret is for, and
 * refuses a request that would carry a placeholder anywhere else.  Pure:
 * bytes in, bytes out.
 */
#ifndef WIRE_PLACEHOLDER_H
#define WIRE_PLACEHOLDER_H

#include <stddef.h>

#define SECRET_PREFIX	"PINHOLE-SECRET-"
#define SECRET_SUFFIX	"-MASKED"
#define SECRET_NAME_MAX	64
#define SECRET_PLACEHOLDER_MAX	(sizeof SECRET_PREFIX + SECRET_NAME_MAX + \
	    sizeof SECRET_SUFFIX)

/* The placeholder for NAME.  Returns its length, or -1 for a bad name. */
int	secret_placeholder(const char *, char *, size_t);

/*
 * Where the first placeholder (or its prefix: a secret pinhole does not
 * know is refused as well) starts in len bytes; NULL for none.  Its name
 * is *name, *namelen bytes (0 when it is not a whole placeholder), and
 * *plen the placeholder's whole length.
 */
const char *secret_find(const char *, size_t, const char **, size_t *,
	    size_t *);

/*
 * The value a placeholder stands for, or NULL when it may not be put
 * back here (no such secret, not for this host, not on this connection).
 */
typedef const char *(*secret_lookup_fn)(void *, const char *, size_t,
	    size_t *);

/*
 * One header value with every placeholder put back, in Basic credentials
 * too (decoded, put back, encoded again).  Returns 1 with *out (malloc'd,
 * NUL-terminated, *outlen bytes) when something changed, 0 when there is
 * no placeholder, -1 when one may not be put back (bad: its name, empty
 * for a bare prefix), -2 when memory ran out.
 */
int	secret_swap(const char *, size_t, secret_lookup_fn, void *, char **,
	    size_t *, char *, size_t);

#endif
