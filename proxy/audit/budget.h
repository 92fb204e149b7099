/*
 * The log budget: the lines and bytes of allowed traffic each sandbox
 * may put in the audit log a second, so that a sandbox cannot flood the
 * log and make rotation delete its own earlier lines.  Within its budget
 * a sandbox's lines are written one by one; past it they are summed up,
 * one line a second for each kind (event, verdict, host, port, method):
 * how many, their bytes up and down, the time of the first and the
 * last.  Refusals never come here: they are always written one by one.
 * docs/audit-log.md, "The log budget".
 */
#ifndef AUDIT_BUDGET_H
#define AUDIT_BUDGET_H

#include <stdint.h>

#define AUDIT_BUDGET_LINES	100		/* lines a second */
#define AUDIT_BUDGET_BYTES	(128 * 1024)	/* bytes a second */
#define AUDIT_BUDGET_BURST	10		/* s of either, at once */

struct audit;
struct audit_budget;
struct audit_bucket;
struct audit_event;
struct audit_ident;
struct event_base;

/*
 * A budget of lines and bytes a second per sandbox (0 and 0: none, all
 * written) in front of an audit log, summing up on base's loop.  NULL
 * when out of memory.
 */
struct audit_budget *audit_budget_create(struct event_base *, struct audit *,
		    uint64_t, uint64_t);
/* Write what is summed up, and free it. */
void		 audit_budget_free(struct audit_budget *);

/*
 * Write an allowed traffic line of a sandbox (who it is, and its bucket;
 * NULL and NULL: the gateway's own clients), or sum it up when the
 * sandbox is past its budget.
 */
void		 audit_budget_write(struct audit_budget *,
		    const struct audit_ident *, struct audit_bucket *,
		    const struct audit_event *);

/* Parse --log-budget: LINES,BYTES (K, M, G suffixes), or 0 for none. */
int		 audit_budget_parse(const char *, uint64_t *, uint64_t *);

#endif
