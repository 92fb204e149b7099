/*
 * The policy parser: one rule a line, a table of keywords with one small
 * handler each.  A file is parsed whole (includes too) before any of it
 * is added, so a bad policy changes nothing.  Includes are read here;
 * a load begins and ends in load.c, a rule's target is read by target.c.
 */
#include "config.h"

#include <sys/stat.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "lib/namesock.h"
#include "rules/parse-int.h"

struct keyword {
	const char	*name;
	const char	*usage;
	int		(*handler)(struct parse *, const char *, const char *);
	int		 can_end;	/* takes "until TIME" */
	int		 noarg;		/* takes no argument */
	int		 constraints;	/* read-only, methods, path */
	int		 rest;		/* reads its own words */
};

static int	kw_allow(struct parse *, const char *, const char *);
static int	kw_deny(struct parse *, const char *, const char *);
static int	kw_allow_private(struct parse *, const char *, const char *);
static int	kw_include(struct parse *, const char *, const char *);
static int	kw_allow_vsock(struct parse *, const char *, const char *);
static int	kw_allow_socket(struct parse *, const char *, const char *);
static int	kw_secret(struct parse *, const char *, const char *);
static int	kw_upstream(struct parse *, const char *, const char *);
static int	kw_upstream_auth(struct parse *, const char *, const char *);
static int	kw_no_upstream(struct parse *, const char *, const char *);
static size_t	next_word(char **);

static const struct keyword keywords[] = {
	{ "allow", "allow HOST[:PORTS] [read-only] [methods M,...] "
	    "[websocket] [path /P,...] [until TIME]", kw_allow, 1, 0, 1, 0 },
	{ "deny", "deny HOST[:PORTS]", kw_deny, 0, 0, 0, 0 },
	{ "allow-private", "allow-private ADDRESS[/LEN]", kw_allow_private,
	    0, 0, 0, 0 },
	{ "include", "include FILE | include PATTERN | include preset:NAME",
	    kw_include, 0, 0, 0, 0 },
	{ "allow-vsock", "allow-vsock", kw_allow_vsock, 0, 1, 0, 0 },
	{ "allow-socket", "allow-socket PATH", kw_allow_socket, 0, 0, 0, 0 },
	{ "secret", "secret NAME for HOST[,HOST...] [header H[,H...]] "
	    "[from FILE]", kw_secret, 0, 0, 0, 1 },
	{ "upstream", "upstream http://HOST:PORT | upstream none",
	    kw_upstream, 0, 0, 0, 0 },
	{ "upstream-auth", "upstream-auth FILE", kw_upstream_auth, 0, 0, 0, 0 },
	{ "no-upstream", "no-upstream HOST[,HOST...]", kw_no_upstream,
	    0, 0, 0, 0 },
};

/* Find a keyword, or the nearest one when *near is asked for. */
static const struct keyword *
keyword_find(const char *word, const struct keyword **near)
{
	size_t	i, d, best = 3;

	*near = NULL;
	for (i = 0; i < sizeof keywords / sizeof keywords[0]; i++) {
		if (strcmp(word, keywords[i].name) == 0)
			return (&keywords[i]);
		if ((d = rules_distance(word, keywords[i].name)) < best) {
			best = d;
			*near = &keywords[i];
		}
	}
	return (NULL);
}

/*
 * What a directive takes (RULES_DIR_*), for reading a command line's
 * rules; -1 for a word that is none, *near then the nearest if any.
 */
int
rules_directive(const char *word, size_t n, const char **near)
{
	const struct keyword	*kw, *nk;
	char			 w[32];

	*near = NULL;
	if (n >= sizeof w)
		return (-1);
	memcpy(w, word, n);
	w[n] = '\0';
	if ((kw = keyword_find(w, &nk)) == NULL) {
		*near = nk != NULL ? nk->name : NULL;
		return (-1);
	}
	return ((kw->noarg ? RULES_DIR_NOARG : 0) |
	    (kw->constraints ? RULES_DIR_CONSTRAINTS : 0) |
	    (kw->can_end ? RULES_DIR_END : 0) |
	    (kw->rest ? RULES_DIR_REST : 0));
}

/*
 * websocket lets a rule's checked GETs upgrade: it needs checks to widen
 * (a rule without them lets a WebSocket through already), and a GET.
 */
static int
parse_websocket(struct parse *p)
{
	const struct rule_req	*q = p->req;
	size_t			 i;

	if (q == NULL || !q->websocket)
		return (0);
	if (!q->read_only && q->nmethods == 0 && q->npaths == 0)
		return (parse_error(p, "websocket: goes with read-only, "
		    "methods or path (a rule without them lets a WebSocket "
		    "through already)"));
	for (i = 0; i < q->nmethods && strcmp(q->methods[i], "GET") != 0; i++)
		;
	if (q->nmethods > 0 && i == q->nmethods)
		return (parse_error(p, "websocket: methods %s has no GET, "
		    "and a WebSocket opens with one", q->methods_text));
	return (0);
}

