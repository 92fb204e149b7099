/*
 * Flat JSON objects: a strict reader (RFC 8259, restricted to one level
 * of string, integer, boolean and null members, and nested values kept
 * as text when asked) and a writer.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/digits.h"
#include "lib/json.h"

#define JSON_DIGITS_MAX	15

/* The reader's position in its input, and what it has read. */
struct json_in {
	const uint8_t			*p;
	size_t				 len;
	size_t				 pos;
	const struct json_reader	*r;
	size_t				 n;	/* members read */
	size_t				 used;	/* bytes of the store */
	const char			*err;
};

static int	json_skip(struct json_in *, int);

/* Skip JSON white space (only blanks and tabs in one_line). */
static void
json_skip_ws(struct json_in *in)
{
	uint8_t	c;

	for (; in->pos < in->len; in->pos++) {
		c = in->p[in->pos];
		if (c != ' ' && c != '\t' && (in->r->one_line ||
		    (c != '\n' && c != '\r')))
			break;
	}
}

/* Fail with a message; returns -1. */
static int
json_fail(struct json_in *in, const char *err)
{
	if (in->err == NULL)
		in->err = err;
	return (-1);
}

/* Consume one expected byte. */
static int
json_expect(struct json_in *in, uint8_t c, const char *err)
{
	json_skip_ws(in);
	if (in->pos >= in->len || in->p[in->pos] != c)
		return (json_fail(in, err));
	in->pos++;
	return (0);
}

/* Append decoded bytes to the store. */
static int
json_store(struct json_in *in, const void *p, size_t n)
{
	if (in->r->size - in->used < n)
		return (json_fail(in, "object too long"));
	memcpy(in->r->store + in->used, p, n);
	in->used += n;
	return (0);
}

/* Encode a code point (at most U+10FFFF) as UTF-8; return its length. */
size_t
json_utf8_encode(uint32_t cp, uint8_t b[4])
{
	size_t	n;

	if (cp < 0x80) {
		b[0] = cp;
		n = 1;
	} else if (cp < 0x800) {
		b[0] = 0xc0 | (cp >> 6);
		b[1] = 0x80 | (cp & 0x3f);
		n = 2;
	} else if (cp < 0x10000) {
		b[0] = 0xe0 | (cp >> 12);
		b[1] = 0x80 | ((cp >> 6) & 0x3f);
		b[2] = 0x80 | (cp & 0x3f);
		n = 3;
	} else {
		b[0] = 0xf0 | (cp >> 18);
		b[1] = 0x80 | ((cp >> 12) & 0x3f);
		b[2] = 0x80 | ((cp >> 6) & 0x3f);
		b[3] = 0x80 | (cp & 0x3f);
		n = 4;
	}
	return (n);
}

/* Store a code point as UTF-8. */
static int
json_store_cp(struct json_in *in, uint32_t cp)
{
	uint8_t	b[4];

	if (cp == 0)
		return (json_fail(in, "\\u0000 in a string"));
	return (json_store(in, b, json_utf8_encode(cp, b)));
}

/* Read four hex digits. */
static int
json_hex4(struct json_in *in, uint32_t *v)
{
	size_t	i;
	uint8_t	c;

	if (in->len - in->pos < 4)
		return (json_fail(in, "short \\u escape"));
	*v = 0;
	for (i = 0; i < 4; i++) {
		c = in->p[in->pos++];
		*v <<= 4;
		if (c >= '0' && c <= '9')
			*v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			*v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			*v |= c - 'A' + 10;
		else
			return (json_fail(in, "bad \\u escape"));
	}
	return (0);
}

/* Decode \uXXXX (and its low surrogate when it is a high one). */
static int
json_unicode(struct json_in *in)
{
	uint32_t	hi, lo;

	if (json_hex4(in, &hi) == -1)
		return (-1);
	if (hi >= 0xdc00 && hi <= 0xdfff)
		return (json_fail(in, "lone low surrogate"));
	if (hi < 0xd800 || hi > 0xdbff)
		return (json_store_cp(in, hi));
	if (in->len - in->pos < 2 || in->p[in->pos] != '\\' ||
	    in->p[in->pos + 1] != 'u')
		return (json_fail(in, "lone high surrogate"));
	in->pos += 2;
	if (json_hex4(in, &lo) == -1)
		return (-1);
	if (lo < 0xdc00 || lo > 0xdfff)
		return (json_fail(in, "lone high surrogate"));
	return (json_store_cp(in, 0x10000 + ((hi - 0xd800) << 10) +
	    (lo - 0xdc00)));
}

