/*
 * The gateway's event loop that pinhole proxy and pinhole session start
 * share: set up from the options, listeners on the addresses given,
 * SIGHUP reloads, SIGTERM and SIGINT stop it, the service manager told.
 */
#ifndef GWLOOP_H
#define GWLOOP_H

#include <stddef.h>

#include "daemon/gwopts.h"

/* What the loop serves: the gateway's options and its listeners. */
struct gwloop_opts {
	struct gwopts		 g;		/* first: shared options */
	const char		*listen[GWOPTS_MAX_ARGS];
	size_t			 nlisten;
	const char		*dns_listen[GWOPTS_MAX_ARGS];
	size_t			 ndns_listen;
	const char		*socks[GWOPTS_MAX_ARGS];
	size_t			 nsocks;
};

/* What a command adds around the loop; any may be NULL. */
struct gwloop_hooks {
	/* Before the gateway is set up: 0, or an exit status. */
	int	(*prepare)(void *);
	/* Serving on listening (its listeners, one line): 0 or -1. */
	int	(*ready)(void *, struct gwctx *, const char *);
	/* Setup failed or the loop ended, with the exit status. */
	void	(*done)(void *, int);
	void	*arg;
};

/* Run the gateway until SIGTERM or SIGINT: 0, or an exit status. */
int	gwloop_run(struct gwloop_opts *, const struct gwloop_hooks *);

#endif