/* allow HOST[:PORTS] [until TIME]: a rule that has ended is left out. */
static int
kw_allow(struct parse *p, const char *arg, const char *text)
{
	struct load	*l = p->load;

	if (parse_websocket(p) == -1 ||
	    parse_rule(p, arg, text, RULE_ALLOW) == -1)
		return (-1);
	if (p->req != NULL) {
		if (rules_spec_pattern(&l->r->arena, &l->specs[l->nspecs - 1],
		    &p->req->host) == -1)
			return (parse_error(p, "out of memory"));
		l->specs[l->nspecs - 1].rule->req = p->req;
	}
	l->specs[l->nspecs - 1].rule->until = p->until;
	if (p->until != 0 && p->until <= l->now)
		l->nspecs--;		/* checked, then left out */
	else if (p->until != 0 && (l->next_end == 0 || p->until < l->next_end))
		l->next_end = p->until;
	return (0);
}

/* deny HOST[:PORTS] (every port when none is given) */
static int
kw_deny(struct parse *p, const char *arg, const char *text)
{
	return (parse_rule(p, arg, text, RULE_DENY));
}

/* allow-private ADDRESS[/LEN] */
static int
kw_allow_private(struct parse *p, const char *arg, const char *text)
{
	struct rule_spec	*spec;
	const char		*ports, *host;
	size_t			 hlen;

	if ((spec = spec_new(p, RULE_PRIVATE, text)) == NULL)
		return (parse_error(p, "out of memory"));
	if (split_host(p, arg, &host, &hlen, &ports) == -1)
		return (-1);
	if (ports != NULL)
		return (parse_error(p, "allow-private takes no port"));
	if (parse_host(p, host, hlen, spec) == -1)
		return (-1);
	if (spec->kind != TARGET_ADDR)
		return (parse_error(p, "allow-private takes an address or "
		    "prefix (like 10.20.0.0/16), not a name"));
	if (spec->plen == 0)
		return (parse_error(p, "a /0 prefix would allow every "
		    "private address"));
	p->load->nspecs++;
	return (0);
}

/* allow-vsock: the sandbox may create AF_VSOCK sockets. */
static int
kw_allow_vsock(struct parse *p, const char *arg, const char *text)
{
	p->load->allow_vsock = 1;
	return (0);
}

/*
 * Is s[0..len) an environment variable's reference at its start, "$NAME"
 * or "${NAME}"?  Returns its length, or 0.
 */
static size_t
socket_var(const char *s, size_t len)
{
	size_t	i = 1, brace;

	if (len < 2 || s[0] != '$')
		return (0);
	brace = s[1] == '{';
	i += brace;
	if (i >= len || !(isalpha((unsigned char)s[i]) || s[i] == '_'))
		return (0);
	while (i < len && (isalnum((unsigned char)s[i]) || s[i] == '_'))
		i++;
	if (brace && (i >= len || s[i++] != '}'))
		return (0);
	return (i);
}

/*
 * allow-socket PATH: the sandbox may reach this host unix socket.  PATH
 * is absolute, or starts with $NAME, ${NAME} or ~/, expanded where the
 * sandbox is made; never a socket that resolves names.
 */
static int
kw_allow_socket(struct parse *p, const char *arg, const char *text)
{
	size_t	len = strlen(arg), i, v;
	char	q[80];

	(void)text;
	for (i = 0; i < len; i++) {
		if ((unsigned char)arg[i] < 0x20 || arg[i] == 0x7f)
			return (parse_error(p, "allow-socket: control character "
			    "in '%s'", quote(q, sizeof q, arg, len)));
	}
	v = socket_var(arg, len);
	if (arg[0] != '/' && strncmp(arg, "~/", 2) != 0 &&
	    (v == 0 || (v < len && arg[v] != '/')))
		return (parse_error(p, "allow-socket takes an absolute path, "
		    "or one that starts with $NAME, ${NAME} or ~/, not '%s'",
		    quote(q, sizeof q, arg, len)));
	if (arg[0] == '/' && len >= RULES_SOCKET_MAX)
		return (parse_error(p, "allow-socket: a unix socket's path has "
		    "at most %d bytes", RULES_SOCKET_MAX - 1));
	if (namesock_is(arg))
		return (parse_error(p, "allow-socket: %s resolves names around "
		    "the gateway; it stays closed", arg));
	if (load_note(p->load, &p->load->sockets, arg, len) == -1)
		return (parse_error(p, "out of memory"));
	return (0);
}

/* The directory a pattern reads, up to its first glob character. */
static int
note_glob_dir(struct load *l, const char *pattern)
{
	size_t	end = strcspn(pattern, GLOB_CHARS);

	while (end > 0 && pattern[end - 1] != '/')
		end--;
	if (end == 0)
		return (load_note(l, &l->dirs, ".", 1));
	return (load_note(l, &l->dirs, pattern, end > 1 ? end - 1 : 1));
}

