/*
 * Inside pinhole's sandbox: what `pinhole run` sets there (PINHOLE=1,
 * PINHOLE_AGENT=http://GATEWAY:PORT), and the sandbox's link.
 */
#ifndef INSIDE_H
#define INSIDE_H

/* The agent endpoint's address, as text. */
struct inside_agent {
	char	host[256];
	char	port[8];
};

/*
 * Read an endpoint's URL, "http://HOST:PORT" ("[V6]" too; a path after
 * it is ignored).  Returns 0, or -1 when it is not one.
 */
int	inside_agent_parse(const char *, struct inside_agent *);

/*
 * Is this command inside pinhole's sandbox: PINHOLE=1, and the address
 * of PINHOLE_AGENT on the link of one of this network namespace's
 * interfaces (the sandbox's link to its gateway, which the host has
 * not)?  Not the control directory, which a sandbox has too (an empty
 * tmpfs of its own).
 */
int	inside_sandbox(void);

/*
 * Say, for the person's command cmd, that it cannot work inside the
 * sandbox, and how the agent asks instead.
 */
void	inside_refuse(const char *);

#endif