/* Decode one backslash escape. */
static int
json_escape(struct json_in *in)
{
	static const char	from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	const char		*q;
	uint8_t			 c;

	if (in->pos >= in->len)
		return (json_fail(in, "unterminated string"));
	c = in->p[in->pos++];
	if (c == 'u')
		return (json_unicode(in));
	if (c == '\0' || (q = strchr(from, c)) == NULL)
		return (json_fail(in, "bad escape"));
	return (json_store(in, &to[q - from], 1));
}

/* Read a string into the store; *out points at it, NUL-terminated. */
static int
json_string(struct json_in *in, const char **out, size_t *outlen)
{
	size_t		start, n;
	uint32_t	cp;
	uint8_t		c;

	if (json_expect(in, '"', "string expected") == -1)
		return (-1);
	start = in->used;
	for (;;) {
		if (in->pos >= in->len)
			return (json_fail(in, "unterminated string"));
		c = in->p[in->pos];
		if (c == '"')
			break;
		if (c < 0x20)
			return (json_fail(in, "control character in a string"));
		if (c == '\\') {
			in->pos++;
			if (json_escape(in) == -1)
				return (-1);
			continue;
		}
		if ((n = json_utf8(in->p + in->pos, in->len - in->pos,
		    &cp)) == 0)
			return (json_fail(in, "invalid UTF-8"));
		if (json_store(in, in->p + in->pos, n) == -1)
			return (-1);
		in->pos += n;
	}
	in->pos++;
	*outlen = in->used - start;
	if (json_store(in, "", 1) == -1)
		return (-1);
	*out = in->r->store + start;
	return (0);
}

/*
 * Read an integer: -?(0|[1-9][0-9]*), no fraction nor exponent; of 15
 * digits, or in full_range up to INT64_MAX either way.
 */
static int
json_number(struct json_in *in, long long *v)
{
	int	neg = 0, digits = 0, d;
	uint8_t	c;

	if (in->p[in->pos] == '-') {
		neg = 1;
		in->pos++;
	}
	*v = 0;
	while (in->pos < in->len && in->p[in->pos] >= '0' &&
	    in->p[in->pos] <= '9') {
		if (digits == 1 && *v == 0)
			return (json_fail(in, "leading zero"));
		d = in->p[in->pos++] - '0';
		if (in->r->full_range ? *v > (INT64_MAX - d) / 10 :
		    digits >= JSON_DIGITS_MAX)
			return (json_fail(in, "number too long"));
		*v = *v * 10 + d;
		digits++;
	}
	if (digits == 0)
		return (json_fail(in, "bad number"));
	c = in->pos < in->len ? in->p[in->pos] : 0;
	if (c == '.' || c == 'e' || c == 'E')
		return (json_fail(in, "numbers must be integers"));
	if (neg)
		*v = -*v;
	return (0);
}

/* Match a literal word. */
static int
json_word(struct json_in *in, const char *w)
{
	size_t	n = strlen(w);

	if (in->len - in->pos < n || memcmp(in->p + in->pos, w, n) != 0)
		return (json_fail(in, "bad value"));
	in->pos += n;
	return (0);
}

/*
 * Pass over a number of any form:
 * -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
 */
