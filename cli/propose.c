/*
 * pinhole log --propose: from the refusals of the audit log, the rules
 * that would have allowed them.  Each host refused by no rule but the
 * default deny becomes an allow line with the ports it was refused on
 * (none for a name only its DNS answer refused: the default 80 and
 * 443); PROPOSE_WILD names or more under one registrable domain become
 * one wildcard.  A deny rule, a special-purpose address and a rule's
 * constraints are said in comments: no allow line lifts the first two,
 * and the third is the rule's to widen.  Every value comes from the log,
 * which is untrusted: hosts go out only as canonical names or
 * addresses, and anything else is escaped.
 */
#include "config.h"

#include <search.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/pinhole.h"
#include "cli/propose.h"
#include "lib/json.h"
#include "proxy/audit/audit.h"
#include "rules/rules.h"

#define PROPOSE_PORTS	32		/* ports kept of one host */
#define PROPOSE_NAMES	3		/* names a wildcard's comment lists */
#define PROPOSE_COL	40		/* where a line's comment starts */

/* What could have lifted a refusal. */
enum propose_kind {
	PROPOSE_ALLOW,			/* an allow rule */
	PROPOSE_DENY,			/* nothing: a deny rule refused it */
	PROPOSE_PRIVATE,		/* only allow-private */
	PROPOSE_CONSTRAINT,		/* the rule's constraints refused it */
	PROPOSE_KINDS
};

/* One host (and for an allow, the wildcard it may go under). */
struct propose_host {
	char			*key;		/* kind letter, host */
	const char		*host;		/* in key */
	enum propose_kind	 kind;
	long long		 n;		/* attempts refused */
	uint16_t		 ports[PROPOSE_PORTS];
	size_t			 nports;
	int			 more;		/* ports past PROPOSE_PORTS */
	char			*note;		/* rule, address or why */
	struct propose_host	*wild;		/* the wildcard it is under */
	size_t			 names;		/* a wildcard's names */
};

struct propose {
	void			 *root;		/* tsearch tree by key */
	struct propose_host	**v;
	size_t			  n;
	size_t			  cap;
	long long		  other;	/* refused for other reasons */
	struct rules		 *psl;		/* for registrable domains */
};

/* Make an empty proposal. */
struct propose *
propose_create(void)
{
	struct propose	*p;

	if ((p = calloc(1, sizeof *p)) == NULL)
		return (NULL);
	if ((p->psl = rules_create()) == NULL) {
		free(p);
		return (NULL);
	}
	return (p);
}

/* Compare hosts by key, for tsearch. */
static int
propose_cmp(const void *a, const void *b)
{
	return (strcmp(((const struct propose_host *)a)->key,
	    ((const struct propose_host *)b)->key));
}

/* Free a proposal. */
void
propose_free(struct propose *p)
{
	size_t	i;

	if (p == NULL)
		return;
	for (i = 0; i < p->n; i++) {
		tdelete(p->v[i], &p->root, propose_cmp);
		free(p->v[i]->key);
		free(p->v[i]->note);
		free(p->v[i]);
	}
	free(p->v);
	rules_free(p->psl);
	free(p);
}

/* Find or add the entry of a host of a kind. */
static struct propose_host *
propose_get(struct propose *p, enum propose_kind kind, const char *host)
{
	struct propose_host	 find, *h, **found, **v;
	char			 key[HOST_TEXT_LEN + 4];

	snprintf(key, sizeof key, "%c %s", 'a' + kind, host);
	find.key = key;
	if ((found = tfind(&find, &p->root, propose_cmp)) != NULL)
		return (*found);
	if (p->n == p->cap) {
		p->cap = p->cap == 0 ? 64 : p->cap * 2;
		if ((v = reallocarray(p->v, p->cap, sizeof *v)) == NULL)
			return (NULL);
		p->v = v;
	}
	if ((h = calloc(1, sizeof *h)) == NULL ||
	    (h->key = strdup(key)) == NULL ||
	    tsearch(h, &p->root, propose_cmp) == NULL) {
		if (h != NULL)
			free(h->key);
		free(h);
		return (NULL);
	}
	h->host = h->key + 2;
	h->kind = kind;
	p->v[p->n++] = h;
	return (h);
}

