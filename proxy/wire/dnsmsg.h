/*
 * DNS messages: a parser and builder of our own.  Pure: takes bytes,
 * returns results; no libevent, no sockets, no globals.  Every read goes
 * through a length-checked reader.
 */
#ifndef WIRE_DNSMSG_H
#define WIRE_DNSMSG_H

#include <stddef.h>
#include <stdint.h>

#define DNS_HEADER_LEN		12
#define DNS_NAME_MAX		255	/* wire form, with the root label */
#define DNS_LABEL_MAX		63
#define DNS_NAME_TEXT		1024	/* presentation form: 4 * 255 + NUL */
#define DNS_PTR_HOPS		16	/* compression pointers per name */
#define DNS_UDP_MIN		512	/* payload without EDNS */
#define DNS_UDP_MAX		4096	/* the largest payload we answer with */
#define DNS_MSG_MAX		65535
#define DNS_EDE_TEXT_MAX	300	/* EXTRA-TEXT we send, bytes */
#define DNS_MSG_MAXANS		32	/* answer records remembered */
#define DNS_EDNS_MAXOPTS	8	/* EDNS options remembered */

/* Types. */
#define DNS_T_A			1
#define DNS_T_NS		2
#define DNS_T_CNAME		5
#define DNS_T_SOA		6
#define DNS_T_PTR		12
#define DNS_T_MX		15
#define DNS_T_TXT		16
#define DNS_T_AAAA		28
#define DNS_T_SRV		33
#define DNS_T_OPT		41
#define DNS_T_SVCB		64
#define DNS_T_HTTPS		65
#define DNS_T_IXFR		251
#define DNS_T_AXFR		252
#define DNS_T_ANY		255
#define DNS_T_CAA		257

#define DNS_C_IN		1

/* Header flags. */
#define DNS_F_QR		0x8000
#define DNS_F_AA		0x0400
#define DNS_F_TC		0x0200
#define DNS_F_RD		0x0100
#define DNS_F_RA		0x0080
#define DNS_F_AD		0x0020
#define DNS_F_CD		0x0010
#define DNS_OPCODE(f)		(((f) >> 11) & 0xf)
#define DNS_RCODE(f)		((f) & 0xf)
#define DNS_OPCODE_QUERY	0

/* Response codes; above 15 they need EDNS. */
#define DNS_R_NOERROR		0
#define DNS_R_FORMERR		1
#define DNS_R_SERVFAIL		2
#define DNS_R_NXDOMAIN		3
#define DNS_R_NOTIMP		4
#define DNS_R_REFUSED		5
#define DNS_R_BADVERS		16

/* EDNS option codes, Extended DNS Error info codes (RFC 8914). */
#define DNS_EDNS_DO		0x8000
#define DNS_OPT_EDE		15
#define DNS_EDE_BLOCKED		15

/* A length-checked reader (every read checks its length). */
struct dns_buf {
	const uint8_t	*data;
	size_t		 len;
	size_t		 off;
};

/* One EDNS option as found: its bytes are data[off .. off + len). */
struct dns_edns_opt {
	uint16_t	code;
	uint16_t	len;
	size_t		off;
};

struct dns_edns {
	int			present;
	uint16_t		payload;	/* as sent, not clamped */
	uint8_t			ext_rcode;
	uint8_t			version;
	uint16_t		flags;		/* DNS_EDNS_DO, ... */
	size_t			nopts;		/* options seen */
	struct dns_edns_opt	opts[DNS_EDNS_MAXOPTS];	/* the first ones */
};

/* One resource record as found. */
struct dns_rr {
	uint16_t	type;
	uint16_t	class;
	uint32_t	ttl;
	uint16_t	rdlen;
	size_t		rdoff;		/* rdata in the message */
	size_t		off;		/* the record's first byte */
	size_t		end;		/* one past its last byte */
};

/*
 * A parsed message.  The question is kept as sent (wire bytes, original
 * case, for echoing) and in presentation form (escaped: "\." for a dot
 * inside a label, "\DDD" for any byte outside 0x21-0x7e).
 */
struct dns_msg {
	uint16_t	id;
	uint16_t	flags;
	uint16_t	qdcount, ancount, nscount, arcount;

