/*
 * Matching: exact names by hash, wildcards by a tree of labels read from
 * the right, addresses by one hash entry per prefix probed by length.
 * The cost of a lookup depends on the host, not on the number of rules.
 */
#include "config.h"

#include <libpsl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rules/rules-int.h"

/* The best rules seen so far for one (host, port). */
struct match {
	uint16_t		 port;
	time_t			 now;		/* rules that ended are passed by */
	const struct rule	*allow;
	const struct rule	*deny;
	int			 other_port;	/* a rule named the host only */
	int			 open;		/* an allow rule checks nothing */
	const struct rule	**cands;	/* the allow rules, if wanted */
	size_t			 ncands;
	size_t			 maxcands;
};

/* Make an empty policy. */
struct rules *
rules_create(void)
{
	return (calloc(1, sizeof(struct rules)));
}

/* Free a tree node's children (the nodes are in the arena). */
static int
wnode_clear(void *val, void *arg)
{
	struct wnode	*n = val;

	hmap_walk(&n->kids, wnode_clear, NULL);
	hmap_clear(&n->kids);
	return (0);
}

/* Free a policy. */
void
rules_free(struct rules *r)
{
	if (r == NULL)
		return;
	wnode_clear(&r->wild, NULL);
	hmap_clear(&r->names);
	hmap_clear(&r->addrs.map);
	hmap_clear(&r->privs.map);
	if (r->psl_owned != NULL)
		psl_free(r->psl_owned);
	arena_free(&r->arena);
	free(r);
}

/* The public suffix list, loaded once per policy (NULL: none). */
static const struct psl_ctx_st *
rules_psl(struct rules *r)
{
	if (r->psl == NULL) {
		if ((r->psl_owned = psl_latest(NULL)) != NULL)
			r->psl = r->psl_owned;
		else
			r->psl = psl_builtin();
	}
	return (r->psl);
}

/* Is name a public suffix (so *.name would cover unrelated sites)? */
int
rules_public_suffix(struct rules *r, const char *name)
{
	if (rules_psl(r) == NULL)
		return (-1);
	return (psl_is_public_suffix2(r->psl, name, PSL_TYPE_ANY) != 0);
}

/* The registrable domain a name is or is under, or NULL. */
const char *
rules_registrable(struct rules *r, const char *name)
{
	if (rules_psl(r) == NULL)
		return (NULL);
	return (psl_registrable_domain(r->psl, name));
}

/* Build a prefix set's key: length in bits, then the masked address. */
static size_t
prefix_key(uint8_t *key, const uint8_t *addr, size_t alen, unsigned int plen)
{
	key[0] = plen;
	addr_mask(key + 1, addr, alen, plen);
	return (1 + alen);
}

/* Add a rule for an address prefix. */
static int
prefix_add(struct prefixset *ps, struct arena *a, const struct rule_spec *s)
{
	uint8_t	key[17];
	void	**slot;

	slot = hmap_slot(&ps->map, key, prefix_key(key, s->addr, s->alen,
	    s->plen), a);
	if (slot == NULL)
		return (-1);
	s->rule->next = *slot;
	*slot = s->rule;
	if (s->alen == 4)
		ps->have4[s->plen] = 1;
	else
		ps->have6[s->plen] = 1;
	return (0);
}

/* Add a wildcard rule: walk (or grow) the tree from the last label. */
static int
wild_add(struct wnode *n, struct arena *a, const struct rule_spec *s)
{
	const char	*name = s->name, *end = name + strlen(name), *p;
	void		**slot;

	while (end > name) {
		for (p = end; p > name && p[-1] != '.'; p--)
			;
		if ((slot = hmap_slot(&n->kids, p, end - p, a)) == NULL)
			return (-1);
		if (*slot == NULL &&
		    (*slot = arena_alloc(a, sizeof(struct wnode))) != NULL)
			memset(*slot, 0, sizeof(struct wnode));
		if ((n = *slot) == NULL)
			return (-1);
		end = p > name ? p - 1 : p;
	}
	s->rule->next = n->rules;
	n->rules = s->rule;
	return (0);
}

