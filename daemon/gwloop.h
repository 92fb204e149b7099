/*
 * The gateway's event loop that pinhole proxy, pinhole session start
 * and pinhole run share: set up from the options, listeners on the
 * addresses given, SIGHUP reloads, SIGTERM and SIGINT stop it, the
 * service manager told; or, for run, as long as its command lives.
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

/* What a command adds around the loop; any may be NULL (or 0). */
struct gwloop_hooks {
	/* Before the gateway is set up: 0, or an exit status. */
	int	(*prepare)(void *);
	/* Serving on listening (its listeners, one line): 0 or -1. */
	int	(*ready)(void *, struct gwctx *, const char *);
	/*
	 * The loop has ended, before the stop line: what goes first is
	 * freed, and the line's detail written; returns the exit status.
	 */
	int	(*ended)(void *, struct gwctx *, char *, size_t);
	/* Setup failed or the loop ended, with the exit status. */
	void	(*done)(void *, int);
	void	*arg;
	const char *start;	/* the start line's detail; NULL: listeners */
	int	 failed;	/* the exit status when set-up fails; 0: 1 */
	/*
	 * The gateway of one command (pinhole run): the command's end
	 * stops the loop, signals are passed on to it (netns/child.c),
	 * and neither a service manager nor a client is told anything.
	 */
	int	 command;
};

/*
 * Run the gateway until SIGTERM or SIGINT (a command's: until it ends):
 * 0, or an exit status.
 */
int	gwloop_run(struct gwloop_opts *, const struct gwloop_hooks *);

#endif
