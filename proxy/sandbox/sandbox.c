/*
 * A sandbox (proxy/sandbox/sandbox.h): who it is, what decides for it,
 * its one-time grants, its recent refusals and its budget.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/sandbox/sandbox.h"

/* A new sandbox with one reference. */
struct sandbox *
sandbox_new(const char *id, const char *cmd, long pid, struct policy *p)
{
	struct sandbox	*sb;

	if ((sb = calloc(1, sizeof *sb)) == NULL)
		return (NULL);
	if ((sb->once = grants_create()) == NULL) {
		free(sb);
		return (NULL);
	}
	snprintf(sb->ident.id, sizeof sb->ident.id, "%s", id);
	snprintf(sb->ident.cmd, sizeof sb->ident.cmd, "%s", cmd);
	sb->ident.pid = pid;
	sb->policy = p;
	sb->refs = 1;
	return (sb);
}

/* Take a reference. */
struct sandbox *
sandbox_ref(struct sandbox *sb)
{
	if (sb != NULL)
		sb->refs++;
	return (sb);
}

/* Drop a reference; the last frees the sandbox. */
void
sandbox_unref(struct sandbox *sb)
{
	if (sb == NULL || --sb->refs > 0)
		return;
	grants_free(sb->once);
	free(sb->refused);
	free(sb);
}

/* Its id, "" for none. */
const char *
sandbox_id(const struct sandbox *sb)
{
	return (sb != NULL ? sb->ident.id : "");
}

/* Who it is, for the log. */
const struct audit_ident *
sandbox_ident(const struct sandbox *sb)
{
	return (sb != NULL ? &sb->ident : NULL);
}

/* Its log budget's bucket. */
struct audit_bucket *
sandbox_log_bucket(struct sandbox *sb)
{
	return (sb != NULL ? &sb->budget.log : NULL);
}

/* The policy that decides for it. */
struct policy *
sandbox_policy(const struct sandbox *sb, struct policy *p)
{
	return (sb != NULL && sb->policy != NULL ? sb->policy : p);
}

/* Ask as the sandbox. */
void
sandbox_ask(const struct sandbox *sb, struct policy_ask *q)
{
	q->sandbox = sandbox_id(sb);
	q->once = sb != NULL ? sb->once : NULL;
}

/*
 * Is this entry the same refusal again?  The request refused may be
 * another (a crawler's every path would take the whole ring): the entry
 * keeps the latest.
 */
static int
sandbox_refused_same(const struct sandbox_refusal *a,
    const struct sandbox_refusal *b)
{
	return (a->port == b->port && strcmp(a->host.text, b->host.text) == 0 &&
	    strcmp(a->via, b->via) == 0 && strcmp(a->why, b->why) == 0);
}

/* The entry a refusal goes in: its own, a free one, or the oldest. */
static size_t
sandbox_refused_slot(const struct sandbox_refusals *g,
    const struct sandbox_refusal *in)
{
	size_t	i, oldest = 0;

	for (i = 0; i < SANDBOX_REFUSED_MAX; i++) {
		if (g->seq[i] != 0 && sandbox_refused_same(&g->r[i], in))
			return (i);
	}
	for (i = 0; i < SANDBOX_REFUSED_MAX; i++) {
		if (g->seq[i] < g->seq[oldest])
			oldest = i;
	}
	return (oldest);
}

/* Keep a refusal met at now, numbered seq. */
const struct sandbox_refusal *
sandbox_refused_add(struct sandbox *sb, const struct sandbox_refusal *in,
    time_t now, unsigned long long seq)
{
	struct sandbox_refusals	*g;
	struct sandbox_refusal	*r;
	size_t			 i;

	if (sb->refused == NULL &&
	    (sb->refused = calloc(1, sizeof *sb->refused)) == NULL)
		return (NULL);
	g = sb->refused;
	i = sandbox_refused_slot(g, in);
	r = &g->r[i];
	if (g->seq[i] == 0 || !sandbox_refused_same(r, in)) {
		*r = *in;
		r->count = 0;
		r->first = now;
	}
	/* The newest request and advice (a policy reloaded since). */
	memcpy(r->what, in->what, sizeof r->what);
	memcpy(r->fix, in->fix, sizeof r->fix);
	r->ask = in->ask;
	r->count++;
	r->last = now;
	g->seq[i] = seq;
	return (r);
}

/* Forget its refusals. */
void
sandbox_refused_clear(struct sandbox *sb)
{
	free(sb->refused);
	sb->refused = NULL;
}