/* Refuse a preset that is not there, naming the nearest one. */
static int
preset_missing(struct parse *p, const char *name)
{
	char	near[RULES_PRESET_LEN];

	rules_preset_near(name, near, sizeof near);
	return (parse_error(p, "no preset '%s' in %s%s%s%s; pinhole check "
	    "--presets lists them", name, rules_preset_dir(),
	    near[0] != '\0' ? " (did you mean '" : "", near,
	    near[0] != '\0' ? "'?)" : ""));
}

/* include FILE | include PATTERN | include preset:NAME */
static int
kw_include(struct parse *p, const char *arg, const char *text)
{
	char		 path[4096], q[80];
	int		 n, preset = strncmp(arg, "preset:", 7) == 0;

	if (preset) {
		if (!rules_preset_name_ok(arg + 7))
			return (parse_error(p, "bad preset name '%s'",
			    quote(q, sizeof q, arg + 7, strlen(arg + 7))));
		n = snprintf(path, sizeof path, "%s/%s", rules_preset_dir(),
		    arg + 7);
	} else if (arg[0] != '/' && p->dir != NULL)
		n = snprintf(path, sizeof path, "%s/%s", p->dir, arg);
	else
		n = snprintf(path, sizeof path, "%s", arg);
	if (n < 0 || (size_t)n >= sizeof path)
		return (parse_error(p, "include path too long"));
	if (p->load->r->no_files)
		return (0);
	if (preset && access(path, F_OK) == -1 && errno == ENOENT)
		return (preset_missing(p, arg + 7));
	if (preset || strpbrk(path, GLOB_CHARS) == NULL)
		return (load_file(p->load, p, path));
	if (note_glob_dir(p->load, path) == -1)
		return (parse_error(p, "out of memory"));
	return (load_glob(p->load, p, path));
}

/* Is this a secret's name: an environment variable's, at most 64? */
static int
secret_name_ok(const char *s)
{
	size_t	i;

	if (!isalpha((unsigned char)s[0]) && s[0] != '_')
		return (0);
	for (i = 0; s[i] != '\0'; i++) {
		if (!isalnum((unsigned char)s[i]) && s[i] != '_')
			return (0);
	}
	return (i <= 64);
}

/* Is a secret of this name in the policy or this load already? */
static const struct secret *
secret_find_name(const struct parse *p, const char *name)
{
	const struct secret	*sc;

	for (sc = p->load->r->secrets; sc != NULL; sc = sc->next)
		if (strcmp(sc->pub.name, name) == 0)
			return (sc);
	for (sc = p->load->secrets; sc != NULL; sc = sc->next)
		if (strcmp(sc->pub.name, name) == 0)
			return (sc);
	return (NULL);
}

/*
 * A comma list of hosts, patterns as allow takes them without a port
 * (a secret's hosts, no-upstream): *hosts and *patterns, *k of each.
 */
static int
parse_hostlist(struct parse *p, const char *what, const char *list, size_t n,
    struct rule_spec **hosts, const char ***patterns, size_t *k)
{
	struct arena	*a = &p->load->r->arena;
	const char	*item, *comma, *end = list + n, *host, *ports;
	char		 buf[HOST_TEXT_LEN + 8], q[80];
	size_t		 i, len, hlen;

	for (*k = 1, i = 0; i < n; i++)
		*k += list[i] == ',';
	if ((*hosts = arena_alloc(a, *k * sizeof **hosts)) == NULL ||
	    (*patterns = arena_alloc(a, *k * sizeof **patterns)) == NULL)
		return (parse_error(p, "out of memory"));
	memset(*hosts, 0, *k * sizeof **hosts);
	for (i = 0, item = list; item <= end; item = comma + 1, i++) {
		if ((comma = memchr(item, ',', (size_t)(end - item))) == NULL)
			comma = end;
		len = (size_t)(comma - item);
		if (len == 0 || len >= sizeof buf)
			return (parse_error(p, "%s: bad host list '%s'", what,
			    quote(q, sizeof q, list, n)));
		memcpy(buf, item, len);
		buf[len] = '\0';
		if (split_host(p, buf, &host, &hlen, &ports) == -1)
			return (-1);
		if (ports != NULL)
			return (parse_error(p, "%s: '%s' names a port: it takes "
			    "hosts", what, quote(q, sizeof q, buf, len)));
		if (parse_host(p, host, hlen, &(*hosts)[i]) == -1 ||
		    rules_spec_pattern(a, &(*hosts)[i], &(*patterns)[i]) == -1)
			return (-1);
	}
	return (0);
}

/* The hosts of a secret, a comma list: patterns as allow takes, no port. */
static int
secret_hosts(struct parse *p, struct secret *sc, const char *list, size_t n)
{
	return (parse_hostlist(p, "secret", list, n, &sc->hosts,
	    &sc->patterns, &sc->nhosts));
}

