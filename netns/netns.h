/*
 * The sandbox: a gateway network namespace and a sandbox network namespace
 * joined by one veth pair (inside a new user namespace when not root), the
 * listening sockets created in the gateway namespace, and the sandboxed
 * command.  Everything Linux-specific lives behind these functions.
 */
#ifndef NETNS_H
#define NETNS_H

#include <sys/types.h>
#include <signal.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>

struct event_base;

#define NETNS_NET_DEFAULT	"198.51.100.252/30"
#define NETNS_PROXY_PORT	3128
#define NETNS_DNS_PORT		53
#define NETNS_MAX_PORTS		64	/* extra TCP listeners */
#define NETNS_CAPTURE_PORT	3129	/* the catch-all TCP listener */
#define NETNS_GATEWAY_IF	"gw0"
#define NETNS_SANDBOX_IF	"ph0"

/* The link's addresses: the gateway end and the sandbox end. */
struct netns_net {
	struct in_addr	gateway;
	struct in_addr	sandbox;
	unsigned int	prefixlen;
};

/*
 * Parse "A.B.C.D/N" (N from 8 to 30): the gateway takes the first host
 * address of the network, the sandbox the second.  Pure.  Returns 0, or
 * -1 with *errstr saying why.
 */
int	netns_net_parse(const char *, struct netns_net *, const char **);

/*
 * A path the gateway reads or writes, kept out of the command's reach in
 * its mount namespace.  Every directory and symlink on the way to it is
 * pinned (a mount of itself: it cannot be renamed, removed or replaced);
 * the path itself is bound read-only (RO), or hidden (HIDE: an empty
 * read-only tmpfs over a directory, /dev/null over a file).  A path that
 * does not exist is guarded up to where it ends.  Absolute paths.
 */
enum netns_guard_how {
	NETNS_GUARD_RO,
	NETNS_GUARD_HIDE
};

struct netns_guard {
	const char		*path;
	enum netns_guard_how	 how;
};

struct netns_config {
	struct netns_net	 net;
	uint16_t		 proxy_port;	/* TCP, HTTP proxy */
	uint16_t		 dns_port;	/* UDP and TCP, IP_PKTINFO set */
	const uint16_t		*tcp_ports;	/* more TCP listeners (80, ...) */
	size_t			 ntcp_ports;
	/*
	 * The catch-all TCP listener, or 0 for none: with nftables, one
	 * rule brings every TCP connection from the sandbox to a port with
	 * no listener to it, its original destination kept as the accepted
	 * socket's local address.  Without it (or when the rule cannot be
	 * set), those connections are refused by the kernel (RST).
	 */
	uint16_t		 capture_port;
	/*
	 * Paths the command may read but not change, or must not see at
	 * all (the policy, the log, its key, the control sockets): see
	 * struct netns_guard.  The strings must outlive the sandbox.
	 */
	const struct netns_guard *guards;
	size_t			 nguards;
	int			 allow_vsock;	/* AF_VSOCK sockets, which no
						   netns confines */
	char *const		*argv;		/* the command */
	const char		*trust_bundle;	/* TLS inspection: trust */
	const char		*trust_ca;
	/* "NAME=VALUE", set for the command (secrets' placeholders). */
	const char *const	*env;
	size_t			 nenv;
	/*
	 * The host unix sockets the command may reach (allow-socket):
	 * absolute paths.  Every other one is closed to it (hostsock.c).
	 */
	const char *const	*sockets;
	size_t			 nsockets;
};

/* A listening socket in the gateway namespace, bound to 0.0.0.0:port. */
struct netns_listener {
	int		fd;
	int		type;		/* SOCK_STREAM or SOCK_DGRAM */
	uint16_t	port;
};

struct netns_sandbox {
	struct netns_net	 net;
	uint16_t		 proxy_port;
	int			 userns_fd;	/* -1 when run as root */
	int			 gateway_fd;	/* the gateway netns */
	int			 sandbox_fd;	/* the sandbox netns */
	struct netns_listener	*listeners;
	size_t			 nlisteners;
	int			 capture;	/* the catch-all is in place */
	int			 capture_udp;	/* for UDP too: a SOCK_DGRAM
						   and a SOCK_RAW (ICMP)
						   listener on capture_port */
	char			 capture_err[256];	/* or why not */
	pid_t			 pid;		/* the sandbox child, until
						   the command starts */
	int			 sock;		/* to the sandbox child */
};

/*
 * Start the sandbox child: pid 1 of a new PID namespace, in the gateway
 * netns (and a new user namespace when not root).  It creates the
 * listeners, the sandbox netns and the link, sends the descriptors back,
 * prepares the command's mount namespace and then waits: the command
 * starts only with netns_sandbox_exec().  On error returns NULL with a
 * message naming the failed step (and the fix, when one is known) in
 * err; the command never runs.
 */
struct netns_sandbox	*netns_sandbox_open(const struct netns_config *,
			    char *, size_t);
void			 netns_sandbox_close(struct netns_sandbox *);

/*
 * Take a listener out of the sandbox (the caller now owns the
 * descriptor).  Returns the descriptor, or -1 if there is none.
 */
int	netns_sandbox_take(struct netns_sandbox *, int, uint16_t);

/*
 * Let the sandbox child start the command (cfg->argv); it does so only
 * once it runs with the filtered network and no capabilities.  Signals
 * pinhole was started with ignored stay ignored, the others get their
 * default action.  Returns the sandbox child's pid (the sandbox's init)
 * once the command is started, or -1 with err set (the command did not
 * run).
 */
