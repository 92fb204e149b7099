/*
 * Reading audit lines back: a strict reader for the flat JSON objects the
 * writer produces (string, integer, boolean and null values, no nesting).
 * Log files are untrusted input to `pinhole log`, so every read is
 * checked against the end of the line and nothing is allocated: strings
 * are decoded into the caller's store.  No I/O, no globals.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "lib/json.h"
#include "proxy/audit/audit.h"

struct rd {
	const unsigned char	*p;
	const unsigned char	*end;
	char			*out;	/* next free byte of the store */
	char			*oend;
};

/* Skip white space (not line ends: a record is one line). */
static void
rd_ws(struct rd *r)
{
	while (r->p < r->end && (*r->p == ' ' || *r->p == '\t'))
		r->p++;
}

/* Take one expected byte. */
static int
rd_byte(struct rd *r, unsigned char c)
{
	if (r->p >= r->end || *r->p != c)
		return (-1);
	r->p++;
	return (0);
}

/* Put a code point into the store as UTF-8. */
static int
rd_put_cp(struct rd *r, unsigned int cp)
{
	uint8_t	b[4];
	size_t	n = json_utf8_encode(cp, b);

	if ((size_t)(r->oend - r->out) < n)
		return (-1);
	memcpy(r->out, b, n);
	r->out += n;
	return (0);
}

/* Read four hex digits. */
static int
rd_hex4(struct rd *r, unsigned int *v)
{
	int	i, d;

	if (r->end - r->p < 4)
		return (-1);
	*v = 0;
	for (i = 0; i < 4; i++) {
		d = r->p[i];
		if (d >= '0' && d <= '9')
			d -= '0';
		else if ((d | 0x20) >= 'a' && (d | 0x20) <= 'f')
			d = (d | 0x20) - 'a' + 10;
		else
			return (-1);
		*v = (*v << 4) | d;
	}
	r->p += 4;
	return (0);
}

/* Decode a \u escape (after the "u"), pairing surrogates. */
static int
rd_unicode(struct rd *r, unsigned int *cp)
{
	unsigned int	lo;

	if (rd_hex4(r, cp) == -1)
		return (-1);
	if (*cp >= 0xdc00 && *cp <= 0xdfff)
		return (-1);
	if (*cp < 0xd800 || *cp > 0xdbff)
		return (0);
	if (rd_byte(r, '\\') == -1 || rd_byte(r, 'u') == -1 ||
	    rd_hex4(r, &lo) == -1 || lo < 0xdc00 || lo > 0xdfff)
		return (-1);
	*cp = 0x10000 + ((*cp - 0xd800) << 10) + (lo - 0xdc00);
	return (0);
}

/* Decode one escape (after the backslash). */
static int
rd_escape(struct rd *r)
{
	static const char	 from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	const char		*e;
	unsigned int		 cp;

	if (r->p >= r->end)
		return (-1);
	if (*r->p == 'u') {
		r->p++;
		if (rd_unicode(r, &cp) == -1 || cp == 0)
			return (-1);
		return (rd_put_cp(r, cp));
	}
	if (*r->p == '\0' || (e = strchr(from, *r->p)) == NULL)
		return (-1);
	r->p++;
	return (rd_put_cp(r, (unsigned char)to[e - from]));
}

/* Read a string: valid UTF-8, no raw controls; decode it into the store. */
static int
rd_string(struct rd *r, const char **str, const char **raw, size_t *rawlen)
{
	unsigned int	cp;
	size_t		n;

	if (rd_byte(r, '"') == -1)
		return (-1);
	*str = r->out;
	*raw = (const char *)r->p;
	while (r->p < r->end && *r->p != '"') {
		if (*r->p == '\\') {
			r->p++;
			if (rd_escape(r) == -1)
				return (-1);
			continue;
		}
		if ((n = json_utf8(r->p, r->end - r->p, &cp)) == 0 ||
		    cp < 0x20 || rd_put_cp(r, cp) == -1)
			return (-1);
		r->p += n;
	}
	*rawlen = (const char *)r->p - *raw;
	if (rd_byte(r, '"') == -1 || r->out >= r->oend)
		return (-1);
	*r->out++ = '\0';
	return (0);
}

