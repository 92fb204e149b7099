/*
 * DNS messages: a parser and a builder of our own.  Pure: no I/O, no
 * globals.  Every read checks its length through struct dns_buf.
 */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "proxy/wire/dnsmsg.h"

/* A bounded writer; once it overflows, every later write is refused. */
struct dns_wbuf {
	uint8_t	*data;
	size_t	 cap;
	size_t	 len;
	int	 overflow;
};

/* Start reading len bytes. */
void
dns_buf_init(struct dns_buf *b, const uint8_t *data, size_t len)
{
	b->data = data;
	b->len = len;
	b->off = 0;
}

/* Read one byte. */
int
dns_buf_u8(struct dns_buf *b, uint8_t *v)
{
	if (b->off >= b->len || b->len - b->off < 1)
		return (-1);
	*v = b->data[b->off++];
	return (0);
}

/* Read a 16-bit big-endian number. */
int
dns_buf_u16(struct dns_buf *b, uint16_t *v)
{
	if (b->off > b->len || b->len - b->off < 2)
		return (-1);
	*v = (uint16_t)(b->data[b->off] << 8 | b->data[b->off + 1]);
	b->off += 2;
	return (0);
}

/* Read a 32-bit big-endian number. */
int
dns_buf_u32(struct dns_buf *b, uint32_t *v)
{
	const uint8_t	*p;

	if (b->off > b->len || b->len - b->off < 4)
		return (-1);
	p = b->data + b->off;
	*v = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | p[3];
	b->off += 4;
	return (0);
}

/* Skip n bytes. */
int
dns_buf_skip(struct dns_buf *b, size_t n)
{
	if (b->off > b->len || b->len - b->off < n)
		return (-1);
	b->off += n;
	return (0);
}

/* Follow one compression pointer at off; checks it points backwards. */
static int
dns_name_jump(const struct dns_buf *b, size_t off, size_t seg, size_t *to,
    const char **errstr)
{
	size_t	ptr;

	if (b->len - off < 2) {
		*errstr = "name runs past the end";
		return (-1);
	}
	ptr = (size_t)(b->data[off] & 0x3f) << 8 | b->data[off + 1];
	if (ptr < DNS_HEADER_LEN) {
		*errstr = "pointer into the header";
		return (-1);
	}
	if (ptr >= seg) {
		*errstr = "pointer does not point backwards";
		return (-1);
	}
	*to = ptr;
	return (0);
}

/* Read a name: see dns.h. */
int
dns_name_read(struct dns_buf *b, uint8_t *wire, int *compressed,
    const char **errstr)
{
	size_t	off = b->off, seg = b->off, end = 0, n = 0, c;
	int	hops = 0;

	*compressed = 0;
	for (;;) {
		if (off >= b->len) {
			*errstr = "name runs past the end";
			return (-1);
		}
		c = b->data[off];
		if ((c & 0xc0) == 0xc0) {
			if (++hops > DNS_PTR_HOPS) {
				*errstr = "too many compression pointers";
				return (-1);
			}
			if (dns_name_jump(b, off, seg, &seg, errstr) == -1)
				return (-1);
			if (!*compressed)
				end = off + 2;
			*compressed = 1;
			off = seg;
			continue;
		}
		if (c > DNS_LABEL_MAX) {
			*errstr = "bad label type";
			return (-1);
		}
		if (n + 1 + c > DNS_NAME_MAX) {
			*errstr = "name too long";
			return (-1);
		}
		if (b->len - off < 1 + c) {
			*errstr = "name runs past the end";
			return (-1);
		}
		memcpy(wire + n, b->data + off, 1 + c);
		n += 1 + c;
		off += 1 + c;
		if (c == 0)
			break;
	}
	b->off = *compressed ? end : off;
	return ((int)n);
}

/* Append one label byte in presentation form. */
static size_t
dns_text_byte(uint8_t ch, char *out, size_t pos, size_t size)
{
	if (ch == '.' || ch == '\\') {
		if (pos + 2 < size) {
			out[pos++] = '\\';
			out[pos++] = (char)ch;
		}
	} else if (ch > 0x20 && ch < 0x7f) {
		if (pos + 1 < size)
			out[pos++] = (char)ch;
	} else if (pos + 4 < size) {
		snprintf(out + pos, 5, "\\%03u", ch);
		pos += 4;
	}
	return (pos);
}

