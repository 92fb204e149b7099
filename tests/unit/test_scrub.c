/*
 * Unit tests for the scrubber of responses: a secret's value replaced
 * by its placeholder as it is, in base64 (both alphabets, every
 * alignment, padded or not), percent-encoded and JSON-escaped; matches
 * cut across pieces at every place; what is held back and how long the
 * output is.  Whether a value can still be read from an output is asked
 * of an oracle of its own: every run of base64 digits decoded at every
 * phase, every escape undone.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "proxy/wire/scrub.h"

#define VALUE	"ghp_Xy9+/z3=Qk?&s3cr3t"	/* reserved characters too */
#define PH	"PINHOLE-SECRET-TOKEN-MASKED"
#define OUT_MAX	8192

struct out {
	char	buf[OUT_MAX];
	size_t	len;
};

/* Collect the scrubber's output. */
static void
collect(void *arg, const void *p, size_t n)
{
	struct out	*o = arg;

	assert_true(o->len + n < sizeof o->buf);
	memcpy(o->buf + o->len, p, n);
	o->len += n;
	o->buf[o->len] = '\0';
}

/* A scrubber for TOKEN (and OTHER, when other is not NULL). */
static struct scrub *
scrubber(const char *other)
{
	struct scrub	*s;

	assert_non_null(s = scrub_create());
	assert_int_equal(scrub_add(s, "TOKEN", VALUE, strlen(VALUE)), 0);
	if (other != NULL)
		assert_int_equal(scrub_add(s, "OTHER", other, strlen(other)),
		    0);
	return (s);
}

/* Scrub in as one message cut at cut (0: whole); returns the count. */
static size_t
run(struct scrub *s, const char *in, size_t len, size_t cut, struct out *o)
{
	size_t	n;

	memset(o, 0, sizeof *o);
	scrub_reset(s);
	if (cut == 0 || cut >= len)
		return (scrub_feed(s, in, len, 1, collect, o));
	n = scrub_feed(s, in, cut, 0, collect, o);
	assert_true(scrub_held(s) <= scrub_overlap(s));
	n += scrub_feed(s, in + cut, len - cut, 1, collect, o);
	assert_int_equal(scrub_held(s), 0);
	return (n);
}

