/*
 * Inside netns/: what the setup child and the sandboxed child share.
 */
#ifndef NETNS_INT_H
#define NETNS_INT_H

struct nl_sock;
struct netns_net;

struct nl_sock	*netns_link_socket(char *, size_t);
int		 netns_link_gateway(struct nl_sock *, int,
		    const struct netns_net *, char *, size_t);
int		 netns_link_sandbox(struct nl_sock *, const struct netns_net *,
		    char *, size_t);

/* Write a short string to a file (a /proc knob). */
int		 netns_write_file(const char *, const char *);

#endif
