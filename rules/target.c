/*
 * A rule's target read: a host, a wildcard, an address or a prefix, and
 * its ports; and the messages a parse writes (parse_error(), quote()).
 * Below the directives (parse.c) and the loads (load.c).
 */
#include "config.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rules/parse-int.h"

static const struct port_range ports_default[] = { { 80, 80 }, { 443, 443 } };
static const struct port_range ports_all[] = { { 1, 65535 } };

/* Write "FILE:LINE: message" (or "FILE: message") into the error buffer. */
int
parse_error(const struct parse *p, const char *fmt, ...)
{
	struct load	*l = p->load;
	va_list		 ap;
	int		 n;

	if (l->err == NULL || l->errlen == 0)
		return (-1);
	if (p->numbered)
		n = snprintf(l->err, l->errlen, "%s:%u: ", p->file, p->line);
	else
		n = snprintf(l->err, l->errlen, "%s: ", p->file);
	if (n < 0 || (size_t)n >= l->errlen)
		return (-1);
	va_start(ap, fmt);
	vsnprintf(l->err + n, l->errlen - n, fmt, ap);
	va_end(ap);
	return (-1);
}

/* Copy text for a message, escaping what is not printable ASCII. */
const char *
quote(char *buf, size_t size, const char *s, size_t len)
{
	size_t	i, n = 0;

	for (i = 0; i < len && n + 8 < size; i++) {
		if (s[i] >= 0x20 && s[i] < 0x7f)
			buf[n++] = s[i];
		else
			n += snprintf(buf + n, size - n, "\\x%02x",
			    (unsigned char)s[i]);
	}
	if (i < len && n + 4 < size)
		n += snprintf(buf + n, size - n, "...");
	buf[n] = '\0';
	return (buf);
}

/* Make room for one more parsed rule, its record in the arena. */
struct rule_spec *
spec_new(struct parse *p, enum rule_action action, const char *text)
{
	struct load		*l = p->load;
	struct rule_spec	*s;
	size_t			 ncap;

	if (l->nspecs == l->cap) {
		ncap = l->cap ? l->cap * 2 : 64;
		if ((s = reallocarray(l->specs, ncap, sizeof *s)) == NULL)
			return (NULL);
		l->specs = s;
		l->cap = ncap;
	}
	s = &l->specs[l->nspecs];
	memset(s, 0, sizeof *s);
	if ((s->rule = arena_alloc(&l->r->arena, sizeof *s->rule)) == NULL)
		return (NULL);
	memset(s->rule, 0, sizeof *s->rule);
	s->rule->action = action;
	s->rule->layer = l->layer;
	s->rule->file = p->file;
	s->rule->line = p->numbered ? p->line : 0;
	if ((s->rule->text = arena_strndup(&l->r->arena, text,
	    strlen(text))) == NULL)
		return (NULL);
	return (s);
}

/* Parse one port or range of a list. */
static int
parse_port_item(const char *s, size_t len, struct port_range *pr)
{
	const char	*dash = memchr(s, '-', len);

	if (dash == NULL) {
		if (port_parse(s, len, &pr->lo) == -1)
			return (-1);
		pr->hi = pr->lo;
		return (0);
	}
	if (port_parse(s, dash - s, &pr->lo) == -1 ||
	    port_parse(dash + 1, s + len - dash - 1, &pr->hi) == -1)
		return (-1);
	return (pr->lo <= pr->hi ? 0 : -1);
}

