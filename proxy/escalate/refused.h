/*
 * The sandboxes whose refusals the queue remembers: each keeps its own
 * recent refusals (struct sandbox's refused ring), and this index keeps
 * the sandboxes that met one most recently, at most REFUSED_SANDBOXES
 * (the others' refusals are forgotten), and the rings of those that
 * ended, which the sandboxes attached after them see too; the agent
 * endpoint tells a sandbox why it was refused from here, and only it.
 * A caller naming no sandbox has a sandbox of the index's own, "".
 * Pure: the caller gives the time.
 */
#ifndef REFUSED_H
#define REFUSED_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "proxy/sandbox/sandbox.h"

#define REFUSED_SANDBOXES	64	/* sandboxes whose are kept */

struct refused;

struct refused	*refused_create(void);
void		 refused_free(struct refused *);

/*
 * Keep a refusal (its sandbox named in it) that sb (NULL: none) met at
 * now, in sb's ring.  Returns the entry kept, with its count and times,
 * or NULL when out of memory.
 */
const struct sandbox_refusal *refused_add(struct refused *, struct sandbox *,
		    const struct sandbox_refusal *, time_t);
/*
 * A sandbox's refusals and those of the sandboxes (ids 1, 2, ... as they
 * attached) that had ended before it attached, newest first; NULL past
 * the last.
 */
const struct sandbox_refusal *refused_at(const struct refused *,
		    const char *, size_t);
/* The same one by one: the next older than *below (~0 at first). */
const struct sandbox_refusal *refused_next(const struct refused *,
		    const char *, unsigned long long *);
/*
 * A sandbox's newest refusal of host on port (a refusal of its name by
 * the DNS, port 0, counts for every port); NULL when none is kept.
 */
const struct sandbox_refusal *refused_find(const struct refused *,
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
