/*
 * A small, strict JSON reader for flat objects (string, integer, boolean
 * and null members; an object or array member only when asked, kept as
 * its text) and a writer for the same: what the control protocol, the
 * agent endpoint and the harness hook speak.  Pure: no I/O, no
 * allocation in the reader.
 */
#ifndef JSON_H
#define JSON_H

#include <stddef.h>
#include <stdint.h>

#define JSON_MEMBERS_MAX	32
#define JSON_TEXT_MAX		8192	/* longest object read */
#define JSON_DEPTH_MAX		32	/* nesting a nested reader takes */

enum json_type {
	JSON_STRING,
	JSON_INT,
	JSON_BOOL,
	JSON_NULL	/* and a nested value: see nested */
};

struct json_member {
	const char	*key;		/* NUL-terminated, in the store */
	enum json_type	 type;
	const char	*str;		/* JSON_STRING: decoded, NUL-ended */
	size_t		 len;		/* its length */
	const char	*raw;		/* the value as written, in the input */
	size_t		 rawlen;	/* (a string's without its quotes) */
	long long	 num;		/* JSON_INT, or JSON_BOOL 0/1 */
	char		 nested;	/* '{' or '[' (type JSON_NULL): an
					   object or array, raw its text */
};

/*
 * A parsed object.  Keys and strings are decoded into store; a string
 * holding U+0000 is refused, so each is a C string too.
 */
struct json_obj {
	size_t			n;
	struct json_member	m[JSON_MEMBERS_MAX];
	char			store[JSON_TEXT_MAX + JSON_MEMBERS_MAX * 2];
};

/*
 * Where a reader puts an object (room for max members, and a store of
 * size bytes for the decoded keys and strings), and how strict it is
 * where its callers differ.
 */
struct json_reader {
	struct json_member	*m;
	size_t			 max;
	char			*store;
	size_t			 size;
	int			 one_line;	/* white space: blank, tab */
	int			 full_range;	/* integers: int64_t, not 15 digits */
	int			 nested;	/* objects, arrays as members */
};

/*
 * Read one object of len bytes (surrounding white space allowed) into
 * r's members and store; *n is how many were read.  Keys must be unique,
 * strings valid UTF-8 without raw control characters, numbers integers:
 * of 15 digits at most, or with full_range anything in int64_t but its
 * minimum.  White space is blank, tab, CR and LF, or with one_line only
 * blank and tab.  With nested, a member may be an object or an array
 * (any valid JSON, JSON_DEPTH_MAX deep, fractions and exponents in it
 * too), given only as its text: read it again to look inside.  Returns
 * 0, or -1 with *errstr set and *n 0.
 */
int			 json_read(const struct json_reader *, const char *,
			    size_t, size_t *, const char **);
/* A member among n by key; a member's string, NULL when absent or not one. */
const struct json_member *json_find(const struct json_member *, size_t,
			    const char *);
const char		*json_str(const struct json_member *);

/* Read one object of at most JSON_TEXT_MAX bytes with json_read(). */
int			 json_parse(const char *, size_t, struct json_obj *,
			    const char **);

const struct json_member *json_get(const struct json_obj *, const char *);
/* A member's value of the type asked for, or NULL / -1 when absent. */
const char		*json_get_str(const struct json_obj *, const char *);
int			 json_get_int(const struct json_obj *, const char *,
			    int64_t *);

/*
 * An object being written: {"k":v,...}, into a buffer that grows, or
 * one of the caller's that does not.  A string longer than str_max
 * bytes (0: no bound) is cut at the first character boundary at or past
 * str_max and ends with "...", and cut says one was.  On overflow or out
 * of memory the writer marks itself failed and ignores the rest.
 */
struct json_writer {
	char	*buf;
	size_t	 len;
	size_t	 cap;
	size_t	 max;		/* 0: unbounded */
	int	 fixed;		/* buf is the caller's */
	size_t	 str_max;
	int	 cut;
	int	 failed;
	int	 members;
};

void	json_writer_init(struct json_writer *, size_t);
void	json_writer_buf(struct json_writer *, char *, size_t);
void	json_writer_free(struct json_writer *);
void	json_open(struct json_writer *);
void	json_close(struct json_writer *);
void	json_put_str(struct json_writer *, const char *, const char *);
void	json_put_int(struct json_writer *, const char *, int64_t);
void	json_put_uint(struct json_writer *, const char *, unsigned long long);
void	json_put_bool(struct json_writer *, const char *, int);
void	json_put_null(struct json_writer *, const char *);
/* Write a member as it was read; open an object member (json_close it). */
void	json_put_member(struct json_writer *, const char *,
	    const struct json_member *);
void	json_open_member(struct json_writer *, const char *);
/*
 * An array of objects as a member: "key":[ ... ], each element opened
 * with json_open_elem() and closed with json_close(); or of strings,
 * each put with json_put_elem_str().
 */
void	json_open_array(struct json_writer *, const char *);
void	json_open_elem(struct json_writer *);
void	json_put_elem_str(struct json_writer *, const char *);
void	json_close_array(struct json_writer *);
/* Append a JSON string literal for bytes (escaped, invalid UTF-8 as U+FFFD). */
void	json_put_quoted(struct json_writer *, const char *, size_t);
void	json_put_raw(struct json_writer *, const char *, size_t);

/* Measure a UTF-8 sequence: its length and code point, 0 when invalid. */
size_t	json_utf8(const uint8_t *, size_t, uint32_t *);
int	json_must_escape(uint32_t);
size_t	json_utf8_encode(uint32_t, uint8_t [4]);

#endif