/* Note a port a host was refused on. */
static void
propose_port(struct propose_host *h, long long port)
{
	size_t	i;

	if (port < 1 || port > 65535)
		return;
	for (i = 0; i < h->nports; i++) {
		if (h->ports[i] == port)
			return;
	}
	if (h->nports == PROPOSE_PORTS)
		h->more = 1;
	else
		h->ports[h->nports++] = (uint16_t)port;
}

/* How many attempts a line stands for: a DNS line may say it repeats. */
static long long
propose_count(const struct audit_rec *rec)
{
	const char	*d = audit_rec_str(rec, "detail");
	long long	 n;

	if (d != NULL && sscanf(d, "repeated %lld times", &n) == 1 && n > 0)
		return (n);
	return (1);
}

/* The special-purpose class of an address, or ADDR_PUBLIC. */
static enum addr_class
propose_class(const char *addr)
{
	struct host	 h;
	const char	*errstr;

	if (addr == NULL || host_parse(addr, strlen(addr), &h,
	    &errstr) == -1 || h.kind == HOST_NAME)
		return (ADDR_PUBLIC);
	return (addr_classify(h.addr, h.kind == HOST_IPV4 ? 4 : 16));
}

/*
 * Is a host one an allow line may name: a canonical name or address?
 * (What the log holds is untrusted.)
 */
static int
propose_host_ok(const char *s)
{
	struct host	 h;
	const char	*errstr;

	return (host_parse(s, strlen(s), &h, &errstr) == 0 &&
	    strcmp(h.text, s) == 0);
}

/* Which kind of refusal a deny line is; -1 for one not the policy's. */
static int
propose_kind(const struct audit_rec *rec, const char *host, const char **note)
{
	static const char *const	 lifted[] = { "denied-by-policy",
	    "ip-literal", "port", "default-deny", NULL };
	const char			*reason = audit_rec_str(rec, "reason");
	const char			*ev = audit_rec_str(rec, "event");
	const char			*rule = audit_rec_str(rec, "rule");
	const char *const		*l;

	*note = NULL;
	if (reason != NULL && strcmp(reason, "constraint") == 0) {
		*note = audit_rec_str(rec, "detail");
		return (PROPOSE_CONSTRAINT);
	}
	if (reason != NULL && strcmp(reason, "private-address") == 0) {
		*note = audit_rec_str(rec, "addr");
		return (PROPOSE_PRIVATE);
	}
	if (propose_class(host) != ADDR_PUBLIC)
		return (PROPOSE_PRIVATE);
	if (audit_rec_str(rec, "ask") == NULL && rule != NULL) {
		*note = rule;
		return (PROPOSE_DENY);
	}
	if (ev != NULL && strcmp(ev, "dns") == 0)
		return (PROPOSE_ALLOW);
	for (l = lifted; reason != NULL && *l != NULL; l++) {
		if (strcmp(reason, *l) == 0)
			return (PROPOSE_ALLOW);
	}
	return (-1);
}

