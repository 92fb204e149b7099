/*
 * Base64 (base64.h).  Pure.
 */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "lib/base64.h"

static const char	alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

void
base64_encode(const void *in, size_t n, char *out)
{
	const unsigned char	*p = in;
	uint32_t		 w;
	size_t			 i;

	for (i = 0; i < n; i += 3, out += 4) {
		w = (uint32_t)p[i] << 16;
		if (i + 1 < n)
			w |= (uint32_t)p[i + 1] << 8;
		if (i + 2 < n)
			w |= p[i + 2];
		out[0] = alphabet[w >> 18 & 63];
		out[1] = alphabet[w >> 12 & 63];
		out[2] = i + 1 < n ? alphabet[w >> 6 & 63] : '=';
		out[3] = i + 2 < n ? alphabet[w & 63] : '=';
	}
	*out = '\0';
}

/* One digit's value, or -1. */
static int
base64_value(int c)
{
	const char	*p;

	if (c == '\0' || (p = strchr(alphabet, c)) == NULL)
		return (-1);
	return ((int)(p - alphabet));
}

long
base64_decode(const char *s, size_t len, unsigned char *out)
{
	size_t		i, n = 0;
	int		v[4], k, pad;

	if (len == 0 || len % 4 != 0)
		return (-1);
	for (i = 0; i < len; i += 4) {
		pad = 0;
		for (k = 0; k < 4; k++) {
			if (s[i + k] == '=' && i + 4 == len && k >= 2 &&
			    (k == 3 || s[i + 3] == '=')) {
				v[k] = 0;
				pad++;
			} else if ((v[k] = base64_value(s[i + k])) == -1)
				return (-1);
		}
		out[n++] = (unsigned char)(v[0] << 2 | v[1] >> 4);
		if (pad < 2)
			out[n++] = (unsigned char)((v[1] & 15) << 4 | v[2] >> 2);
		if (pad < 1)
			out[n++] = (unsigned char)((v[2] & 3) << 6 | v[3]);
	}
	return ((long)n);
}