/* Add an exact-name rule. */
static int
name_add(struct hmap *m, struct arena *a, const struct rule_spec *s)
{
	void	**slot;

	if ((slot = hmap_slot(m, s->name, strlen(s->name), a)) == NULL)
		return (-1);
	s->rule->next = *slot;
	*slot = s->rule;
	return (0);
}

/* Note the ports an allow rule names, for rules_ports(). */
static void
ports_note(struct rules *r, const struct rule *rule)
{
	size_t		i;
	unsigned int	p;

	for (i = 0; i < rule->nports; i++) {
		for (p = rule->ports[i].lo; p <= rule->ports[i].hi; p++)
			r->ports[p / 8] |= 1 << (p % 8);
	}
}

/* Keep a rule's target on it (an address in the arena). */
static int
rule_target(struct rules *r, const struct rule_spec *s)
{
	uint8_t	*addr;

	s->rule->kind = (uint8_t)s->kind;
	s->rule->target = s->name;
	s->rule->alen = (uint8_t)s->alen;
	s->rule->plen = (uint8_t)s->plen;
	if (s->kind != TARGET_ADDR)
		return (0);
	if ((addr = arena_alloc(&r->arena, s->alen)) == NULL)
		return (-1);
	memcpy(addr, s->addr, s->alen);
	s->rule->target = addr;
	return (0);
}

/* Add parsed rules to the matching structures, in order. */
int
rules_add(struct rules *r, const struct rule_spec *specs, size_t n)
{
	const struct rule_spec	*s;
	size_t			 i;
	int			 rv = 0;

	for (i = 0; i < n && rv == 0; i++) {
		s = &specs[i];
		s->rule->seq = r->seq++;
		if ((rv = rule_target(r, s)) == -1)
			break;
		if (r->last == NULL)
			r->last = &r->first;
		*r->last = s->rule;
		r->last = &s->rule->order;
		if (s->listed && s->rule->action == RULE_ALLOW)
			ports_note(r, s->rule);
		if (s->rule->action == RULE_PRIVATE)
			rv = prefix_add(&r->privs, &r->arena, s);
		else if (s->kind == TARGET_ADDR)
			rv = prefix_add(&r->addrs, &r->arena, s);
		else if (s->kind == TARGET_WILD)
			rv = wild_add(&r->wild, &r->arena, s);
		else
			rv = name_add(&r->names, &r->arena, s);
	}
	return (rv);
}

/* Does a rule cover this port? */
static int
rule_has_port(const struct rule *rule, uint16_t port)
{
	size_t	i;

	for (i = 0; i < rule->nports; i++) {
		if (port >= rule->ports[i].lo && port <= rule->ports[i].hi)
			return (1);
	}
	return (0);
}

/* Consider every rule of one target; the first loaded of each kind wins. */
static void
match_list(struct match *m, const struct rule *rule)
{
	const struct rule	**best;

	for (; rule != NULL; rule = rule->next) {
		if (rule->until != 0 && rule->until <= m->now)
			continue;
		if (!rule_has_port(rule, m->port)) {
			m->other_port = 1;
			continue;
		}
		best = rule->action == RULE_DENY ? &m->deny : &m->allow;
		if (*best == NULL || rule->seq < (*best)->seq)
			*best = rule;
		if (rule->action != RULE_ALLOW)
			continue;
		if (rule->req == NULL)
			m->open = 1;
		else if (m->ncands < m->maxcands)
			m->cands[m->ncands++] = rule;
	}
}

/* Walk the wildcard tree for name, collecting rules above the apex. */
static void
match_wild(struct match *m, const struct wnode *n, const char *name)
{
	const char	*end = name + strlen(name), *p;

	while (end > name) {
		for (p = end; p > name && p[-1] != '.'; p--)
			;
		if ((n = hmap_get(&n->kids, p, end - p)) == NULL)
			return;
		if (p == name)
			return;		/* the apex: no wildcard covers it */
		match_list(m, n->rules);
		end = p - 1;
	}
}

