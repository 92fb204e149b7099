/*
 * Binding and connecting unix sockets by path, however long the path:
 * a path that does not fit in sun_path is reached through its folder,
 * as /proc/self/fd/N/NAME.
 */
#ifndef UNIXSOCK_H
#define UNIXSOCK_H

#include <sys/types.h>

/* Bind fd to path; 0, or -1 with errno (ENAMETOOLONG: no way to). */
int	unixsock_bind(int, const char *);
/* Connect fd to path; 0, or -1 with errno. */
int	unixsock_connect(int, const char *);
/*
 * Is the peer of fd in our network namespace? 1 yes, 0 no (or gone),
 * -1 we may not look; its uid.
 */
int	unixsock_peer_local(int, uid_t *);

#endif
