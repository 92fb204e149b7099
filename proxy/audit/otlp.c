/*
 * OTLP/HTTP JSON for the audit log (otlp.h): each audit line becomes one
 * LogRecord, its fields attributes named after the OpenTelemetry
 * semantic conventions where one fits and pinhole.FIELD otherwise; and
 * the collector's response is read strictly, within fixed bounds.
 * Pure: no I/O, no libevent, no globals.
 */
#include "config.h"

#include <sys/types.h>

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/json.h"
#include "proxy/audit/line.h"
#include "proxy/audit/otlp.h"

/* Audit fields with a semantic-convention name; the rest are pinhole.*. */
static const struct {
	const char	*field;
	const char	*name;
} otlp_names[] = {
	{ "host",	"server.address" },
	{ "port",	"server.port" },
	{ "addr",	"network.peer.address" },
	{ "method",	"http.request.method" },
	{ "path",	"url.path" },
	{ "status",	"http.response.status_code" },
	{ "qname",	"dns.question.name" },
	{ "pid",	"process.pid" },
	{ "cmd",	"process.command_line" },
};

/* Write the one member of a value just opened: "stringValue":"..." */
static void
otlp_string_value(struct json_writer *w, const char *v, size_t len)
{
	json_put_raw(w, "\"stringValue\":", 14);
	json_put_quoted(w, v, len);
}

/* Open one attribute: {"key":NAME,"value":{ */
static void
otlp_attr_open(struct json_writer *w, const char *prefix, const char *name)
{
	char	key[96];

	snprintf(key, sizeof key, "%s%s", prefix, name);
	json_open_elem(w);
	json_put_str(w, "key", key);
	json_open_member(w, "value");
}

/* Write a string attribute. */
static void
otlp_attr_str(struct json_writer *w, const char *prefix, const char *name,
    const char *v, size_t len)
{
	otlp_attr_open(w, prefix, name);
	otlp_string_value(w, v, len);
	json_close(w);
	json_close(w);
}

/* Write an integer attribute: intValue as a string, as OTLP JSON has it. */
static void
otlp_attr_int(struct json_writer *w, const char *prefix, const char *name,
    long long v)
{
	char	num[32];

	snprintf(num, sizeof num, "%lld", v);
	otlp_attr_open(w, prefix, name);
	json_put_str(w, "intValue", num);
	json_close(w);
	json_close(w);
}

/* Write "client" as client.address and client.port, or as it is. */
static void
otlp_attr_client(struct json_writer *w, const struct json_member *f)
{
	const char	*s = f->str, *colon = strrchr(s, ':');
	size_t		 alen;
	long long	 port = 0;
	const char	*p;

	if (colon == NULL || colon == s || colon[1] == '\0' ||
	    strlen(colon + 1) > 5)
		goto whole;
	for (p = colon + 1; *p != '\0'; p++) {
		if (!isdigit((unsigned char)*p))
			goto whole;
		port = port * 10 + (*p - '0');
	}
	alen = colon - s;
	if (s[0] == '[') {
		if (alen < 3 || s[alen - 1] != ']')
			goto whole;
		s++;
		alen -= 2;
	} else if (memchr(s, ':', alen) != NULL)
		goto whole;
	otlp_attr_str(w, "", "client.address", s, alen);
	otlp_attr_int(w, "", "client.port", port);
	return;
whole:
	otlp_attr_str(w, "pinhole.", "client", f->str, f->len);
}

/* Write one field of the line as an attribute. */
static void
otlp_attr(struct json_writer *w, const struct json_member *f)
{
	const char	*prefix = "pinhole.", *name = f->key;
	size_t		 i;

	if (strcmp(f->key, "ts") == 0)
		return;		/* timeUnixNano */
	if (strcmp(f->key, "client") == 0 && f->type == JSON_STRING) {
		otlp_attr_client(w, f);
		return;
	}
	for (i = 0; i < sizeof otlp_names / sizeof otlp_names[0]; i++) {
		if (strcmp(f->key, otlp_names[i].field) == 0) {
			prefix = "";
			name = otlp_names[i].name;
			break;
		}
	}
	switch (f->type) {
	case JSON_STRING:
		otlp_attr_str(w, prefix, name, f->str, f->len);
		break;
	case JSON_INT:
		otlp_attr_int(w, prefix, name, f->num);
		break;
	case JSON_BOOL:
		otlp_attr_open(w, prefix, name);
		json_put_bool(w, "boolValue", (int)f->num);
		json_close(w);
		json_close(w);
		break;
	case JSON_NULL:
		break;
	}
}

