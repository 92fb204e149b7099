/*
 * The policy: parsing, canonical host names and addresses, matching.
 * Pure C: no libevent, no sockets, no globals; reads files only in
 * rules_load_file(), rules_load_system() and for `include`.
 */
#ifndef RULES_H
#define RULES_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define HOST_NAME_LEN	253		/* longest canonical name */
#define HOST_TEXT_LEN	(HOST_NAME_LEN + 1)

enum host_kind {
	HOST_NAME,			/* a DNS name */
	HOST_IPV4,			/* addr[0..3] */
	HOST_IPV6			/* addr[0..15] */
};

/*
 * A host in its one canonical form, computed once and used for matching,
 * dialing and logging.  text is the lowercase name without trailing dot,
 * or the address in its standard text form (IPv6 without brackets).
 * ::ffff:a.b.c.d is HOST_IPV4.
 */
struct host {
	enum host_kind	kind;
	uint8_t		addr[16];
	char		text[HOST_TEXT_LEN];
};

/*
 * Canonicalise a host (name, any IPv4 spelling, IPv6 with or without
 * brackets) of len bytes.  Returns 0, or -1 with *errstr saying why.
 */
int	host_parse(const char *, size_t, struct host *, const char **);

/*
 * Split "HOST[:PORT]" / "[V6]:PORT" and canonicalise.  *port is set to
 * the port given, or to defport when none is.  Returns 0 or -1 + *errstr;
 * for a host written as a URL, *errstr is host_url_hint()'s, written in
 * the host's text.
 */
int	host_port_parse(const char *, struct host *, uint16_t *, uint16_t,
	    const char **);

/*
 * Is this (len bytes) a host written as a URL, "SCHEME://HOST[:PORT]
 * [/PATH]" or "NAME[:PORT]/PATH"?  Then buf says what to write instead,
 * "write the host, not a URL: KW HOST[:PORT]" (KW, such as "allow",
 * may be NULL), and where the path goes when KW is NULL or "allow";
 * returns 1.  0 when it is not one (an ADDRESS/LEN is not).
 */
int	host_url_hint(const char *, size_t, const char *, char *, size_t);

/*
 * A socket address: "ADDR:PORT" or "[V6]:PORT", ADDR an IP address
 * (canonicalised into h as host_parse() does).  With defport nonzero
 * the port may be left out ("ADDR", "[V6]", a bare IPv6 address).
 * Returns 0 or -1 + *errstr.
 */
int	addr_port_parse(const char *, struct host *, uint16_t *, uint16_t,
	    const char **);

struct addrinfo;
struct sockaddr;

/*
 * A socket address as text: "ADDR:PORT", "[V6]:PORT", "local" for a
 * Unix socket, "?" for anything else.
 */
void	addr_sockaddr_text(const struct sockaddr *, char *, size_t);

/* Write an address (4 or 16 bytes) in its standard form; its length. */
size_t	addr_format(char *, size_t, const uint8_t *, size_t);

/*
 * The address to bind for a listener "ADDR:PORT" ("[V6]:PORT") of a
 * socket type (SOCK_STREAM, SOCK_DGRAM): for freeaddrinfo(), or NULL
 * with err.  Numeric only: it never asks a resolver.
 */
struct addrinfo	*addr_port_addrinfo(const char *, int, char *, size_t);

/*
 * The one port parser: len bytes of decimal digits, 1 to 65535; no
 * sign, space, "0x" or anything else.  Returns 0 or -1.
 */
int	port_parse(const char *, size_t, uint16_t *);

/* Classes of special-purpose addresses the gateway refuses to dial. */
enum addr_class {
	ADDR_PUBLIC = 0,
	ADDR_UNSPECIFIED,
	ADDR_LOOPBACK,
	ADDR_PRIVATE,			/* RFC 1918, ULA */
	ADDR_LINK_LOCAL,
	ADDR_METADATA,			/* cloud metadata services */
	ADDR_CGNAT,
	ADDR_MULTICAST,
	ADDR_RESERVED,			/* documentation, benchmarking, ... */
	ADDR_EMBEDDED_V4		/* v4-mapped, NAT64, 6to4, ... */
};