static int
json_skip_number(struct json_in *in)
{
	size_t	start;

	if (in->pos < in->len && in->p[in->pos] == '-')
		in->pos++;
	start = in->pos;
	while (in->pos < in->len && in->p[in->pos] >= '0' &&
	    in->p[in->pos] <= '9')
		in->pos++;
	if (in->pos == start || (in->p[start] == '0' && in->pos - start > 1))
		return (json_fail(in, "bad number"));
	if (in->pos < in->len && in->p[in->pos] == '.') {
		start = ++in->pos;
		while (in->pos < in->len && in->p[in->pos] >= '0' &&
		    in->p[in->pos] <= '9')
			in->pos++;
		if (in->pos == start)
			return (json_fail(in, "bad number"));
	}
	if (in->pos < in->len && (in->p[in->pos] | 0x20) == 'e') {
		in->pos++;
		if (in->pos < in->len && (in->p[in->pos] == '+' ||
		    in->p[in->pos] == '-'))
			in->pos++;
		start = in->pos;
		while (in->pos < in->len && in->p[in->pos] >= '0' &&
		    in->p[in->pos] <= '9')
			in->pos++;
		if (in->pos == start)
			return (json_fail(in, "bad number"));
	}
	return (0);
}

/* Pass over a string, checked as json_string() does, storing nothing. */
static int
json_skip_string(struct json_in *in)
{
	size_t		 used = in->used, len;
	const char	*s;
	int		 rv;

	rv = json_string(in, &s, &len);
	in->used = used;
	return (rv);
}

/* Pass over the members of an object or the values of an array. */
static int
json_skip_items(struct json_in *in, int depth, uint8_t close)
{
	json_skip_ws(in);
	if (in->pos < in->len && in->p[in->pos] == close) {
		in->pos++;
		return (0);
	}
	for (;;) {
		if (close == '}' && (json_skip_string(in) == -1 ||
		    json_expect(in, ':', "':' expected") == -1))
			return (-1);
		if (json_skip(in, depth + 1) == -1)
			return (-1);
		json_skip_ws(in);
		if (in->pos < in->len && in->p[in->pos] == ',') {
			in->pos++;
			continue;
		}
		return (json_expect(in, close, close == '}' ?
		    "',' or '}' expected" : "',' or ']' expected"));
	}
}

/* Pass over one value of any kind, checking it, at most JSON_DEPTH_MAX deep. */
static int
json_skip(struct json_in *in, int depth)
{
	uint8_t	c;

	json_skip_ws(in);
	if (in->pos >= in->len)
		return (json_fail(in, "value expected"));
	c = in->p[in->pos];
	if (c == '{' || c == '[') {
		if (depth >= JSON_DEPTH_MAX)
			return (json_fail(in, "nested too deep"));
		in->pos++;
		return (json_skip_items(in, depth, c == '{' ? '}' : ']'));
	}
	if (c == '"')
		return (json_skip_string(in));
	if (c == '-' || (c >= '0' && c <= '9'))
		return (json_skip_number(in));
	if (c == 't')
		return (json_word(in, "true"));
	if (c == 'f')
		return (json_word(in, "false"));
	if (c == 'n')
		return (json_word(in, "null"));
	return (json_fail(in, "bad value"));
}

/* Read a member's value of the type its first byte says. */
static int
json_value_typed(struct json_in *in, struct json_member *m)
{
	uint8_t	c = in->p[in->pos];

	if (c == '"') {
		m->type = JSON_STRING;
		return (json_string(in, &m->str, &m->len));
	}
	if (c == '-' || (c >= '0' && c <= '9')) {
		m->type = JSON_INT;
		return (json_number(in, &m->num));
	}
	if (c == 't' || c == 'f') {
		m->type = JSON_BOOL;
		m->num = c == 't';
		return (json_word(in, c == 't' ? "true" : "false"));
	}
	if (c == 'n') {
		m->type = JSON_NULL;
		return (json_word(in, "null"));
	}
	if ((c == '{' || c == '[') && in->r->nested) {
		m->type = JSON_NULL;
		m->nested = c;
		return (json_skip(in, 0));
	}
	if (c == '{' || c == '[')
		return (json_fail(in, "nested values are not accepted"));
	return (json_fail(in, "bad value"));
}

/* Read a member's value, and where it stands in the input. */
static int
json_value(struct json_in *in, struct json_member *m)
{
	size_t	start, quotes;

	json_skip_ws(in);
	if (in->pos >= in->len)
		return (json_fail(in, "value expected"));
	start = in->pos;
	if (json_value_typed(in, m) == -1)
		return (-1);
	quotes = m->type == JSON_STRING;
	m->raw = (const char *)in->p + start + quotes;
	m->rawlen = in->pos - start - 2 * quotes;
	return (0);
}

