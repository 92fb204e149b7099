/*
 * The usual hooks of an escalation queue (proxy/escalate/escalate.h) over runtime
 * grants and the policy (rules/grants.h): an approval adds a grant (an
 * `always` one is also appended to the policy file), "allowed?" is
 * policy_decide(), "can a grant help?" is policy_grantable(), and the
 * agent's "what is allowed" lists the rules in force (rules_text(): the
 * policy files' and those given on the command line).  The owner of the
 * gateway fills this in and passes it to escalate_set_hooks() through
 * escalate_grants_hooks().
 */
#ifndef ESCALATE_GRANTS_H
#define ESCALATE_GRANTS_H

#include <stdint.h>

#include "proxy/escalate/escalate.h"

struct grants;
struct rules;

struct escalate_grants {
	struct grants	  *grants;
	struct rules	 **rules;	/* in force (swapped on reload) */
	const char	  *policy_path;	/* for `always`; NULL refuses it */
	uint64_t	 (*now_ms)(void); /* the grants' clock; NULL: ours */
};

/* Hooks whose arg is eg (which must outlive the queue). */
void	escalate_grants_hooks(struct escalate_grants *,
	    struct escalate_hooks *);

#endif