/* Count one line of the log. */
int
propose_add(struct propose *p, const struct audit_rec *rec)
{
	const char		*verdict = audit_rec_str(rec, "verdict");
	const char		*ev = audit_rec_str(rec, "event");
	const char		*host = audit_rec_str(rec, "host"), *note;
	struct propose_host	*h;
	int			 kind;

	if (verdict == NULL || strcmp(verdict, "deny") != 0 || ev == NULL ||
	    (strcmp(ev, "connect") != 0 && strcmp(ev, "request") != 0 &&
	    strcmp(ev, "dns") != 0))
		return (0);
	if (host == NULL)
		host = audit_rec_str(rec, "qname");
	if (host == NULL || strlen(host) >= HOST_TEXT_LEN ||
	    (kind = propose_kind(rec, host, &note)) == -1 ||
	    (kind == PROPOSE_ALLOW && !propose_host_ok(host))) {
		p->other += propose_count(rec);
		return (0);
	}
	if ((h = propose_get(p, kind, host)) == NULL)
		return (-1);
	h->n += propose_count(rec);
	propose_port(h, audit_rec_num(rec, "port"));
	if (note != NULL && h->note == NULL && (h->note = strdup(note)) == NULL)
		return (-1);
	return (0);
}

/* Compare port numbers, for qsort. */
static int
propose_port_cmp(const void *a, const void *b)
{
	uint16_t	x = *(const uint16_t *)a, y = *(const uint16_t *)b;

	return ((x > y) - (x < y));
}

/* Write ":PORTS" of a host (nothing for none: the default ports). */
static int
propose_ports(const struct propose_host *h, char *buf, size_t len)
{
	uint16_t	ports[PROPOSE_PORTS];
	size_t		i, off = 0;

	buf[0] = '\0';
	memcpy(ports, h->ports, h->nports * sizeof *ports);
	qsort(ports, h->nports, sizeof *ports, propose_port_cmp);
	for (i = 0; i < h->nports && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%c%u",
		    i == 0 ? ':' : ',', ports[i]);
	return ((int)off);
}

/*
 * Put names under a wildcard where PROPOSE_WILD of them or more share a
 * registrable domain (not the domain itself: *.example.com is not
 * example.com).
 */
static int
propose_group(struct propose *p)
{
	struct propose_host	*h, *w;
	const char		*reg;
	char			 star[HOST_TEXT_LEN + 4];
	size_t			 i, n = p->n, k;

	for (i = 0; i < n; i++) {
		h = p->v[i];
		if (h->kind != PROPOSE_ALLOW ||
		    (reg = rules_registrable(p->psl, h->host)) == NULL ||
		    reg == h->host || propose_class(reg) != ADDR_PUBLIC)
			continue;
		snprintf(star, sizeof star, "*.%s", reg);
		if ((w = propose_get(p, PROPOSE_KINDS, star)) == NULL)
			return (-1);
		h->wild = w;
		w->names++;
		w->n += h->n;
		for (k = 0; k < h->nports; k++)
			propose_port(w, h->ports[k]);
		w->more |= h->more;
	}
	return (0);
}

/* Order hosts by count, most first, then by key. */
static int
propose_by_count(const void *a, const void *b)
{
	const struct propose_host	*x = *(struct propose_host *const *)a;
	const struct propose_host	*y = *(struct propose_host *const *)b;

	if (x->n != y->n)
		return (x->n < y->n ? 1 : -1);
	return (strcmp(x->key, y->key));
}

/* Print the names a wildcard stands for, in a comment. */
static void
propose_names(FILE *f, const struct propose *p, const struct propose_host *w)
{
	size_t	i, k = 0;

	for (i = 0; i < p->n && k < PROPOSE_NAMES; i++) {
		if (p->v[i]->wild == w)
			fprintf(f, "%s%s", k++ == 0 ? ": " : ", ",
			    p->v[i]->host);
	}
	if (w->names > k)
		fprintf(f, " and %zu more", w->names - k);
}

/* Print one allow line, and its count as a comment. */
static void
propose_line(FILE *f, const struct propose *p, const struct propose_host *h)
{
	char	ports[PROPOSE_PORTS * 6 + 2];
	int	n;

	propose_ports(h, ports, sizeof ports);
	n = fprintf(f, "allow %s%s", h->host, ports);
	fprintf(f, "%*s# %lld refused", n < PROPOSE_COL ? PROPOSE_COL - n : 1,
	    "", h->n);
	if (h->kind == PROPOSE_KINDS)
		propose_names(f, p, h);
	if (h->more)
		fprintf(f, " (and on more ports: pinhole log --blocked "
		    "--host %s)", h->host);
	fputc('\n', f);
}