/* Parse ":PORTS": "443", "22,443", "8000-8100", "*". */
static int
parse_ports(struct parse *p, const char *s, struct rule_spec *spec)
{
	struct port_range	*pr;
	const char		*comma;
	size_t			 n = 1, i, len;
	char			 q[64];

	if (strcmp(s, "*") == 0) {
		spec->rule->ports = ports_all;
		spec->rule->nports = 1;
		return (0);
	}
	for (i = 0; s[i] != '\0'; i++)
		n += s[i] == ',';
	if ((pr = arena_alloc(&p->load->r->arena, n * sizeof *pr)) == NULL)
		return (parse_error(p, "out of memory"));
	for (i = 0; i < n; i++, s = comma + 1) {
		if ((comma = strchr(s, ',')) == NULL)
			comma = s + strlen(s);
		len = comma - s;
		if (parse_port_item(s, len, &pr[i]) == -1)
			return (parse_error(p, "bad port '%s' (a port 1 to 65535,"
			    " a list like 22,443, a range like 8000-8100, or *)",
			    quote(q, sizeof q, s, len)));
	}
	spec->rule->ports = pr;
	spec->rule->nports = n;
	spec->listed = 1;
	return (0);
}

/* Parse "ADDRESS/LEN" into an address prefix. */
int
parse_cidr(struct parse *p, const char *s, size_t len, struct rule_spec *spec)
{
	const char	*slash = memchr(s, '/', len), *errstr;
	struct host	 h;
	uint16_t	 plen;
	uint8_t		 masked[16];
	char		 q[80], t[HOST_TEXT_LEN];

	quote(q, sizeof q, s, len);
	if (host_parse(s, slash - s, &h, &errstr) == -1 || h.kind == HOST_NAME)
		return (parse_error(p, "bad address in '%s'", q));
	spec->alen = h.kind == HOST_IPV4 ? 4 : 16;
	if (s + len - slash - 1 > 3 ||
	    port_parse(slash + 1, s + len - slash - 1, &plen) == -1) {
		if (s + len - slash - 1 != 1 || slash[1] != '0')
			return (parse_error(p, "bad prefix length in '%s'", q));
		plen = 0;
	}
	if (spec->alen == 4 && host_is_v6_text(s, slash - s)) {
		if (plen < 96)
			return (parse_error(p, "prefix length in '%s' leaves "
			    "the IPv4-mapped range", q));
		plen -= 96;
	}
	if (plen > 8 * spec->alen)
		return (parse_error(p, "prefix length in '%s' is more than %zu",
		    q, 8 * spec->alen));
	addr_mask(masked, h.addr, spec->alen, plen);
	if (memcmp(masked, h.addr, spec->alen) != 0) {
		addr_format(t, sizeof t, masked, spec->alen);
		return (parse_error(p, "'%s' has bits set past the prefix "
		    "(did you mean %s/%u?)", q, t, plen));
	}
	memcpy(spec->addr, h.addr, spec->alen);
	spec->plen = plen;
	spec->kind = TARGET_ADDR;
	return (0);
}

/* Parse the host part of a rule: name, *.name, address or prefix. */
int
parse_host(struct parse *p, const char *s, size_t len, struct rule_spec *spec)
{
	struct host	 h;
	const char	*errstr;
	char		 q[80];
	int		 wild = len >= 2 && s[0] == '*' && s[1] == '.';

	quote(q, sizeof q, s, len);
	if (len == 1 && s[0] == '*')
		return (parse_error(p, "'*' alone would match every host: "
		    "name the hosts (a wildcard needs a domain: *.example.com)"));
	if (memchr(s, '/', len) != NULL)
		return (parse_cidr(p, s, len, spec));
	if (wild) {
		s += 2;
		len -= 2;
	}
	if (host_parse(s, len, &h, &errstr) == -1)
		return (parse_error(p, "bad host '%s': %s", q, errstr));
	if (wild && h.kind != HOST_NAME)
		return (parse_error(p, "bad host '%s': a wildcard needs a name "
		    "after '*.'", q));
	if (h.kind != HOST_NAME) {
		spec->kind = TARGET_ADDR;
		spec->alen = h.kind == HOST_IPV4 ? 4 : 16;
		spec->plen = 8 * spec->alen;
		memcpy(spec->addr, h.addr, spec->alen);
		return (0);
	}
	spec->kind = wild ? TARGET_WILD : TARGET_NAME;
	if ((spec->name = arena_strndup(&p->load->r->arena, h.text,
	    strlen(h.text))) == NULL)
		return (parse_error(p, "out of memory"));
	return (0);
}

