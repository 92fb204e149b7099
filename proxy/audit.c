/*
 * The audit log: JSON Lines, one event a line, fields in a fixed order
 * (docs/audit-log.md).
 *
 * Each line is built whole in a buffer and handed to one write(), so
 * lines never interleave.  A failed write is reported once, until a
 * write succeeds again.  A short write never leaves half a line behind:
 * a regular file opened for appending is cut back to its length before
 * the write; anything else (a pipe, a terminal) is marked torn, and the
 * next line starts with a newline so that the fragment stands alone on
 * a line of its own, which readers skip as it does not parse.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/log.h"
#include "proxy/audit.h"

#define AUDIT_FIELD_MAX	1024	/* bytes of a string value kept */
#define AUDIT_NFIELDS	24
#define AUDIT_LINE_MAX	(AUDIT_NFIELDS * (AUDIT_FIELD_MAX * 6 + 32) + 64)

struct audit {
	char		*path;		/* NULL: log nothing */
	int		 fd;
	int		 owned;		/* ours to close */
	int		 cuttable;	/* regular file, appending */
	int		 failing;	/* a failure was reported */
	int		 torn;		/* the output ends mid-line */
	uint64_t	 lost;		/* lines lost while failing */
	char		*buf;		/* one byte before the line, for '\n' */
};

struct audit_line {
	char		*p;
	size_t		 len;
	int		 truncated;
};

enum audit_type {
	AUDIT_STR,
	AUDIT_INT,
	AUDIT_I64
};

/* The fields after "schema", "ts" and "event", in the order written. */
static const struct audit_field {
	const char	*name;
	size_t		 off;
	enum audit_type	 type;
} audit_fields[] = {
	{ "verdict", offsetof(struct audit_event, verdict), AUDIT_STR },
	{ "reason", offsetof(struct audit_event, reason), AUDIT_STR },
	{ "session", offsetof(struct audit_event, session), AUDIT_STR },
	{ "client", offsetof(struct audit_event, client), AUDIT_STR },
	{ "host", offsetof(struct audit_event, host), AUDIT_STR },
	{ "port", offsetof(struct audit_event, port), AUDIT_INT },
	{ "addr", offsetof(struct audit_event, addr), AUDIT_STR },
	{ "via", offsetof(struct audit_event, via), AUDIT_STR },
	{ "rule", offsetof(struct audit_event, rule), AUDIT_STR },
	{ "status", offsetof(struct audit_event, status), AUDIT_INT },
	{ "bytes_up", offsetof(struct audit_event, bytes_up), AUDIT_I64 },
	{ "bytes_down", offsetof(struct audit_event, bytes_down), AUDIT_I64 },
	{ "ms", offsetof(struct audit_event, ms), AUDIT_I64 },
	{ "qname", offsetof(struct audit_event, qname), AUDIT_STR },
	{ "qtype", offsetof(struct audit_event, qtype), AUDIT_STR },
	{ "answer", offsetof(struct audit_event, answer), AUDIT_STR },
	{ "detail", offsetof(struct audit_event, detail), AUDIT_STR },
	{ "request_id", offsetof(struct audit_event, request_id), AUDIT_STR },
	{ "scope", offsetof(struct audit_event, scope), AUDIT_STR },
	{ "ttl", offsetof(struct audit_event, ttl), AUDIT_I64 },
	{ "by", offsetof(struct audit_event, by), AUDIT_STR },
};

/* Clear an event: strings NULL, numbers -1. */
void
audit_event_init(struct audit_event *ev)
{
	memset(ev, 0, sizeof *ev);
	ev->port = -1;
	ev->status = -1;
	ev->bytes_up = -1;
	ev->bytes_down = -1;
	ev->ms = -1;
	ev->ttl = -1;
}

/* Append bytes (the buffer is sized for the longest line). */
static void
audit_put(struct audit_line *l, const char *s, size_t n)
{
	memcpy(l->p + l->len, s, n);
	l->len += n;
}

/* Append a string. */
static void
audit_puts(struct audit_line *l, const char *s)
{
	audit_put(l, s, strlen(s));
}