/* Read n digits. */
static int
otlp_digits(const char *s, int n, int *v)
{
	int	i;

	*v = 0;
	for (i = 0; i < n; i++) {
		if (!isdigit((unsigned char)s[i]))
			return (-1);
		*v = *v * 10 + (s[i] - '0');
	}
	return (0);
}

/* Count the days from 1970-01-01 to a date (proleptic Gregorian). */
static long long
otlp_days(int y, int m, int d)
{
	long long	era, yoe, doy, doe;

	y -= m <= 2;
	era = y / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return (era * 146097 + doe - 719468);
}

/*
 * Convert "YYYY-MM-DDTHH:MM:SS.mmmZ" (the milliseconds optional) to
 * nanoseconds since the epoch, written as digits.  0, or -1.
 */
int
otlp_time(const char *ts, char *out, size_t outlen)
{
	int		 y, mo, d, h, mi, s, ms = 0;
	long long	 secs;
	size_t		 len = strlen(ts);

	if ((len != 20 && len != 24) || ts[4] != '-' || ts[7] != '-' ||
	    ts[10] != 'T' || ts[13] != ':' || ts[16] != ':' ||
	    ts[len - 1] != 'Z')
		return (-1);
	if (otlp_digits(ts, 4, &y) == -1 || otlp_digits(ts + 5, 2, &mo) == -1 ||
	    otlp_digits(ts + 8, 2, &d) == -1 ||
	    otlp_digits(ts + 11, 2, &h) == -1 ||
	    otlp_digits(ts + 14, 2, &mi) == -1 ||
	    otlp_digits(ts + 17, 2, &s) == -1)
		return (-1);
	if (len == 24 && (ts[19] != '.' || otlp_digits(ts + 20, 3, &ms) == -1))
		return (-1);
	if (y < 1970 || y > 2261 || mo < 1 || mo > 12 || d < 1 || d > 31 ||
	    h > 23 || mi > 59 || s > 60)
		return (-1);	/* 2262 would not fit in int64 nanoseconds */
	secs = otlp_days(y, mo, d) * 86400 + h * 3600 + mi * 60 + s;
	if (snprintf(out, outlen, "%lld", secs * 1000000000LL +
	    ms * 1000000LL) >= (int)outlen)
		return (-1);
	return (0);
}

/* Open a request: the resource, the scope, then the records' array. */
void
otlp_batch_begin(struct json_writer *w, const struct otlp_resource *res)
{
	json_open(w);
	json_open_array(w, "resourceLogs");
	json_open_elem(w);
	json_open_member(w, "resource");
	json_open_array(w, "attributes");
	otlp_attr_str(w, "", "service.name", "pinhole", 7);
	if (res->version != NULL)
		otlp_attr_str(w, "", "service.version", res->version,
		    strlen(res->version));
	if (res->host != NULL)
		otlp_attr_str(w, "", "host.name", res->host,
		    strlen(res->host));
	json_close_array(w);
	json_close(w);
	json_open_array(w, "scopeLogs");
	json_open_elem(w);
	json_open_member(w, "scope");
	json_put_str(w, "name", "pinhole");
	if (res->version != NULL)
		json_put_str(w, "version", res->version);
	json_close(w);
	json_open_array(w, "logRecords");
}

/* Close a request. */
void
otlp_batch_end(struct json_writer *w)
{
	json_close_array(w);	/* logRecords */
	json_close(w);		/* the scope's */
	json_close_array(w);	/* scopeLogs */
	json_close(w);		/* the resource's */
	json_close_array(w);	/* resourceLogs */
	json_close(w);
}

/* Give the severity: WARN for a denial and for lost lines, else INFO. */
static int
otlp_severity(const struct audit_rec *rec)
{
	const char	*v = audit_rec_str(rec, "verdict");
	const char	*e = audit_rec_str(rec, "event");

	if ((v != NULL && strcmp(v, "deny") == 0) ||
	    (e != NULL && strcmp(e, "loss") == 0))
		return (OTLP_SEV_WARN);
	return (OTLP_SEV_INFO);
}

