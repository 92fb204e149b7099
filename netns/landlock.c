/*
 * A Landlock domain for the sandbox.  Landlock keeps a process in a
 * domain from ptrace access to any process outside it, and that check
 * guards /proc/PID/root, cwd, fd, environ and mem as well.  Should the
 * sandbox be left with the host's /proc (where a /proc of its own cannot
 * be mounted, as in some containers), this keeps the command from
 * walking into another process's view of the filesystem, around every
 * mount that hides a socket or guards a file.
 *
 * The domain handles no filesystem or network right (handling any
 * filesystem right would forbid mount(2), which a filesystem sandbox
 * inside, bubblewrap, needs); it only scopes signals to the domain,
 * which a sandbox in its own PID namespace cannot send out anyway.  A
 * domain with nothing but a scope needs Landlock ABI 6 (Linux 6.12).
 */
#include "config.h"

#include <sys/syscall.h>

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "netns/netns-int.h"

#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset	444	/* the same everywhere */
#define __NR_landlock_restrict_self	446
#endif

#define LL_CREATE_VERSION	(1U << 0)
#define LL_SCOPE_SIGNAL		(1ULL << 1)
#define LL_ABI_SCOPE		6

/* struct landlock_ruleset_attr as of ABI 6. */
struct ll_attr {
	uint64_t	handled_access_fs;
	uint64_t	handled_access_net;
	uint64_t	scoped;
};

/* Put this process and all it starts in a Landlock domain of their own. */
int
netns_landlock(void)
{
	struct ll_attr	attr;
	long		abi;
	int		fd, saved;

	abi = syscall(__NR_landlock_create_ruleset, NULL, 0,
	    LL_CREATE_VERSION);
	if (abi == -1)
		return (-1);
	if (abi < LL_ABI_SCOPE) {
		errno = EOPNOTSUPP;
		return (-1);
	}
	memset(&attr, 0, sizeof attr);
	attr.scoped = LL_SCOPE_SIGNAL;
	if ((fd = (int)syscall(__NR_landlock_create_ruleset, &attr,
	    sizeof attr, 0)) == -1)
		return (-1);
	if (syscall(__NR_landlock_restrict_self, fd, 0) == -1) {
		saved = errno;
		close(fd);
		errno = saved;
		return (-1);
	}
	close(fd);
	return (0);
}