/* Print the allow lines; how many. */
static size_t
propose_allow(FILE *f, const struct propose *p)
{
	const struct propose_host	*h;
	size_t				 i, n = 0;

	for (i = 0; i < p->n; i++) {
		h = p->v[i];
		if (h->kind == PROPOSE_KINDS && h->names < PROPOSE_WILD)
			continue;
		if (h->kind != PROPOSE_KINDS && (h->kind != PROPOSE_ALLOW ||
		    (h->wild != NULL && h->wild->names >= PROPOSE_WILD)))
			continue;
		if (n++ == 0)
			fprintf(f, "# The rules that would have allowed what "
			    "was refused; add them with pinhole allow:\n");
		propose_line(f, p, h);
	}
	return (n);
}

/* Print one host no allow line lifts, in a comment. */
static void
propose_none(FILE *f, const struct propose_host *h)
{
	char			ports[PROPOSE_PORTS * 6 + 2];
	const char		*addr = h->note != NULL ? h->note : h->host;
	enum addr_class		c = propose_class(addr);

	propose_ports(h, ports, sizeof ports);
	fprintf(f, "#   ");
	cmd_print_escaped(f, h->host);
	cmd_print_escaped(f, ports);
	fprintf(f, ": %lld refused", h->n);
	if (h->kind == PROPOSE_DENY) {
		fprintf(f, " by the deny rule ");
		cmd_print_escaped(f, h->note);
	} else if (h->kind == PROPOSE_CONSTRAINT) {
		fprintf(f, " by a rule's constraints");
		if (h->note != NULL) {
			fprintf(f, " (");
			cmd_print_escaped(f, h->note);
			fprintf(f, ")");
		}
	} else {
		if (h->note != NULL && strcmp(h->note, h->host) != 0) {
			fprintf(f, ": it resolved to ");
			cmd_print_escaped(f, addr);
		}
		fprintf(f, ", a special-purpose address (%s): only 'allow-"
		    "private ", c == ADDR_PUBLIC ? "this host's own" :
		    addr_class_name(c));
		cmd_print_escaped(f, addr);
		fprintf(f, "' lifts that");
	}
	fputc('\n', f);
}

/* Print the hosts of one kind no allow line lifts. */
static void
propose_kind_print(FILE *f, const struct propose *p, enum propose_kind kind,
    const char *title)
{
	size_t	i, n = 0;

	for (i = 0; i < p->n; i++) {
		if (p->v[i]->kind != kind)
			continue;
		if (n++ == 0)
			fprintf(f, "# %s:\n", title);
		propose_none(f, p->v[i]);
	}
}

/* Print the proposal. */
void
propose_print(struct propose *p, FILE *f)
{
	size_t	n;

	if (propose_group(p) == -1)
		fprintf(f, "# (out of memory: no wildcards)\n");
	if (p->n > 1)
		qsort(p->v, p->n, sizeof *p->v, propose_by_count);
	n = propose_allow(f, p);
	propose_kind_print(f, p, PROPOSE_DENY, "No allow rule lifts these: a "
	    "deny rule refused them");
	propose_kind_print(f, p, PROPOSE_PRIVATE, "No allow rule lifts these: "
	    "special-purpose addresses");
	propose_kind_print(f, p, PROPOSE_CONSTRAINT, "Refused by the "
	    "constraints of an allow rule (widen it; pinhole check HOST METHOD "
	    "PATH says which)");
	if (p->other > 0)
		fprintf(f, "# %lld refused for other reasons (pinhole log "
		    "--blocked)\n", p->other);
	if (n == 0 && p->n == 0 && p->other == 0)
		fprintf(f, "# Nothing was refused.\n");
}
