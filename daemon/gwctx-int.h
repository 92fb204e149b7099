/*
 * What the files of daemon/ that make up a gateway's context share, and
 * nothing outside daemon/ calls: gwopts.c (options), gwctx.c (set-up
 * and teardown), reload.c (the policy in force) and gwlog.c (the audit
 * log and its shipping).
 */
#ifndef GWCTX_INT_H
#define GWCTX_INT_H

#include <stddef.h>

struct conn_upstream;
struct gwctx;
struct gwopts;
struct metrics_ship;
struct rules;

/* Would the user's policy file apply?  Its path goes in path. */
int	gwopts_user_path(const struct gwopts *, char *, size_t);
/* Describe the policy's sources for the gateway's own page. */
void	gwopts_about(struct gwopts *);

/* Put a policy in force (the gateway owns it); reload when a rule ends. */
void	gwctx_set_rules(struct gwctx *, struct rules *);
/* The upstream a policy names (NULL: none): 0, or -1 with err. */
int	gwctx_upstream_make(const struct rules *, struct conn_upstream **,
	    char *, size_t);
/* Go through the upstream from now on (NULL: dial the hosts). */
void	gwctx_upstream_set(struct gwctx *, struct conn_upstream *,
	    const struct rules *);
/* TLS inspection's CA for the session, or a warning without it. */
void	gwctx_tls(struct gwctx *);
/* Forget the secrets' values. */
void	gwctx_secrets_free(struct gwctx *);

/* Open the shipping destinations: 0, or -1 with err. */
int	gwctx_ships(struct gwctx *, char *, size_t);
/* Read the shipping destinations' counts for a scrape. */
size_t	gwctx_ship_stats(void *, struct metrics_ship *, size_t);
/* At stop, send what waits for at most --log-ship-wait; close them. */
void	gwctx_ships_flush(struct gwctx *);

#endif