/* Classify an address (4 or 16 bytes) as public or special-purpose. */
enum addr_class	 addr_classify(const uint8_t *, size_t);
const char	*addr_class_name(enum addr_class);

struct rules;

/*
 * The layers of a policy: the system's (rules_load_system()), read
 * first, then the user's (their file, --policy, --allow).  A deny wins
 * whatever its layer, so no user rule or grant lifts a system deny.
 */
enum rules_layer {
	RULES_USER = 0,
	RULES_SYSTEM
};

/* Where a decision came from. */
struct rules_verdict {
	int		 allow;		/* 1 allow, 0 deny */
	const char	*file;		/* rule's file, NULL for no match */
	unsigned int	 line;
	const char	*text;		/* the rule as written */
	enum rules_layer layer;		/* the rule's */
	const char	*why;		/* "no rule matches: default deny", ... */
	time_t		 until;		/* the deciding rule's end, or 0 */
	/*
	 * rules_match(): every allow rule for (host, port) has constraints
	 * (read-only, methods, path), or a secret names the host: requests
	 * must be read (TLS ended at the gateway) and each decided by
	 * rules_match_request().  0: tunnel as is.
	 */
	int		 inspect;
	/*
	 * rules_match(): every allow rule for (host, port) has constraints,
	 * which a grant would lift (policy_lifts()).
	 */
	int		 constrained;
	/* rules_match_request(): a deny rule decided, no grant can lift it. */
	int		 by_deny;
	/* The deciding rule names the host exactly (no wildcard, prefix). */
	int		 exact;
	/* rules_match_request() refused: the constraint, "read-only", ... */
	const char	*constraint;
	char		 detail[384];	/* what why points to, then */
};

/*
 * The name of the host's own loopback (127.0.0.1), as a sandbox sees it:
 * only a rule naming it exactly, or a grant for it, opens a port there
 * (no wildcard, and no allow-private needed).
 */
#define RULES_HOST_LOOPBACK	"host.pinhole.internal"

struct rules	*rules_create(void);
void		 rules_free(struct rules *);

/*
 * Add a policy file, or one rule given on the command line (origin names
 * it in messages, e.g. "--allow").  On error nothing is added and err
 * holds "FILE:LINE: message".  Returns 0 or -1.  Text without a newline
 * is one rule: messages say "ORIGIN: message" and verdicts have line 0.
 * Relative includes are relative to the including file (for text, to
 * the current directory); `include preset:NAME` reads
 * $PINHOLE_PRESETDIR/NAME, or PRESETDIR/NAME; an include with a glob
 * pattern (`*`, `?`, `[`) reads the regular files it matches in byte
 * order, none being no error.
 */
int	rules_load_file(struct rules *, const char *, char *, size_t);
int	rules_load_text(struct rules *, const char *, const char *, size_t,
	    char *, size_t);

/*
 * The system layer, loaded before the user's: DIR/policy, then every
 * regular file DIR/policy.d/NAME.policy in byte order of NAME (none
 * starting with '.'), with what they include, as one load: any error
 * adds nothing.  A missing file or directory is none; one that cannot
 * be read is an error, for a deny must not be skipped unseen.  Its
 * rules have the layer RULES_SYSTEM.  rules_system_dir() is
 * SYSCONFDIR "/pinhole".
 */
int		 rules_load_system(struct rules *, const char *, char *,
		    size_t);
const char	*rules_system_dir(void);

/*
 * Read no file for `include` (its argument is still checked): for the
 * fuzzer, whose policies must not walk the filesystem.
 */
void	rules_no_includes(struct rules *);

/* Decide (host, port).  Returns v->allow. */
int	rules_match(const struct rules *, const struct host *, uint16_t,
	    struct rules_verdict *);