/* Find the rules of every prefix holding addr, longest first. */
static void
match_prefix(const struct prefixset *ps, const uint8_t *addr, size_t alen,
    void (*fn)(struct match *, const struct rule *), struct match *m)
{
	const uint8_t	*have = alen == 4 ? ps->have4 : ps->have6;
	uint8_t		 key[17];
	int		 plen;

	for (plen = 8 * alen; plen >= 0; plen--) {
		if (have[plen])
			fn(m, hmap_get(&ps->map, key, prefix_key(key, addr,
			    alen, plen)));
	}
}

/* Name the rule that decided in a verdict. */
static void
verdict_rule(struct rules_verdict *v, const struct rule *rule)
{
	v->file = rule->file;
	v->line = rule->line;
	v->text = rule->text;
	v->until = rule->until;
	v->layer = rule->layer;
	v->exact = rule->kind == TARGET_NAME;
}

/* Fill a verdict from the best rules found. */
static int
match_verdict(const struct match *m, struct rules_verdict *v)
{
	const struct rule	*rule = m->deny ? m->deny : m->allow;

	memset(v, 0, sizeof *v);
	if (rule == NULL) {
		v->why = m->other_port ? "no rule allows this port: default deny" :
		    "no rule matches: default deny";
		return (0);
	}
	v->allow = rule->action != RULE_DENY;
	verdict_rule(v, rule);
	v->why = v->allow ? "allowed by rule" : "denied by rule";
	return (v->allow);
}

/* Find every rule for (host, port). */
static void
match_host(const struct rules *r, const struct host *h, struct match *m)
{
	m->now = time(NULL);
	if (h->kind == HOST_NAME) {
		match_list(m, hmap_get(&r->names, h->text, strlen(h->text)));
		match_wild(m, &r->wild, h->text);
	} else
		match_prefix(&r->addrs, h->addr, h->kind == HOST_IPV4 ? 4 : 16,
		    match_list, m);
}

/* Does a secret name this host (its connections are then read)? */
static int
match_secret_host(const struct rules *r, const struct host *h)
{
	const struct secret	*sc;

	for (sc = r->secrets; sc != NULL; sc = sc->next) {
		if (rules_secret_for(&sc->pub, h))
			return (1);
	}
	return (0);
}

/*
 * Decide (host, port): a matching deny wins, no match denies.  Requests
 * are read when every allow rule for it checks them, or a secret names
 * the host.
 */
int
rules_match(const struct rules *r, const struct host *h, uint16_t port,
    struct rules_verdict *v)
{
	struct match	m = { .port = port };
	int		rv;

	match_host(r, h, &m);
	if ((rv = match_verdict(&m, v)) != 0) {
		v->constrained = !m.open;
		v->inspect = !m.open || (r->secrets != NULL &&
		    match_secret_host(r, h));
	}
	return (rv);
}

/* Order rules by load order. */
static int
rule_by_seq(const void *a, const void *b)
{
	const struct rule	*x = *(const struct rule *const *)a;
	const struct rule	*y = *(const struct rule *const *)b;

	return (x->seq < y->seq ? -1 : x->seq > y->seq);
}

/* Decide one request: see rules.h. */
int
rules_match_request(const struct rules *r, const struct host *h,
    uint16_t port, const struct rules_request *rq, struct rules_verdict *v)
{
	const struct rule	*cands[64];
	struct match		 m = { .port = port, .cands = cands,
				    .maxcands = 64 };
	char			 path[RULES_PATH_LEN];
	const char		*errstr, *constraint;
	size_t			 i;

	match_host(r, h, &m);
	if (match_verdict(&m, v) == 0) {
		v->by_deny = m.deny != NULL;
		return (0);
	}
	v->inspect = 1;
	if (rules_path_canon(rq->target, rq->target_len, path, sizeof path,
	    &errstr) == -1) {
		snprintf(v->detail, sizeof v->detail, "the path has %s",
		    errstr);
		v->why = v->detail;
		v->allow = 0;
		return (-1);
	}
	if (m.open) {
		if (rules_req_open(rq, path, v->detail, sizeof v->detail))
			return (1);
		v->allow = 0;
		v->constraint = "upgrade";
		v->why = v->detail;
		return (0);
	}
	qsort(cands, m.ncands, sizeof *cands, rule_by_seq);
	for (i = 0; i < m.ncands; i++) {
		if (rules_req_check(cands[i], rq, path, &constraint,
		    i == 0 ? v->detail : NULL, i == 0 ? sizeof v->detail : 0))
			break;
		if (i == 0)
			v->constraint = constraint;
	}
	if (i < m.ncands) {
		verdict_rule(v, cands[i]);
		v->constraint = NULL;
		return (1);
	}
	v->allow = 0;
	verdict_rule(v, cands[0]);
	v->why = v->detail;
	return (0);
}

