/*
 * Editing policy text: add or remove lines (allow, deny, allow-private,
 * include, ...), keeping every other byte (comments, blank lines, order,
 * line endings) as it was.  Pure: text in, text out.  Lines are
 * compared in one canonical form, so "allow PyPI.org." is "allow
 * pypi.org", "allow github.com:443,22" is "allow github.com:22,443" and
 * "deny x:1-65535" is "deny x".
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rules/rules-int.h"

/* One line of a text: where it starts, its length, its terminator. */
struct edit_line {
	const char	*s;
	size_t		 len;		/* without the terminator */
	size_t		 full;		/* with it */
};

/* Step to the next line; returns 0 at the end of the text. */
static int
edit_next_line(const char *text, size_t len, size_t *off, struct edit_line *l)
{
	const char	*nl;

	if (*off >= len)
		return (0);
	l->s = text + *off;
	if ((nl = memchr(l->s, '\n', len - *off)) == NULL) {
		l->len = l->full = len - *off;
	} else {
		l->len = nl - l->s;
		l->full = l->len + 1;
	}
	*off += l->full;
	return (1);
}

/* Compare two port ranges for qsort. */
static int
edit_range_cmp(const void *a, const void *b)
{
	const struct port_range	*x = a, *y = b;

	if (x->lo != y->lo)
		return (x->lo < y->lo ? -1 : 1);
	return ((x->hi > y->hi) - (x->hi < y->hi));
}

/* Sort and merge port ranges in place; returns how many are left. */
static size_t
edit_ports_merge(struct port_range *pr, size_t n)
{
	size_t	i, out = 0;

	qsort(pr, n, sizeof *pr, edit_range_cmp);
	for (i = 0; i < n; i++) {
		if (out > 0 && pr[i].lo <= (unsigned int)pr[out - 1].hi + 1) {
			if (pr[i].hi > pr[out - 1].hi)
				pr[out - 1].hi = pr[i].hi;
		} else
			pr[out++] = pr[i];
	}
	return (out);
}

/*
 * Write ":PORTS" canonically: nothing for a rule's default (80,443 for
 * an allow rule, every port for a deny rule), ":*" for every port.
 */
static int
edit_ports_format(const struct rule *rule, char *buf, size_t size)
{
	struct port_range	*pr;
	size_t			 i, n, off = 0;
	int			 w, rv = -1, all, web;

	if ((pr = calloc(rule->nports, sizeof *pr)) == NULL)
		return (-1);
	memcpy(pr, rule->ports, rule->nports * sizeof *pr);
	n = edit_ports_merge(pr, rule->nports);
	buf[0] = '\0';
	web = n == 2 && pr[0].lo == 80 && pr[0].hi == 80 && pr[1].lo == 443 &&
	    pr[1].hi == 443;
	all = n == 1 && pr[0].lo == 1 && pr[0].hi == 65535;
	if (rule->action == RULE_DENY ? all : web) {
		rv = 0;
		goto out;
	}
	if (all) {
		rv = snprintf(buf, size, ":*") < (int)size ? 0 : -1;
		goto out;
	}
	for (i = 0; i < n; i++, off += w) {
		w = snprintf(buf + off, size - off, pr[i].lo == pr[i].hi ?
		    "%s%u" : "%s%u-%u", i == 0 ? ":" : ",", pr[i].lo, pr[i].hi);
		if (w < 0 || (size_t)w >= size - off)
			goto out;
	}
	rv = 0;
out:
	free(pr);
	return (rv);
}