	int		has_question;
	uint8_t		qwire[DNS_NAME_MAX + 4];	/* name, type, class */
	size_t		qwire_len;
	int		qcompressed;	/* the question used a pointer */
	char		qname[DNS_NAME_TEXT];
	uint16_t	qtype;
	uint16_t	qclass;
	size_t		qend;		/* offset after the question */

	size_t		nans;		/* answer records remembered */
	struct dns_rr	ans[DNS_MSG_MAXANS];

	struct dns_edns	edns;
	size_t		opt_off;	/* the OPT record, 0 for none */
	size_t		ar_before_opt;	/* additional records before it */
	size_t		end;		/* after the last record */
};

/* What the server answers: one reply, built by dns_reply_build(). */
struct dns_addr {
	uint16_t	type;		/* DNS_T_A or DNS_T_AAAA */
	uint8_t		a[16];
};

struct dns_reply {
	int			 rcode;		/* DNS_R_*, 12 bits with EDNS */
	uint32_t		 ttl;
	size_t			 naddr;
	const struct dns_addr	*addr;
	int			 ede;		/* INFO-CODE, or -1 for none */
	const char		*ede_text;	/* NULL or EXTRA-TEXT */
	const char		*ptr;		/* NULL or a PTR answer's name */
};

/* The reader. */
void	dns_buf_init(struct dns_buf *, const uint8_t *, size_t);
int	dns_buf_u8(struct dns_buf *, uint8_t *);
int	dns_buf_u16(struct dns_buf *, uint16_t *);
int	dns_buf_u32(struct dns_buf *, uint32_t *);
int	dns_buf_skip(struct dns_buf *, size_t);

/*
 * Read a (possibly compressed) name at the reader's offset into wire form
 * (at most DNS_NAME_MAX bytes); the reader moves past the name as it sits
 * in the message.  Pointers must point strictly backwards, at most
 * DNS_PTR_HOPS of them.  Returns the wire length, or -1 with *errstr.
 */
int	dns_name_read(struct dns_buf *, uint8_t *, int *, const char **);

/* Write a wire-form name in presentation form (DNS_NAME_TEXT bytes). */
void	dns_name_text(const uint8_t *, size_t, char *, size_t);

/*
 * Write a plain dotted name ("a.b.c", no escapes) in wire form (at most
 * DNS_NAME_MAX bytes).  Returns the wire length, or -1.
 */
int	dns_name_wire(const char *, uint8_t *);

/* Compare two wire-form names ignoring ASCII case.  Returns 1 if equal. */
int	dns_name_equal(const uint8_t *, const uint8_t *);

/*
 * Parse a whole message: header, at most one question (more: error),
 * every record bounds-checked, the OPT record.  Returns 0 or -1 with
 * *errstr; m holds what was parsed before the error.
 */
int	dns_msg_parse(const uint8_t *, size_t, struct dns_msg *,
	    const char **);

/* What dns_query_parse() tells the server to do. */
#define DNS_DROP		(-1)	/* no header: say nothing */

/*
 * Parse a query for the server.  Returns 0 for a query to serve,
 * DNS_DROP for a message that gets no answer, or the rcode to answer
 * with (FORMERR, NOTIMP, BADVERS); *errstr says why.
 */
int	dns_query_parse(const uint8_t *, size_t, struct dns_msg *,
	    const char **);

/* The UDP payload a query's reply may use (512 without EDNS). */
size_t	dns_query_limit(const struct dns_msg *);

/*
 * Build the reply to query q in out (cap bytes), at most limit bytes:
 * the client's ID and question byte for byte, A/AAAA answers, an OPT
 * record (with the Extended DNS Error) when q had one; TC and no answers
 * when it would not fit.  Returns the length, or 0 when cap is too small.
 */
size_t	dns_reply_build(const struct dns_msg *, const struct dns_reply *,
	    size_t, uint8_t *, size_t);

/*
 * Turn an upstream answer to q's question into the client's answer: the
 * client's ID, question bytes and EDNS; TC when it would not fit in limit.
 * Returns the length, or 0 with *errstr when the upstream message does not
 * answer q's question.
 */
size_t	dns_relay_build(const struct dns_msg *, const uint8_t *, size_t,
	    size_t, uint8_t *, size_t, const char **);

/* A type's name ("A", "MX", "TYPE1234"); buf holds at least 12 bytes. */
const char *dns_type_name(uint16_t, char *, size_t);
const char *dns_rcode_name(int);

#endif