/* Write one audit line as a LogRecord. */
int
otlp_record(struct json_writer *w, const char *line, size_t len, char *store,
    size_t storelen)
{
	struct audit_rec	 rec;
	const char		*ts;
	char			 nanos[32];
	int			 ok, sev = OTLP_SEV_INFO;
	size_t			 i;

	if (len > 0 && line[len - 1] == '\n')
		len--;
	ok = audit_rec_parse(line, len, store, storelen, &rec) == 0;
	json_open_elem(w);
	if (ok && (ts = audit_rec_str(&rec, "ts")) != NULL &&
	    otlp_time(ts, nanos, sizeof nanos) == 0)
		json_put_str(w, "timeUnixNano", nanos);
	if (ok)
		sev = otlp_severity(&rec);
	json_put_int(w, "severityNumber", sev);
	json_put_str(w, "severityText", sev == OTLP_SEV_WARN ? "WARN" : "INFO");
	json_open_member(w, "body");
	otlp_string_value(w, line, len);
	json_close(w);
	if (ok) {
		json_open_array(w, "attributes");
		for (i = 0; i < rec.n; i++)
			otlp_attr(w, &rec.f[i]);
		json_close_array(w);
	}
	json_close(w);
	return (ok ? 0 : -1);
}

/* Find the end of a head: the offset after CRLF CRLF, or 0. */
static size_t
otlp_head_end(const char *p, size_t len)
{
	size_t	i;

	for (i = 0; i + 3 < len; i++)
		if (memcmp(p + i, "\r\n\r\n", 4) == 0)
			return (i + 4);
	return (0);
}

/* Read a decimal number of at most max; -1 when it is not one. */
static long long
otlp_number(const char *v, size_t len, long long max)
{
	long long	n = 0;
	size_t		i;

	if (len == 0 || len > 19)
		return (-1);
	for (i = 0; i < len; i++) {
		if (!isdigit((unsigned char)v[i]))
			return (-1);
		n = n * 10 + (v[i] - '0');
		if (n > max)
			return (-1);
	}
	return (n);
}

/* Tell whether a header value is a word, case aside. */
static int
otlp_is(const char *v, size_t len, const char *word)
{
	return (strlen(word) == len && strncasecmp(v, word, len) == 0);
}

/* Take one header line: NAME ":" OWS VALUE OWS.  0, or -1. */
static int
otlp_header(const char *p, size_t len, struct otlp_resp *r)
{
	const char	*colon, *v;
	size_t		 nlen, vlen, i;
	long long	 n;

	if ((colon = memchr(p, ':', len)) == NULL || colon == p)
		return (-1);
	nlen = colon - p;
	for (i = 0; i < nlen; i++)
		if (!isalnum((unsigned char)p[i]) && strchr("!#$%&'*+-.^_`|~",
		    p[i]) == NULL)
			return (-1);
	for (i = 0; i < len; i++)
		if ((unsigned char)p[i] < 0x20 && p[i] != '\t')
			return (-1);
	v = colon + 1;
	vlen = len - nlen - 1;
	while (vlen > 0 && (*v == ' ' || *v == '\t')) {
		v++;
		vlen--;
	}
	while (vlen > 0 && (v[vlen - 1] == ' ' || v[vlen - 1] == '\t'))
		vlen--;
	if (otlp_is(p, nlen, "content-length")) {
		if ((n = otlp_number(v, vlen, OTLP_BODY_MAX)) == -1 ||
		    (r->length != -1 && r->length != n))
			return (-1);
		r->length = n;
	} else if (otlp_is(p, nlen, "transfer-encoding")) {
		if (!otlp_is(v, vlen, "chunked"))
			return (-1);
		r->chunked = 1;
	} else if (otlp_is(p, nlen, "connection")) {
		if (otlp_is(v, vlen, "close"))
			r->close = 1;
	} else if (otlp_is(p, nlen, "retry-after")) {
		n = otlp_number(v, vlen, 999999999);
		if (n != -1)
			r->retry_after = n > OTLP_RETRY_AFTER_MAX ?
			    OTLP_RETRY_AFTER_MAX : (int)n;
	}
	return (0);
}

