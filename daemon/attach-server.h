/*
 * Attaching sandboxes to a session (proxy/wire/attachmsg.h): the session
 * listens on NAME.attach in the control directory; each `pinhole run
 * --session NAME` connects, is given the sandbox's configuration, makes
 * the sandbox and hands its listeners over.  The session serves them as
 * its own, naming the sandbox in every line, until the connection
 * closes; then the sandbox's listeners and connections are closed at
 * once.  attach_run() is the other side.
 */
#ifndef ATTACH_SERVER_H
#define ATTACH_SERVER_H

#include <stddef.h>

struct attach_server;
struct gwctx;
struct netns_sandbox;

#define ATTACH_MAX_DEFAULT	256	/* sandboxes attached at once */

/*
 * Listen on path for a gateway, giving each sandbox the guard plan
 * (daemon/runguard.h) and at most max attached at once.  NULL with err set.
 */
struct attach_server	*attach_server_open(struct gwctx *, const char *,
			    const char *, unsigned int, char *, size_t);
void			 attach_server_free(struct attach_server *);
/* Sandboxes attached now, and since the session started. */
unsigned int		 attach_server_count(const struct attach_server *,
			    unsigned long long *);
/* Call cb(arg) whenever a sandbox attaches or detaches. */
void			 attach_server_on_change(struct attach_server *,
			    void (*)(void *), void *);

/*
 * The run side, one step at a time on a connected socket: send the
 * command line (asking for notices, or not) and read the configuration
 * (0, or -1 with err set); hand over a made sandbox's listeners (closing
 * our copies); read the notices the session sends meanwhile (1 one, 0
 * none now, -1 the session has gone); tell the exit status.
 */
struct attach_msg;
int	attach_hello(int, const char *, int, struct attach_msg *, char *,
	    size_t);
int	attach_handover(int, struct netns_sandbox *, char *, size_t);
int	attach_recv_notice(int, struct attach_msg *);
void	attach_bye(int, int);

#endif
