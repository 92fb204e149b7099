/*
 * pinhole log --propose: the policy lines that would have allowed what
 * the audit log says was refused, the way a person turns a first
 * blocked run into a policy.  Pure but for the output stream.
 */
#ifndef PROPOSE_H
#define PROPOSE_H

#include <stdio.h>

struct audit_rec;
struct propose;

struct propose	*propose_create(void);
void		 propose_free(struct propose *);

/*
 * Count one line of the log: a refusal by the policy (connect, request,
 * dns with verdict deny) is kept by host; any other line is passed by.
 * Returns 0, or -1 when out of memory.
 */
int		 propose_add(struct propose *, const struct audit_rec *);

/*
 * Print the proposal: a line `pinhole allow` takes as it is for each
 * host a rule could have allowed (with its ports, or a wildcard for
 * PROPOSE_WILD names or more under one registrable domain), most
 * refused first, each with its count as a comment; then, as comments,
 * what no allow rule lifts (a deny rule, a special-purpose address) and
 * what the constraints of an allow rule refused.
 */
#define PROPOSE_WILD	3
void		 propose_print(struct propose *, FILE *);

#endif