/* Write a rule's target: name, *.name, address or [IPv6], with /LEN. */
static int
edit_target_format(const struct rule_spec *s, char *buf, size_t size)
{
	char	a[HOST_TEXT_LEN], len[8] = "";
	int	n;

	if (s->kind == TARGET_NAME)
		n = snprintf(buf, size, "%s", s->name);
	else if (s->kind == TARGET_WILD)
		n = snprintf(buf, size, "*.%s", s->name);
	else {
		addr_format(a, sizeof a, s->addr, s->alen);
		if (s->plen != 8 * s->alen)
			snprintf(len, sizeof len, "/%u", s->plen);
		n = snprintf(buf, size, s->alen == 16 ? "[%s%s]" : "%s%s", a,
		    len);
	}
	return (n < 0 || (size_t)n >= size ? -1 : 0);
}

/*
 * Read what follows an allow rule's target: constraints (read-only,
 * methods LIST, websocket, path LIST, any order, each once) and "until
 * TIME".  Writes them canonically to cons (" read-only methods GET
 * websocket path /x") and sets *until (0: none).  The lists are checked
 * by the parser later.  Returns 0, or -1 for anything else.
 */
static int
edit_rest(const char *s, char *cons, size_t size, time_t *until)
{
	char		 ro[16] = "", m[RULES_LINE_MAX + 1] = "";
	char		 pa[RULES_LINE_MAX + 1] = "", ws[16] = "";
	char		*slot;
	size_t		 n, k;

	*until = 0;
	for (s += strspn(s, " \t"); *s != '\0'; s += strspn(s, " \t")) {
		n = strcspn(s, " \t");
		slot = n != 9 ? NULL : strncmp(s, "read-only", 9) == 0 ? ro :
		    strncmp(s, "websocket", 9) == 0 ? ws : NULL;
		if (slot != NULL && slot[0] == '\0') {
			snprintf(slot, 16, " %.9s", s);
			s += n;
			continue;
		}
		slot = n == 7 && strncmp(s, "methods", 7) == 0 ? m :
		    n == 4 && strncmp(s, "path", 4) == 0 ? pa :
		    n == 5 && strncmp(s, "until", 5) == 0 && *until == 0 ?
		    NULL : (char *)-1;
		if (slot == (char *)-1 || (slot != NULL && slot[0] != '\0'))
			return (-1);
		s += n;
		s += strspn(s, " \t");
		if ((k = strcspn(s, " \t")) == 0)
			return (-1);
		if (slot == NULL) {
			if (rules_time_parse(s, k, until) == -1)
				return (-1);
		} else
			snprintf(slot, RULES_LINE_MAX + 1, " %s %.*s",
			    slot == m ? "methods" : "path", (int)k, s);
		s += k;
	}
	if ((size_t)snprintf(cons, size, "%s%s%s%s", ro, m, ws, pa) >= size)
		return (-1);
	return (0);
}

/*
 * Let the parser check a whole line (constraints' lists, a secret, an
 * include's argument: includes are not read here, but when the whole
 * policy is checked).
 */
static int
edit_check_line(const char *origin, const char *line, char *err,
    size_t errlen)
{
	struct rules	*scratch;
	char		 buf[1024];
	int		 rv;

	if ((scratch = rules_create()) == NULL) {
		if (err != NULL && errlen > 0)
			snprintf(err, errlen, "%s: out of memory", origin);
		return (-1);
	}
	rules_no_includes(scratch);
	rv = rules_load_text(scratch, origin, line, strlen(line),
	    err != NULL ? err : buf, err != NULL ? errlen : sizeof buf);
	rules_free(scratch);
	return (rv);
}

/*
 * Write the canonical text of an allow rule's argument, HOST[:PORTS]
 * with constraints and an optional " until TIME".  With check, the rule
 * must pass every check of the parser.  Errors are "ORIGIN: message":
 * the rule is not in any file yet, so no line is named.
 */