/* Where a file the policy names is: relative to the policy file, or here. */
static const char *
policy_path(struct parse *p, const char *file, size_t n)
{
	char	path[4096], cwd[4096];
	int	len;

	if (file[0] == '/')
		len = snprintf(path, sizeof path, "%.*s", (int)n, file);
	else if (p->dir != NULL)
		len = snprintf(path, sizeof path, "%s/%.*s", p->dir, (int)n,
		    file);
	else if (getcwd(cwd, sizeof cwd) != NULL)
		len = snprintf(path, sizeof path, "%s/%.*s", cwd, (int)n, file);
	else
		return (NULL);
	if (len < 0 || (size_t)len >= sizeof path)
		return (NULL);
	return (arena_strndup(&p->load->r->arena, path, (size_t)len));
}

/* Is this header's name one a secret may go in (an HTTP token)? */
static int
secret_header_ok(const char *h, size_t n)
{
	static const char *const	 never[] = { "host", "content-length",
	    "transfer-encoding", "connection", "keep-alive",
	    "proxy-connection", "te", "trailer", "upgrade", NULL };
	const char *const		*w;
	size_t				 i;

	if (n == 0 || n > RULES_SECRET_HEADER_LEN)
		return (0);
	for (i = 0; i < n; i++) {
		if (!isalnum((unsigned char)h[i]) &&
		    strchr("!#$%&'*+-.^_`|~", h[i]) == NULL)
			return (0);
	}
	for (w = never; *w != NULL; w++) {
		if (strlen(*w) == n && strncasecmp(*w, h, n) == 0)
			return (0);
	}
	return (1);
}

/* The headers of a secret, a comma list, added to hs[*nh]. */
static int
secret_headers(struct parse *p, const char **hs, size_t *nh,
    const char *list, size_t n)
{
	const char	*item, *comma, *end = list + n;
	char		 q[80];
	size_t		 len, i;

	for (item = list; item <= end; item = comma + 1) {
		if ((comma = memchr(item, ',', (size_t)(end - item))) == NULL)
			comma = end;
		len = (size_t)(comma - item);
		if (!secret_header_ok(item, len))
			return (parse_error(p, "secret: '%s' is not a header a "
			    "secret can go in", quote(q, sizeof q, item, len)));
		for (i = 0; i < *nh; i++) {
			if (strlen(hs[i]) == len &&
			    strncasecmp(hs[i], item, len) == 0)
				return (parse_error(p, "secret: header '%s' is "
				    "given twice", quote(q, sizeof q, item,
				    len)));
		}
		if (*nh == RULES_SECRET_HEADERS_MAX)
			return (parse_error(p, "secret: more than %d headers",
			    RULES_SECRET_HEADERS_MAX));
		if ((hs[(*nh)++] = arena_strndup(&p->load->r->arena, item,
		    len)) == NULL)
			return (parse_error(p, "out of memory"));
	}
	return (0);
}

/* A secret's words after its hosts: header H,... (again), from FILE. */
static int
secret_options(struct parse *p, struct secret *sc, char *s)
{
	struct arena	*a = &p->load->r->arena;
	const char	*hs[RULES_SECRET_HEADERS_MAX], **copy;
	char		 q[80];
	size_t		 n, nh = 0;

	while ((n = next_word(&s)) != 0) {
		if (n == 6 && strncmp(s, "header", 6) == 0) {
			s += 6;
			if ((n = next_word(&s)) == 0)
				return (parse_error(p, "secret: missing header "
				    "after 'header'"));
			if (secret_headers(p, hs, &nh, s, n) == -1)
				return (-1);
		} else if (n == 4 && strncmp(s, "from", 4) == 0 &&
		    sc->pub.file == NULL) {
			s += 4;
			if ((n = next_word(&s)) == 0)
				return (parse_error(p, "secret: missing file "
				    "after 'from'"));
			if ((sc->pub.file = policy_path(p, s, n)) == NULL)
				return (parse_error(p, "secret: file path too "
				    "long"));
		} else
			return (parse_error(p, "secret: unexpected '%s'",
			    quote(q, sizeof q, s, n)));
		s += n;
	}
	if (nh == 0)
		return (0);
	if ((copy = arena_alloc(a, nh * sizeof *copy)) == NULL)
		return (parse_error(p, "out of memory"));
	memcpy(copy, hs, nh * sizeof *copy);
	sc->pub.headers = copy;
	sc->pub.nheaders = nh;
	return (0);
}