/*
 * One HTTP request as the request-level checks see it: the method and
 * the origin-form target ("/path?query") as sent; the protocol it asks
 * to switch to (Connection: upgrade and Upgrade: its value, NULL for
 * none), and the method a method-override header names
 * (X-HTTP-Method-Override, X-HTTP-Method, X-Method-Override: override
 * the method, override_name the header; override_bad when such a
 * header is repeated or not one method).  Zeroed: a plain request.
 */
struct rules_request {
	const char	*method;
	size_t		 method_len;
	const char	*target;
	size_t		 target_len;
	const char	*upgrade;
	size_t		 upgrade_len;
	const char	*override;
	size_t		 override_len;
	const char	*override_name;
	int		 override_bad;
	int		 body;		/* it carries a body */
};

/*
 * Decide one request to (host, port), which rules_match() allowed with
 * v->inspect set: allowed when at least one allow rule for (host, port)
 * lets it through, every constraint of that rule met (read-only: GET,
 * HEAD, OPTIONS and git's fetch; methods; path patterns, matched on the
 * canonical path; a method override named by read-only or methods too;
 * an upgrade only as a GET to websocket, on a rule that says websocket).
 * On a host no rule constrains (inspected for a secret), only an upgrade
 * to anything but websocket is refused.  Refused, v->constraint names
 * the constraint of the first such rule that refused ("read-only",
 * "methods", "path", "upgrade") and v->why says it in words ("read-only:
 * POST is not a read", "path /x is outside /myorg/ and below").  Returns 1
 * allow, 0 refuse, -1 when the target is not a path that reads one way
 * only (v->why says why: encoded '/', NUL, ...).
 */
int	rules_match_request(const struct rules *, const struct host *,
	    uint16_t, const struct rules_request *, struct rules_verdict *);

/*
 * The one canonical form of an origin-form target's path (the query
 * left out): percent-decoded once, "." and ".." segments resolved (never
 * above the root), "//" folded.  Refused (-1, *errstr saying why): not
 * starting with '/', an encoded '/' or '\\', NUL or a control byte
 * raw or encoded, a bad '%' escape, '\\', or a path longer than len - 1.
 * Returns the length written to out (NUL-terminated).
 */
#define RULES_PATH_LEN	4096
int	rules_path_canon(const char *, size_t, char *, size_t, const char **);

/*
 * The hosts whose connections are inspected (rules with constraints,
 * hosts a secret names), for the CA's name constraints: each as a
 * pattern "name", "*.name", an address or "ADDR/LEN"; "*" when some
 * rule inspects any host (no name constraints can hold).  Stores at
 * most max pointers (living as long as the policy); returns how many
 * there are.
 */
size_t	rules_inspected(const struct rules *, const char **, size_t);

/*
 * `secret NAME for HOST[,HOST...] [header H[,H...]]... [from FILE]`: a
 * credential the sandbox sees only as a placeholder, which the gateway
 * puts back in those headers of requests to those hosts alone.  The
 * value is read from pinhole's environment (NAME) or FILE by the
 * caller, never by the policy.
 */
#define RULES_SECRET_HEADERS_MAX	16	/* header words of a secret */
#define RULES_SECRET_HEADER_LEN		64	/* a header's name */

struct rules_secret {
	const char	*name;		/* an environment variable's name */
	const char	*file;		/* NULL: pinhole's own environment */
	const char	*file_origin;	/* "FILE:LINE" of the secret line */
	const char *const *headers;	/* header words; NULL: the default */
	size_t		 nheaders;
};

/*
 * The headers a secret may go in: its `header` words, or Authorization
 * and Proxy-Authorization when it has none.  Returns how many; *names
 * points at them.
 */
size_t	rules_secret_headers(const struct rules_secret *,
	    const char *const **);

/* The secrets of a policy in load order; stores at most max pointers. */
size_t	rules_secrets(const struct rules *, const struct rules_secret **,
	    size_t);