/* Write a wire-form name in presentation form. */
void
dns_name_text(const uint8_t *wire, size_t len, char *out, size_t size)
{
	size_t	i = 0, j, pos = 0, c;

	if (size == 0)
		return;
	while (i < len && (c = wire[i]) != 0 && i + 1 + c <= len) {
		if (pos != 0 && pos + 1 < size)
			out[pos++] = '.';
		for (j = 0; j < c; j++)
			pos = dns_text_byte(wire[i + 1 + j], out, pos, size);
		i += 1 + c;
	}
	if (pos == 0 && size > 1)
		out[pos++] = '.';
	out[pos] = '\0';
}

/* Write a plain dotted name in wire form. */
int
dns_name_wire(const char *text, uint8_t *wire)
{
	size_t		 n = 0, len;
	const char	*dot;

	while (*text != '\0') {
		dot = strchr(text, '.');
		len = dot != NULL ? (size_t)(dot - text) : strlen(text);
		if (len == 0 || len > DNS_LABEL_MAX ||
		    n + 1 + len + 1 > DNS_NAME_MAX)
			return (-1);
		wire[n++] = (uint8_t)len;
		memcpy(wire + n, text, len);
		n += len;
		text += len;
		if (*text == '.')
			text++;
	}
	wire[n++] = 0;
	return ((int)n);
}

/* Compare two wire-form names ignoring ASCII case. */
int
dns_name_equal(const uint8_t *a, const uint8_t *b)
{
	size_t	i = 0, j, c;

	for (;;) {
		if (a[i] != b[i])
			return (0);
		if ((c = a[i]) == 0)
			return (1);
		for (j = 1; j <= c; j++) {
			if (tolower(a[i + j]) != tolower(b[i + j]))
				return (0);
		}
		i += 1 + c;
		if (i >= DNS_NAME_MAX)
			return (0);
	}
}

/* Read the 12-byte header. */
static int
dns_header_read(struct dns_buf *b, struct dns_msg *m)
{
	if (dns_buf_u16(b, &m->id) == -1 ||
	    dns_buf_u16(b, &m->flags) == -1 ||
	    dns_buf_u16(b, &m->qdcount) == -1 ||
	    dns_buf_u16(b, &m->ancount) == -1 ||
	    dns_buf_u16(b, &m->nscount) == -1 ||
	    dns_buf_u16(b, &m->arcount) == -1)
		return (-1);
	return (0);
}

/* Read the question, keeping its bytes as sent. */
static int
dns_question_read(struct dns_buf *b, struct dns_msg *m, const char **errstr)
{
	uint8_t	name[DNS_NAME_MAX];
	int	n;

	if ((n = dns_name_read(b, name, &m->qcompressed, errstr)) == -1)
		return (-1);
	if (dns_buf_u16(b, &m->qtype) == -1 ||
	    dns_buf_u16(b, &m->qclass) == -1) {
		*errstr = "truncated question";
		return (-1);
	}
	memcpy(m->qwire, name, n);
	m->qwire[n] = m->qtype >> 8;
	m->qwire[n + 1] = m->qtype & 0xff;
	m->qwire[n + 2] = m->qclass >> 8;
	m->qwire[n + 3] = m->qclass & 0xff;
	m->qwire_len = n + 4;
	dns_name_text(name, n, m->qname, sizeof m->qname);
	m->qend = b->off;
	m->has_question = 1;
	return (0);
}

/* Read the options inside an OPT record's data. */
static int
dns_edns_options(const struct dns_buf *b, const struct dns_rr *rr,
    struct dns_edns *e, const char **errstr)
{
	struct dns_buf	o;
	uint16_t	code, len;

