/*
 * HTTP/1.x message heads and body framing: pure parsers over bytes, no
 * I/O and no allocation.  Parsed fields point into the caller's buffer,
 * which must outlive them.
 */
#ifndef HTTP_H
#define HTTP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define HTTP_HEADERS_MAX	256	/* hard ceiling for http_limits */
#define HTTP_MAX_HEAD		16384	/* default request-head bytes */
#define HTTP_MAX_HEADERS	100	/* default header count */
#define HTTP_CHUNK_LINE_MAX	1024	/* chunk-size line with extensions */
#define HTTP_TRAILER_MAX	16384	/* trailer section of a chunked body */

struct http_limits {
	size_t		max_head;	/* bytes, request line included */
	size_t		max_headers;
};

/* A piece of the caller's buffer. */
struct http_str {
	const char	*p;
	size_t		 len;
};

struct http_header {
	struct http_str	name;
	struct http_str	value;		/* without surrounding whitespace */
	int		hop;		/* hop-by-hop: not forwarded */
};

enum http_form {
	HTTP_FORM_ORIGIN,		/* /path?query */
	HTTP_FORM_ABSOLUTE,		/* http://host:port/path */
	HTTP_FORM_AUTHORITY,		/* host:port (CONNECT) */
	HTTP_FORM_ASTERISK		/* * (OPTIONS) */
};

enum http_body {
	HTTP_BODY_NONE,
	HTTP_BODY_LENGTH,
	HTTP_BODY_CHUNKED,
	HTTP_BODY_CLOSE			/* responses: until the server closes */
};

/* Fields and framing shared by requests and responses. */
struct http_head {
	int			minor;		/* HTTP/1.minor */
	enum http_body		body;
	uint64_t		length;		/* HTTP_BODY_LENGTH */
	int			keep_alive;
	int			upgrade;	/* Connection: upgrade + Upgrade */
	size_t			nheaders;
	struct http_header	headers[HTTP_HEADERS_MAX];
};

struct http_request {
	struct http_str		method;
	struct http_str		target;
	enum http_form		form;
	int			is_connect;
	int			is_head;
	struct http_str		authority;	/* host[:port], absolute/authority */
	struct http_str		host;		/* without brackets or port */
	uint16_t		port;		/* given, or 80 */
	struct http_str		path;		/* what follows the authority */
	/*
	 * X-HTTP-Method-Override, X-HTTP-Method or X-Method-Override: the
	 * method it names, and the header as http_override_names spells
	 * it; override_bad when there are two such headers or the value
	 * is not one method.
	 */
	struct http_str		override;
	const char		*override_name;
	int			override_bad;
	struct http_head	h;
};

struct http_response {
	int			status;
	struct http_str		reason;
	struct http_head	h;
};

/*
 * Finds the end of a message head in bytes arriving piece by piece.
 * Empty lines before the head are skipped, as RFC 9112 allows.
 */
struct http_scan {
	size_t		total;		/* bytes seen so far */
	int		started;	/* a byte other than CR/LF seen */
	int		bol;		/* at the beginning of a line */
};

/*
 * Chunked transfer coding, followed byte by byte so that a body can be
 * relayed as it comes without ever being held whole.
 */
struct http_chunked {
	int		state;
	uint64_t	remain;		/* data bytes left in this chunk */
	size_t		line;		/* length of the current line */
	size_t		trailer;	/* bytes of trailer section so far */
	int		digits;
};

void	http_scan_init(struct http_scan *);
size_t	http_scan_feed(struct http_scan *, const void *, size_t);

int	http_request_parse(const char *, size_t, const struct http_limits *,
	    struct http_request *);
int	http_response_parse(const char *, size_t, const struct http_limits *,
	    int, struct http_response *);

/*
 * A server of one resource: decide a request head of len bytes (r is
 * scratch).  Returns 200 for GET of exactly path (origin-form), 404 for
 * another target, 405 for another method, or the parser's status.
 */
int	http_request_route(const char *, size_t, const struct http_limits *,
	    const char *, struct http_request *);

void	http_chunked_init(struct http_chunked *);
ssize_t	http_chunked_feed(struct http_chunked *, const void *, size_t,
	    int *);
/*
 * The same, up to where chunk data starts or stops: returns how many
 * bytes were taken (-1: broken framing), *data saying whether they are
 * chunk data or framing (sizes, line ends, the trailer section).
 */
ssize_t	http_chunked_step(struct http_chunked *, const void *, size_t,
	    int *, int *);

struct rules_request;

/*
 * A parsed request as the policy's request rules see it (rules/rules.h):
 * method, target ("/" for none), the protocol an upgrade asks for (only
 * with Connection: upgrade, the one Upgrade that goes upstream) and the
 * method override.  Points into the request's buffer.
 */
void	http_request_rules(const struct http_request *,
	    struct rules_request *);

int	http_str_eq(const struct http_str *, const char *);
/* The value of a hex digit, or -1. */
int	http_hexval(unsigned char);
const struct http_header *http_header_find(const struct http_head *,
	    const char *);
const char *http_status_text(int);

#endif