static int
edit_canon_allow(struct rules *r, const char *origin, const char *arg,
    int check, char *buf, size_t size, char *err, size_t errlen)
{
	struct rule_spec	spec;
	char			target[RULES_LINE_MAX + 1], ports[RULES_LINE_MAX + 1];
	char			cons[RULES_LINE_MAX + 1], when[32] = "";
	const char		*rest;
	size_t			n = strcspn(arg, " \t");
	time_t			until;

	if (n > RULES_LINE_MAX)
		goto toolong;
	memcpy(target, arg, n);
	target[n] = '\0';
	rest = arg + n + strspn(arg + n, " \t");
	if (edit_rest(rest, cons, sizeof cons, &until) == -1) {
		if (err != NULL && errlen > 0)
			snprintf(err, errlen, "%s: bad rule 'allow %.200s': "
			    "HOST[:PORTS] [read-only] [methods M,...] "
			    "[websocket] [path /P,...] [until TIME] (TIME: %s)",
			    origin, arg,
			    RULES_TIME_USAGE);
		return (-1);
	}
	if (until != 0) {
		memcpy(when, " until ", 7);
		rules_time_format(until, when + 7, sizeof when - 7);
		if (check && until <= time(NULL)) {
			if (err != NULL && errlen > 0)
				snprintf(err, errlen, "%s: bad rule 'allow "
				    "%.200s': %s has passed", origin, arg,
				    when + 7);
			return (-1);
		}
	}
	if (rules_parse_target(r, origin, 0, RULE_ALLOW, target, check, &spec,
	    err, errlen) == -1)
		return (-1);
	if (edit_target_format(&spec, buf, size) == -1 ||
	    edit_ports_format(spec.rule, ports, sizeof ports) == -1)
		goto toolong;
	n = strlen(buf);
	if (strlen(ports) + strlen(cons) + strlen(when) >= size - n)
		goto toolong;
	snprintf(buf + n, size - n, "%s%s%s", ports, cons, when);
	return (0);
toolong:
	if (err != NULL && errlen > 0)
		snprintf(err, errlen, "%s: rule too long", origin);
	return (-1);
}

/*
 * Write the canonical text of a deny or allow-private rule's one
 * argument: its target and, for deny, its ports.
 */
static int
edit_canon_target(struct rules *r, const char *origin, enum rule_action
    action, const char *arg, int check, char *buf, size_t size, char *err,
    size_t errlen)
{
	struct rule_spec	spec;
	char			ports[RULES_LINE_MAX + 1] = "";
	size_t			n;

	if (rules_parse_target(r, origin, 0, action, arg, check, &spec, err,
	    errlen) == -1)
		return (-1);
	if (edit_target_format(&spec, buf, size) == -1 ||
	    (action == RULE_DENY && edit_ports_format(spec.rule, ports,
	    sizeof ports) == -1) || strlen(ports) >= size - (n = strlen(buf))) {
		if (err != NULL && errlen > 0)
			snprintf(err, errlen, "%s: rule too long", origin);
		return (-1);
	}
	snprintf(buf + n, size - n, "%s", ports);
	return (0);
}

/* Write a line's words with one space between them. */
static int
edit_canon_words(const char *line, char *buf, size_t size)
{
	size_t	n, off = 0;

	for (line += strspn(line, " \t"); *line != '\0';
	    line += strspn(line, " \t")) {
		n = strcspn(line, " \t");
		if (off + (off > 0) + n >= size)
			return (-1);
		if (off > 0)
			buf[off++] = ' ';
		memcpy(buf + off, line, n);
		off += n;
		line += n;
	}
	buf[off] = '\0';
	return (0);
}

/*
 * Write the canonical text of a policy line: its directive, then its
 * argument canonically (allow, deny, allow-private) or its words as
 * they are.  With check, the line must pass every check of the parser
 * (but an include's file is not read).  Errors are "ORIGIN: message".
 */