/* secret NAME for HOST[,HOST...] [header H[,H...]]... [from FILE] */
static int
kw_secret(struct parse *p, const char *arg, const char *text)
{
	struct arena	*a = &p->load->r->arena;
	struct secret	*sc;
	char		*s = p->rest, q[80], origin[4200];
	size_t		 n;

	if (!secret_name_ok(arg))
		return (parse_error(p, "secret: bad name '%s' (letters, digits "
		    "and '_', as an environment variable's)",
		    quote(q, sizeof q, arg, strlen(arg))));
	if (secret_find_name(p, arg) != NULL)
		return (parse_error(p, "secret %s is given twice", arg));
	if ((n = next_word(&s)) != 3 || strncmp(s, "for", 3) != 0)
		return (parse_error(p, "secret: expected 'for HOSTS' (%s)",
		    "secret NAME for HOST[,HOST...] [header H[,H...]] "
		    "[from FILE]"));
	s += 3;
	if ((n = next_word(&s)) == 0)
		return (parse_error(p, "secret: missing hosts"));
	if ((sc = arena_alloc(a, sizeof *sc)) == NULL)
		return (parse_error(p, "out of memory"));
	memset(sc, 0, sizeof *sc);
	if (secret_hosts(p, sc, s, n) == -1 ||
	    secret_options(p, sc, s + n) == -1)
		return (-1);
	snprintf(origin, sizeof origin, "%s:%u", p->file, p->line);
	if ((sc->pub.name = arena_strndup(a, arg, strlen(arg))) == NULL ||
	    (sc->pub.file_origin = arena_strndup(a, origin,
	    strlen(origin))) == NULL)
		return (parse_error(p, "out of memory"));
	(void)text;
	if (p->load->stail == NULL)
		p->load->stail = &p->load->secrets;
	*p->load->stail = sc;
	p->load->stail = &sc->next;
	return (0);
}

/* "FILE:LINE" of the line being parsed ("ORIGIN" for one rule). */
static const char *
parse_origin(struct parse *p)
{
	char	origin[4200];
	int	n;

	if (p->numbered)
		n = snprintf(origin, sizeof origin, "%s:%u", p->file, p->line);
	else
		n = snprintf(origin, sizeof origin, "%s", p->file);
	if (n < 0 || (size_t)n >= sizeof origin)
		n = 0;
	return (arena_strndup(&p->load->r->arena, origin, (size_t)n));
}

/* upstream http://HOST:PORT | upstream none */
static int
kw_upstream(struct parse *p, const char *arg, const char *text)
{
	struct upstream_load	*u = &p->load->up;
	struct arena		*a = &p->load->r->arena;
	struct host		 h;
	const char		*errstr;
	char			 q[80];

	(void)text;
	if (u->set)
		return (parse_error(p, "upstream is given twice (first at %s)",
		    u->up.origin));
	if ((u->up.origin = parse_origin(p)) == NULL)
		return (parse_error(p, "out of memory"));
	u->set = 1;
	if (strcmp(arg, "none") == 0)
		return (0);
	if (rules_upstream_parse(arg, &h, &u->up.port, &errstr) == -1)
		return (parse_error(p, "upstream '%s': %s", quote(q, sizeof q,
		    arg, strlen(arg)), errstr));
	if ((u->up.url = arena_strndup(a, arg, strlen(arg))) == NULL ||
	    (u->up.host = arena_strndup(a, h.text, strlen(h.text))) == NULL)
		return (parse_error(p, "out of memory"));
	return (0);
}

/* upstream-auth FILE: the upstream's credentials, read by the caller. */
static int
kw_upstream_auth(struct parse *p, const char *arg, const char *text)
{
	struct upstream_load	*u = &p->load->up;

	(void)text;
	if (u->auth != NULL)
		return (parse_error(p, "upstream-auth is given twice (first at "
		    "%s)", u->auth_origin));
	if ((u->auth = policy_path(p, arg, strlen(arg))) == NULL)
		return (parse_error(p, "upstream-auth: file path too long"));
	if ((u->auth_origin = parse_origin(p)) == NULL)
		return (parse_error(p, "out of memory"));
	return (0);
}

/* no-upstream HOST[,HOST...]: dialed directly, past the upstream. */
static int
kw_no_upstream(struct parse *p, const char *arg, const char *text)
{
	struct hostlist		*l, **tail;

	(void)text;
	if ((l = arena_alloc(&p->load->r->arena, sizeof *l)) == NULL)
		return (parse_error(p, "out of memory"));
	memset(l, 0, sizeof *l);
	if (parse_hostlist(p, "no-upstream", arg, strlen(arg), &l->hosts,
	    &l->patterns, &l->n) == -1)
		return (-1);
	for (tail = &p->load->up.direct; *tail != NULL; tail = &(*tail)->next)
		;
	*tail = l;
	return (0);
}

/* Split off the next word; returns its length (0 at the end). */
static size_t
next_word(char **s)
{
	char	*w = *s;
	size_t	 n;

	w += strspn(w, " \t\r\f\v");
	n = strcspn(w, " \t\r\f\v");
	*s = w;
	return (n);
}

/* "until TIME", *s at "until": the time into p->until. */
static int
parse_until(struct parse *p, char **s)
{
	char	q[80];
	size_t	n;

	*s += 5;
	if ((n = next_word(s)) == 0)
		return (parse_error(p, "until: missing time (%s)",
		    RULES_TIME_USAGE));
	if (rules_time_parse(*s, n, &p->until) == -1)
		return (parse_error(p, "until: bad time '%s' (%s)",
		    quote(q, sizeof q, *s, n), RULES_TIME_USAGE));
	*s += n;
	return (0);
}

