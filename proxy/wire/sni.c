/*
 * Protocol sniffers: the server name in a TLS ClientHello or in an
 * HTTP/1.x request head.  Pure; every read of TLS goes through a
 * length-checked reader.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "proxy/wire/sni.h"

#define TLS_RECORD_HEADER	5
#define TLS_RECORD_MAX		16384	/* plaintext record payload */
#define TLS_HANDSHAKE_HEADER	4
#define TLS_CT_HANDSHAKE	22
#define TLS_HT_CLIENT_HELLO	1
#define TLS_EXT_SERVER_NAME	0
#define TLS_EXT_ECH		0xfe0d
#define TLS_SNI_HOST_NAME	0
#define HTTP_METHOD_MAX		20

/* A length-checked reader over bytes. */
struct sni_buf {
	const uint8_t	*p;
	size_t		 len;
};

/* Where the ClientHello lies in the handshake records read so far. */
struct sni_hs {
	size_t		 total;		/* message length with header; 0 unknown */
	size_t		 got;		/* handshake bytes in complete records */
	size_t		 end;		/* input offset after the last record */
	size_t		 records;
	uint8_t		 head[TLS_HANDSHAKE_HEADER];
};

static const char *sni_status_names[] = {
	"need-more", "other", "no-name", "name", "error"
};

/* Take n bytes from b, pointing *out at them. */
static int
sni_buf_take(struct sni_buf *b, size_t n, const uint8_t **out)
{
	if (b->len < n)
		return (-1);
	if (out != NULL)
		*out = b->p;
	b->p += n;
	b->len -= n;
	return (0);
}

/* Read a big-endian unsigned integer of n bytes (1 to 3). */
static int
sni_buf_uint(struct sni_buf *b, size_t n, size_t *v)
{
	const uint8_t	*p;
	size_t		 i;

	if (sni_buf_take(b, n, &p) == -1)
		return (-1);
	for (*v = 0, i = 0; i < n; i++)
		*v = (*v << 8) | p[i];
	return (0);
}

/* Read a vector with an n-byte length prefix into sub. */
static int
sni_buf_vec(struct sni_buf *b, size_t n, struct sni_buf *sub)
{
	const uint8_t	*p;
	size_t		 len;

	if (sni_buf_uint(b, n, &len) == -1 || sni_buf_take(b, len, &p) == -1)
		return (-1);
	sub->p = p;
	sub->len = len;
	return (0);
}

/* Answer that more input is needed, unless that is more than we take. */
static enum sni_status
sni_more(struct sni_result *r, size_t need)
{
	if (need > SNI_PEEK_MAX) {
		r->error = "too large";
		return (SNI_ERROR);
	}
	r->need = need;
	return (SNI_NEED_MORE);
}

/* Answer that the input is malformed. */
static enum sni_status
sni_fail(struct sni_result *r, const char *why)
{
	r->name[0] = '\0';
	r->iplit = 0;
	r->port = 0;
	r->error = why;
	return (SNI_ERROR);
}

/* Is c a letter or a digit? */
static int
sni_is_alnum(uint8_t c)
{
	return ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9'));
}

/* Is c a hexadecimal digit? */
static int
sni_is_hex(uint8_t c)
{
	return ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
	    (c >= 'A' && c <= 'F'));
}

