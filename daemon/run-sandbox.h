/*
 * pinhole run's sandbox and its command (the options are read by
 * cli/cmd-run.c): standalone, the hooks a gateway of its own is served
 * with by gwloop_run(), which add the sandbox from netns/, hand its
 * listeners to the gateway, the DNS server and the UDP catcher, and
 * end the loop with the command; or attached to a session
 * (daemon/attach-client.h), the sandbox made here and its listeners
 * handed over, the command run on an event loop of its own.
 */
#ifndef RUN_SANDBOX_H
#define RUN_SANDBOX_H

#include "daemon/gwloop.h"
#include "netns/netns.h"

#define RUN_FAILED	125	/* pinhole failed; the command did not run */

/* What the command line asked for. */
struct run_opts {
	struct gwloop_opts	 loop;		/* the gateway's, first */
	struct netns_net	 net;
	const char		*session;	/* --session, PINHOLE_SESSION */
	int			 quiet;		/* --quiet */
	const char		*name;		/* --name, or NULL */
	char			*const *argv;	/* the command */
};

/*
 * Run the command in the sandbox, its gateway around it; or attached to
 * the session o->session.  Either returns the command's exit status, or
 * RUN_FAILED.
 */
int	run_standalone(struct run_opts *);
int	run_attached(struct run_opts *);

#endif