static const char b64_std[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
static const char b64_url[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/* Base64 of n bytes into out, padded or not. */
static void
b64(const unsigned char *p, size_t n, const char *alpha, int pad, char *out)
{
	size_t		i, k = 0;
	uint32_t	w;

	for (i = 0; i < n; i += 3) {
		w = (uint32_t)p[i] << 16;
		if (i + 1 < n)
			w |= (uint32_t)p[i + 1] << 8;
		if (i + 2 < n)
			w |= p[i + 2];
		out[k++] = alpha[w >> 18 & 63];
		out[k++] = alpha[w >> 12 & 63];
		if (i + 1 < n)
			out[k++] = alpha[w >> 6 & 63];
		else if (pad)
			out[k++] = '=';
		if (i + 2 < n)
			out[k++] = alpha[w & 63];
		else if (pad)
			out[k++] = '=';
	}
	out[k] = '\0';
}

/* Does a run of digits, decoded from phase on, hold the value? */
static int
b64_holds(const char *s, size_t len, const char *alpha)
{
	unsigned char	dec[OUT_MAX];
	size_t		i, n = 0, bits = 0;
	uint32_t	w = 0;

	for (i = 0; i < len; i++) {
		w = w << 6 | (uint32_t)(strchr(alpha, s[i]) - alpha);
		if ((bits += 6) >= 8) {
			bits -= 8;
			dec[n++] = (unsigned char)(w >> bits);
		}
	}
	return (memmem(dec, n, VALUE, strlen(VALUE)) != NULL);
}

/* The oracle: can the value be read from s, in base64 of an alphabet? */
static int
leaks_b64(const char *s, size_t len, const char *alpha)
{
	size_t	i, j, k;

	for (i = 0; i < len; i = j + 1) {
		for (j = i; j < len && s[j] != '\0' && strchr(alpha, s[j]);
		    j++)
			;
		for (k = i; k < j && k < i + 4; k++) {
			if (b64_holds(s + k, j - k, alpha))
				return (1);
		}
	}
	return (0);
}

/* Undo %XX, JSON escapes ("\/", "\u0041") and, with plus, '+' in s. */
static size_t
unescape(const char *s, size_t len, int plus, char *out)
{
	size_t		i, n = 0;
	unsigned int	c;

	for (i = 0; i < len; i++) {
		if (s[i] == '%' && i + 2 < len &&
		    sscanf(s + i + 1, "%2x", &c) == 1) {
			out[n++] = (char)c;
			i += 2;
		} else if (s[i] == '\\' && i + 5 < len && s[i + 1] == 'u' &&
		    sscanf(s + i + 2, "%4x", &c) == 1) {
			out[n++] = (char)c;
			i += 5;
		} else if (s[i] == '\\' && i + 1 < len) {
			out[n++] = s[++i];
		} else
			out[n++] = plus && s[i] == '+' ? ' ' : s[i];
	}
	return (n);
}

/* The oracle: can the value be read from s at all? */
static int
leaks(const char *s, size_t len)
{
	char	u[OUT_MAX];
	size_t	n;
	int	plus;

	if (memmem(s, len, VALUE, strlen(VALUE)) != NULL ||
	    leaks_b64(s, len, b64_std) || leaks_b64(s, len, b64_url))
		return (1);
	for (plus = 0; plus < 2; plus++) {
		n = unescape(s, len, plus, u);
		if (memmem(u, n, VALUE, strlen(VALUE)) != NULL ||
		    leaks_b64(u, n, b64_std) || leaks_b64(u, n, b64_url))
			return (1);
	}
	return (0);
}

/* Scrub in cut at every place: never a leak, always the same output. */
static void
check_all_cuts(struct scrub *s, const char *in, size_t want)
{
	struct out	whole, o;
	size_t		len = strlen(in), cut, n;

	assert_true(leaks(in, len));
	n = run(s, in, len, 0, &whole);
	assert_int_equal(n, want);
	assert_false(leaks(whole.buf, whole.len));
	assert_non_null(strstr(whole.buf, PH));
	for (cut = 1; cut < len; cut++) {
		assert_int_equal(run(s, in, len, cut, &o), want);
		assert_int_equal(o.len, whole.len);
		assert_memory_equal(o.buf, whole.buf, o.len);
	}
}

static void
test_raw(void **state)
{
	struct scrub	*s = scrubber(NULL);
	struct out	 o;
	const char	*in = "{\"h\":\"Bearer " VALUE "\",\"again\":\"" VALUE
	    "\"}";

	(void)state;
	assert_int_equal(run(s, in, strlen(in), 0, &o), 2);
	assert_string_equal(o.buf, "{\"h\":\"Bearer " PH "\",\"again\":\"" PH
	    "\"}");
	/* The output's length: each value's bytes out, the placeholder in. */
	assert_int_equal(o.len, strlen(in) - 2 * strlen(VALUE) +
	    2 * strlen(PH));
	assert_int_equal(scrub_found(s), 1);
	check_all_cuts(s, in, 2);
	scrub_free(s);
}

static void
test_base64(void **state)
{
	struct scrub	*s = scrubber(NULL);
	unsigned char	 plain[256];
	char		 enc[512], in[600];
	const char	*alpha[] = { b64_std, b64_url };
	size_t		 a, k, pad, tail, n;

	(void)state;
	/* Every alignment, either alphabet, padded or not, with bytes after. */
	for (a = 0; a < 6; a++) {
		for (tail = 0; tail < 3; tail++) {
			memcpy(plain, "user::", a);
			memcpy(plain + a, VALUE, strlen(VALUE));
			memcpy(plain + a + strlen(VALUE), "!!", tail);
			n = a + strlen(VALUE) + tail;
			for (k = 0; k < 2; k++) {
				for (pad = 0; pad < 2; pad++) {
					b64(plain, n, alpha[k], (int)pad, enc);
					snprintf(in, sizeof in, "Basic %s\r\n",
					    enc);
					check_all_cuts(s, in, 1);
				}
			}
		}
	}
	scrub_free(s);
}

static void
test_percent(void **state)
{
	struct scrub	*s = scrubber(NULL);
	struct out	 o;
	char		 in[600], all[512];
	size_t		 i, n = 0;

	(void)state;
	/* As encodeURIComponent: reserved bytes only, upper and lower case. */
	check_all_cuts(s, "/cb?t=ghp_Xy9%2B%2Fz3%3DQk%3F%26s3cr3t&x=1", 1);
	check_all_cuts(s, "/cb?t=ghp_Xy9%2b%2fz3%3dQk%3f%26s3cr3t&x=1", 1);
	/* Every byte encoded. */
	for (i = 0; i < strlen(VALUE); i++)
		n += (size_t)snprintf(all + n, sizeof all - n, "%%%02X",
		    (unsigned char)VALUE[i]);
	snprintf(in, sizeof in, "Location: https://x/?t=%s\r\n", all);
	check_all_cuts(s, in, 1);
	/* A '%' that begins no escape is the character itself. */
	in[0] = '\0';
	assert_int_equal(run(s, "100% %zz %4", 11, 0, &o), 0);
	assert_string_equal(o.buf, "100% %zz %4");
	scrub_free(s);
}

static void
test_json(void **state)
{
	struct scrub	*s = scrubber(NULL);
	char		 in[600], all[512];
	size_t		 i, n = 0;

	(void)state;
	/* A JSON writer that escapes '/' (PHP's). */
	check_all_cuts(s, "{\"authorization\":\"token ghp_Xy9+\\/z3=Qk?&"
	    "s3cr3t\"}", 1);
	for (i = 0; i < strlen(VALUE); i++)
		n += (size_t)snprintf(all + n, sizeof all - n, "\\u%04x",
		    (unsigned char)VALUE[i]);
	snprintf(in, sizeof in, "{\"t\":\"%s\"}", all);
	check_all_cuts(s, in, 1);
	/* Base64 in JSON, '/' escaped; and percent-encoded. */
	check_all_cuts(s, "{\"b\":\"Z2hwX1h5OSsvejM9UWs\\/JnMzY3IzdA==\"}", 1);
	check_all_cuts(s, "a=Z2hwX1h5OSsvejM9UWs%2FJnMzY3IzdA%3D%3D", 1);
	scrub_free(s);
}

static void
test_form(void **state)
{
	struct scrub	*s;
	struct out	 o;
	const char	*in = "q=correct+horse+battery+staple&x=1";

	(void)state;
	assert_non_null(s = scrub_create());
	assert_int_equal(scrub_add(s, "TOKEN", "correct horse battery staple",
	    28), 0);
	assert_int_equal(run(s, in, strlen(in), 0, &o), 1);
	assert_string_equal(o.buf, "q=" PH "&x=1");
	assert_int_equal(run(s, in, strlen(in), 9, &o), 1);
	assert_string_equal(o.buf, "q=" PH "&x=1");
	scrub_free(s);
}

static void
test_held(void **state)
{
	struct scrub	*s = scrubber(NULL);
	struct out	 o;
	size_t		 n = strlen(VALUE);

	(void)state;
	memset(&o, 0, sizeof o);
	scrub_reset(s);
	/* Text that could begin no match goes out at once. */
	assert_int_equal(scrub_feed(s, "plain text", 10, 0, collect, &o), 0);
	assert_int_equal(scrub_held(s), 0);
	assert_string_equal(o.buf, "plain text");
	/* All but the last byte of the value waits for the next piece. */
	assert_int_equal(scrub_feed(s, VALUE, n - 1, 0, collect, &o), 0);
	assert_int_equal(scrub_held(s), n - 1);
	assert_string_equal(o.buf, "plain text");
	assert_int_equal(scrub_feed(s, &VALUE[n - 1], 1, 0, collect, &o), 1);
	assert_int_equal(scrub_held(s), 0);
	assert_string_equal(o.buf, "plain text" PH);
	/* A prefix at the end of the message goes out as it is. */
	assert_int_equal(scrub_feed(s, "ghp_Xy", 6, 0, collect, &o), 0);
	assert_int_equal(scrub_held(s), 6);
	assert_int_equal(scrub_feed(s, "", 0, 1, collect, &o), 0);
	assert_string_equal(o.buf, "plain text" PH "ghp_Xy");
	assert_int_equal(scrub_held(s), 0);
	/* One byte at a time. */
	memset(&o, 0, sizeof o);
	scrub_reset(s);
	for (n = 0; n < strlen("<" VALUE ">"); n++)
		scrub_feed(s, &("<" VALUE ">")[n], 1, 0, collect, &o);
	scrub_feed(s, "", 0, 1, collect, &o);
	assert_string_equal(o.buf, "<" PH ">");
	/*
	 * The most held, less one: the longest pattern, the value's base64
	 * digits after two bytes, each written as a JSON \u0041.
	 */
	n = strlen(VALUE);
	assert_int_equal(scrub_overlap(s), 6 * (8 * (2 + n) / 6 - 3) - 1);
	scrub_free(s);
}

static void
test_two(void **state)
{
	struct scrub	*s = scrubber("another-value-12345");
	struct out	 o;
	char		 names[64];
	const char	*in = "x another-value-12345 y";

	(void)state;
	assert_int_equal(run(s, in, strlen(in), 0, &o), 1);
	assert_string_equal(o.buf, "x PINHOLE-SECRET-OTHER-MASKED y");
	assert_int_equal(scrub_found(s), 2);
	assert_int_equal(scrub_found_names(s, names, sizeof names), 5);
	assert_string_equal(names, "OTHER");
	in = VALUE "another-value-12345";
	assert_int_equal(run(s, in, strlen(in), 0, &o), 2);
	assert_int_equal(scrub_found_names(s, names, sizeof names), 11);
	assert_string_equal(names, "TOKEN,OTHER");
	assert_int_equal(scrub_found_names(s, names, 8), 5);
	assert_string_equal(names, "TOKEN");
	scrub_reset(s);
	assert_int_equal(scrub_found(s), 0);
	assert_int_equal(scrub_found_names(s, names, sizeof names), 0);
	assert_string_equal(names, "");
	scrub_free(s);
}

static void
test_bad(void **state)
{
	struct scrub	*s;
	struct out	 o;

	(void)state;
	assert_non_null(s = scrub_create());
	assert_int_equal(scrub_add(s, "1BAD", "v", 1), -1);
	assert_int_equal(scrub_add(s, "A", "", 0), -1);
	/* No secret: everything goes through. */
	assert_int_equal(run(s, "abc", 3, 1, &o), 0);
	assert_string_equal(o.buf, "abc");
	scrub_free(s);
	scrub_free(NULL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_raw),
		cmocka_unit_test(test_base64),
		cmocka_unit_test(test_percent),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_form),
		cmocka_unit_test(test_held),
		cmocka_unit_test(test_two),
		cmocka_unit_test(test_bad),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