/* May a secret go to this host? */
int
rules_secret_for(const struct rules_secret *rs, const struct host *h)
{
	const struct secret	*sc = (const struct secret *)rs;
	size_t			 i;

	for (i = 0; i < sc->nhosts; i++) {
		if (rules_spec_covers(&sc->hosts[i], h))
			return (1);
	}
	return (0);
}

/* The headers a secret may go in. */
size_t
rules_secret_headers(const struct rules_secret *rs, const char *const **names)
{
	static const char *const	def[] = { "Authorization",
	    "Proxy-Authorization" };

	if (rs->nheaders == 0) {
		*names = def;
		return (sizeof def / sizeof def[0]);
	}
	*names = rs->headers;
	return (rs->nheaders);
}

/* The secrets of a policy, in load order. */
size_t
rules_secrets(const struct rules *r, const struct rules_secret **out,
    size_t max)
{
	const struct secret	*sc;
	size_t			 n = 0;

	for (sc = r->secrets; sc != NULL; sc = sc->next, n++) {
		if (n < max)
			out[n] = &sc->pub;
	}
	return (n);
}

/* The hosts whose connections are read: constrained rules', secrets'. */
size_t
rules_inspected(const struct rules *r, const char **out, size_t max)
{
	const struct rule	*rule;
	const struct secret	*sc;
	size_t			 n = 0, i;

	for (rule = r->first; rule != NULL; rule = rule->order) {
		if (rule->req != NULL && n++ < max)
			out[n - 1] = rule->req->host;
	}
	for (sc = r->secrets; sc != NULL; sc = sc->next) {
		for (i = 0; i < sc->nhosts; i++) {
			if (n++ < max)
				out[n - 1] = sc->patterns[i];
		}
	}
	return (n);
}

/* Keep the first-loaded deny rule of a list. */
static void
match_deny(struct match *m, const struct rule *rule)
{
	for (; rule != NULL; rule = rule->next) {
		if (rule->action == RULE_DENY &&
		    (m->deny == NULL || rule->seq < m->deny->seq))
			m->deny = rule;
	}
}

/* The rule lists naming a host: its own, then each wildcard above it. */
static size_t
name_lists(const struct rules *r, const char *name, const struct rule **lists,
    size_t max)
{
	const struct wnode	*n = &r->wild;
	const char		*end = name + strlen(name), *p;
	size_t			 k = 0;

	if ((lists[k] = hmap_get(&r->names, name, end - name)) != NULL)
		k++;
	while (end > name && k < max) {
		for (p = end; p > name && p[-1] != '.'; p--)
			;
		if ((n = hmap_get(&n->kids, p, end - p)) == NULL || p == name)
			break;
		if (n->rules != NULL)
			lists[k++] = n->rules;
		end = p - 1;
	}
	return (k);
}

/*
 * Try the ports where an allowed stretch can begin: the first port of
 * each allow range, and the port after each deny range.  Any port no
 * deny covers but an allow does is found among them.
 */
static int
name_open_port(const struct rules *r, const struct host *h,
    const struct rule *rule, struct rules_verdict *v)
{
	size_t		i;
	unsigned int	port;

	for (; rule != NULL; rule = rule->next) {
		for (i = 0; i < rule->nports; i++) {
			port = rule->action == RULE_DENY ?
			    rule->ports[i].hi + 1U : rule->ports[i].lo;
			if (port >= 1 && port <= 65535 &&
			    rules_match(r, h, (uint16_t)port, v))
				return (1);
		}
	}
	return (0);
}

/* Is a name allowed on at least one port? */
int
rules_name_allowed(const struct rules *r, const struct host *h,
    struct rules_verdict *v)
{
	const struct rule	*lists[HOST_NAME_LEN / 2 + 2];
	struct match		 m = { .port = 0 };
	size_t			 n, i;

