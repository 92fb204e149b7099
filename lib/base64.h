/*
 * Base64 (RFC 4648, the standard alphabet, padded), as HTTP's Basic
 * credentials are written.  Pure.
 */
#ifndef BASE64_H
#define BASE64_H

#include <stddef.h>

/* The digits n bytes make, padding included (not the NUL). */
#define BASE64_LEN(n)	(((n) + 2) / 3 * 4)

/* Write n bytes as padded base64 at out (BASE64_LEN(n) + 1 bytes). */
void	base64_encode(const void *, size_t, char *);

/*
 * Decode padded base64 into out, which holds at least len bytes.
 * Returns the length, or -1 for anything that is not padded base64.
 */
long	base64_decode(const char *, size_t, unsigned char *);

#endif