/*
 * Split a rule's argument into host and ports: "HOST", "HOST:PORTS",
 * "[V6]", "[V6]:PORTS", or a bare IPv6 address (no ports).
 */
static int
split_ports(struct parse *p, const char *arg, size_t *hlen, const char **ports)
{
	const char	*close, *colon;

	*ports = NULL;
	if (arg[0] == '[') {
		if ((close = strchr(arg, ']')) == NULL)
			return (parse_error(p, "missing ']' after IPv6 address"));
		if (close[1] == ':')
			*ports = close + 2;
		else if (close[1] != '\0')
			return (parse_error(p, "unexpected text after ']' "
			    "(write [ADDRESS]:PORTS)"));
		*hlen = close + 1 - arg;
		return (0);
	}
	colon = strchr(arg, ':');
	if (colon != NULL && strchr(colon + 1, ':') == NULL) {
		*ports = colon + 1;
		*hlen = colon - arg;
	} else
		*hlen = strlen(arg);
	return (0);
}

/* Split a rule's argument and strip the brackets of "[V6]" or "[V6/LEN]". */
int
split_host(struct parse *p, const char *arg, const char **host, size_t *hlen,
    const char **ports)
{
	const char	*kw = p->kw;
	char		 hint[512], q[80];

	if (kw != NULL && strcmp(kw, "allow") != 0 && strcmp(kw, "deny") != 0)
		kw = NULL;
	if (host_url_hint(arg, strlen(arg), kw, hint, sizeof hint))
		return (parse_error(p, "bad host '%s': %s", quote(q, sizeof q,
		    arg, strlen(arg)), hint));
	*host = arg;
	if (split_ports(p, arg, hlen, ports) == -1)
		return (-1);
	if (*hlen >= 2 && arg[0] == '[' && arg[*hlen - 1] == ']') {
		(*host)++;
		*hlen -= 2;
		if (!host_is_v6_text(*host, *hlen))
			return (parse_error(p, "brackets are only for IPv6 "
			    "addresses"));
	}
	return (0);
}

/* Parse a rule's target and ports, without the checks of an allow rule. */
struct rule_spec *
parse_target(struct parse *p, const char *arg, const char *text,
    enum rule_action action)
{
	struct rule_spec	*spec;
	const char		*ports, *host;
	size_t			 hlen;

	if ((spec = spec_new(p, action, text)) == NULL) {
		parse_error(p, "out of memory");
		return (NULL);
	}
	if (split_host(p, arg, &host, &hlen, &ports) == -1)
		return (NULL);
	if (parse_host(p, host, hlen, spec) == -1)
		return (NULL);
	if (ports != NULL && parse_ports(p, ports, spec) == -1)
		return (NULL);
	if (ports == NULL) {
		spec->rule->ports = action == RULE_DENY ? ports_all :
		    ports_default;
		spec->rule->nports = action == RULE_DENY ? 1 : 2;
	}
	return (spec);
}

/* Parse an allow or deny rule. */
int
parse_rule(struct parse *p, const char *arg, const char *text,
    enum rule_action action)
{
	struct rule_spec	*spec;
	int			 ps;

	if ((spec = parse_target(p, arg, text, action)) == NULL)
		return (-1);
	if (action == RULE_ALLOW && spec->kind == TARGET_ADDR &&
	    spec->plen == 0)
		return (parse_error(p, "a /0 prefix would allow every address"));
	if (action == RULE_ALLOW && spec->kind == TARGET_WILD &&
	    (ps = rules_public_suffix(p->load->r, spec->name)) != 0)
		return (parse_error(p, ps == -1 ? "cannot load the public "
		    "suffix list" : "'*.%s' would match every site under the "
		    "public suffix '%s': name the site (*.example.%s)",
		    spec->name, spec->name, spec->name));
	p->load->nspecs++;
	return (0);
}
