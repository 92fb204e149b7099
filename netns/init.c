/*
 * The sandbox's init (pid 1 of its PID namespace).  When it ends, the
 * kernel kills everything left in the namespace, so nothing the command
 * started outlives it.  It passes on the signals pinhole passed to it, and
 * not those the terminal sent to the whole process group.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <signal.h>
#include <unistd.h>

#include "netns/netns-int.h"
#include "netns/netns.h"

/* The signals passed on to the command. */
static const int init_forwarded[] = {
	SIGTERM, SIGHUP, SIGINT, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH
};

/* Fill a set with the passed-on signals and SIGCHLD. */
void
netns_init_signals(sigset_t *set)
{
	size_t	i;

	sigemptyset(set);
	sigaddset(set, SIGCHLD);
	for (i = 0; i < sizeof(init_forwarded) / sizeof(init_forwarded[0]); i++)
		sigaddset(set, init_forwarded[i]);
}

/* Fill a set with the passed-on signals that are ignored now. */
void
netns_init_ignored(sigset_t *ignored)
{
	struct sigaction	sa;
	sigset_t		set;
	int			sig;

	netns_init_signals(&set);
	sigemptyset(ignored);
	for (sig = 1; sig < NSIG; sig++) {
		if (sig == SIGCHLD || sigismember(&set, sig) != 1)
			continue;
		if (sigaction(sig, NULL, &sa) == 0 && sa.sa_handler == SIG_IGN)
			sigaddset(ignored, sig);
	}
}

/* Reap every child; exit with the command's status once it has ended. */
static void
init_reap(pid_t command)
{
	pid_t	r;
	int	status;

	while ((r = waitpid(-1, &status, WNOHANG)) > 0) {
		if (r == command)
			_exit(netns_exit_status(status));
	}
}

/* Wait for signals (they are blocked) until the command ends. */
void
netns_init_loop(pid_t command, const sigset_t *set)
{
	siginfo_t	si;
	int		sig;

	for (;;) {
		if ((sig = sigwaitinfo(set, &si)) == -1)
			continue;
		if (sig == SIGCHLD)
			init_reap(command);
		else if (si.si_code != SI_KERNEL)
			kill(command, sig);
	}
}
