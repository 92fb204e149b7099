/*
 * The refusals each sandbox met lately: a small ring a sandbox, so that
 * the agent endpoint can tell a sandbox why it was refused, and only
 * it.  The same refusal again (host, port, way and reason) is counted
 * in its entry, which keeps the latest request refused; a new one takes
 * the place of the one met least recently.  Rings are kept for the
 * sandboxes that met a refusal most recently, at most
 * ESCALATE_REFUSED_SANDBOXES; the others are forgotten.
 * Pure: the caller gives the time.
 */
#ifndef REFUSED_H
#define REFUSED_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "proxy/escalate/escalate.h"

struct refused;

struct refused	*refused_create(void);
void		 refused_free(struct refused *);

/*
 * Keep a refusal (its sandbox named in it) met at now.  Returns the entry
 * kept, with its count and times, or NULL when out of memory.
 */
const struct escalate_refusal *refused_add(struct refused *,
		    const struct escalate_refusal *, time_t);
/*
 * A sandbox's refusals and those of the sandboxes (ids 1, 2, ... as they
 * attached) that had ended before it attached, newest first; NULL past
 * the last.
 */
const struct escalate_refusal *refused_at(const struct refused *,
		    const char *, size_t);
/* The same one by one: the next older than *below (~0 at first). */
const struct escalate_refusal *refused_next(const struct refused *,
		    const char *, unsigned long long *);
/*
 * A sandbox's newest refusal of host on port (a refusal of its name by
 * the DNS, port 0, counts for every port); NULL when none is kept.
 */
const struct escalate_refusal *refused_find(const struct refused *,
		    const char *, const struct host *, uint16_t);
/*
 * A sandbox has gone, newest being the newest sandbox id of the gateway
 * then: its refusals are kept for the sandboxes attached later, or, with
 * newest 0, forgotten.
 */
void		 refused_drop(struct refused *, const char *,
		    unsigned long long);
/* How many sandboxes have a ring now. */
size_t		 refused_nsandboxes(const struct refused *);

#endif