	dns_buf_init(&o, b->data, rr->rdoff + rr->rdlen);
	o.off = rr->rdoff;
	while (o.off < o.len) {
		if (dns_buf_u16(&o, &code) == -1 ||
		    dns_buf_u16(&o, &len) == -1 ||
		    dns_buf_skip(&o, len) == -1) {
			*errstr = "truncated EDNS option";
			return (-1);
		}
		if (e->nopts < DNS_EDNS_MAXOPTS) {
			e->opts[e->nopts].code = code;
			e->opts[e->nopts].len = len;
			e->opts[e->nopts].off = o.off - len;
		}
		e->nopts++;
	}
	return (0);
}

/* Take an OPT record (RFC 6891): once, in the additional section. */
static int
dns_edns_read(const struct dns_buf *b, struct dns_msg *m,
    const struct dns_rr *rr, const uint8_t *name, const char **errstr)
{
	struct dns_edns	*e = &m->edns;

	if (e->present) {
		*errstr = "more than one OPT record";
		return (-1);
	}
	if (name[0] != 0) {
		*errstr = "OPT record not owned by the root";
		return (-1);
	}
	e->payload = rr->class;
	e->ext_rcode = rr->ttl >> 24;
	e->version = (rr->ttl >> 16) & 0xff;
	e->flags = rr->ttl & 0xffff;
	if (dns_edns_options(b, rr, e, errstr) == -1)
		return (-1);
	e->present = 1;
	m->opt_off = rr->off;
	return (0);
}

/* Read one resource record; section 0 answer, 1 authority, 2 additional. */
static int
dns_rr_read(struct dns_buf *b, struct dns_msg *m, int section, size_t index,
    const char **errstr)
{
	struct dns_rr	rr;
	uint8_t		name[DNS_NAME_MAX];
	int		compressed;

	memset(&rr, 0, sizeof rr);
	rr.off = b->off;
	if (dns_name_read(b, name, &compressed, errstr) == -1)
		return (-1);
	if (dns_buf_u16(b, &rr.type) == -1 ||
	    dns_buf_u16(b, &rr.class) == -1 ||
	    dns_buf_u32(b, &rr.ttl) == -1 ||
	    dns_buf_u16(b, &rr.rdlen) == -1) {
		*errstr = "truncated record";
		return (-1);
	}
	rr.rdoff = b->off;
	if (dns_buf_skip(b, rr.rdlen) == -1) {
		*errstr = "truncated record data";
		return (-1);
	}
	rr.end = b->off;
	if (rr.type == DNS_T_OPT) {
		if (section != 2) {
			*errstr = "OPT record outside the additional section";
			return (-1);
		}
		m->ar_before_opt = index;
		return (dns_edns_read(b, m, &rr, name, errstr));
	}
	if (section == 0 && m->nans < DNS_MSG_MAXANS)
		m->ans[m->nans++] = rr;
	return (0);
}

/* Read the three record sections. */
static int
dns_sections_read(struct dns_buf *b, struct dns_msg *m, const char **errstr)
{
	uint16_t	count[3];
	size_t		i;
	int		s;

	count[0] = m->ancount;
	count[1] = m->nscount;
	count[2] = m->arcount;
	for (s = 0; s < 3; s++) {
		for (i = 0; i < count[s]; i++) {
			if (dns_rr_read(b, m, s, i, errstr) == -1)
				return (-1);
		}
	}
	return (0);
}

/* Parse a whole message: see dns.h. */
int
dns_msg_parse(const uint8_t *data, size_t len, struct dns_msg *m,
    const char **errstr)
{
	struct dns_buf	b;

	memset(m, 0, sizeof *m);
	dns_buf_init(&b, data, len);
	if (dns_header_read(&b, m) == -1) {
		*errstr = "short header";
		return (-1);
	}
	if (m->qdcount > 1) {
		*errstr = "more than one question";
		return (-1);
	}
	if (m->qdcount == 1 && dns_question_read(&b, m, errstr) == -1)
		return (-1);
	if (dns_sections_read(&b, m, errstr) == -1)
		return (-1);
	m->end = b.off;
	if (b.off != len) {
		*errstr = "trailing bytes after the last record";
		return (-1);
	}
	return (0);
}