/* May a secret go to this host (one of its HOST patterns matches)? */
int	rules_secret_for(const struct rules_secret *, const struct host *);

/*
 * Is a name allowed on at least one port (for DNS: a name is answered
 * when a connection to it could be)?  Fills v with an allow rule that
 * decides some port, or with the reason none does.  Returns v->allow.
 */
int	rules_name_allowed(const struct rules *, const struct host *,
	    struct rules_verdict *);

/*
 * Does an allow-private rule cover this special-purpose address (4 or 16
 * bytes)?  Fills v with that rule when it does.
 */
int	rules_private_ok(const struct rules *, const uint8_t *, size_t,
	    struct rules_verdict *);

/*
 * The ports allow rules name explicitly (for listeners): every port of
 * lists and ranges, not the default 80 and 443 nor ":*".  Sorted,
 * unique; stores at most max and returns how many it stored.
 */
size_t	rules_ports(const struct rules *, uint16_t *, size_t);

/*
 * The rules in force (allow, deny and allow-private, from files and from
 * the command line), each as written, one a line, in load order; a rule
 * whose end has passed is left out.  Writes whole lines only, NUL-
 * terminated, into len bytes; returns the length written.
 */
size_t	rules_text(const struct rules *, char *, size_t);

/*
 * The files a policy was read from (top files, includes, presets), in
 * load order, for watching them.  Stores at most max paths, which live
 * as long as the policy; returns how many there are.
 */
size_t	rules_files(const struct rules *, const char **, size_t);

/*
 * The directories where a new file would change the policy (the system
 * directory and its policy.d, each glob include's), whether they exist
 * or not, for watching and guarding them; as rules_files().
 */
size_t	rules_dirs(const struct rules *, const char **, size_t);

/*
 * Does the policy say allow-vsock (the sandbox may create AF_VSOCK
 * sockets, which no network namespace confines)?
 */
int	rules_allow_vsock(const struct rules *);

/*
 * The host unix sockets the sandbox may reach (allow-socket), as written:
 * absolute, or starting with $NAME, ${NAME} or ~/ (expanded where the
 * sandbox is made).  Stores at most max pointers; returns how many
 * there are.
 */
/*
 * A rule that cannot take effect (rules/dead.c): an allow rule a deny
 * covers, or a rule with constraints an allow rule without constraints
 * covers, on some ports (ports, "443,8000-8100") or all of them (all).
 * rules_dead() calls back with each, in load order (a callback's -1
 * stops it), and returns how many it found; rules_dead_text() says one
 * in a sentence, its place first.
 */
struct rules_dead {
	struct rules_verdict	rule;		/* file, line, text, layer */
	struct rules_verdict	by;		/* the rule in its place */
	int			by_deny;
	int			all;
	char			ports[128];
};

size_t	rules_dead(const struct rules *, int (*)(const struct rules_dead *,
	    void *), void *);
void	rules_dead_text(const struct rules_dead *, char *, size_t);

#define RULES_SOCKET_MAX	108	/* sun_path, with its NUL */
size_t	rules_sockets(const struct rules *, const char **, size_t);

/*
 * `upstream http://HOST:PORT`: the proxy every allowed connection goes
 * through, as a CONNECT (or, for plain HTTP, an absolute-form request),
 * but to the hosts `no-upstream HOST[,HOST...]` names (names, *.names,
 * addresses, prefixes), which are dialed directly.  `upstream-auth FILE`
 * names the file of its Basic credentials ("USER:PASSWORD"), read by the
 * caller, never by the policy.  A later layer's upstream (the user's over
 * the system's, the command line's over both) replaces an earlier one's,
 * and `upstream none` removes it; credentials given with one upstream are
 * dropped when another replaces it.  One upstream and one upstream-auth
 * line a load at most.
 */