/* Append a \uXXXX escape. */
static void
audit_put_u(struct audit_line *l, uint32_t cp)
{
	char	buf[8];

	snprintf(buf, sizeof buf, "\\u%04x", (unsigned)cp);
	audit_put(l, buf, 6);
}

/*
 * Measure the UTF-8 sequence at s: its length and code point, or 0 when
 * it is not valid (overlong, surrogate, beyond U+10FFFF, cut short).
 */
static size_t
audit_utf8(const uint8_t *s, size_t n, uint32_t *cp)
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

/* Tell whether a code point must be written as an escape. */
static int
audit_must_escape(uint32_t cp)
{
	return (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) ||
	    (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069));
}

/*
 * Append a string value, quoted and escaped: quote and backslash with a
 * backslash, control characters (C0, DEL, C1), line separators and
 * bidirectional controls as \uXXXX, each byte that is not valid UTF-8 as
 * \ufffd.  Longer values are cut after AUDIT_FIELD_MAX bytes, at a
 * character boundary, and end with "...".
 */
static void
audit_put_string(struct audit_line *l, const char *str)
{
	const uint8_t	*s = (const uint8_t *)str;
	size_t		 n = strlen(str), i = 0, len;
	uint32_t	 cp;

	audit_put(l, "\"", 1);
	while (i < n) {
		if (i >= AUDIT_FIELD_MAX) {
			audit_puts(l, "...");
			l->truncated = 1;
			break;
		}
		if ((len = audit_utf8(s + i, n - i, &cp)) == 0) {
			audit_put_u(l, 0xfffd);
			i++;
			continue;
		}
		if (cp == '"' || cp == '\\') {
			audit_put(l, "\\", 1);
			audit_put(l, (const char *)s + i, 1);
		} else if (audit_must_escape(cp))
			audit_put_u(l, cp);
		else
			audit_put(l, (const char *)s + i, len);
		i += len;
	}
	audit_put(l, "\"", 1);
}

/* Append one field of an event, unless it is absent. */
static void
audit_put_field(struct audit_line *l, const struct audit_event *ev,
    const struct audit_field *f)
{
	const char	*p = (const char *)ev + f->off;
	const char	*s;
	int64_t		 v;
	char		 num[32];

	if (f->type == AUDIT_STR) {
		memcpy(&s, p, sizeof s);
		if (s == NULL)
			return;
		audit_put(l, ",\"", 2);
		audit_puts(l, f->name);
		audit_put(l, "\":", 2);
		audit_put_string(l, s);
		return;
	}
	if (f->type == AUDIT_INT)
		v = *(const int *)(const void *)p;
	else
		v = *(const int64_t *)(const void *)p;
	if (v < 0)
		return;
	snprintf(num, sizeof num, ",\"%s\":%lld", f->name, (long long)v);
	audit_puts(l, num);
}

/* Format the current time as RFC 3339 UTC with milliseconds. */
static void
audit_timestamp(char *buf, size_t len)
{
	struct timespec	ts;
	struct tm	tm;
	char		sec[32];

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(sec, sizeof sec, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, len, "%s.%03ldZ", sec, ts.tv_nsec / 1000000);
}

/* Build the line of an event, newline included. */
static void
audit_format(struct audit_line *l, const struct audit_event *ev)
{
	char	head[96];
	char	ts[48];
	size_t	i;

	audit_timestamp(ts, sizeof ts);
	snprintf(head, sizeof head, "{\"schema\":%d,\"ts\":\"%s\",\"event\":",
	    AUDIT_SCHEMA, ts);
	audit_puts(l, head);
	audit_put_string(l, ev->event != NULL ? ev->event : "unknown");
	for (i = 0; i < sizeof audit_fields / sizeof audit_fields[0]; i++)
		audit_put_field(l, ev, &audit_fields[i]);
	if (l->truncated)
		audit_puts(l, ",\"truncated\":true");
	audit_puts(l, "}\n");
}

/* Name the output in messages. */
static const char *
audit_name(const struct audit *a)
{
	return (a->owned ? a->path : "stdout");
}

