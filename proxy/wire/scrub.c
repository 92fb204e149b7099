/*
 * Secrets' values found in responses and replaced: see scrub.h.
 *
 * Each secret gives patterns: a target (the value, or the base64 digits
 * that depend on it alone) read through a decoder (as it is, or through
 * percent and JSON escapes).  At each position whose byte may begin a
 * pattern every pattern is tried; one that runs out of bytes before it
 * can say holds the rest back for the next piece.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/wire/http.h"
#include "proxy/wire/scrub.h"
#include "proxy/wire/placeholder.h"

#define SCRUB_UNIT_MAX	6	/* input bytes per target byte: \u0041 */

/* How a pattern's target is read in the input. */
enum scrub_dec {
	DEC_RAW,		/* byte for byte */
	DEC_ESC,		/* %XX and JSON escapes decoded */
	DEC_FORM		/* the same, and '+' for a space */
};

struct scrub_pat {
	unsigned char	*t;		/* the target */
	size_t		 len;
	enum scrub_dec	 dec;
	unsigned int	 secret;	/* which one */
};

struct scrub_secret {
	char		 name[SECRET_NAME_MAX + 1];
	char		 ph[SECRET_PLACEHOLDER_MAX];
	size_t		 phlen;
};

struct scrub {
	struct scrub_secret	*secrets;
	size_t			 nsecrets;
	struct scrub_pat	*pats;
	size_t			 npats;
	unsigned char		 first[256];	/* may begin one: its slot */
	unsigned char		*second;	/* 32 bytes a slot: may follow */
	uint16_t		 off[257];	/* byte b: by[off[b]..off[b+1]] */
	uint16_t		*by;		/* the patterns a byte may begin */
	size_t			 maxin;		/* the longest match */
	unsigned char		*held;		/* what waits for more */
	size_t			 heldcap;	/* maxin */
	size_t			 nheld;
	uint64_t		 found;
};

/* The held bytes followed by the new ones, read as one. */
struct scrub_view {
	const unsigned char	*a;
	size_t			 na;
	const unsigned char	*b;
	size_t			 nb;
	size_t			 n;		/* na + nb */
	int			 final;
};

