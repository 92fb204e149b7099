/*
 * Inside netns/: what the sandbox child's setup (sandbox.c) and its
 * command side (exec.c) share.
 */
#ifndef NETNS_INT_H
#define NETNS_INT_H

#include <sys/types.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>

struct nl_sock;
struct netns_net;

struct nl_sock	*netns_link_socket(char *, size_t);
int		 netns_link_gateway(struct nl_sock *, int,
		    const struct netns_net *, char *, size_t);
int		 netns_link_sandbox(struct nl_sock *, const struct netns_net *,
		    char *, size_t);

/* The signals pinhole and the sandbox init pass on to the command. */
void		 netns_init_signals(sigset_t *);

/* Those of them pinhole was started with ignored. */
void		 netns_init_ignored(sigset_t *);

/*
 * The sandbox child once the namespaces are made (exec.c): prepare the
 * command's mount namespace and environment, wait for pinhole's word on
 * sock, then run the command as the sandbox's init.  Never returns.
 */
struct netns_config;
void		 netns_exec_child(const struct netns_config *, int, int,
		    const sigset_t *) __attribute__((noreturn));

/*
 * Close the host's unix sockets to the sandbox in the current mount
 * namespace, as planned; the descriptor lists the host's sockets
 * (hostsock.c).  0, or -1 with err saying what failed.
 */
struct netns_hostsocks;
int		 netns_hostsocks_close(struct netns_hostsocks *, int,
		    char *, size_t);

/* The sandbox init's loop: pass signals on, reap, exit with pid's status. */
void		 netns_init_loop(pid_t, const sigset_t *)
		    __attribute__((noreturn));

/*
 * The capture rule (nft.c): TCP from the sandbox to any port but the
 * ones given (they have listeners) goes to the catch-all port; so does
 * UDP to any port but DNS's, if asked.  netns_nft_batch() writes the
 * nf_tables netlink batch (pure; its messages numbered from the given
 * sequence number), netns_nft_capture() sends it.
 */
size_t		 netns_nft_batch(const uint16_t *, size_t, uint16_t, int,
		    uint32_t, char *, size_t);
int		 netns_nft_capture(const uint16_t *, size_t, uint16_t, int,
		    char *, size_t);

/*
 * Guard the paths in the current mount namespace (guard.c).  Returns 0,
 * or -1 with err saying which path and why.
 */
struct netns_guard;
int		 netns_guard_paths(const struct netns_guard *, size_t, char *,
		    size_t);

/*
 * Refuse, for this process and all it starts, the system calls that
 * reach around the network namespace (seccomp.c): AF_VSOCK sockets
 * unless allowed, io_uring (which creates sockets out of seccomp's
 * sight).  Needs no_new_privs.  Returns 0, or -1 with errno set.
 */
int		 netns_seccomp(int);

/*
 * Put this process and all it starts in a Landlock domain of their own,
 * which keeps them from other processes' /proc entries (landlock.c).
 * Needs no_new_privs.  Returns 0, or -1 with errno set (no Landlock).
 */
int		 netns_landlock(void);

/* Write a short string to a file (a /proc knob). */
int		 netns_write_file(const char *, const char *);

#endif