static int
edit_canon(struct rules *r, const char *origin, const char *line, int check,
    char *buf, size_t size, char *err, size_t errlen)
{
	static const struct {
		const char	*name;
		enum rule_action action;
	} targets[] = { { "deny", RULE_DENY },
	    { "allow-private", RULE_PRIVATE } };
	const char	*rest, *near;
	size_t		 n = strcspn(line, " \t"), k, i;
	int		 rv;

	rest = line + n + strspn(line + n, " \t");
	k = strcspn(rest, " \t");
	if (err != NULL && errlen > 0)
		snprintf(err, errlen, "%s: bad rule '%.200s'", origin, line);
	if (rules_directive(line, n, &near) == -1 || n > size - 2)
		goto bad;
	if (check && edit_check_line(origin, line, err, errlen) == -1)
		return (-1);
	memcpy(buf, line, n);
	buf[n] = ' ';
	if (n == 5 && strncmp(line, "allow", 5) == 0)
		return (edit_canon_allow(r, origin, rest, check, buf + n + 1,
		    size - n - 1, err, errlen));
	for (i = 0; i < sizeof targets / sizeof targets[0]; i++) {
		if (strlen(targets[i].name) != n ||
		    strncmp(line, targets[i].name, n) != 0)
			continue;
		if (k == 0 || rest[k + strspn(rest + k, " \t")] != '\0')
			goto bad;
		return (edit_canon_target(r, origin, targets[i].action, rest,
		    check, buf + n + 1, size - n - 1, err, errlen));
	}
	if ((rv = edit_canon_words(line, buf, size)) == -1 && err != NULL &&
	    errlen > 0)
		snprintf(err, errlen, "%s: rule too long", origin);
	return (rv);
bad:
	if (err != NULL && errlen > 0)
		edit_check_line(origin, line, err, errlen);
	return (-1);
}

/*
 * Compare two canonical rules, or with target_only all but their ends
 * (HOST[:PORTS] and constraints).
 */
static int
edit_same(const char *a, const char *b, int target_only)
{
	const char	*ua = strstr(a, " until "), *ub = strstr(b, " until ");
	size_t		 na = ua != NULL ? (size_t)(ua - a) : strlen(a);
	size_t		 nb = ub != NULL ? (size_t)(ub - b) : strlen(b);

	if (!target_only)
		return (strcmp(a, b) == 0);
	return (na == nb && strncmp(a, b, na) == 0);
}

/*
 * Is this line the rule whose canonical text is canon (with
 * target_only, whatever its "until")?
 */
static int
edit_line_matches(struct rules *r, const struct edit_line *l, const char *canon,
    int target_only)
{
	char	buf[RULES_LINE_MAX + 1], text[RULES_LINE_MAX + 1];
	char	line[RULES_LINE_MAX + 1];
	char	*s;

	if (l->len > RULES_LINE_MAX || memchr(l->s, '\0', l->len) != NULL)
		return (0);
	memcpy(buf, l->s, l->len);
	buf[l->len] = '\0';
	if ((s = strchr(buf, '#')) != NULL)
		*s = '\0';
	for (s = buf; *s != '\0'; s++) {
		if (strchr("\r\f\v", *s) != NULL)
			*s = ' ';
	}
	if (edit_canon_words(buf, line, sizeof line) == -1 || line[0] == '\0')
		return (0);
	if (edit_canon(r, "policy", line, 0, text, sizeof text, NULL,
	    0) == -1)
		return (0);
	return (edit_same(text, canon, target_only));
}

/* The line ending a text uses: that of its first line, "\n" by default. */
static const char *
edit_eol(const char *text, size_t len)
{
	const char	*nl = memchr(text, '\n', len);

	return (nl != NULL && nl > text && nl[-1] == '\r' ? "\r\n" : "\n");
}

/* Append a line and a line ending to text, ending its last line. */
static int
edit_append(const char *text, size_t len, const char *canon,
    struct rules_edit *e)
{
	const char	*eol = edit_eol(text, len), *sep = "";
	size_t		 size;

	if (len > 0 && text[len - 1] != '\n')
		sep = eol;
	size = len + strlen(sep) + strlen(canon) + strlen(eol) + 1;
	if ((e->text = malloc(size)) == NULL)
		return (-1);
	memcpy(e->text, text, len);
	e->len = len + snprintf(e->text + len, size - len, "%s%s%s", sep,
	    canon, eol);
	return (0);
}

