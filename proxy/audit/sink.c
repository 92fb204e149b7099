/*
 * Messages for shipping the audit log: RFC 5424 syslog with the fields as
 * structured data, and journald's native protocol with one field each.
 * Both are built from the line audit_write() formatted (parsed back), so
 * they carry the same fields, seq and chain included; the line itself is
 * the message text.  Pure: the caller sends them.
 */
#include "config.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "proxy/audit/sink.h"

#define FACILITY_AUTHPRIV	10
#define SEV_NOTICE		5
#define SEV_INFO		6

struct out {
	char	*p;
	size_t	 len;
	size_t	 cap;
	int	 full;
};

/* Append bytes, or note the message is full. */
static void
out_put(struct out *o, const void *s, size_t n)
{
	if (o->full || o->cap - o->len < n) {
		o->full = 1;
		return;
	}
	memcpy(o->p + o->len, s, n);
	o->len += n;
}

/* Append a string. */
static void
out_puts(struct out *o, const char *s)
{
	out_put(o, s, strlen(s));
}

/* Append a field's value as the line has it (strings without quotes). */
static void
out_value(struct out *o, const struct json_member *f, int sd)
{
	char	num[32];
	size_t	i;

	switch (f->type) {
	case JSON_STRING:
		for (i = 0; i < f->rawlen; i++) {
			if (sd && (f->raw[i] == '"' || f->raw[i] == '\\' ||
			    f->raw[i] == ']'))
				out_put(o, "\\", 1);
			out_put(o, f->raw + i, 1);
		}
		break;
	case JSON_INT:
		snprintf(num, sizeof num, "%lld", f->num);
		out_puts(o, num);
		break;
	case JSON_BOOL:
		out_puts(o, f->num ? "true" : "false");
		break;
	case JSON_NULL:
		out_puts(o, "null");
		break;
	}
}

/* Give the severity of an event: notice for a denial, info otherwise. */
static int
audit_severity(const struct audit_rec *rec)
{
	const char	*v = audit_rec_str(rec, "verdict");

	return (v != NULL && strcmp(v, "deny") == 0 ? SEV_NOTICE : SEV_INFO);
}

/* Append a header field: printable ASCII without spaces, or "-". */
static void
out_header(struct out *o, const char *s, size_t max)
{
	size_t	i;

	out_put(o, " ", 1);
	for (i = 0; s != NULL && s[i] != '\0' && i < max; i++)
		out_put(o, isgraph((unsigned char)s[i]) ? &s[i] : "_", 1);
	if (s == NULL || s[0] == '\0')
		out_put(o, "-", 1);
}

/*
 * Build an RFC 5424 message: <PRI>1 TS HOST pinhole PID EVENT
 * [pinhole@32473 key="value" ...] LINE.  Values are as in the line, with
 * '"', '\' and ']' escaped by a backslash.  Returns its length.
 */
size_t
audit_syslog_format(char *buf, size_t len, const char *line, size_t linelen,
    const struct audit_rec *rec, const char *host, long pid)
{
	struct out	o = { buf, 0, len, 0 };
	char		head[32];
	size_t		i;

	snprintf(head, sizeof head, "<%d>1",
	    FACILITY_AUTHPRIV * 8 + audit_severity(rec));
	out_puts(&o, head);
	out_header(&o, audit_rec_str(rec, "ts"), 48);
	out_header(&o, host, 255);
	out_header(&o, "pinhole", 48);
	snprintf(head, sizeof head, "%ld", pid);
	out_header(&o, head, 128);
	out_header(&o, audit_rec_str(rec, "event"), 32);
	out_puts(&o, " [" AUDIT_SD_ID);
	for (i = 0; i < rec->n; i++) {
		out_put(&o, " ", 1);
		out_puts(&o, rec->f[i].key);
		out_put(&o, "=\"", 2);
		out_value(&o, &rec->f[i], 1);
		out_put(&o, "\"", 1);
	}
	out_puts(&o, "] ");
	out_put(&o, line, linelen);
	return (o.full ? 0 : o.len);
}

/* Append one journald field: KEY=value, or the binary-safe form. */
static void
out_journal(struct out *o, const char *key, const char *v, size_t n)
{
	unsigned char	le[8];
	uint64_t	x = n;
	int		i;

	out_puts(o, key);
	if (memchr(v, '\n', n) == NULL) {
		out_put(o, "=", 1);
		out_put(o, v, n);
		out_put(o, "\n", 1);
		return;
	}
	for (i = 0; i < 8; i++)
		le[i] = (x >> (8 * i)) & 0xff;
	out_put(o, "\n", 1);
	out_put(o, le, sizeof le);
	out_put(o, v, n);
	out_put(o, "\n", 1);
}

/* Append a field as PINHOLE_KEY, its value decoded. */
static void
out_journal_field(struct out *o, const struct json_member *f)
{
	char	key[64], num[32];
	size_t	i;

	snprintf(key, sizeof key, "PINHOLE_");
	for (i = 0; f->key[i] != '\0' && i + 9 < sizeof key; i++)
		key[i + 8] = isalnum((unsigned char)f->key[i]) ?
		    toupper((unsigned char)f->key[i]) : '_';
	key[i + 8] = '\0';
	if (f->type == JSON_STRING) {
		out_journal(o, key, f->str, strlen(f->str));
		return;
	}
	if (f->type == JSON_INT)
		snprintf(num, sizeof num, "%lld", f->num);
	else if (f->type == JSON_BOOL)
		snprintf(num, sizeof num, "%s", f->num ? "true" : "false");
	else
		snprintf(num, sizeof num, "null");
	out_journal(o, key, num, strlen(num));
}

/*
 * Build a journald native message: MESSAGE (the line), PRIORITY,
 * SYSLOG_IDENTIFIER, SYSLOG_FACILITY, then PINHOLE_<KEY> for each field.
 * Returns its length.
 */
size_t
audit_journal_format(char *buf, size_t len, const char *line, size_t linelen,
    const struct audit_rec *rec)
{
	struct out	o = { buf, 0, len, 0 };
	char		num[16];
	size_t		i;

	out_journal(&o, "MESSAGE", line, linelen);
	snprintf(num, sizeof num, "%d", audit_severity(rec));
	out_journal(&o, "PRIORITY", num, strlen(num));
	out_journal(&o, "SYSLOG_IDENTIFIER", "pinhole", 7);
	snprintf(num, sizeof num, "%d", FACILITY_AUTHPRIV);
	out_journal(&o, "SYSLOG_FACILITY", num, strlen(num));
	for (i = 0; i < rec->n; i++)
		out_journal_field(&o, &rec->f[i]);
	return (o.full ? 0 : o.len);
}

/*
 * Frame a message for a stream with octet counting (RFC 6587, as RFC
 * 5425 has it for TLS): "LEN SP MSG".  The message was built at buf +
 * AUDIT_FRAME_HEAD; it is moved to follow its length.  Returns the
 * frame's length.
 */
size_t
audit_frame(char *buf, size_t msglen)
{
	char	head[AUDIT_FRAME_HEAD];
	int	n;

	n = snprintf(head, sizeof head, "%zu ", msglen);
	memmove(buf + n, buf + AUDIT_FRAME_HEAD, msglen);
	memcpy(buf, head, n);
	return (n + msglen);
}