/* Note a failed or short write, saying so only the first time. */
static void
audit_failed(struct audit *a, ssize_t n, size_t len)
{
	a->lost++;
	if (a->failing)
		return;
	a->failing = 1;
	if (n < 0)
		log_warn("audit log: %s", audit_name(a));
	else
		log_warnx("audit log: %s: short write (%zd of %zu bytes)",
		    audit_name(a), n, len);
}

/* Note a successful write, saying so if writes had been failing. */
static void
audit_succeeded(struct audit *a)
{
	a->torn = 0;
	if (!a->failing)
		return;
	log_warnx("audit log: %s: writing again, %llu lines lost",
	    audit_name(a), (unsigned long long)a->lost);
	a->failing = 0;
	a->lost = 0;
}

/* Write a line with one write(); never leave a fragment mid-file. */
static void
audit_emit(struct audit *a, char *line, size_t len)
{
	struct stat	st;
	off_t		good = -1;
	ssize_t		n;

	if (a->torn) {
		*--line = '\n';
		len++;
	}
	if (a->cuttable && fstat(a->fd, &st) == 0)
		good = st.st_size;
	n = write(a->fd, line, len);
	if (n == (ssize_t)len) {
		audit_succeeded(a);
		return;
	}
	if (n > 0 && (good == -1 || ftruncate(a->fd, good) == -1))
		a->torn = 1;
	audit_failed(a, n, len);
}

/* Write one line. */
void
audit_write(struct audit *a, const struct audit_event *ev)
{
	struct audit_line	l;
	int			saved = errno;

	if (a == NULL || a->fd == -1)
		return;
	memset(&l, 0, sizeof l);
	l.p = a->buf + 1;
	audit_format(&l, ev);
	audit_emit(a, l.p, l.len);
	errno = saved;
}

/*
 * Tell whether a failed write's fragment can be cut off: only in a
 * regular file written with O_APPEND (otherwise the file offset would
 * stay past the new end).
 */
static int
audit_cuttable(int fd)
{
	struct stat	st;
	int		fl;

	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode))
		return (0);
	if ((fl = fcntl(fd, F_GETFL)) == -1)
		return (0);
	return ((fl & O_APPEND) != 0);
}

/* Open the log file for appending. */
static int
audit_open_fd(const char *path, char *err, size_t errlen)
{
	int	fd;

	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY,
	    0600);
	if (fd == -1)
		snprintf(err, errlen, "audit log: %s: %s", path,
		    strerror(errno));
	return (fd);
}

/* Open the audit log: a file, "-" for stdout, or NULL for none. */
struct audit *
audit_open(const char *path, char *err, size_t errlen)
{
	struct audit	*a;

	if ((a = calloc(1, sizeof *a)) == NULL)
		goto nomem;
	a->fd = -1;
	if (path == NULL)
		return (a);
	if ((a->path = strdup(path)) == NULL ||
	    (a->buf = malloc(AUDIT_LINE_MAX)) == NULL)
		goto nomem;
	if (strcmp(path, "-") == 0)
		a->fd = STDOUT_FILENO;
	else {
		if ((a->fd = audit_open_fd(path, err, errlen)) == -1)
			goto fail;
		a->owned = 1;
	}
	a->cuttable = audit_cuttable(a->fd);
	return (a);

nomem:
	snprintf(err, errlen, "audit log: out of memory");
fail:
	audit_close(a);
	return (NULL);
}

/* Open the file again under its name (after log rotation). */
int
audit_reopen(struct audit *a)
{
	char	err[1024];
	int	fd;

	if (a == NULL || !a->owned)
		return (0);
	if ((fd = audit_open_fd(a->path, err, sizeof err)) == -1) {
		log_warnx("%s", err);
		return (-1);
	}
	close(a->fd);
	a->fd = fd;
	a->cuttable = audit_cuttable(fd);
	a->torn = 0;
	return (0);
}

/* Close the audit log. */
void
audit_close(struct audit *a)
{
	if (a == NULL)
		return;
	if (a->owned && a->fd != -1)
		close(a->fd);
	free(a->buf);
	free(a->path);
	free(a);
}