/*
 * Start an edit: clear e, make the rule set that reads the lines, and
 * put the canonical text of rule in e->rule (with check, as edit_canon).
 * NULL, with err set, on failure.
 */
static struct rules *
edit_start(const char *rule, const char *origin, int check,
    struct rules_edit *e, char *err, size_t errlen)
{
	struct rules	*r;
	const char	*p;

	memset(e, 0, sizeof *e);
	/*
	 * In a policy file '#' would start a comment and a control character
	 * (a '\r' before the newline) would be taken for layout: the rule
	 * read back would be another one.
	 */
	if (strchr(rule, '#') != NULL) {
		snprintf(err, errlen, "%s: bad rule '%.200s': '#' starts a "
		    "comment in a policy file", origin, rule);
		return (NULL);
	}
	for (p = rule; *p != '\0'; p++) {
		if ((unsigned char)*p < 0x20 && *p != '\t') {
			snprintf(err, errlen, "%s: bad rule: a control "
			    "character", origin);
			return (NULL);
		}
	}
	if ((r = rules_create()) == NULL) {
		snprintf(err, errlen, "%s: out of memory", origin);
		return (NULL);
	}
	if (edit_canon(r, origin, rule, check, e->rule, sizeof e->rule, err,
	    errlen) == -1) {
		rules_free(r);
		return (NULL);
	}
	return (r);
}

/*
 * Go through the lines of text for the lines of e->rule (with
 * target_only, whatever their end): the first one's number in e->line,
 * how many in e->count and, when e->text is there, every other line
 * copied to it.  Returns how many lines there are.
 */
static unsigned int
edit_walk(struct rules *r, const char *text, size_t len, int target_only,
    struct rules_edit *e)
{
	struct edit_line	l;
	size_t			off = 0;
	unsigned int		n = 0;

	while (edit_next_line(text, len, &off, &l)) {
		n++;
		if (!edit_line_matches(r, &l, e->rule, target_only)) {
			if (e->text != NULL) {
				memcpy(e->text + e->len, l.s, l.full);
				e->len += l.full;
			}
		} else if (e->count++ == 0)
			e->line = n;
	}
	return (n);
}

/* Add a line unless a line for the same rule is there. */
int
rules_edit_add(const char *text, size_t len, const char *rule,
    const char *origin, struct rules_edit *e, char *err, size_t errlen)
{
	struct rules	*r;
	unsigned int	 n;
	int		 rv = -1;

	if ((r = edit_start(rule, origin, 1, e, err, errlen)) == NULL)
		return (-1);
	n = edit_walk(r, text, len, 0, e);
	if (e->count > 0) {
		e->count = 0;
		rv = 0;
		goto out;
	}
	e->line = n + 1;
	if (edit_append(text, len, e->rule, e) == -1) {
		snprintf(err, errlen, "%s: out of memory", origin);
		goto out;
	}
	e->count = 1;
	rv = 1;
out:
	rules_free(r);
	return (rv);
}

/* Remove every line for the same rule; returns how many. */
int
rules_edit_remove(const char *text, size_t len, const char *rule,
    const char *origin, struct rules_edit *e, char *err, size_t errlen)
{
	struct rules	*r;
	int		 rv = -1;

	if ((r = edit_start(rule, origin, 0, e, err, errlen)) == NULL)
		return (-1);
	if ((e->text = malloc(len + 1)) == NULL) {
		snprintf(err, errlen, "%s: out of memory", origin);
		goto out;
	}
	edit_walk(r, text, len, 1, e);
	e->text[e->len] = '\0';
	rv = e->count;
out:
	if (rv <= 0) {
		free(e->text);
		e->text = NULL;
		e->len = 0;
	}
	rules_free(r);
	return (rv);
}