static const char b64_std[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
static const char b64_url[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/* A scrubber for no secret yet. */
struct scrub *
scrub_create(void)
{
	return (calloc(1, sizeof (struct scrub)));
}

/* Forget the values and free. */
void
scrub_free(struct scrub *s)
{
	size_t	i;

	if (s == NULL)
		return;
	for (i = 0; i < s->npats; i++) {
		explicit_bzero(s->pats[i].t, s->pats[i].len);
		free(s->pats[i].t);
	}
	if (s->held != NULL)
		explicit_bzero(s->held, s->heldcap);
	free(s->held);
	free(s->pats);
	free(s->by);
	free(s->second);
	free(s->secrets);
	free(s);
}

/* Start a new message. */
void
scrub_reset(struct scrub *s)
{
	s->nheld = 0;
	s->found = 0;
}

/* Add a pattern (the target copied).  0, or -1 out of memory. */
static int
scrub_pat_add(struct scrub *s, const unsigned char *t, size_t len,
    enum scrub_dec dec)
{
	struct scrub_pat	*p;
	size_t			 in, i;

	if ((p = reallocarray(s->pats, s->npats + 1, sizeof *p)) == NULL)
		return (-1);
	s->pats = p;
	p += s->npats;
	if ((p->t = malloc(len)) == NULL)
		return (-1);
	memcpy(p->t, t, len);
	p->len = len;
	p->dec = dec;
	p->secret = (unsigned int)s->nsecrets;
	s->npats++;
	in = dec == DEC_RAW ? len : len * SCRUB_UNIT_MAX;
	if (in > s->maxin)
		s->maxin = in;
	for (i = 0; i + 1 < s->npats; i++) {
		if (s->pats[i].len == len && s->pats[i].dec == dec &&
		    memcmp(s->pats[i].t, t, len) == 0) {
			free(p->t);	/* the same as one there: drop it */
			s->npats--;
			break;
		}
	}
	return (0);
}

/*
 * The base64 digits of a value that starts a bytes into a group of
 * three (after a other bytes): those whose six bits are the value's
 * alone.  out holds 2 * len + 4 digits.  Returns how many.
 */
static size_t
scrub_b64_core(const unsigned char *v, size_t len, unsigned int a,
    const char *alphabet, unsigned char *out)
{
	size_t		 first = (8 * a + 5) / 6, end = 8 * (a + len) / 6;
	size_t		 i, bit, byte, k = 0;
	unsigned int	 w;

	for (i = first; i < end; i++) {
		bit = 6 * i - 8 * a;		/* from the value's first bit */
		byte = bit / 8;
		w = (unsigned int)v[byte] << 8;
		if (byte + 1 < len)
			w |= v[byte + 1];
		out[k++] = (unsigned char)alphabet[w >> (10 - bit % 8) & 63];
	}
	return (k);
}

/* The patterns of a value's base64 digits, both alphabets. */
static int
scrub_add_b64(struct scrub *s, const unsigned char *v, size_t len)
{
	unsigned char	*buf;
	size_t		 n, i;
	unsigned int	 a;
	int		 rv = 0;

	if ((buf = malloc(2 * len + 4)) == NULL)
		return (-1);
	for (a = 0; a < 3 && rv == 0; a++) {
		for (i = 0; i < 2 && rv == 0; i++) {
			n = scrub_b64_core(v, len, a, i == 0 ? b64_std :
			    b64_url, buf);
			if (n > 0)
				rv = scrub_pat_add(s, buf, n, DEC_ESC);
		}
	}
	explicit_bzero(buf, 2 * len + 4);
	free(buf);
	return (rv);
}

/* May a pattern's first unit begin with byte b? */
static int
scrub_pat_begins(const struct scrub_pat *p, int b)
{
	return (b == p->t[0] || (p->dec != DEC_RAW && (b == '%' ||
	    b == '\\' || (p->dec == DEC_FORM && b == '+'))));
}

/* Note in a slot's set the bytes that may follow b in the pattern. */
static void
scrub_pat_follow(const struct scrub_pat *p, int b, unsigned char *set)
{
	if (b != p->t[0] || p->len < 2) {
		memset(set, 0xff, 32);		/* an escape, or one byte */
		return;
	}
	set[p->t[1] >> 3] |= 1 << (p->t[1] & 7);
	if (p->dec == DEC_RAW)
		return;
	set['%' >> 3] |= 1 << ('%' & 7);
	set['\\' >> 3] |= 1 << ('\\' & 7);
	if (p->dec == DEC_FORM)
		set['+' >> 3] |= 1 << ('+' & 7);
}

/*
 * Index the patterns by the byte they may begin with, so that a
 * position is tried against those alone, and note for each such byte
 * the bytes that may follow it.  0, or -1 out of memory.
 */
static int
scrub_index(struct scrub *s)
{
	uint16_t	*by;
	unsigned char	*second;
	size_t		 n = 0, i, k, slots = 0;
	int		 b;

	for (b = 0; b < 256; b++) {
		for (i = 0, k = n; i < s->npats; i++)
			n += scrub_pat_begins(&s->pats[i], b);
		slots += n > k;
	}
	if (n > UINT16_MAX || (by = reallocarray(NULL, n + 1,
	    sizeof *by)) == NULL)
		return (-1);
	if ((second = calloc(slots + 1, 32)) == NULL) {
		free(by);
		return (-1);
	}
	for (b = 0, n = 0, slots = 0; b < 256; b++) {
		s->off[b] = (uint16_t)n;
		for (i = 0; i < s->npats; i++) {
			if (!scrub_pat_begins(&s->pats[i], b))
				continue;
			by[n++] = (uint16_t)i;
			scrub_pat_follow(&s->pats[i], b, second + 32 * slots);
		}
		s->first[b] = n > s->off[b] ? (unsigned char)++slots : 0;
	}
	s->off[256] = (uint16_t)n;
	free(s->by);
	free(s->second);
	s->by = by;
	/* Slot k is at second + 32 * (k - 1). */
	s->second = second;
	return (0);
}

/* Make room to hold back maxin - 1 bytes. */
static int
scrub_grow_held(struct scrub *s)
{
	unsigned char	*p;

	if (s->heldcap >= s->maxin)
		return (0);
	if ((p = calloc(1, s->maxin)) == NULL)
		return (-1);
	if (s->held != NULL)
		explicit_bzero(s->held, s->heldcap);
	free(s->held);
	s->held = p;
	s->heldcap = s->maxin;
	s->nheld = 0;
	return (0);
}

/* Add a secret. */
int
scrub_add(struct scrub *s, const char *name, const void *value, size_t len)
{
	const unsigned char	*v = value;
	struct scrub_secret	*sc;
	int			 n;

	if (len == 0 || s->nsecrets == SCRUB_SECRETS_MAX ||
	    (sc = reallocarray(s->secrets, s->nsecrets + 1,
	    sizeof *sc)) == NULL)
		return (-1);
	s->secrets = sc;
	sc += s->nsecrets;
	if ((n = secret_placeholder(name, sc->ph, sizeof sc->ph)) == -1)
		return (-1);
	sc->phlen = (size_t)n;
	memcpy(sc->name, name, strlen(name) + 1);
	if (scrub_pat_add(s, v, len, DEC_ESC) == -1 ||
	    ((memchr(v, '%', len) != NULL || memchr(v, '\\', len) != NULL) &&
	    scrub_pat_add(s, v, len, DEC_RAW) == -1) ||
	    (memchr(v, ' ', len) != NULL &&
	    scrub_pat_add(s, v, len, DEC_FORM) == -1) ||
	    scrub_add_b64(s, v, len) == -1 || scrub_grow_held(s) == -1 ||
	    scrub_index(s) == -1)
		return (-1);
	s->nsecrets++;
	return (0);
}

/* The byte at i of the view. */
static inline unsigned char
scrub_at(const struct scrub_view *v, size_t i)
{
	return (i < v->na ? v->a[i] : v->b[i - v->na]);
}

/* The hex digits at i and i + 1 as a byte, or -1; -2 when not all here. */
static int
scrub_hex(const struct scrub_view *v, size_t i, size_t ndigits)
{
	size_t	k;
	int	w = 0, d;

	for (k = 0; k < ndigits; k++) {
		if (i + k >= v->n)
			return (-2);
		if ((d = http_hexval(scrub_at(v, i + k))) < 0)
			return (-1);
		w = w << 4 | d;
	}
	return (w);
}

/* A JSON escape's byte after the backslash at i; -2 needs more, -3 none. */
static int
scrub_json(const struct scrub_view *v, size_t i, size_t *used)
{
	int	c, w;

	if (i + 1 >= v->n)
		return (-2);
	*used = 2;
	switch ((c = scrub_at(v, i + 1))) {
	case '"':
	case '\\':
	case '/':
		return (c);
	case 'b':
		return ('\b');
	case 'f':
		return ('\f');
	case 'n':
		return ('\n');
	case 'r':
		return ('\r');
	case 't':
		return ('\t');
	case 'u':
		if ((w = scrub_hex(v, i + 2, 4)) < 0)
			return (w == -2 ? -2 : -3);
		*used = 6;
		return (w < 0x80 ? w : 256);	/* not one byte: no match */
	}
	return (-3);
}

/*
 * One unit of input at i, decoded: its byte (256 for none a target has)
 * in *byte, its length in *used.  Returns 0 when the bytes after it are
 * needed to tell.
 */
static int
scrub_unit(const struct scrub_view *v, size_t i, enum scrub_dec dec,
    int *byte, size_t *used)
{
	int	c = scrub_at(v, i), w = 0;

	*byte = c;
	*used = 1;
	if (dec == DEC_RAW)
		return (1);
	if (c == '%') {
		if ((w = scrub_hex(v, i + 1, 2)) >= 0) {
			*byte = w;
			*used = 3;
		}
	} else if (c == '\\') {
		if ((w = scrub_json(v, i, used)) >= 0)
			*byte = w;
		else
			*used = 1;
	} else if (c == '+' && dec == DEC_FORM)
		*byte = ' ';
	else
		return (1);
	/* Short of bytes: at the end of the message, the character itself. */
	return (w != -2 || v->final);
}

/*
 * Does the pattern match at pos?  1 with the input's length in *len, 0
 * no, -1 when more input is needed to tell.
 */
static int
scrub_match(const struct scrub_pat *p, const struct scrub_view *v,
    size_t pos, size_t *len)
{
	size_t	i = pos, j, used;
	int	byte;

	for (j = 0; j < p->len; j++) {
		if (i >= v->n)
			return (v->final ? 0 : -1);
		if (!scrub_unit(v, i, p->dec, &byte, &used))
			return (-1);
		if (byte != p->t[j])
			return (0);
		i += used;
	}
	*len = i - pos;
	return (1);
}

/*
 * Can the pattern not match at pos, its first byte being its target's,
 * for its second byte is none that could follow?  Most positions that
 * may begin a pattern are thrown out so, without decoding.
 */
static inline int
scrub_cannot(const struct scrub_pat *p, const struct scrub_view *v,
    size_t pos)
{
	int	c;

	if (p->len < 2 || pos + 1 >= v->n || scrub_at(v, pos) != p->t[0])
		return (0);
	c = scrub_at(v, pos + 1);
	return (c != p->t[1] && (p->dec == DEC_RAW || (c != '%' &&
	    c != '\\' && (p->dec != DEC_FORM || c != '+'))));
}

/*
 * The longest match at pos: 1 with its length and pattern, 0 none, -1
 * when one could still come with more input.
 */
static int
scrub_best(const struct scrub *s, const struct scrub_view *v, size_t pos,
    size_t *len, const struct scrub_pat **which)
{
	const struct scrub_pat	*p;
	size_t			 i, n;
	int			 r, more = 0, b = scrub_at(v, pos);

	*len = 0;
	for (i = s->off[b]; i < s->off[b + 1]; i++) {
		p = &s->pats[s->by[i]];
		if (scrub_cannot(p, v, pos))
			continue;
		if ((r = scrub_match(p, v, pos, &n)) == -1)
			more = 1;
		else if (r == 1 && n > *len) {
			*len = n;
			*which = p;
		}
	}
	if (more)
		return (-1);
	return (*len > 0);
}

/* Emit the view's bytes from..to. */
static void
scrub_emit(const struct scrub_view *v, size_t from, size_t to,
    scrub_emit_fn emit, void *arg)
{
	size_t	end;

	if (from < v->na) {
		end = to < v->na ? to : v->na;
		if (end > from)
			emit(arg, v->a + from, end - from);
		from = end;
	}
	if (to > from)
		emit(arg, v->b + (from - v->na), to - from);
}

/* Hold back the view's bytes from pos on. */
static void
scrub_keep(struct scrub *s, const struct scrub_view *v, size_t pos)
{
	size_t	k = 0;

	if (pos < v->na) {
		k = v->na - pos;
		memmove(s->held, v->a + pos, k);
		pos = v->na;
	}
	memcpy(s->held + k, v->b + (pos - v->na), v->n - pos);
	s->nheld = k + v->n - pos;
}

/* The first position from pos on whose byte may begin a pattern. */
static size_t
scrub_skip(const struct scrub *s, const struct scrub_view *v, size_t pos)
{
	const unsigned char	*f = s->first, *p, *end = v->b + v->nb, *set;

	while (pos < v->na && !f[v->a[pos]])
		pos++;
	if (pos < v->na)
		return (pos);
	for (p = v->b + (pos - v->na);; p++) {
		/* Eight at a time: most bytes begin nothing. */
		for (; end - p >= 8 && !(f[p[0]] | f[p[1]] | f[p[2]] |
		    f[p[3]] | f[p[4]] | f[p[5]] | f[p[6]] | f[p[7]]); p += 8)
			;
		for (; p < end && !f[*p]; p++)
			;
		if (end - p < 2)
			break;
		/* Nor do most of those followed by what follows them. */
		set = s->second + 32 * (f[p[0]] - 1);
		if (set[p[1] >> 3] & 1 << (p[1] & 7))
			break;
	}
	return (v->na + (size_t)(p - v->b));
}

/* Pass bytes on with values replaced. */
size_t
scrub_feed(struct scrub *s, const void *buf, size_t len, int final,
    scrub_emit_fn emit, void *arg)
{
	struct scrub_view	 v = { s->held, s->nheld, buf, len,
	    s->nheld + len, final };
	const struct scrub_pat	*p = NULL;
	const struct scrub_secret *sc;
	size_t			 pos = 0, from = 0, mlen, count = 0;
	int			 r;

	if (s->npats == 0) {
		scrub_emit(&v, 0, v.n, emit, arg);
		s->nheld = 0;
		return (0);
	}
	while ((pos = scrub_skip(s, &v, pos)) < v.n) {
		if ((r = scrub_best(s, &v, pos, &mlen, &p)) == -1)
			break;
		if (r == 0) {
			pos++;
			continue;
		}
		sc = &s->secrets[p->secret];
		scrub_emit(&v, from, pos, emit, arg);
		emit(arg, sc->ph, sc->phlen);
		s->found |= (uint64_t)1 << p->secret;
		count++;
		pos += mlen;
		from = pos;
	}
	scrub_emit(&v, from, pos, emit, arg);
	scrub_keep(s, &v, pos);
	return (count);
}

/* How many bytes are held back now. */
size_t
scrub_held(const struct scrub *s)
{
	return (s->nheld);
}

/* The most bytes ever held back. */
size_t
scrub_overlap(const struct scrub *s)
{
	return (s->maxin > 0 ? s->maxin - 1 : 0);
}

/* Which secrets were replaced. */
uint64_t
scrub_found(const struct scrub *s)
{
	return (s->found);
}

/* Their names, "A,B". */
size_t
scrub_found_names(const struct scrub *s, char *buf, size_t len)
{
	size_t	i, n = 0, k;

	if (len == 0)
		return (0);
	buf[0] = '\0';
	for (i = 0; i < s->nsecrets; i++) {
		if ((s->found & (uint64_t)1 << i) == 0)
			continue;
		k = strlen(s->secrets[i].name);
		if (n + (n > 0) + k + 1 > len)
			break;
		if (n > 0)
			buf[n++] = ',';
		memcpy(buf + n, s->secrets[i].name, k + 1);
		n += k;
	}
	return (n);
}