/* Is this a method name (an RFC 9110 token)? */
static int
method_ok(const char *m, size_t len)
{
	size_t	i;

	for (i = 0; i < len; i++) {
		if (!isalnum((unsigned char)m[i]) &&
		    strchr("!#$%&'*+-.^_`|~", m[i]) == NULL)
			return (0);
	}
	return (len > 0 && len <= 32);
}

/*
 * Split a comma list of n bytes into arena strings, each checked by ok
 * (NULL: none); *text keeps the list as written.  Returns how many.
 */
static int
parse_list(struct parse *p, const char *s, size_t n, const char *what,
    int (*ok)(const char *, size_t, const char **), const char ***out,
    const char **text)
{
	struct arena	*a = &p->load->r->arena;
	const char	*item, *comma, *end = s + n, *errstr;
	size_t		 k = 1, i, len;
	char		 q[80];

	for (i = 0; i < n; i++)
		k += s[i] == ',';
	if ((*out = arena_alloc(a, k * sizeof **out)) == NULL ||
	    (*text = arena_strndup(a, s, n)) == NULL)
		return (parse_error(p, "out of memory"));
	for (i = 0, item = s; item <= end; item = comma + 1, i++) {
		if ((comma = memchr(item, ',', (size_t)(end - item))) == NULL)
			comma = end;
		len = (size_t)(comma - item);
		if (len == 0)
			return (parse_error(p, "%s: an empty item in '%s'",
			    what, quote(q, sizeof q, s, n)));
		errstr = "not a method name";
		if (ok != NULL ? ok(item, len, &errstr) == -1 :
		    !method_ok(item, len))
			return (parse_error(p, "%s: bad '%s': %s", what,
			    quote(q, sizeof q, item, len), errstr));
		if (((*out)[i] = arena_strndup(a, item, len)) == NULL)
			return (parse_error(p, "out of memory"));
	}
	return ((int)k);
}

/*
 * One constraint of an allow rule, *s at its first word of n bytes:
 * read-only, methods LIST, websocket, path LIST.  Returns 1 taken (*s
 * past it), 0 when the word is none, -1 on error.
 */
static int
parse_constraint(struct parse *p, char **s, size_t n)
{
	struct rule_req	*q = p->req;
	char		*w = *s;
	size_t		 k;
	int		 rv, paths = n == 4 && strncmp(w, "path", 4) == 0;
	int		 ws = n == 9 && strncmp(w, "websocket", 9) == 0;

	if (!(n == 9 && strncmp(w, "read-only", 9) == 0) && !paths &&
	    !ws && !(n == 7 && strncmp(w, "methods", 7) == 0))
		return (0);
	if (q == NULL) {
		if ((q = arena_alloc(&p->load->r->arena, sizeof *q)) == NULL)
			return (parse_error(p, "out of memory"));
		memset(q, 0, sizeof *q);
		p->req = q;
	}
	*s += n;
	if (ws) {
		if (q->websocket)
			return (parse_error(p, "websocket given twice"));
		q->websocket = 1;
		return (1);
	}
	if (w[0] == 'r') {
		if (q->read_only)
			return (parse_error(p, "read-only given twice"));
		q->read_only = 1;
		return (1);
	}
	if (paths ? q->npaths > 0 : q->nmethods > 0)
		return (parse_error(p, "%s given twice", paths ? "path" :
		    "methods"));
	if ((k = next_word(s)) == 0)
		return (parse_error(p, "%s: missing list (%s)", paths ?
		    "path" : "methods", paths ? "path /PREFIX/**,/FILE" :
		    "methods GET,HEAD"));
	rv = paths ? parse_list(p, *s, k, "path", rules_pattern_ok,
	    &q->paths, &q->paths_text) : parse_list(p, *s, k, "methods", NULL,
	    &q->methods, &q->methods_text);
	if (rv == -1)
		return (-1);
	if (paths)
		q->npaths = (size_t)rv;
	else
		q->nmethods = (size_t)rv;
	*s += k;
	return (1);
}

