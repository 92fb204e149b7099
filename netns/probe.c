/*
 * What the host lets the sandbox do, asked of the kernel: the knobs that
 * keep unprivileged users from user namespaces, AppArmor's say in them,
 * and a user namespace made for real in a child that then exits.  For
 * the hint a failed sandbox gives and for `pinhole doctor`.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "netns/netns.h"

#define APPARMOR_RESTRICT \
	"/proc/sys/kernel/apparmor_restrict_unprivileged_userns"
#define APPARMOR_ENABLED	"/sys/module/apparmor/parameters/enabled"
#define APPARMOR_PROFILES	"/sys/kernel/security/apparmor/profiles"

/* The knobs, in the order a failure is blamed on them. */
static const struct netns_knob netns_knobs[] = {
	{ "/proc/sys/kernel/unprivileged_userns_clone", 0,
	    "unprivileged user namespaces are off",
	    "sysctl -w kernel.unprivileged_userns_clone=1" },
	{ "/proc/sys/user/max_user_namespaces", 0,
	    "user namespaces are off",
	    "sysctl -w user.max_user_namespaces=15000" },
	{ APPARMOR_RESTRICT, 1,
	    "AppArmor restricts unprivileged user namespaces",
	    NETNS_APPARMOR_FIX },
};

/* Read the first line of a small file; -1 if it cannot be read. */
static int
probe_read(const char *path, char *buf, size_t len)
{
	ssize_t	n;
	int	fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return (-1);
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return (-1);
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return (0);
}

/* Read a small integer from a /proc knob; -1 if it cannot be read. */
static long
probe_knob(const char *path)
{
	char	buf[32];

	if (probe_read(path, buf, sizeof(buf)) == -1)
		return (-1);
	return (strtol(buf, NULL, 10));
}

/* The first knob that keeps unprivileged users from user namespaces. */
const struct netns_knob *
netns_userns_knob(void)
{
	size_t	i;

	for (i = 0; i < sizeof(netns_knobs) / sizeof(netns_knobs[0]); i++) {
		if (probe_knob(netns_knobs[i].path) == netns_knobs[i].off)
			return (&netns_knobs[i]);
	}
	return (NULL);
}

/* Say why unprivileged user namespaces are unavailable, if one knows. */
void
netns_userns_hint(char *buf, size_t len)
{
	const struct netns_knob	*k;

	buf[0] = '\0';
	if ((k = netns_userns_knob()) != NULL)
		snprintf(buf, len, "%s: %s", k->why, k->fix);
}

/* The probe's child: the namespaces, or the failed step on fd. */
static void __attribute__((noreturn))
probe_userns_child(int fd)
{
	const char	*step = "create a user namespace";

	if (unshare(CLONE_NEWUSER) == 0) {
		step = "create a network namespace in it";
		if (unshare(CLONE_NEWNET) == 0)
			_exit(0);
	}
	dprintf(fd, "%s: %s", step, strerror(errno));
	_exit(1);
}

/* Try a user namespace and a network namespace in it, in a child. */
int
netns_userns_probe(char *err, size_t errlen)
{
	char	msg[256];
	ssize_t	n;
	pid_t	pid;
	int	p[2], status;

	if (pipe2(p, O_CLOEXEC) == -1) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		return (-1);
	}
	if ((pid = fork()) == -1) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		close(p[0]);
		close(p[1]);
		return (-1);
	}
	if (pid == 0) {
		close(p[0]);
		probe_userns_child(p[1]);
	}
	close(p[1]);
	while ((n = read(p[0], msg, sizeof(msg) - 1)) == -1 && errno == EINTR)
		;
	close(p[0]);
	while (waitpid(pid, &status, 0) == -1 && errno == EINTR)
		;
	if (n > 0) {
		msg[n] = '\0';
		snprintf(err, errlen, "%s", msg);
		return (-1);
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		snprintf(err, errlen, "the probe died");
		return (-1);
	}
	return (0);
}

/*
 * Is the pinhole profile loaded?  Lines of the profiles file read
 * "NAME (MODE)".  -1 when the file cannot be read (not root).
 */
static int
probe_apparmor_loaded(void)
{
	char	line[512];
	size_t	len = strlen(NETNS_APPARMOR_PROFILE);
	FILE	*f;
	int	found = 0;

	if ((f = fopen(APPARMOR_PROFILES, "re")) == NULL)
		return (-1);
	while (!found && fgets(line, sizeof(line), f) != NULL)
		found = strncmp(line, NETNS_APPARMOR_PROFILE, len) == 0 &&
		    line[len] == ' ';
	fclose(f);
	return (found);
}

/* Read AppArmor's state. */
void
netns_apparmor_state(struct netns_apparmor *aa)
{
	char	buf[8];

	memset(aa, 0, sizeof(*aa));
	aa->restrict_userns = (int)probe_knob(APPARMOR_RESTRICT);
	aa->enabled = (probe_read(APPARMOR_ENABLED, buf, sizeof(buf)) == 0 &&
	    buf[0] == 'Y') || access(APPARMOR_PROFILES, F_OK) == 0 ||
	    aa->restrict_userns != -1;
	if (!aa->enabled)
		return;
	aa->loaded = probe_apparmor_loaded();
	if (probe_read("/proc/self/attr/apparmor/current", aa->label,
	    sizeof(aa->label)) == -1 && probe_read("/proc/self/attr/current",
	    aa->label, sizeof(aa->label)) == -1)
		snprintf(aa->label, sizeof(aa->label), "unknown");
}