/* Parse a query for the server: see dns.h. */
int
dns_query_parse(const uint8_t *data, size_t len, struct dns_msg *m,
    const char **errstr)
{
	if (dns_msg_parse(data, len, m, errstr) == -1) {
		if (len < DNS_HEADER_LEN)
			return (DNS_DROP);
		if (m->flags & DNS_F_QR) {
			*errstr = "a response, not a query";
			return (DNS_DROP);
		}
		return (DNS_OPCODE(m->flags) == DNS_OPCODE_QUERY ?
		    DNS_R_FORMERR : DNS_R_NOTIMP);
	}
	if (m->flags & DNS_F_QR) {
		*errstr = "a response, not a query";
		return (DNS_DROP);
	}
	if (DNS_OPCODE(m->flags) != DNS_OPCODE_QUERY) {
		*errstr = "opcode not implemented";
		return (DNS_R_NOTIMP);
	}
	if (m->qdcount != 1) {
		*errstr = "no question";
		return (DNS_R_FORMERR);
	}
	if (m->qcompressed || m->ancount != 0 || m->nscount != 0) {
		*errstr = m->qcompressed ? "compressed question" :
		    "records in the answer or authority section";
		return (DNS_R_FORMERR);
	}
	if (m->edns.present && m->edns.version != 0) {
		*errstr = "unsupported EDNS version";
		return (DNS_R_BADVERS);
	}
	return (0);
}

/* The UDP payload the reply to q may use. */
size_t
dns_query_limit(const struct dns_msg *q)
{
	size_t	limit;

	if (!q->edns.present)
		return (DNS_UDP_MIN);
	limit = q->edns.payload;
	if (limit < DNS_UDP_MIN)
		limit = DNS_UDP_MIN;
	if (limit > DNS_UDP_MAX)
		limit = DNS_UDP_MAX;
	return (limit);
}

/* Append bytes. */
static void
dns_wbuf_add(struct dns_wbuf *w, const void *p, size_t n)
{
	if (w->overflow || w->cap - w->len < n) {
		w->overflow = 1;
		return;
	}
	memcpy(w->data + w->len, p, n);
	w->len += n;
}

/* Append a 16-bit number. */
static void
dns_wbuf_u16(struct dns_wbuf *w, uint16_t v)
{
	uint8_t	p[2] = { v >> 8, v & 0xff };

	dns_wbuf_add(w, p, 2);
}

/* Append a 32-bit number. */
static void
dns_wbuf_u32(struct dns_wbuf *w, uint32_t v)
{
	uint8_t	p[4] = { v >> 24, (v >> 16) & 0xff, (v >> 8) & 0xff,
	    v & 0xff };

	dns_wbuf_add(w, p, 4);
}

/* The header flags of our reply to q. */
static uint16_t
dns_reply_flags(const struct dns_msg *q, int rcode)
{
	return (DNS_F_QR | (q->flags & (0x7800 | DNS_F_RD | DNS_F_CD)) |
	    DNS_F_RA | (rcode & 0xf));
}

/* Write the header and the question as the client sent it. */
static void
dns_reply_head(struct dns_wbuf *w, const struct dns_msg *q, uint16_t flags,
    uint16_t ancount, uint16_t arcount)
{
	dns_wbuf_u16(w, q->id);
	dns_wbuf_u16(w, flags);
	dns_wbuf_u16(w, q->has_question ? 1 : 0);
	dns_wbuf_u16(w, ancount);
	dns_wbuf_u16(w, 0);
	dns_wbuf_u16(w, arcount);
	if (q->has_question)
		dns_wbuf_add(w, q->qwire, q->qwire_len);
}

/* Write one address answer, its name a pointer to the question. */
static void
dns_reply_addr(struct dns_wbuf *w, const struct dns_addr *a, uint32_t ttl)
{
	size_t	alen = a->type == DNS_T_A ? 4 : 16;

	dns_wbuf_u16(w, 0xc000 | DNS_HEADER_LEN);
	dns_wbuf_u16(w, a->type);
	dns_wbuf_u16(w, DNS_C_IN);
	dns_wbuf_u32(w, ttl);
	dns_wbuf_u16(w, (uint16_t)alen);
	dns_wbuf_add(w, a->a, alen);
}