/* Parse one line, trimmed and its comment gone. */
static int
parse_words(struct parse *p, const char *line)
{
	const struct keyword	*kw, *near;
	char			 copy[RULES_LINE_MAX + 1], *s = copy, *word, *arg;
	char			 q[80];
	size_t			 n;
	int			 rv;

	snprintf(copy, sizeof copy, "%s", line);

	if ((n = next_word(&s)) == 0)
		return (0);
	word = s;
	s += n;
	if (*s != '\0')
		*s++ = '\0';
	if ((kw = keyword_find(word, &near)) == NULL)
		return (parse_error(p, "unknown directive '%s'%s%s%s",
		    quote(q, sizeof q, word, n), near ? " (did you mean '" : "",
		    near ? near->name : "", near ? "'?)" : ""));
	if ((n = next_word(&s)) == 0 && kw->noarg)
		return (kw->handler(p, "", line));
	if (n == 0)
		return (parse_error(p, "%s: missing argument (%s)", kw->name,
		    kw->usage));
	if (kw->noarg)
		return (parse_error(p, "%s takes no argument", kw->name));
	arg = s;
	s += n;
	if (*s != '\0')
		*s++ = '\0';
	p->kw = kw->name;
	p->until = 0;
	p->req = NULL;
	p->rest = kw->rest ? s : NULL;
	while (!kw->rest && (n = next_word(&s)) != 0) {
		if (n == 5 && strncmp(s, "until", 5) == 0 && kw->can_end &&
		    p->until == 0) {
			if (parse_until(p, &s) == -1)
				return (-1);
		} else if (kw->constraints && (rv = parse_constraint(p, &s,
		    n)) != 0) {
			if (rv == -1)
				return (-1);
		} else
			return (parse_error(p, "%s: unexpected '%s' (%s)",
			    kw->name, quote(q, sizeof q, s, n), kw->usage));
	}
	return (kw->handler(p, arg, line));
}

/*
 * Parse a time in UTC, "YYYY-MM-DDTHH:MM:SSZ" (RFC 3339, nothing else),
 * of len bytes.  Returns 0, or -1 when malformed or not a real date.
 */
int
rules_time_parse(const char *s, size_t len, time_t *t)
{
	static const char	 shape[] = "dddd-dd-ddTdd:dd:ddZ";
	struct tm		 tm, back;
	size_t			 i;

	if (len != sizeof shape - 1)
		return (-1);
	for (i = 0; i < len; i++) {
		if (shape[i] == 'd' ? (s[i] < '0' || s[i] > '9') :
		    s[i] != shape[i])
			return (-1);
	}
	memset(&tm, 0, sizeof tm);
	tm.tm_year = atoi(s) - 1900;
	tm.tm_mon = atoi(s + 5) - 1;
	tm.tm_mday = atoi(s + 8);
	tm.tm_hour = atoi(s + 11);
	tm.tm_min = atoi(s + 14);
	tm.tm_sec = atoi(s + 17);
	back = tm;
	if ((*t = timegm(&tm)) == (time_t)-1 || tm.tm_mday != back.tm_mday ||
	    tm.tm_mon != back.tm_mon || tm.tm_hour != back.tm_hour ||
	    tm.tm_min != back.tm_min || tm.tm_sec != back.tm_sec)
		return (-1);
	return (*t > 0 ? 0 : -1);
}