/* Read the status line: HTTP/1.x SP DDD [SP reason].  0, or -1. */
static int
otlp_status(const char *p, size_t len, struct otlp_resp *r)
{
	size_t	i;

	if (len < 12 || memcmp(p, "HTTP/1.", 7) != 0 ||
	    (p[7] != '0' && p[7] != '1') || p[8] != ' ' ||
	    (len > 12 && p[12] != ' '))
		return (-1);
	if (p[7] == '0')
		r->close = 1;
	if (otlp_digits(p + 9, 3, &r->status) == -1 || r->status < 200)
		return (-1);	/* no 1xx: nothing asked for one */
	for (i = 12; i < len; i++)
		if ((unsigned char)p[i] < 0x20 && p[i] != '\t')
			return (-1);
	return (0);
}

/* Read a response's head. */
ssize_t
otlp_resp_parse(const char *buf, size_t len, struct otlp_resp *r)
{
	size_t		 end, off, eol;
	const char	*nl;

	memset(r, 0, sizeof *r);
	r->length = -1;
	r->retry_after = -1;
	if (len > OTLP_HEAD_MAX)
		len = OTLP_HEAD_MAX;
	if ((end = otlp_head_end(buf, len)) == 0)
		return (len == OTLP_HEAD_MAX ? -1 : 0);
	for (off = 0; off < end - 2; off = eol + 2) {
		nl = memchr(buf + off, '\n', end - off);	/* found: end */
		if (nl == buf + off || nl[-1] != '\r')
			return (-1);	/* a bare LF */
		eol = nl - 1 - buf;
		if (off == 0 ? otlp_status(buf, eol, r) :
		    otlp_header(buf + off, eol - off, r))
			return (-1);
	}
	if (r->chunked && r->length != -1)
		return (-1);
	return ((ssize_t)end);
}

/* Read the rejected count of a partialSuccess object. */
static long long
otlp_partial(const struct json_member *ps, char *msg, size_t msglen)
{
	struct json_member	 m[8];
	char			 store[OTLP_BODY_MAX];
	struct json_reader	 r = { .m = m, .max = 8, .store = store,
				    .size = sizeof store, .full_range = 1,
				    .nested = 1 };
	const struct json_member *f;
	const char		*err;
	size_t			 n, i;
	long long		 v = 0;

	if (ps->type != JSON_NULL || ps->nested != '{' ||
	    json_read(&r, ps->raw, ps->rawlen, &n, &err) == -1)
		return (-1);
	if ((f = json_find(m, n, "rejectedLogRecords")) != NULL) {
		if (f->type == JSON_INT)
			v = f->num;
		else if (f->type == JSON_STRING)
			v = otlp_number(f->str, f->len, INT64_MAX / 10);
		else
			v = -1;
		if (v < 0)
			return (-1);
	}
	if ((f = json_find(m, n, "errorMessage")) != NULL &&
	    f->type == JSON_STRING && msglen > 0) {
		for (i = 0; i < f->rawlen && i < msglen - 1; i++)
			msg[i] = f->raw[i] >= ' ' && f->raw[i] < 0x7f ?
			    f->raw[i] : '?';
		msg[i] = '\0';
	}
	return (v);
}

/* Read an ExportLogsServiceResponse. */
long long
otlp_resp_rejected(const char *body, size_t len, char *msg, size_t msglen)
{
	struct json_member	 m[8];
	char			 store[OTLP_BODY_MAX];
	struct json_reader	 r = { .m = m, .max = 8, .store = store,
				    .size = sizeof store, .full_range = 1,
				    .nested = 1 };
	const struct json_member *ps;
	const char		*err;
	size_t			 n;

	if (msglen > 0)
		msg[0] = '\0';
	if (len == 0)
		return (0);
	if (len > OTLP_BODY_MAX || json_read(&r, body, len, &n, &err) == -1)
		return (-1);
	if ((ps = json_find(m, n, "partialSuccess")) == NULL)
		return (0);
	return (otlp_partial(ps, msg, msglen));
}