/* Read one "key": value member. */
static int
json_member(struct json_in *in)
{
	struct json_member	*m;
	size_t			 keylen;

	if (in->n == in->r->max)
		return (json_fail(in, "too many members"));
	m = &in->r->m[in->n];
	memset(m, 0, sizeof *m);
	if (json_string(in, &m->key, &keylen) == -1)
		return (-1);
	if (json_find(in->r->m, in->n, m->key) != NULL)
		return (json_fail(in, "duplicate key"));
	if (json_expect(in, ':', "':' expected") == -1 ||
	    json_value(in, m) == -1)
		return (-1);
	in->n++;
	return (0);
}

/* Read one flat object into the reader's members and store. */
int
json_read(const struct json_reader *r, const char *buf, size_t len,
    size_t *n, const char **errstr)
{
	struct json_in	in = { (const uint8_t *)buf, len, 0, r, 0, 0, NULL };

	*n = 0;
	if (json_expect(&in, '{', "object expected") == -1)
		goto fail;
	json_skip_ws(&in);
	if (in.pos < len && in.p[in.pos] == '}')
		in.pos++;
	else {
		for (;;) {
			if (json_member(&in) == -1)
				goto fail;
			json_skip_ws(&in);
			if (in.pos < len && in.p[in.pos] == ',') {
				in.pos++;
				continue;
			}
			if (json_expect(&in, '}', "',' or '}' expected") == -1)
				goto fail;
			break;
		}
	}
	json_skip_ws(&in);
	if (in.pos != len) {
		json_fail(&in, "trailing bytes after the object");
		goto fail;
	}
	*n = in.n;
	return (0);
fail:
	*errstr = in.err;
	return (-1);
}

/* Parse one flat object of at most JSON_TEXT_MAX bytes. */
int
json_parse(const char *buf, size_t len, struct json_obj *o,
    const char **errstr)
{
	struct json_reader	r = { .m = o->m, .max = JSON_MEMBERS_MAX,
				    .store = o->store, .size = sizeof o->store };

	if (len > JSON_TEXT_MAX) {
		o->n = 0;
		*errstr = "object too long";
		return (-1);
	}
	return (json_read(&r, buf, len, &o->n, errstr));
}

/* Find a member by key among n. */
const struct json_member *
json_find(const struct json_member *m, size_t n, const char *key)
{
	size_t	i;

	for (i = 0; i < n; i++) {
		if (strcmp(m[i].key, key) == 0)
			return (&m[i]);
	}
	return (NULL);
}

/* Find a member of an object by key. */
const struct json_member *
json_get(const struct json_obj *o, const char *key)
{
	return (json_find(o->m, o->n, key));
}

/* A member's string, or NULL when there is no member or it is no string. */
const char *
json_str(const struct json_member *m)
{
	return (m != NULL && m->type == JSON_STRING ? m->str : NULL);
}

/* A string member, or NULL. */
const char *
json_get_str(const struct json_obj *o, const char *key)
{
	return (json_str(json_get(o, key)));
}

/* An integer member: 0, or -1 when absent or of another type. */
int
json_get_int(const struct json_obj *o, const char *key, int64_t *v)
{
	const struct json_member	*m = json_get(o, key);

	if (m == NULL || m->type != JSON_INT)
		return (-1);
	*v = m->num;
	return (0);
}

/*
 * Measure the UTF-8 sequence at s: its length and code point, or 0 when
 * it is not valid (overlong, surrogate, beyond U+10FFFF, cut short).
 */
size_t
json_utf8(const uint8_t *s, size_t n, uint32_t *cp)
{
	size_t	len, i;
	uint8_t	lo = 0x80, hi = 0xbf;

	if (s[0] < 0x80) {
		*cp = s[0];
		return (1);
	}
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4;
	else
		return (0);
	if (s[0] == 0xe0)
		lo = 0xa0;
	else if (s[0] == 0xed)
		hi = 0x9f;
	else if (s[0] == 0xf0)
		lo = 0x90;
	else if (s[0] == 0xf4)
		hi = 0x8f;
	if (n < len || s[1] < lo || s[1] > hi)
		return (0);
	*cp = s[0] & (0xff >> (len + 1));
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return (0);
		*cp = (*cp << 6) | (s[i] & 0x3f);
	}
	return (len);
}

