/*
 * Secrets' values taken out of responses: bytes pass through a scrubber
 * piece by piece, and every place a secret's value shows is replaced by
 * the secret's placeholder (placeholder.h), however the pieces were cut.
 *
 * A value is found as it is, in base64 (standard and URL-safe, at each
 * of the three places it can start in a group of three bytes, padded or
 * not: the digits that depend on the value alone), and behind escapes:
 * percent-encoding (%2F or %2f, and '+' for a space) and JSON string
 * escapes (\/, \", \\, \n ..., \u0041), mixed as they come, in the value
 * or in its base64 digits.  Where matches overlap, the leftmost wins,
 * then the longest.  Bytes that could still turn out to begin a match
 * are held back until the next piece (at most scrub_overlap() of them),
 * or until the last one.  Pure: no I/O; the pieces go out through the
 * caller's function.
 */
#ifndef SCRUB_H
#define SCRUB_H

#include <stddef.h>
#include <stdint.h>

#define SCRUB_SECRETS_MAX	64	/* a bit each in scrub_found() */

struct scrub;

/* Where the output goes: called with each piece, in order. */
typedef void	(*scrub_emit_fn)(void *, const void *, size_t);

/* A scrubber for no secret yet; NULL when out of memory. */
struct scrub	*scrub_create(void);

/*
 * Add a secret: its name (as its placeholder has it) and its value,
 * copied.  Returns 0, or -1 for a bad name, an empty value, too many
 * secrets or no memory.  Only before the first scrub_feed() after a
 * scrub_reset().
 */
int		 scrub_add(struct scrub *, const char *, const void *, size_t);

/* Forget the values (zeroed first) and free. */
void		 scrub_free(struct scrub *);

/* Start a new message: nothing held, nothing found. */
void		 scrub_reset(struct scrub *);

/*
 * Pass len bytes on, with values replaced; final says the message ends
 * with them (nothing is held back then).  Returns how many values were
 * replaced.
 */
size_t		 scrub_feed(struct scrub *, const void *, size_t, int,
		    scrub_emit_fn, void *);

/* How many bytes are held back now. */
size_t		 scrub_held(const struct scrub *);

/* The most bytes ever held back: the longest match, less one. */
size_t		 scrub_overlap(const struct scrub *);

/* Which secrets were replaced since scrub_reset(): bit i, the i-th added. */
uint64_t	 scrub_found(const struct scrub *);

/*
 * The names of the secrets found, "A,B", NUL-terminated in len bytes;
 * returns the length (0: none found).
 */
size_t		 scrub_found_names(const struct scrub *, char *, size_t);

#endif
