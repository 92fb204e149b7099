/*
 * Is this command running inside pinhole's sandbox?  The person's
 * commands cannot work there (no control socket, a read-only policy, no
 * namespaces to make): they say so, and how the agent asks instead.
 */
#include "config.h"

#include <sys/socket.h>

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/inside.h"
#include "rules/rules.h"

/* Read "http://HOST:PORT[/...]" (HOST may be "[V6]"). */
int
inside_agent_parse(const char *v, struct inside_agent *a)
{
	const char	*p, *colon;
	size_t		 n;
	uint16_t	 port;

	if (v == NULL || v[0] == '\0')
		return (-1);
	if (strncmp(v, "http://", 7) == 0)
		v += 7;
	n = strcspn(v, "/");
	if (v[0] == '[') {
		if ((p = memchr(v, ']', n)) == NULL || p[1] != ':')
			return (-1);
		snprintf(a->host, sizeof a->host, "%.*s", (int)(p - v - 1),
		    v + 1);
		colon = p + 1;
	} else {
		if ((colon = memchr(v, ':', n)) == NULL)
			return (-1);
		snprintf(a->host, sizeof a->host, "%.*s", (int)(colon - v), v);
	}
	if (port_parse(colon + 1, v + n - colon - 1, &port) == -1)
		return (-1);
	snprintf(a->port, sizeof a->port, "%u", port);
	return (a->host[0] != '\0' ? 0 : -1);
}

/*
 * Is gw on the link of an interface of this network namespace (not the
 * loopback), and not that interface's own address: the sandbox's link,
 * whose other end is the gateway?
 */
static int
inside_on_link(struct in_addr gw)
{
	struct ifaddrs		*ifs, *i;
	struct sockaddr_in	*a, *m;
	int			 found = 0;

	if (getifaddrs(&ifs) == -1)
		return (0);
	for (i = ifs; i != NULL && !found; i = i->ifa_next) {
		if (i->ifa_addr == NULL || i->ifa_netmask == NULL ||
		    i->ifa_addr->sa_family != AF_INET ||
		    (i->ifa_flags & IFF_LOOPBACK))
			continue;
		a = (struct sockaddr_in *)i->ifa_addr;
		m = (struct sockaddr_in *)i->ifa_netmask;
		found = a->sin_addr.s_addr != gw.s_addr &&
		    (a->sin_addr.s_addr & m->sin_addr.s_addr) ==
		    (gw.s_addr & m->sin_addr.s_addr);
	}
	freeifaddrs(ifs);
	return (found);
}

/* Inside pinhole's sandbox: its variables, and its link to the gateway. */
int
inside_sandbox(void)
{
	struct inside_agent	 a;
	struct in_addr		 gw;
	const char		*v = getenv("PINHOLE");

	if (v == NULL || strcmp(v, "1") != 0 ||
	    inside_agent_parse(getenv("PINHOLE_AGENT"), &a) == -1 ||
	    inet_pton(AF_INET, a.host, &gw) != 1)
		return (0);
	return (inside_on_link(gw));
}

/* Say that a person's command cannot work here, and how to ask. */
void
inside_refuse(const char *cmd)
{
	fprintf(stderr, "pinhole %s: you are inside pinhole's sandbox, where "
	    "the person's commands do not work: ask with `pinhole request "
	    "HOST[:PORT] --reason ...` (a name the DNS refused: `pinhole "
	    "request HOST --any-port --reason ...`), and the person "
	    "outside answers\n", cmd);
}