pid_t	netns_sandbox_exec(struct netns_sandbox *, char *, size_t);

/*
 * A kernel knob that can keep an unprivileged user from user namespaces:
 * the value that does, what that means and the command that lifts it.
 * netns_userns_knob() gives the first knob set that way, or NULL;
 * netns_userns_hint() writes it as "why: fix" ("" for none).
 */
struct netns_knob {
	const char	*path;
	long		 off;
	const char	*why;
	const char	*fix;
};

const struct netns_knob	*netns_userns_knob(void);
void			 netns_userns_hint(char *, size_t);

/*
 * Try what the sandbox needs of a user namespace, in a child process
 * that then exits: create one and, inside it, a network namespace (a
 * restriction that leaves the namespace without capabilities shows
 * there).  Returns 0, or -1 with err naming the step that failed.
 */
int	netns_userns_probe(char *, size_t);

#define NETNS_APPARMOR_PROFILE	"pinhole"
#define NETNS_APPARMOR_FILE	"/etc/apparmor.d/pinhole"
#define NETNS_APPARMOR_FIX	"apparmor_parser -r " NETNS_APPARMOR_FILE \
	" (installed from contrib/apparmor/pinhole), or sysctl -w " \
	"kernel.apparmor_restrict_unprivileged_userns=0"

/* AppArmor, as far as it bears on user namespaces. */
struct netns_apparmor {
	int	enabled;		/* the kernel has AppArmor */
	int	restrict_userns;	/* the knob: 0, 1, or -1: none */
	int	loaded;			/* the pinhole profile: 1, 0, or -1:
					   cannot tell */
	char	label[128];		/* this process's: "unconfined", ... */
};

/* Read AppArmor's state from /sys and /proc. */
void	netns_apparmor_state(struct netns_apparmor *);

/*
 * The supervised command: signals sent to pinhole are passed on to it,
 * and done(exit status, arg) runs once when it ends.
 */
struct netns_child;

struct netns_child	*netns_child_start(struct event_base *,
			    struct netns_sandbox *, void (*)(int, void *), void *,
			    char *, size_t);
void			 netns_child_free(struct netns_child *);

/*
 * The host's unix sockets, and what becomes of each in a sandbox
 * (hostsock.c): closed (/dev/null over it), in a directory the sandbox
 * gets empty (the runtime directory, /tmp/.X11-unix), opened by the
 * policy, one that resolves names (closed whatever the policy says),
 * not there (or not the user's to reach), or bound by a relative name
 * that cannot be found.
 */
enum netns_sock_fate {
	NETNS_SOCK_COVERED,
	NETNS_SOCK_EMPTIED,
	NETNS_SOCK_OPEN,
	NETNS_SOCK_NAMES,
	NETNS_SOCK_GONE,
	NETNS_SOCK_RELATIVE
};

#define NETNS_EMPTY_MAX	64
#define NETNS_OPEN_MAX	32

struct netns_hostsocks {
	struct netns_empty_dir {
		char	*path;		/* as named */
		char	*real;		/* as found */
		mode_t	 mode;		/* the tmpfs's */
	}			 dirs[NETNS_EMPTY_MAX];	/* parents first */
	size_t			 ndirs;
	struct netns_open_sock {
		char	*path;		/* as the policy gave it, expanded */
		char	*real;
		dev_t	 dev;
		ino_t	 ino;
		int	 fd;		/* O_PATH */
	}			 open[NETNS_OPEN_MAX];
	size_t			 nopen;
	char			 last_dir[4096];	/* the last directory */
	int			 last_only;	/* looked at: sockets only */
};

/*
 * Plan what a sandbox does with the host's sockets, the ones the policy
 * opens given (absolute); walk the host's sockets, listed by a
 * descriptor of its /proc/net/unix, calling back with each name and its
 * fate (a callback's -1 stops the walk); a directory that holds nothing
 * but sockets joins the plan's emptied ones.  0, or -1 with errno set.
 */
int		 netns_hostsocks_plan(struct netns_hostsocks *,
		    const char *const *, size_t);
int		 netns_hostsocks_walk(struct netns_hostsocks *, int,
		    int (*)(const char *, enum netns_sock_fate, void *), void *);
void		 netns_hostsocks_free(struct netns_hostsocks *);
const char	*netns_sock_fate_name(enum netns_sock_fate);

/* One line of /proc/net/unix (without its newline).  Pure. */
struct netns_unix_ent {
	unsigned int	 flags;		/* 0x10000: listening */
	unsigned int	 type;		/* 1 stream, 2 datagram, 5 seqpacket */
	unsigned int	 state;
	const char	*path;		/* into the line; NULL: not bound */
	size_t		 pathlen;
};

int	netns_unix_line(const char *, size_t, struct netns_unix_ent *);

/*
 * The names of the sockets that listen (stream, seqpacket) or are bound
 * (datagram) in the text of /proc/net/unix, at most 107 bytes each,
 * sorted and each once; with each also joined to the lines after it, as
 * the kernel writes a name's newlines as they are.  Pure; the caller
 * frees each name and the array.  0, or -1: out of memory.
 */
#define NETNS_UNIX_NAME_MAX	107
int	netns_unix_names(const char *, size_t, char ***, size_t *);

/* A wait status as a shell exit status: 128+N for signal N.  Pure. */
int	netns_exit_status(int);

#endif
