/*
 * The host's unix sockets through which a name is resolved around the
 * gateway: systemd-resolved's varlink, nscd, the system D-Bus (where
 * systemd-resolved and avahi answer look-ups) and avahi's own.  A
 * sandbox never reaches them: the policy cannot open them
 * (`allow-socket`), and the sandbox covers them whatever else it opens.
 */
#ifndef NAMESOCK_H
#define NAMESOCK_H

/* The paths, NULL-terminated. */
extern const char *const namesock_paths[];

/* Is this path (as written, not resolved) one of them?  1 or 0. */
int	namesock_is(const char *);

#endif
