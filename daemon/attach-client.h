/*
 * The run side of attaching a sandbox to a session (the server is
 * daemon/attach-server.h): what `pinhole run --session NAME` says on
 * the connected NAME.attach socket, one step at a time.
 */
#ifndef ATTACH_CLIENT_H
#define ATTACH_CLIENT_H

#include <stddef.h>

struct attach_msg;
struct netns_sandbox;

/*
 * Send the command line (asking for notices, or not) and read the
 * configuration (0, or -1 with err set); hand over a made sandbox's
 * listeners (closing our copies); read the notices the session sends
 * meanwhile (1 one, 0 none now, -1 the session has gone); tell the exit
 * status and wait for the session to close the socket.
 */
int	attach_hello(int, const char *, int, struct attach_msg *, char *,
	    size_t);
int	attach_handover(int, struct netns_sandbox *, char *, size_t);
int	attach_recv_notice(int, struct attach_msg *);
void	attach_bye(int, int);

#endif