struct rules_upstream {
	const char	*url;		/* as written; NULL: none */
	const char	*host;		/* canonical: a name or an address */
	uint16_t	 port;
	const char	*auth;		/* upstream-auth FILE, or NULL */
	const char	*origin;	/* "FILE:LINE" of the upstream line */
	const char	*auth_origin;	/* and of the upstream-auth line */
};

/* The upstream proxy in force, or NULL: connections are dialed. */
const struct rules_upstream *rules_upstream(const struct rules *);

/* upstream-auth's file when no upstream is given to use it, or NULL. */
const char *rules_upstream_auth(const struct rules *);

/* Is this host dialed directly though there is an upstream? */
int	rules_no_upstream(const struct rules *, const struct host *);

/* The no-upstream patterns as written back; stores at most max. */
size_t	rules_no_upstream_list(const struct rules *, const char **, size_t);

/*
 * Read an upstream proxy's URL, "http://HOST:PORT" (HOST a name, an IPv4
 * address or "[V6]"; a '/' may follow): no credentials, path or TLS.
 * Returns 0, or -1 with *errstr saying why.
 */
int	rules_upstream_parse(const char *, struct host *, uint16_t *,
	    const char **);

/* The user's policy file: $XDG_CONFIG_HOME/pinhole/policy or ~/.config/... */
int	rules_default_path(char *, size_t);

/*
 * "allow RULE until TIME" ends at TIME: from then on the matchers pass
 * it by (they read the wall clock), and a load after it leaves it out.
 * rules_next_end() says when the first rule of a policy ends (0: none
 * does), so that its owner can reload then and log it.
 */
#define RULES_TIME_USAGE "a UTC time such as 2026-12-31T18:00:00Z"
time_t	rules_next_end(const struct rules *);
int	rules_time_parse(const char *, size_t, time_t *);
void	rules_time_format(time_t, char *, size_t);

#define RULES_RULE_LEN	1025		/* canonical rule text, with NUL */

/*
 * A command line's rules as policy lines (rules/args.c), for `pinhole
 * allow`, `pinhole disallow` and every --allow: the words of the
 * arguments (split at blanks; a word starting with '#' ends them) make
 * one line a directive, or "allow WORD" for a word that is none, with
 * the words the directive takes: its argument (none for allow-vsock),
 * then for allow read-only, websocket, methods LIST, path LIST and until
 * TIME, for secret "for HOSTS" and "from FILE".  "allow-private
 * 10.0.0.0/8" is one line, "pypi.org github.com" two, "github.com
 * read-only path /x/" one.  A word that would start an allow rule but
 * is a constraint out of place or a misspelt directive or constraint
 * ("readonly") is refused.  The lines are not parsed yet.  Returns 0
 * with out set (rules_lines_free() frees it), or -1 with err.
 */
struct rules_lines {
	char	**v;
	size_t	  n;
};

int	rules_args_lines(const char *const *, size_t, struct rules_lines *,
	    char *, size_t);
void	rules_lines_free(struct rules_lines *);

/*
 * The registrable domain a canonical name is or is under, by the public
 * suffix list the parser uses (example.co.uk for a.b.example.co.uk):
 * a pointer into name, or NULL (a public suffix, no list).
 */
const char	*rules_registrable(struct rules *, const char *);

/*
 * "Did you mean" (rules/near.c): the edit distance of two words of 32
 * bytes at most (SIZE_MAX for longer ones), and the name of a NULL-
 * terminated list nearest to a word that is none of them, when it is
 * near enough to be what was meant (two edits, one for a word of four
 * letters or fewer); NULL when none is, or the word is one of them.
 */
size_t		 rules_distance(const char *, const char *);
const char	*rules_nearest(const char *, const char *const *);

/*
 * Presets (rules/preset.c), `include preset:NAME`: the directory they
 * are read from ($PINHOLE_PRESETDIR, or PRESETDIR); their names there,
 * in byte order (at most max stored; how many there are, -1 when the
 * directory cannot be read); what one is for, its first comment line;
 * the one nearest a name that is none ("" when none is near).
 */