/* Start writing; max bounds the text (0: no bound). */
void
json_writer_init(struct json_writer *w, size_t max)
{
	memset(w, 0, sizeof *w);
	w->max = max;
}

/* Start writing into the caller's buffer of size bytes, never grown. */
void
json_writer_buf(struct json_writer *w, char *buf, size_t size)
{
	memset(w, 0, sizeof *w);
	w->buf = buf;
	w->cap = size;
	w->fixed = 1;
}

/* Free the text written (unless the buffer is the caller's). */
void
json_writer_free(struct json_writer *w)
{
	if (!w->fixed)
		free(w->buf);
	memset(w, 0, sizeof *w);
}

/*
 * Append bytes, growing the buffer unless it is the caller's; the text
 * stays NUL-terminated.
 */
void
json_put_raw(struct json_writer *w, const char *p, size_t n)
{
	char	*nbuf;
	size_t	 ncap;

	if (w->failed)
		return;
	if ((w->max != 0 && w->len + n > w->max) ||
	    (w->fixed && w->len + n + 1 > w->cap)) {
		w->failed = 1;
		return;
	}
	if (w->len + n + 1 > w->cap) {
		ncap = w->cap ? w->cap : 256;
		while (ncap < w->len + n + 1)
			ncap *= 2;
		if ((nbuf = realloc(w->buf, ncap)) == NULL) {
			w->failed = 1;
			return;
		}
		w->buf = nbuf;
		w->cap = ncap;
	}
	memcpy(w->buf + w->len, p, n);
	w->len += n;
	w->buf[w->len] = '\0';
}

/* Append one byte, in place when it fits. */
static inline void
json_put_c(struct json_writer *w, char c)
{
	if (!w->failed && w->len + 2 <= w->cap &&
	    (w->max == 0 || w->len < w->max)) {
		w->buf[w->len++] = c;
		w->buf[w->len] = '\0';
	} else
		json_put_raw(w, &c, 1);
}

#define JSON_KEY_FAST	32	/* key bytes json_key() copies itself */

/* Is a byte printable ASCII written as itself (not '"' or '\\')? */
static inline int
json_plain(uint8_t c)
{
	return ((uint8_t)(c - 0x20) < 0x5f && c != '"' && c != '\\');
}

/* Tell whether a code point is written as an escape. */
int
json_must_escape(uint32_t cp)
{
	return (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) ||
	    (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069));
}

/* Append a character as \uXXXX. */
static void
json_put_u(struct json_writer *w, uint32_t cp)
{
	static const char	hex[] = "0123456789abcdef";
	char			esc[6] = { '\\', 'u', hex[(cp >> 12) & 0xf],
				    hex[(cp >> 8) & 0xf], hex[(cp >> 4) & 0xf],
				    hex[cp & 0xf] };

	json_put_raw(w, esc, sizeof esc);
}

/*
 * Append a quoted string: quote and backslash escaped, control, line
 * separator and bidirectional characters as \uXXXX, invalid UTF-8 bytes
 * as \ufffd; cut after str_max bytes.  What needs no escape is copied
 * a run at a time.
 */
void
json_put_quoted(struct json_writer *w, const char *str, size_t n)
{
	const uint8_t	*s = (const uint8_t *)str;
	size_t		 i, run = 0, len, stop = n;
	uint32_t	 cp;

	if (w->str_max != 0 && w->str_max < n)
		stop = w->str_max;
	json_put_c(w, '"');
	for (i = 0; i < stop; i += len) {
		while (i < stop && json_plain(s[i]))
			i++;
		if (i == stop)
			break;
		len = json_utf8(s + i, n - i, &cp);
		if (len != 0 && cp != '"' && cp != '\\' &&
		    !json_must_escape(cp))
			continue;
		json_put_raw(w, str + run, i - run);
		if (len == 0) {
			json_put_u(w, 0xfffd);
			len = 1;
		} else if (cp == '"' || cp == '\\') {
			json_put_c(w, '\\');
			json_put_c(w, str[i]);
		} else
			json_put_u(w, cp);
		run = i + len;
	}
	json_put_raw(w, str + run, i - run);
	if (i < n) {
		json_put_raw(w, "...", 3);
		w->cut = 1;
	}
	json_put_c(w, '"');
}