/* Write one PTR answer, its owner a pointer to the question. */
static void
dns_reply_ptr(struct dns_wbuf *w, const uint8_t *wire, size_t len,
    uint32_t ttl)
{
	dns_wbuf_u16(w, 0xc000 | DNS_HEADER_LEN);
	dns_wbuf_u16(w, DNS_T_PTR);
	dns_wbuf_u16(w, DNS_C_IN);
	dns_wbuf_u32(w, ttl);
	dns_wbuf_u16(w, (uint16_t)len);
	dns_wbuf_add(w, wire, len);
}

/* Write our OPT record, with an Extended DNS Error when ede >= 0. */
static void
dns_reply_opt(struct dns_wbuf *w, int rcode, int ede, const char *text)
{
	size_t	tlen = 0;

	if (ede >= 0 && text != NULL)
		tlen = strnlen(text, DNS_EDE_TEXT_MAX);
	dns_wbuf_add(w, "", 1);			/* the root */
	dns_wbuf_u16(w, DNS_T_OPT);
	dns_wbuf_u16(w, DNS_UDP_MAX);
	dns_wbuf_u32(w, (uint32_t)((rcode >> 4) & 0xff) << 24);
	if (ede < 0) {
		dns_wbuf_u16(w, 0);
		return;
	}
	dns_wbuf_u16(w, (uint16_t)(4 + 2 + tlen));
	dns_wbuf_u16(w, DNS_OPT_EDE);
	dns_wbuf_u16(w, (uint16_t)(2 + tlen));
	dns_wbuf_u16(w, (uint16_t)ede);
	dns_wbuf_add(w, text, tlen);
}

/* Build the reply once, with or without the answers. */
static size_t
dns_reply_try(const struct dns_msg *q, const struct dns_reply *r,
    int answers, int ede, uint8_t *out, size_t cap)
{
	struct dns_wbuf	w = { out, cap, 0, 0 };
	uint8_t		wire[DNS_NAME_MAX];
	uint16_t	flags;
	size_t		i, n = answers ? r->naddr : 0;
	int		plen = -1;

	if (r->ptr != NULL)
		plen = dns_name_wire(r->ptr, wire);
	flags = dns_reply_flags(q, r->rcode);
	if (!answers && (r->naddr != 0 || plen != -1))
		flags |= DNS_F_TC;
	dns_reply_head(&w, q, flags, (uint16_t)(n + (answers && plen != -1)),
	    q->edns.present ? 1 : 0);
	for (i = 0; i < n; i++)
		dns_reply_addr(&w, &r->addr[i], r->ttl);
	if (answers && plen != -1)
		dns_reply_ptr(&w, wire, (size_t)plen, r->ttl);
	if (q->edns.present)
		dns_reply_opt(&w, r->rcode, ede, r->ede_text);
	return (w.overflow ? 0 : w.len);
}

/* Build a reply: see dns.h. */
size_t
dns_reply_build(const struct dns_msg *q, const struct dns_reply *r,
    size_t limit, uint8_t *out, size_t cap)
{
	size_t	len;

	if (limit < cap)
		cap = limit;
	if ((len = dns_reply_try(q, r, 1, r->ede, out, cap)) != 0)
		return (len);
	if ((len = dns_reply_try(q, r, 0, r->ede, out, cap)) != 0)
		return (len);
	return (dns_reply_try(q, r, 0, -1, out, cap));
}

/* Check that an upstream answer answers q's question. */
static int
dns_relay_check(const struct dns_msg *q, const struct dns_msg *up,
    const char **errstr)
{
	if (!(up->flags & DNS_F_QR) || !up->has_question) {
		*errstr = "upstream message is not an answer";
		return (-1);
	}
	if (up->qcompressed || up->qwire_len != q->qwire_len ||
	    up->qtype != q->qtype || up->qclass != q->qclass ||
	    !dns_name_equal(up->qwire, q->qwire)) {
		*errstr = "upstream answer is for another question";
		return (-1);
	}
	return (0);
}

