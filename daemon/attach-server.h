/*
 * Attaching sandboxes to a session (proxy/wire/attachmsg.h): the session
 * listens on NAME.attach in the control directory; each `pinhole run
 * --session NAME` connects, is given the sandbox's configuration, makes
 * the sandbox and hands its listeners over.  The session serves them as
 * its own, naming the sandbox in every line, until the connection
 * closes; then the sandbox's listeners and connections are closed at
 * once.  daemon/attach-client.h is the other side.
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

#endif
