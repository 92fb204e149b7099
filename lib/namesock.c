/*
 * The host sockets that resolve names: see namesock.h.
 */
#include "config.h"

#include <string.h>

#include "lib/namesock.h"

const char *const namesock_paths[] = {
	"/run/systemd/resolve/io.systemd.Resolve",
	"/run/systemd/resolve/io.systemd.Resolve.Monitor",
	"/run/nscd/socket",
	"/var/run/nscd/socket",
	"/run/dbus/system_bus_socket",
	"/var/run/dbus/system_bus_socket",
	"/run/avahi-daemon/socket",
	"/var/run/avahi-daemon/socket",
	NULL
};

/* Is path one of the name-resolving sockets? */
int
namesock_is(const char *path)
{
	const char *const	*p;

	for (p = namesock_paths; *p != NULL; p++) {
		if (strcmp(*p, path) == 0)
			return (1);
	}
	return (0);
}