	memset(v, 0, sizeof *v);
	if (r == NULL || h->kind != HOST_NAME) {
		v->why = "no rule matches: default deny";
		return (0);
	}
	n = name_lists(r, h->text, lists, sizeof lists / sizeof lists[0]);
	for (i = 0; i < n; i++) {
		if (name_open_port(r, h, lists[i], v))
			return (1);
	}
	/* Denied on every port: name the first deny rule, if any. */
	for (i = 0; i < n; i++)
		match_deny(&m, lists[i]);
	match_verdict(&m, v);
	if (m.deny == NULL)
		v->why = "no rule allows this name: default deny";
	return (0);
}

/* Keep the first-loaded allow-private rule of a list. */
static void
match_private(struct match *m, const struct rule *rule)
{
	for (; rule != NULL; rule = rule->next) {
		if (m->allow == NULL || rule->seq < m->allow->seq)
			m->allow = rule;
	}
}

/* Does an allow-private rule cover this address? */
int
rules_private_ok(const struct rules *r, const uint8_t *addr, size_t len,
    struct rules_verdict *v)
{
	static const uint8_t	 mapped[12] = { [10] = 0xff, [11] = 0xff };
	struct match		 m = { 0 };

	if (len == 16 && memcmp(addr, mapped, sizeof mapped) == 0) {
		addr += 12;
		len = 4;
	}
	if (len == 4 || len == 16)
		match_prefix(&r->privs, addr, len, match_private, &m);
	match_verdict(&m, v);
	if (m.allow == NULL)
		v->why = "no allow-private rule covers this address";
	return (v->allow);
}

/* Write the rules in force, one a line as written, in load order. */
size_t
rules_text(const struct rules *r, char *buf, size_t len)
{
	const struct rule	*rule;
	time_t			 now = time(NULL);
	size_t			 o = 0, n;

	if (len == 0)
		return (0);
	buf[0] = '\0';
	for (rule = r->first; rule != NULL; rule = rule->order) {
		if (rule->until != 0 && rule->until <= now)
			continue;
		n = strlen(rule->text);
		if (n + 2 > len - o)
			break;
		memcpy(buf + o, rule->text, n);
		o += n;
		buf[o++] = '\n';
		buf[o] = '\0';
	}
	return (o);
}

/* List the ports allow rules name explicitly; returns how many are stored. */
size_t
rules_ports(const struct rules *r, uint16_t *out, size_t max)
{
	size_t		n = 0;
	unsigned int	p;

	for (p = 1; p < 65536 && n < max; p++) {
		if (r->ports[p / 8] & (1 << (p % 8)))
			out[n++] = p;
	}
	return (n);
}

/*
 * Call fn with each list of rules whose target covers the rule's whole
 * target: for a name, its own rules and the wildcards above it; for a
 * wildcard, those of the same name and above; for a prefix, those of
 * every prefix as long or shorter that holds it.
 */
void
rules_covering(const struct rules *r, const struct rule *b,
    void (*fn)(const struct rule *, void *), void *arg)
{
	const struct prefixset	*ps = &r->addrs;
	const struct wnode	*n = &r->wild;
	const uint8_t		*have = b->alen == 4 ? ps->have4 : ps->have6;
	const char		*name = b->target, *end, *p;
	uint8_t			 key[17];
	int			 plen;

	if (b->kind == TARGET_ADDR) {
		for (plen = b->plen; plen >= 0; plen--) {
			if (have[plen])
				fn(hmap_get(&ps->map, key, prefix_key(key,
				    b->target, b->alen, plen)), arg);
		}
		return;
	}
	if (b->kind == TARGET_NAME)
		fn(hmap_get(&r->names, name, strlen(name)), arg);
	/* The wildcards of every label above (and of *.name itself). */
	for (end = name + strlen(name); end > name; end = p - 1) {
		for (p = end; p > name && p[-1] != '.'; p--)
			;
		if (p == name && b->kind == TARGET_NAME)
			return;
		if ((n = hmap_get(&n->kids, p, end - p)) == NULL)
			return;
		fn(n->rules, arg);
		if (p == name)
			return;
	}
}