/* Write a time as rules_time_parse() reads it. */
void
rules_time_format(time_t t, char *buf, size_t len)
{
	struct tm	tm;

	if (gmtime_r(&t, &tm) == NULL || strftime(buf, len,
	    "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		snprintf(buf, len, "?");
}

/* Parse one line of len bytes. */
static int
parse_line(struct parse *p, const char *s, size_t len)
{
	char	 buf[RULES_LINE_MAX + 1], *hash;
	size_t	 end;

	if (len > RULES_LINE_MAX)
		return (parse_error(p, "line longer than %d bytes",
		    RULES_LINE_MAX));
	if (memchr(s, '\0', len) != NULL)
		return (parse_error(p, "NUL byte in line"));
	memcpy(buf, s, len);
	buf[len] = '\0';
	if ((hash = strchr(buf, '#')) != NULL)
		*hash = '\0';
	end = strlen(buf);
	while (end > 0 && strchr(" \t\r\f\v", buf[end - 1]) != NULL)
		buf[--end] = '\0';
	return (parse_words(p, buf + strspn(buf, " \t\r\f\v")));
}

/* Parse a whole text, line by line. */
int
parse_text(struct parse *p, const char *text, size_t len)
{
	const char	*nl, *end = text + len;

	while (text < end) {
		if ((nl = memchr(text, '\n', end - text)) == NULL)
			nl = end;
		p->line++;
		if (parse_line(p, text, nl - text) == -1)
			return (-1);
		text = nl + 1;
	}
	return (0);
}

/* Refuse a file already being read further up the include chain. */
static int
check_loop(const struct parse *parent, const struct stat *st,
    const char *path)
{
	const struct parse	*p;
	char			 q[80];

	for (p = parent; p != NULL; p = p->parent) {
		if (p->dev == st->st_dev && p->ino == st->st_ino)
			return (parse_error(parent, "include loop: '%s' is "
			    "already being read", quote(q, sizeof q, path,
			    strlen(path))));
	}
	if (parent != NULL && parent->depth >= RULES_DEPTH_MAX)
		return (parse_error(parent, "includes nested more than %d deep",
		    RULES_DEPTH_MAX));
	return (0);
}

/* Read a regular file whole into a new buffer. */
static char *
read_whole(int fd, size_t size, size_t *len)
{
	char	*buf;
	ssize_t	 n = 0;

	if ((buf = malloc(size + 1)) == NULL)
		return (NULL);
	*len = 0;
	while (*len <= size) {
		n = read(fd, buf + *len, size + 1 - *len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		*len += n;
	}
	if (n == -1 || *len > size) {
		if (*len > size)
			errno = EFBIG;
		free(buf);
		return (NULL);
	}
	return (buf);
}

/* Report a file that cannot be read, at the include line if any. */
static int
file_error(struct load *l, const struct parse *parent, const char *path,
    const char *why)
{
	struct parse	top = { .load = l, .file = path };
	char		q[256];

	if (parent == NULL)
		return (parse_error(&top, "%s", why));
	return (parse_error(parent, "cannot read '%s': %s",
	    quote(q, sizeof q, path, strlen(path)), why));
}

/*
 * Note a file this load reads (for rules_files()), or a directory
 * whose new files it would read (rules_dirs()): len bytes of path.
 */
int
load_note(struct load *l, struct rules_file **list, const char *path,
    size_t len)
{
	struct rules_file	*f, **tail;

	if ((f = arena_alloc(&l->r->arena, sizeof *f)) == NULL ||
	    (f->path = arena_strndup(&l->r->arena, path, len)) == NULL)
		return (-1);
	f->next = NULL;
	for (tail = list; *tail != NULL; tail = &(*tail)->next)
		;
	*tail = f;
	return (0);
}

/* Parse a file's text as included by parent (NULL at the top). */
int
parse_file(struct load *l, const struct parse *parent, const char *path,
    const struct stat *st, const char *text, size_t len)
{
	struct parse	 p = { .load = l, .parent = parent, .numbered = 1 };
	const char	*slash = strrchr(path, '/');

	p.dev = st->st_dev;
	p.ino = st->st_ino;
	p.depth = parent != NULL ? parent->depth + 1 : 0;
	p.file = arena_strndup(&l->r->arena, path, strlen(path));
	p.dir = slash == NULL ? "." : slash == path ? "/" :
	    arena_strndup(&l->r->arena, path, slash - path);
	if (p.file == NULL || p.dir == NULL ||
	    load_note(l, &l->files, path, strlen(path)) == -1)
		return (file_error(l, parent, path, "out of memory"));
	return (parse_text(&p, text, len));
}

/* Open, check and parse a file. */
int
load_file(struct load *l, const struct parse *parent, const char *path)
{
	struct stat	 st;
	char		*text = NULL;
	size_t		 len;
	int		 fd, rv = -1;

	if ((fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) == -1)
		return (file_error(l, parent, path, strerror(errno)));
	if (fstat(fd, &st) == -1) {
		file_error(l, parent, path, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode) && !S_ISCHR(st.st_mode)) {	/* /dev/null */
		file_error(l, parent, path, "not a regular file");
		goto out;
	}
	if (check_loop(parent, &st, path) == -1)
		goto out;
	if (st.st_size > RULES_FILE_MAX) {
		file_error(l, parent, path, "file too large");
		goto out;
	}
	if ((text = read_whole(fd, st.st_size, &len)) == NULL) {
		file_error(l, parent, path, strerror(errno));
		goto out;
	}
	rv = parse_file(l, parent, path, &st, text, len);
out:
	free(text);
	close(fd);
	return (rv);
}

/* glob(3) met a directory it cannot read: only a missing one is none. */
static int
glob_error_cb(const char *path, int err)
{
	(void)path;
	return (err != ENOENT && err != ENOTDIR);
}

/* Order paths by their bytes, whatever the locale. */
static int
path_cmp(const void *a, const void *b)
{
	return (strcmp(*(char *const *)a, *(char *const *)b));
}

/* Read the regular files a pattern matches, in byte order; none is none. */
int
load_glob(struct load *l, const struct parse *parent, const char *pattern)
{
	struct stat	st;
	glob_t		g;
	size_t		i;
	char		why[128];
	int		rv;

	memset(&g, 0, sizeof g);
	errno = 0;
	if ((rv = glob(pattern, GLOB_NOSORT, glob_error_cb, &g)) ==
	    GLOB_NOMATCH) {
		globfree(&g);
		return (0);
	}
	if (rv != 0) {
		snprintf(why, sizeof why, "%s%s%s", rv == GLOB_NOSPACE ?
		    "out of memory" : "cannot read its directory",
		    errno != 0 ? ": " : "", errno != 0 ? strerror(errno) : "");
		globfree(&g);
		return (file_error(l, parent, pattern, why));
	}
	if (g.gl_pathc > GLOB_FILES_MAX) {
		globfree(&g);
		snprintf(why, sizeof why, "matches more than %d files",
		    GLOB_FILES_MAX);
		return (file_error(l, parent, pattern, why));
	}
	qsort(g.gl_pathv, g.gl_pathc, sizeof *g.gl_pathv, path_cmp);
	for (i = 0, rv = 0; i < g.gl_pathc && rv == 0; i++) {
		if (stat(g.gl_pathv[i], &st) == 0 && !S_ISREG(st.st_mode))
			continue;	/* a directory the pattern named */
		rv = load_file(l, parent, g.gl_pathv[i]);
	}
	globfree(&g);
	return (rv);
}