#define RULES_PRESET_LEN	65
const char	*rules_preset_dir(void);
int		 rules_presets(char (*)[RULES_PRESET_LEN], size_t);
void		 rules_preset_about(const char *, char *, size_t);
void		 rules_preset_near(const char *, char *, size_t);

/*
 * Editing policy text (pure: text in, text out; rules/edit.c).  A rule
 * is a whole policy line: "allow HOST[:PORTS] [constraints] [until
 * TIME]", "deny HOST[:PORTS]", "allow-private ADDRESS[/LEN]", "include
 * ...", "allow-socket PATH", "allow-vsock", "secret ...".  Rules are
 * compared in their canonical form (e.g. "allow PyPI.org.:443,80" is
 * "allow pypi.org", "deny x:1-65535" is "deny x"; other lines' words
 * with one space between them), written to rule; adding compares an
 * allow rule's end too, removing takes out the rule whatever its end.
 * Only the lines of this text are looked at (not includes), and every
 * other byte is kept.  text is the new text (NUL-terminated, the
 * caller's to free()), NULL when nothing changed.
 */
struct rules_edit {
	char		*text;
	size_t		 len;
	unsigned int	 line;		/* line added, found or first removed */
	unsigned int	 count;		/* lines added or removed */
	char		 rule[RULES_RULE_LEN];
};

/*
 * Append the rule with the text's line ending (ending an unfinished
 * last line first).  Returns 1 when added, 0 when a line for the same
 * rule is there already (line says where), -1 when the rule is refused
 * (err: "ORIGIN: message", as the parser says it; no line, for the rule
 * is in no file yet).
 */
int	rules_edit_add(const char *, size_t, const char *, const char *,
	    struct rules_edit *, char *, size_t);

/*
 * Remove every line for the same rule.  Returns how many were removed
 * (0: none), or -1 for a rule that does not parse.
 */
int	rules_edit_remove(const char *, size_t, const char *, const char *,
	    struct rules_edit *, char *, size_t);

/*
 * What a policy file edit is to be checked against before it is
 * written, besides the parser: fn gets the file's path and its text
 * before and after, and results; it returns 0 to let the edit be
 * written, or -1 with err (the file is left as it was).
 */
struct rules_file_vet {
	int	(*fn)(void *, const char *, const char *, size_t, const char *,
		    size_t, const struct rules_edit *, size_t, char *, size_t);
	void	*arg;
};

/*
 * Edit a policy file in place (rules/file.c, the one writer in rules/):
 * add (or with remove, take out) each of n rules (whole lines, as
 * rules_edit_add() takes them), check the whole new policy with the
 * parser (includes too) and vet (NULL: none), then replace the file
 * atomically: a temp file in the same directory, fsync, rename, with
 * the old file's mode (a symlink's target is what is edited).  Adding
 * to a missing file creates it (0600) and its directory (0700).  Edits
 * are serialised by a lock on the directory.  results[i] (text unused)
 * says what happened to rule i.  Returns how many rules changed the file
 * (0: untouched), or -1 with err and the file untouched: for a rule
 * refused, "pinhole allow: message" ("pinhole disallow: ..."), else
 * "FILE:LINE: message", "FILE: reason" or vet's.
 */
int	rules_file_edit(const char *, int, const char *const *, size_t,
	    struct rules_edit *, const struct rules_file_vet *, char *,
	    size_t);

/*
 * Add a policy given as text, as if read from path: numbered lines,
 * includes relative to path's directory.  For checking an edit before
 * it is written.
 */
int	rules_load_buffer(struct rules *, const char *, const char *, size_t,
	    char *, size_t);

/*
 * Add one "allow RULE" to a policy file (an `always` grant): RULE is
 * what follows "allow".  Returns 1 added, 0 already there, -1 with err.
 */
int	rules_file_append(const char *, const char *, struct rules_edit *,
	    char *, size_t);

#endif