/* Open an object. */
void
json_open(struct json_writer *w)
{
	json_put_c(w, '{');
	w->members = 0;
}

/* Close an object (the one it is a member of has one member now). */
void
json_close(struct json_writer *w)
{
	json_put_c(w, '}');
	w->members = 1;
}

/*
 * Write a key and its colon, with a comma before all but the first, in
 * one append.  A key of plain characters (the program's own names) goes
 * out as it is; any other is quoted.
 */
static void
json_key(struct json_writer *w, const char *key)
{
	char	buf[JSON_KEY_FAST + 4];
	size_t	n = 0, i;

	if (w->members++ > 0)
		buf[n++] = ',';
	buf[n++] = '"';
	for (i = 0; key[i] != '\0' && i < JSON_KEY_FAST; i++) {
		if (!json_plain(key[i]))
			break;
		buf[n++] = key[i];
	}
	if (key[i] == '\0') {
		buf[n++] = '"';
		buf[n++] = ':';
		json_put_raw(w, buf, n);
		return;
	}
	json_put_raw(w, buf, n - 1 - i);	/* the comma, if any */
	json_put_quoted(w, key, strlen(key));
	json_put_c(w, ':');
}

/* Write a string member (NULL writes nothing). */
void
json_put_str(struct json_writer *w, const char *key, const char *v)
{
	if (v == NULL)
		return;
	json_key(w, key);
	json_put_quoted(w, v, strlen(v));
}

/* Write an integer member. */
void
json_put_int(struct json_writer *w, const char *key, int64_t v)
{
	char	 num[24], *end = num + sizeof num, *p;

	json_key(w, key);
	p = digits(end, v < 0 ? -(unsigned long long)v :
	    (unsigned long long)v);
	if (v < 0)
		*--p = '-';
	json_put_raw(w, p, end - p);
}

/* Write an unsigned integer member. */
void
json_put_uint(struct json_writer *w, const char *key, unsigned long long v)
{
	char	 num[24], *end = num + sizeof num, *p;

	json_key(w, key);
	p = digits(end, v);
	json_put_raw(w, p, end - p);
}

/* Write a boolean member. */
void
json_put_bool(struct json_writer *w, const char *key, int v)
{
	json_key(w, key);
	json_put_raw(w, v ? "true" : "false", v ? 4 : 5);
}

/* Write a null member. */
void
json_put_null(struct json_writer *w, const char *key)
{
	json_key(w, key);
	json_put_raw(w, "null", 4);
}

/* Write a member as it was read: a string re-quoted, any other as written. */
void
json_put_member(struct json_writer *w, const char *key,
    const struct json_member *m)
{
	json_key(w, key);
	if (m->type == JSON_STRING)
		json_put_quoted(w, m->str, m->len);
	else
		json_put_raw(w, m->raw, m->rawlen);
}

/* Open an object as a member: "key":{ */
void
json_open_member(struct json_writer *w, const char *key)
{
	json_key(w, key);
	json_open(w);
}

/* Open an array as a member: "key":[ */
void
json_open_array(struct json_writer *w, const char *key)
{
	json_key(w, key);
	json_put_c(w, '[');
	w->members = 0;
}

/* Open an object as the next element of an array. */
void
json_open_elem(struct json_writer *w)
{
	if (w->members > 0)
		json_put_c(w, ',');
	json_open(w);
}

/* Put a string as the next element of an array. */
void
json_put_elem_str(struct json_writer *w, const char *str)
{
	if (w->members > 0)
		json_put_c(w, ',');
	json_put_quoted(w, str, strlen(str));
	w->members++;
}

/* Close an array (the object it is a member of has one member now). */
void
json_close_array(struct json_writer *w)
{
	json_put_c(w, ']');
	w->members = 1;
}