/* Write the header and question for a relayed answer. */
static void
dns_relay_head(struct dns_wbuf *w, const struct dns_msg *q,
    const struct dns_msg *up, int tc, uint16_t arcount)
{
	uint16_t	flags;

	flags = DNS_F_QR | (q->flags & (0x7800 | DNS_F_RD | DNS_F_CD)) |
	    DNS_F_RA | (up->flags & (DNS_F_AD | DNS_F_TC | 0xf));
	if (tc)
		flags |= DNS_F_TC;
	dns_wbuf_u16(w, q->id);
	dns_wbuf_u16(w, flags);
	dns_wbuf_u16(w, 1);
	dns_wbuf_u16(w, tc ? 0 : up->ancount);
	dns_wbuf_u16(w, tc ? 0 : up->nscount);
	dns_wbuf_u16(w, arcount + (q->edns.present ? 1 : 0));
	dns_wbuf_add(w, q->qwire, q->qwire_len);
}

/* Relay an upstream answer: see dns.h. */
size_t
dns_relay_build(const struct dns_msg *q, const uint8_t *msg, size_t len,
    size_t limit, uint8_t *out, size_t cap, const char **errstr)
{
	struct dns_msg	up;
	struct dns_wbuf	w;
	size_t		cut;

	if (dns_msg_parse(msg, len, &up, errstr) == -1 ||
	    dns_relay_check(q, &up, errstr) == -1)
		return (0);
	if (limit < cap)
		cap = limit;
	/* Records after the question keep their offsets, so pointers hold. */
	cut = up.edns.present ? up.opt_off : up.end;
	w = (struct dns_wbuf){ out, cap, 0, 0 };
	dns_relay_head(&w, q, &up, 0,
	    up.edns.present ? (uint16_t)up.ar_before_opt : up.arcount);
	dns_wbuf_add(&w, msg + up.qend, cut - up.qend);
	if (q->edns.present)
		dns_reply_opt(&w, DNS_RCODE(up.flags), -1, NULL);
	if (!w.overflow) {
		/* A name may end inside the upstream's OPT record. */
		if (dns_msg_parse(out, w.len, &up, errstr) == -1) {
			*errstr = "upstream answer cannot be relayed";
			return (0);
		}
		return (w.len);
	}
	w = (struct dns_wbuf){ out, cap, 0, 0 };
	dns_relay_head(&w, q, &up, 1, 0);
	if (q->edns.present)
		dns_reply_opt(&w, DNS_RCODE(up.flags), -1, NULL);
	if (w.overflow) {
		*errstr = "no room for the reply";
		return (0);
	}
	return (w.len);
}

/* A type's name. */
const char *
dns_type_name(uint16_t type, char *buf, size_t size)
{
	static const struct {
		uint16_t	 type;
		const char	*name;
	} names[] = {
		{ DNS_T_A, "A" }, { DNS_T_NS, "NS" }, { DNS_T_CNAME, "CNAME" },
		{ DNS_T_SOA, "SOA" }, { DNS_T_PTR, "PTR" }, { DNS_T_MX, "MX" },
		{ DNS_T_TXT, "TXT" }, { DNS_T_AAAA, "AAAA" },
		{ DNS_T_SRV, "SRV" }, { DNS_T_OPT, "OPT" },
		{ DNS_T_SVCB, "SVCB" }, { DNS_T_HTTPS, "HTTPS" },
		{ DNS_T_IXFR, "IXFR" }, { DNS_T_AXFR, "AXFR" },
		{ DNS_T_ANY, "ANY" }, { DNS_T_CAA, "CAA" },
	};
	size_t	i;

	for (i = 0; i < sizeof names / sizeof names[0]; i++) {
		if (names[i].type == type)
			return (names[i].name);
	}
	snprintf(buf, size, "TYPE%u", type);
	return (buf);
}

/* An rcode's name. */
const char *
dns_rcode_name(int rcode)
{
	static const char *names[] = { "NOERROR", "FORMERR", "SERVFAIL",
	    "NXDOMAIN", "NOTIMP", "REFUSED" };

	if (rcode >= 0 && rcode < (int)(sizeof names / sizeof names[0]))
		return (names[rcode]);
	if (rcode == DNS_R_BADVERS)
		return ("BADVERS");
	return ("RCODE?");
}
