/*
 * The supervised command.  It stays in pinhole's process group and
 * terminal, so signals the terminal sends (Ctrl-C, Ctrl-\, window size,
 * hangup) reach it directly, and Ctrl-Z stops both; pinhole only passes
 * on the signals someone sent to pinhole itself.  Signals arrive through
 * a signalfd, so the siginfo tells the two apart.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "netns/netns-int.h"
#include "netns/netns.h"

struct netns_child {
	struct event	*ev;
	int		 sfd;
	pid_t		 pid;
	void		(*done)(int, void *);
	void		*arg;
};

/* Reap the command if it has ended; tell the owner once. */
static void
child_reap(struct netns_child *c)
{
	int	status;
	pid_t	r;

	if (c->pid == -1)
		return;
	while ((r = waitpid(c->pid, &status, WNOHANG)) == -1 && errno == EINTR)
		;
	if (r != c->pid)
		return;
	c->pid = -1;
	event_del(c->ev);
	c->done(netns_exit_status(status), c->arg);
}

/* Read pending signals: reap on SIGCHLD, pass the others on. */
static void
child_signal_cb(evutil_socket_t fd, short events, void *arg)
{
	struct netns_child		*c = arg;
	struct signalfd_siginfo		 si;

	while (read(fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGCHLD) {
			child_reap(c);
			if (c->pid == -1)
				return;
			continue;
		}
		/* The terminal signals the whole group: it has it already. */
		if (si.ssi_code == SI_KERNEL || c->pid == -1)
			continue;
		kill(c->pid, (int)si.ssi_signo);
	}
}

/* Block the signals we watch and open a signalfd for them. */
static int
child_signalfd(void)
{
	sigset_t	set;

	netns_init_signals(&set);
	if (sigprocmask(SIG_BLOCK, &set, NULL) == -1)
		return (-1);
	return (signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC));
}

/* Start the command in the sandbox and watch it. */
struct netns_child *
netns_child_start(struct event_base *base, struct netns_sandbox *sb,
    void (*done)(int, void *), void *arg, char *err, size_t errlen)
{
	struct netns_child	*c;

	if ((c = calloc(1, sizeof(*c))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return (NULL);
	}
	c->pid = -1;
	c->sfd = -1;
	c->done = done;
	c->arg = arg;
	/* The command shares our uid: keep it from ptrace and /proc/PID/fd. */
	prctl(PR_SET_DUMPABLE, 0);
	if ((c->sfd = child_signalfd()) == -1) {
		snprintf(err, errlen, "signalfd: %s", strerror(errno));
		goto fail;
	}
	c->ev = event_new(base, c->sfd, EV_READ | EV_PERSIST, child_signal_cb,
	    c);
	if (c->ev == NULL || event_add(c->ev, NULL) == -1) {
		snprintf(err, errlen, "cannot watch signals");
		goto fail;
	}
	if ((c->pid = netns_sandbox_exec(sb, err, errlen)) == -1)
		goto fail;
	return (c);
fail:
	netns_child_free(c);
	return (NULL);
}

/*
 * Stop watching.  A command still running is killed.  The signals stay
 * blocked: a Ctrl-C still queued must not kill pinhole on its way out.
 */
void
netns_child_free(struct netns_child *c)
{
	int	status;

	if (c == NULL)
		return;
	if (c->pid != -1) {
		kill(c->pid, SIGKILL);
		while (waitpid(c->pid, &status, 0) == -1 && errno == EINTR)
			;
	}
	if (c->ev != NULL)
		event_free(c->ev);
	if (c->sfd != -1)
		close(c->sfd);
	free(c);
}
