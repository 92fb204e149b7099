/*
 * pinhole proxy's gateway and loop, shared with the commands that run
 * the same gateway with more around it (pinhole session start).
 */
#ifndef PROXY_CLI_H
#define PROXY_CLI_H

#include "cli/pinhole.h"
#include "daemon/gwopts.h"

/* The options of proxy, for a command that takes them all. */
extern const struct cmd_opt	proxy_gateway_opts[];
/* The same but --listen, for a command whose listeners differ. */
extern const struct cmd_opt	proxy_served_opts[];
/* What session start takes but --foreground: for the hook, too. */
extern const struct cmd_opt	session_served_opts[];

/* What a command adds around the proxy's loop; any may be NULL. */
struct proxy_hooks {
	/* One of its own options: 0 handled, -1 not one, or EXIT_USAGE. */
	int	(*option)(void *, const struct cmd_entry *, int, const char *);
	/* The arguments after the options: 0, or an exit status. */
	int	(*args)(void *, const struct cmd_entry *, struct gwopts *, int,
		    char **);
	/* Before the gateway is set up: 0, or an exit status. */
	int	(*prepare)(void *);
	/* Serving on listening (its listeners, one line): 0 or -1. */
	int	(*ready)(void *, struct gwctx *, const char *);
	/* Setup failed or the loop ended, with the exit status. */
	void	(*done)(void *, int);
	void	*arg;
	int	 listen_none;	/* no --listen: no TCP listener */
};

/* Run the gateway from the command line until SIGTERM or SIGINT. */
int	proxy_main(const struct cmd_entry *, int, char **,
	    const struct proxy_hooks *);

#endif