/* Lowercase an ASCII letter. */
static char
sni_lower(uint8_t c)
{
	return (c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
}

/* Is this (lowercase) label a number, as an IPv4 spelling ends with? */
static int
sni_label_numeric(const char *s)
{
	int	hex = 0;

	if (s[0] == '0' && s[1] == 'x') {
		hex = 1;
		s += 2;
	}
	for (; *s != '\0'; s++) {
		if (hex ? !sni_is_hex(*s) : !(*s >= '0' && *s <= '9'))
			return (0);
	}
	return (1);
}

/* Set r->name from a host name: checked, lowercased, no trailing dot. */
static int
sni_name_set(struct sni_result *r, const uint8_t *p, size_t n)
{
	size_t	i, label = 0, last = 0;

	if (n > 0 && p[n - 1] == '.')
		n--;
	if (n == 0 || n > SNI_NAME_MAX)
		return (-1);
	for (i = 0; i < n; i++) {
		if (p[i] == '.') {
			if (label == 0)
				return (-1);
			label = 0;
			last = i + 1;
		} else if ((!sni_is_alnum(p[i]) && p[i] != '-') || ++label > 63)
			return (-1);
		r->name[i] = sni_lower(p[i]);
	}
	if (label == 0)
		return (-1);
	r->name[n] = '\0';
	r->iplit = sni_label_numeric(r->name + last);
	return (0);
}

/* Set r->name from a bracketed IPv6 literal, as written but lowercase. */
static int
sni_name_set_v6(struct sni_result *r, const uint8_t *p, size_t n)
{
	size_t	i;

	if (n < 4 || n > 47 || p[0] != '[' || p[n - 1] != ']')
		return (-1);
	for (i = 0; i < n; i++) {
		if (i > 0 && i < n - 1 && !sni_is_hex(p[i]) && p[i] != ':' &&
		    p[i] != '.')
			return (-1);
		r->name[i] = sni_lower(p[i]);
	}
	r->name[n] = '\0';
	r->iplit = 1;
	return (0);
}

/* Could the bytes we have begin a TLS handshake record? */
static int
sni_tls_looks(const uint8_t *buf, size_t len)
{
	if (len >= 1 && buf[0] != TLS_CT_HANDSHAKE)
		return (0);
	if (len >= 2 && buf[1] != 3)
		return (0);
	if (len >= 3 && buf[2] > 4)
		return (0);
	return (1);
}

/*
 * Recognise an SSLv2-compatible ClientHello by its first five bytes:
 * 2-byte length with the top bit set, CLIENT-HELLO, version 2.0 or 3.x.
 * It has no extensions, so it names no server.
 */
static enum sni_status
sni_tls_sslv2(const uint8_t *buf, size_t len, struct sni_result *r)
{
	if (len >= 2 && (((buf[0] & 0x7f) << 8) | buf[1]) < 9)
		return (SNI_OTHER);
	if (len >= 3 && buf[2] != TLS_HT_CLIENT_HELLO)
		return (SNI_OTHER);
	if (len >= 4 && buf[3] != 0 && buf[3] != 3)
		return (SNI_OTHER);
	if (len >= 5 && buf[3] == 0 && buf[4] != 2)
		return (SNI_OTHER);
	if (len < 5)
		return (sni_more(r, len + 1));
	r->sslv2 = 1;
	r->used = 5;
	return (SNI_NO_NAME);
}

/* Note the handshake header once its four bytes are in. */
static int
sni_tls_head(struct sni_hs *hs, const uint8_t *frag, size_t n,
    struct sni_result *r)
{
	size_t	i;

	for (i = 0; i < n && hs->got + i < TLS_HANDSHAKE_HEADER; i++)
		hs->head[hs->got + i] = frag[i];
	if (hs->total != 0 || hs->got + n < TLS_HANDSHAKE_HEADER)
		return (0);
	if (hs->head[0] != TLS_HT_CLIENT_HELLO) {
		sni_fail(r, "first handshake message is not a ClientHello");
		return (-1);
	}
	hs->total = TLS_HANDSHAKE_HEADER +
	    ((hs->head[1] << 16) | (hs->head[2] << 8) | hs->head[3]);
	if (hs->total > SNI_HELLO_MAX) {
		sni_fail(r, "ClientHello too large");
		return (-1);
	}
	return (0);
}

/*
 * Read one more complete handshake record.  Returns 0 when one was read,
 * or -1 with *st the answer (need more input, or an error).
 */
static int
sni_tls_record(struct sni_buf *b, struct sni_hs *hs, struct sni_result *r,
    enum sni_status *st)
{
	const uint8_t	*frag;
	size_t		 type, version, n, need;

	*st = SNI_ERROR;
	if (b->len < TLS_RECORD_HEADER) {
		*st = sni_more(r, hs->end + TLS_RECORD_HEADER);
		return (-1);
	}
	sni_buf_uint(b, 1, &type);
	sni_buf_uint(b, 2, &version);
	sni_buf_uint(b, 2, &n);
	if (type != TLS_CT_HANDSHAKE || version >> 8 != 3)
		sni_fail(r, "ClientHello interrupted by another record");
	else if (n == 0 || n > TLS_RECORD_MAX)
		sni_fail(r, "bad record length");
	else if (hs->total != 0 && n > hs->total - hs->got)
		sni_fail(r, "handshake data after the ClientHello");
	else if ((need = hs->end + TLS_RECORD_HEADER + n) > SNI_PEEK_MAX)
		sni_fail(r, "ClientHello in too many records");
	else if (sni_buf_take(b, n, &frag) == -1)
		*st = sni_more(r, need);
	else if (sni_tls_head(hs, frag, n, r) == 0) {
		hs->got += n;
		hs->end = need;
		hs->records++;
		if (hs->total == 0 || hs->got <= hs->total)
			return (0);
		sni_fail(r, "handshake data after the ClientHello");
	}
	return (-1);
}

/* Copy the handshake fragments of the records walked into msg. */
static size_t
sni_tls_gather(const uint8_t *buf, const struct sni_hs *hs, uint8_t *msg)
{
	struct sni_buf	 b = { buf, hs->end };
	const uint8_t	*frag;
	size_t		 got = 0, n;

	while (sni_buf_take(&b, 3, NULL) == 0 && sni_buf_uint(&b, 2, &n) == 0 &&
	    sni_buf_take(&b, n, &frag) == 0 && got + n <= hs->total) {
		memcpy(msg + got, frag, n);
		got += n;
	}
	return (got);
}

/* Take the one host_name from a server_name extension. */
static enum sni_status
sni_tls_server_name(struct sni_buf *ext, struct sni_result *r)
{
	struct sni_buf	list, name, host = { NULL, 0 };
	size_t		type;
	int		found = 0;

	if (sni_buf_vec(ext, 2, &list) == -1 || ext->len != 0 || list.len == 0)
		return (sni_fail(r, "bad server_name list"));
	while (list.len > 0) {
		if (sni_buf_uint(&list, 1, &type) == -1 ||
		    sni_buf_vec(&list, 2, &name) == -1 || name.len == 0)
			return (sni_fail(r, "bad server_name entry"));
		if (type != TLS_SNI_HOST_NAME)
			continue;
		if (found++)
			return (sni_fail(r, "more than one host_name"));
		host = name;
	}
	if (!found)
		return (SNI_NO_NAME);
	if (sni_name_set(r, host.p, host.len) == -1)
		return (sni_fail(r, "server_name is not a host name"));
	return (SNI_NAME);
}

/* Walk the extensions: server_name at most once; note ECH. */
static enum sni_status
sni_tls_extensions(struct sni_buf *b, struct sni_result *r)
{
	struct sni_buf	data, sni = { NULL, 0 };
	size_t		type;
	int		seen = 0;

	while (b->len > 0) {
		if (sni_buf_uint(b, 2, &type) == -1 ||
		    sni_buf_vec(b, 2, &data) == -1)
			return (sni_fail(r, "bad extension length"));
		if (type == TLS_EXT_ECH)
			r->ech = 1;
		if (type == TLS_EXT_SERVER_NAME) {
			if (seen++)
				return (sni_fail(r, "duplicate server_name"));
			sni = data;
		}
	}
	if (!seen)
		return (SNI_NO_NAME);
	return (sni_tls_server_name(&sni, r));
}

/* Parse a ClientHello body (after the handshake header). */
static enum sni_status
sni_tls_hello(struct sni_buf *b, struct sni_result *r)
{
	struct sni_buf	v, exts;
	size_t		version;

	if (sni_buf_uint(b, 2, &version) == -1 || version >> 8 != 3 ||
	    sni_buf_take(b, 32, NULL) == -1)
		return (sni_fail(r, "bad ClientHello version or random"));
	if (sni_buf_vec(b, 1, &v) == -1 || v.len > 32)
		return (sni_fail(r, "bad session id"));
	if (sni_buf_vec(b, 2, &v) == -1 || v.len < 2 || v.len % 2 != 0)
		return (sni_fail(r, "bad cipher suites"));
	if (sni_buf_vec(b, 1, &v) == -1 || v.len < 1)
		return (sni_fail(r, "bad compression methods"));
	if (b->len == 0)
		return (SNI_NO_NAME);		/* no extensions at all */
	if (sni_buf_vec(b, 2, &exts) == -1 || b->len != 0)
		return (sni_fail(r, "bad extensions length"));
	return (sni_tls_extensions(&exts, r));
}

/* Parse a ClientHello from the first bytes of a connection. */
enum sni_status
sni_tls_parse(const uint8_t *buf, size_t len, struct sni_result *r)
{
	struct sni_hs	 hs;
	struct sni_buf	 b = { buf, len };
	uint8_t		*msg = NULL;
	enum sni_status	 st;

	memset(r, 0, sizeof *r);
	if (len > 0 && (buf[0] & 0x80))
		return (sni_tls_sslv2(buf, len, r));
	if (!sni_tls_looks(buf, len))
		return (SNI_OTHER);
	if (len < 3)
		return (sni_more(r, len + 1));	/* the next byte may decide */
	memset(&hs, 0, sizeof hs);
	while (hs.total == 0 || hs.got < hs.total) {
		if (sni_tls_record(&b, &hs, r, &st) == -1)
			return (st);
	}
	if (hs.records == 1)
		b = (struct sni_buf){ buf + TLS_RECORD_HEADER, hs.total };
	else {
		if ((msg = malloc(hs.total)) == NULL)
			return (sni_fail(r, "out of memory"));
		b = (struct sni_buf){ msg, sni_tls_gather(buf, &hs, msg) };
	}
	sni_buf_take(&b, TLS_HANDSHAKE_HEADER, NULL);
	if ((st = sni_tls_hello(&b, r)) != SNI_ERROR)
		r->used = hs.end;
	free(msg);
	return (st);
}

/* Is c in an HTTP method?  (Stricter than a token, to decide early.) */
static int
sni_is_method(uint8_t c)
{
	return ((c >= 'A' && c <= 'Z') || c == '-' || c == '_');
}

/* Is c an HTTP token character? */
static int
sni_is_tchar(uint8_t c)
{
	return (sni_is_alnum(c) ||
	    (c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL));
}

/*
 * Check the request line "METHOD SP TARGET SP HTTP/1.x CRLF" in what we
 * have.  Returns -1 if it cannot be one, 0 if it may be but is not all
 * here, 1 with *end past its CRLF and *minor the x.
 */
static int
sni_http_request_line(const uint8_t *buf, size_t len, size_t *end, int *minor)
{
	static const char	 version[] = "HTTP/1.";
	size_t			 i = 0, n;

	for (n = 0; i < len && buf[i] != ' '; i++, n++) {
		if (!sni_is_method(buf[i]) || n == HTTP_METHOD_MAX)
			return (-1);
	}
	if (i == len)
		return (0);
	if (n == 0)
		return (-1);
	for (i++, n = 0; i < len && buf[i] != ' '; i++, n++) {
		if (buf[i] <= ' ' || buf[i] >= 0x7f)
			return (-1);
	}
	if (i == len)
		return (0);
	if (n == 0)
		return (-1);
	for (i++, n = 0; n < sizeof version - 1; i++, n++) {
		if (i == len)
			return (0);
		if (buf[i] != version[n])
			return (-1);
	}
	if (i == len)
		return (0);
	if (!(buf[i] >= '0' && buf[i] <= '9'))
		return (-1);
	if (i + 1 == len)
		return (0);
	if (buf[i + 1] != '\r')
		return (-1);
	if (i + 2 == len)
		return (0);
	if (buf[i + 2] != '\n')
		return (-1);
	*minor = buf[i] - '0';
	*end = i + 3;
	return (1);
}

/* Read an optional ":PORT" after the host. */
static int
sni_http_port(const uint8_t *p, size_t n, uint16_t *port)
{
	size_t	i, v = 0;

	*port = 0;
	if (n == 0)
		return (0);
	if (p[0] != ':' || n > 6)
		return (-1);
	for (i = 1; i < n; i++) {
		if (!(p[i] >= '0' && p[i] <= '9'))
			return (-1);
		v = v * 10 + (p[i] - '0');
	}
	if (v > 65535)
		return (-1);
	*port = v;
	return (0);
}

/* Set r->name and r->port from a Host value: host, [v6], then :port. */
static int
sni_http_host(const uint8_t *p, size_t n, struct sni_result *r)
{
	const uint8_t	*stop;
	size_t		 hlen;

	if (p[0] == '[') {
		if ((stop = memchr(p, ']', n)) == NULL)
			return (-1);
		hlen = stop - p + 1;
	} else {
		stop = memchr(p, ':', n);
		hlen = stop != NULL ? (size_t)(stop - p) : n;
	}
	if (sni_http_port(p + hlen, n - hlen, &r->port) == -1)
		return (-1);
	if (p[0] == '[')
		return (sni_name_set_v6(r, p, hlen));
	return (sni_name_set(r, p, hlen));
}

/*
 * Check one header line (without its CRLF); if it is Host, count it and
 * keep its value without surrounding whitespace.
 */
static int
sni_http_header(const uint8_t *p, size_t n, const uint8_t **host,
    size_t *hostlen, int *hosts)
{
	size_t	i, j;

	for (i = 0; i < n && sni_is_tchar(p[i]); i++)
		;
	if (i == 0 || i == n || p[i] != ':')
		return (-1);		/* also a folded line, starting with SP */
	for (j = i + 1; j < n; j++) {
		if ((p[j] < ' ' && p[j] != '\t') || p[j] == 0x7f)
			return (-1);
	}
	if (i != 4 || strncasecmp((const char *)p, "host", 4) != 0)
		return (0);
	for (i++; i < n && (p[i] == ' ' || p[i] == '\t'); i++)
		;
	while (n > i && (p[n - 1] == ' ' || p[n - 1] == '\t'))
		n--;
	*host = p + i;
	*hostlen = n - i;
	(*hosts)++;
	return (0);
}

/* Read the header lines (each ending CRLF) and decide on Host. */
static enum sni_status
sni_http_headers(const uint8_t *p, size_t n, int minor, struct sni_result *r)
{
	const uint8_t	*eol, *host = NULL;
	size_t		 hostlen = 0;
	int		 hosts = 0;

	while (n > 0) {
		if ((eol = memchr(p, '\n', n)) == NULL || eol == p ||
		    eol[-1] != '\r' ||
		    sni_http_header(p, eol - 1 - p, &host, &hostlen, &hosts) == -1)
			return (sni_fail(r, "bad header line"));
		n -= eol + 1 - p;
		p = eol + 1;
	}
	if (hosts > 1)
		return (sni_fail(r, "more than one Host header"));
	if (hosts == 0 && minor > 0)
		return (sni_fail(r, "HTTP/1.1 request without Host"));
	if (hostlen == 0)
		return (SNI_NO_NAME);
	if (sni_http_host(host, hostlen, r) == -1)
		return (sni_fail(r, "bad Host header"));
	return (SNI_NAME);
}

/* Parse an HTTP/1.x request head from the first bytes. */
enum sni_status
sni_http_parse(const uint8_t *buf, size_t len, struct sni_result *r)
{
	const uint8_t	*end;
	size_t		 n, line;
	int		 minor, rv;
	enum sni_status	 st;

	memset(r, 0, sizeof *r);
	n = len < SNI_HTTP_MAX ? len : SNI_HTTP_MAX;
	if ((rv = sni_http_request_line(buf, n, &line, &minor)) == -1)
		return (SNI_OTHER);
	end = NULL;
	if (rv == 1)
		end = memmem(buf + line - 2, n - (line - 2), "\r\n\r\n", 4);
	if (end == NULL) {
		if (n == SNI_HTTP_MAX)
			return (sni_fail(r, "request head too large"));
		return (sni_more(r, len + 1));
	}
	st = sni_http_headers(buf + line, end + 2 - (buf + line), minor, r);
	if (st != SNI_ERROR)
		r->used = end + 4 - buf;
	return (st);
}

/* Classify the first bytes as TLS or HTTP, and parse them as that. */
enum sni_status
sni_sniff(const uint8_t *buf, size_t len, struct sni_result *r)
{
	enum sni_status	st;
	enum sni_proto	proto;

	if (len == 0) {
		memset(r, 0, sizeof *r);
		r->need = 1;
		return (SNI_NEED_MORE);
	}
	if (buf[0] == TLS_CT_HANDSHAKE || (buf[0] & 0x80)) {
		proto = SNI_PROTO_TLS;
		st = sni_tls_parse(buf, len, r);
	} else if (buf[0] >= 'A' && buf[0] <= 'Z') {
		proto = SNI_PROTO_HTTP;
		st = sni_http_parse(buf, len, r);
	} else {
		memset(r, 0, sizeof *r);
		return (SNI_OTHER);
	}
	if (st != SNI_OTHER)
		r->proto = proto;
	return (st);
}

/* Name a status for logs and tests. */
const char *
sni_status_name(enum sni_status st)
{
	if ((size_t)st >= sizeof sni_status_names / sizeof *sni_status_names)
		return ("unknown");
	return (sni_status_names[st]);
}