/* Read an integer: -?(0|[1-9][0-9]*), in range; no fraction. */
static int
rd_number(struct rd *r, long long *v)
{
	int	neg = 0, digits = 0;

	if (r->p < r->end && *r->p == '-') {
		neg = 1;
		r->p++;
	}
	*v = 0;
	while (r->p < r->end && *r->p >= '0' && *r->p <= '9') {
		if (digits == 1 && *v == 0)
			return (-1);
		if (*v > (INT64_MAX - (*r->p - '0')) / 10)
			return (-1);
		*v = *v * 10 + (*r->p++ - '0');
		digits++;
	}
	if (digits == 0 || (r->p < r->end && (*r->p == '.' ||
	    (*r->p | 0x20) == 'e')))
		return (-1);
	if (neg)
		*v = -*v;
	return (0);
}

/* Read a word: true, false or null. */
static int
rd_word(struct rd *r, struct audit_rec_field *f)
{
	static const struct {
		const char		*w;
		enum audit_rec_type	 type;
		long long		 v;
	} words[] = {
		{ "true", AUDIT_REC_BOOL, 1 },
		{ "false", AUDIT_REC_BOOL, 0 },
		{ "null", AUDIT_REC_NULL, 0 },
	};
	size_t	i, n;

	for (i = 0; i < sizeof words / sizeof words[0]; i++) {
		n = strlen(words[i].w);
		if ((size_t)(r->end - r->p) >= n &&
		    memcmp(r->p, words[i].w, n) == 0) {
			r->p += n;
			f->type = words[i].type;
			f->num = words[i].v;
			return (0);
		}
	}
	return (-1);
}

/* Read one value of a member. */
static int
rd_value(struct rd *r, struct audit_rec_field *f)
{
	if (r->p >= r->end)
		return (-1);
	if (*r->p == '"') {
		f->type = AUDIT_REC_STR;
		return (rd_string(r, &f->str, &f->raw, &f->rawlen));
	}
	if (*r->p == '-' || (*r->p >= '0' && *r->p <= '9')) {
		f->type = AUDIT_REC_NUM;
		return (rd_number(r, &f->num));
	}
	return (rd_word(r, f));
}

/* Read one "key":value member; keys may not repeat. */
static int
rd_member(struct rd *r, struct audit_rec *rec)
{
	struct audit_rec_field	*f;
	const char		*raw;
	size_t			 rawlen;

	if (rec->n >= AUDIT_REC_MAX)
		return (-1);
	f = &rec->f[rec->n];
	memset(f, 0, sizeof *f);
	if (rd_string(r, &f->key, &raw, &rawlen) == -1)
		return (-1);
	if (audit_rec_get(rec, f->key) != NULL)
		return (-1);
	rd_ws(r);
	if (rd_byte(r, ':') == -1)
		return (-1);
	rd_ws(r);
	if (rd_value(r, f) == -1)
		return (-1);
	rec->n++;
	return (0);
}

/*
 * Parse one line (a trailing newline is allowed) into rec, decoding
 * strings into store.  Returns 0, or -1 when the line is not one flat
 * JSON object in UTF-8.
 */
int
audit_rec_parse(const char *line, size_t len, char *store, size_t storelen,
    struct audit_rec *rec)
{
	struct rd	r;

	rec->n = 0;
	if (len > 0 && line[len - 1] == '\n')
		len--;
	r.p = (const unsigned char *)line;
	r.end = r.p + len;
	r.out = store;
	r.oend = store + storelen;
	rd_ws(&r);
	if (rd_byte(&r, '{') == -1)
		return (-1);
	rd_ws(&r);
	if (rd_byte(&r, '}') == 0)
		goto end;
	for (;;) {
		if (rd_member(&r, rec) == -1)
			return (-1);
		rd_ws(&r);
		if (rd_byte(&r, '}') == 0)
			break;
		if (rd_byte(&r, ',') == -1)
			return (-1);
		rd_ws(&r);
	}
end:
	rd_ws(&r);
	return (r.p == r.end ? 0 : -1);
}

/* Find a member by its key. */
const struct audit_rec_field *
audit_rec_get(const struct audit_rec *rec, const char *key)
{
	size_t	i;

	for (i = 0; i < rec->n; i++) {
		if (strcmp(rec->f[i].key, key) == 0)
			return (&rec->f[i]);
	}
	return (NULL);
}

/* Give a string member's decoded value, or NULL. */
const char *
audit_rec_str(const struct audit_rec *rec, const char *key)
{
	const struct audit_rec_field	*f = audit_rec_get(rec, key);

	return (f != NULL && f->type == AUDIT_REC_STR ? f->str : NULL);
}

/* Give a number member's value, or -1 when absent or not a number. */
long long
audit_rec_num(const struct audit_rec *rec, const char *key)
{
	const struct audit_rec_field	*f = audit_rec_get(rec, key);

	return (f != NULL && f->type == AUDIT_REC_NUM ? f->num : -1);
}
