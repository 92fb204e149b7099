/*
 * The command's side of the sandbox child, once it sits in the sandbox
 * netns: take a private mount namespace where /etc/resolv.conf names the
 * gateway, set the proxy variables, wait for pinhole's word, drop every
 * capability, and start the command as the sandbox's init.  Any failure
 * before exec is sent back over the socket and the command never runs.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <arpa/inet.h>
#include <linux/capability.h>
#include <linux/securebits.h>

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/namesock.h"
#include "netns/netns-int.h"
#include "netns/netns.h"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC	(1U << 2)
#endif

/* The child's report to pinhole: sent whole (SEQPACKET). */
struct exec_report {
	char	err[240];		/* what failed, or "": started */
};

/* Report what failed to the parent and die: the command never runs. */
static void __attribute__((noreturn))
exec_die(int errfd, const char *why)
{
	struct exec_report	r;

	memset(&r, 0, sizeof(r));
	snprintf(r.err, sizeof(r.err), "%s", why);
	if (write(errfd, &r, sizeof(r)) < 0)
		_exit(1);
	_exit(1);
}

/* Report a failed step (errno says why) and die. */
static void __attribute__((noreturn))
exec_fail(int errfd, const char *step)
{
	char	why[sizeof(((struct exec_report *)0)->err)];

	snprintf(why, sizeof(why), "%s: %s", step, strerror(errno));
	exec_die(errfd, why);
}

/*
 * Take a private mount namespace and IPC namespace (System V IPC and
 * POSIX message queues are otherwise shared with the host), with a
 * /dev/shm and /dev/mqueue of the sandbox's own.
 */
static void
exec_mount_ns(int errfd)
{
	struct stat	st;

	if (unshare(CLONE_NEWNS | CLONE_NEWIPC) == -1)
		exec_fail(errfd, "create a mount and IPC namespace");
	if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) == -1)
		exec_fail(errfd, "stop mount propagation to the host");
	if (stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) &&
	    mount("shm", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV,
	    "mode=1777") == -1)
		exec_fail(errfd, "mount a /dev/shm of the sandbox's own");
	if (stat("/dev/mqueue", &st) == 0 && S_ISDIR(st.st_mode) &&
	    mount("mqueue", "/dev/mqueue", "mqueue", MS_NOSUID | MS_NODEV |
	    MS_NOEXEC, NULL) == -1)
		exec_fail(errfd, "mount the sandbox's /dev/mqueue");
}

/*
 * Write the sandbox's resolv.conf into a tmpfs mounted for a moment on a
 * directory of our private mount namespace; the bind mount made from it
 * keeps it alive after the tmpfs is unmounted.  The path is returned in
 * path.
 */
static int
exec_resolv_file(const struct netns_config *cfg, char *path, size_t len,
    const char **dirp)
{
	static const char	*dirs[] = { "/tmp", "/run", "/mnt", "/dev",
	    NULL };
	char			 text[128], gw[INET_ADDRSTRLEN];
	const char		**dir;
	int			 fd, n;

	for (dir = dirs; *dir != NULL; dir++) {
		if (mount("pinhole", *dir, "tmpfs", MS_NOSUID | MS_NODEV |
		    MS_NOEXEC, "size=16k,mode=0755") == 0)
			break;
	}
	if (*dir == NULL)
		return (-1);
	*dirp = *dir;
	snprintf(path, len, "%s/resolv.conf", *dir);
	inet_ntop(AF_INET, &cfg->net.gateway, gw, sizeof(gw));
	n = snprintf(text, sizeof(text), "# pinhole: names are resolved "
	    "by the gateway\nnameserver %s\n", gw);
	if ((fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0444)) == -1)
		return (-1);
	if (write(fd, text, (size_t)n) != n) {
		close(fd);
		return (-1);
	}
	close(fd);
	return (0);
}

/*
 * Put a file over a path.  The new mount API mounts on a symlink itself
 * (so a dangling /etc/resolv.conf -> /run/... link is covered too); the
 * old one follows the link to its target.
 */
static int
exec_cover(const char *source, const char *target)
{
	int	tree, r = -1;

	tree = open_tree(AT_FDCWD, source, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	if (tree != -1) {
		r = move_mount(tree, "", AT_FDCWD, target,
		    MOVE_MOUNT_F_EMPTY_PATH);
		close(tree);
	}
	if (r == -1 && mount(source, target, NULL, MS_BIND, NULL) == -1)
		return (-1);
	mount(NULL, target, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL);
	return (0);
}

/* Make /etc/resolv.conf name the gateway; hide host resolver sockets. */
static void
exec_resolv(const struct netns_config *cfg, int errfd)
{
	const char *const	*hidden;
	const char		*dir;
	char		  path[64];
	struct stat	  st;

	if (exec_resolv_file(cfg, path, sizeof(path), &dir) == -1)
		exec_fail(errfd, "write the sandbox resolv.conf");
	if (lstat("/etc/resolv.conf", &st) == -1 && errno == ENOENT)
		fprintf(stderr, "pinhole: no /etc/resolv.conf to cover: "
		    "names resolve only through the proxy\n");
	else if (exec_cover(path, "/etc/resolv.conf") == -1)
		exec_fail(errfd, "mount over /etc/resolv.conf");
	if (umount2(dir, MNT_DETACH) == -1)
		exec_fail(errfd, "unmount the scratch tmpfs");
	for (hidden = namesock_paths; *hidden != NULL; hidden++) {
		if (lstat(*hidden, &st) == -1)
			continue;
		if (exec_cover("/dev/null", *hidden) == -1)
			exec_fail(errfd, "hide a host resolver socket");
	}
}

/*
 * Trust the gateway's CA (TLS inspection): its bundle (the system's CAs
 * and the gateway's) over every system trust bundle there is, and the
 * variables the common clients read pointing at the first of them.
 * Before the guards: the bundle lives in the control directory, which
 * they hide.
 */
static void
exec_trust(const struct netns_config *cfg, int errfd)
{
	static const char	*bundles[] = {
	    "/etc/ssl/certs/ca-certificates.crt",	/* Debian, Alpine */
	    "/etc/pki/tls/certs/ca-bundle.crt",		/* Fedora, RHEL */
	    "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
	    "/etc/ssl/ca-bundle.pem",			/* openSUSE */
	    "/etc/ssl/cert.pem",			/* Alpine, macOS-alike */
	    "/etc/pki/tls/cacert.pem",
	    "/etc/ssl/certs/ca-bundle.crt",
	    NULL };
	static const char	*vars[] = { "SSL_CERT_FILE",
	    "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "GIT_SSL_CAINFO",
	    "PIP_CERT", "CARGO_HTTP_CAINFO", "NODE_EXTRA_CA_CERTS",
	    "npm_config_cafile", "NIX_SSL_CERT_FILE", "DENO_CERT",
	    "AWS_CA_BUNDLE", "HEX_CACERTS_PATH", NULL };
	const char		**b, **v, *home = NULL;
	struct stat		  st;

	if (cfg->trust_bundle == NULL)
		return;
	for (b = bundles; *b != NULL; b++) {
		if (stat(*b, &st) == -1 || !S_ISREG(st.st_mode))
			continue;
		if (exec_cover(cfg->trust_bundle, *b) == -1)
			exec_fail(errfd, "mount the trust bundle");
		if (home == NULL)
			home = *b;
	}
	if (home == NULL) {
		fprintf(stderr, "pinhole: no system trust bundle to cover: "
		    "clients must be told to trust %s\n", cfg->trust_ca);
		return;
	}
	for (v = vars; *v != NULL; v++) {
		if (setenv(*v, home, 1) == -1)
			exec_fail(errfd, "setenv");
	}
}

/*
 * Close the host's unix sockets, but those the policy opens: hostsock.c.
 * After the resolver's sockets are covered (they stay closed whatever
 * is opened) and the trust bundle is in place (it comes from the
 * control directory, below the runtime directory this empties).
 */
static void
exec_hostsocks(const struct netns_config *cfg, int unixfd, int errfd)
{
	struct netns_hostsocks	hs;
	char			why[sizeof(((struct exec_report *)0)->err)];

	if (netns_hostsocks_plan(&hs, cfg->sockets, cfg->nsockets) == -1)
		exec_fail(errfd, "plan the host's sockets");
	if (netns_hostsocks_close(&hs, unixfd, why, sizeof why) == -1)
		exec_die(errfd, why);
	netns_hostsocks_free(&hs);
	close(unixfd);
}

/* Keep the gateway's files out of the command's reach: netns.h. */
static void
exec_guard(const struct netns_config *cfg, int errfd)
{
	char	why[sizeof(((struct exec_report *)0)->err)];

	if (netns_guard_paths(cfg->guards, cfg->nguards, why,
	    sizeof(why)) == -1)
		exec_die(errfd, why);
}

/* Set the proxy variables to the gateway. */
static void
exec_env(const struct netns_config *cfg, int errfd)
{
	static const char	*names[] = { "HTTP_PROXY", "HTTPS_PROXY",
	    "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy", NULL };
	char			 url[64], gw[INET_ADDRSTRLEN];
	const char		**name;
	size_t			 i;

	inet_ntop(AF_INET, &cfg->net.gateway, gw, sizeof(gw));
	snprintf(url, sizeof(url), "http://%s:%u", gw, cfg->proxy_port);
	for (name = names; *name != NULL; name++) {
		if (setenv(*name, url, 1) == -1)
			exec_fail(errfd, "setenv");
	}
	if (setenv("NO_PROXY", "localhost,127.0.0.1", 1) == -1 ||
	    setenv("no_proxy", "localhost,127.0.0.1", 1) == -1 ||
	    setenv("PINHOLE", "1", 1) == -1 ||
	    setenv("PINHOLE_AGENT", url, 1) == -1)	/* pinhole request */
		exec_fail(errfd, "setenv");
	for (i = 0; i < cfg->nenv; i++) {
		if (putenv((char *)cfg->env[i]) == -1)
			exec_fail(errfd, "putenv");
	}
}

/*
 * Give the command default signal handling and an empty mask, but keep
 * ignored what pinhole was started with ignored (nohup, background jobs).
 */
static void
exec_signals(const sigset_t *ignored)
{
	struct sigaction	sa;
	sigset_t		set;
	int			sig;

	memset(&sa, 0, sizeof(sa));
	for (sig = 1; sig < NSIG; sig++) {
		sa.sa_handler = SIG_DFL;
		if (ignored != NULL && sigismember(ignored, sig) == 1)
			sa.sa_handler = SIG_IGN;
		sigaction(sig, &sa, NULL);
	}
	sigemptyset(&set);
	sigprocmask(SIG_SETMASK, &set, NULL);
}

/* Drop every capability for good, and forbid gaining any. */
static void
exec_drop_caps(int errfd)
{
	struct __user_cap_header_struct	hdr;
	struct __user_cap_data_struct	data[2];
	int				cap;

	if (prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED |
	    SECBIT_NO_SETUID_FIXUP | SECBIT_NO_SETUID_FIXUP_LOCKED |
	    SECBIT_KEEP_CAPS_LOCKED | SECBIT_NO_CAP_AMBIENT_RAISE |
	    SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED) == -1)
		exec_fail(errfd, "set secure bits");
	for (cap = 0; prctl(PR_CAPBSET_READ, cap) >= 0; cap++) {
		if (prctl(PR_CAPBSET_DROP, cap) == -1)
			exec_fail(errfd, "drop the capability bounding set");
	}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) == -1 &&
	    errno != EINVAL)
		exec_fail(errfd, "clear ambient capabilities");
	memset(&hdr, 0, sizeof(hdr));
	memset(data, 0, sizeof(data));
	hdr.version = _LINUX_CAPABILITY_VERSION_3;
	if (syscall(SYS_capset, &hdr, data) == -1)
		exec_fail(errfd, "clear capabilities");
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1)
		exec_fail(errfd, "set no_new_privs");
}

/* Mark every descriptor above stderr close-on-exec. */
static void
exec_close_fds(void)
{
	int	fd;

	if (syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC) == 0)
		return;
	for (fd = 3; fd < 65536; fd++)
		fcntl(fd, F_SETFD, FD_CLOEXEC);
}

/* The command: default signals, then exec; never returns. */
static void __attribute__((noreturn))
exec_command(char *const argv[], const sigset_t *ignored)
{
	int	saved;

	exec_signals(ignored);
	execvp(argv[0], argv);
	saved = errno;
	fprintf(stderr, "pinhole: %s: %s\n", argv[0], strerror(saved));
	_exit(saved == ENOENT ? 127 : 126);
}

/* Tell pinhole the command is started (exec'd, or failed to). */
static void
exec_started(int errfd)
{
	struct exec_report	r;

	memset(&r, 0, sizeof(r));
	if (send(errfd, &r, sizeof(r), MSG_NOSIGNAL) == -1)
		_exit(1);
	close(errfd);
}

/* Wait for pinhole's word to start; pinhole gone is no word. */
static void
exec_wait_word(int sock)
{
	char	c;
	ssize_t	n;

	while ((n = recv(sock, &c, 1, 0)) == -1 && errno == EINTR)
		;
	if (n != 1)
		_exit(1);
}

/* Say why the sandbox has no safe /proc, and die. */
static void __attribute__((noreturn))
exec_proc_fail(int errfd, int proc)
{
	char	why[sizeof(((struct exec_report *)0)->err)];
	int	landlock = errno;

	snprintf(why, sizeof why, "mount the sandbox's /proc: %s; and no "
	    "Landlock (%s) to keep the command from the host's processes "
	    "through the host's /proc", strerror(proc), strerror(landlock));
	exec_die(errfd, why);
}

/*
 * pid 1 of the sandbox's PID namespace: mounts its /proc, drops
 * capabilities, starts the command and passes signals on to it.  Never
 * returns.
 */
static void __attribute__((noreturn))
exec_init(const struct netns_config *cfg, const sigset_t *ignored, int errfd)
{
	sigset_t	set;
	pid_t		pid;
	int		proc;

	netns_init_signals(&set);
	proc = mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC,
	    NULL) == 0 ? 0 : errno;
	exec_drop_caps(errfd);
	if (netns_seccomp(cfg->allow_vsock) == -1)
		exec_fail(errfd, "install the seccomp filter");
	/*
	 * Without a /proc of its own the command sees the host's processes,
	 * and through /proc/PID/root their filesystem, where nothing is
	 * hidden: only a Landlock domain keeps it out.
	 */
	if (netns_landlock() == -1 && proc != 0)
		exec_proc_fail(errfd, proc);
	/*
	 * vfork: this process is a copy of pinhole, every library mapped;
	 * copying it again only for an exec costs more than the rest of
	 * this function.  The child only resets signals and execs (or
	 * writes a line to stderr and _exits); we wait meanwhile.
	 */
	if ((pid = vfork()) == -1)
		exec_fail(errfd, "fork the command");
	if (pid == 0)
		exec_command(cfg->argv, ignored);
	exec_started(errfd);
	netns_init_loop(pid, &set);
}

/* The sandbox child in the sandbox netns: see netns-int.h. */
void
netns_exec_child(const struct netns_config *cfg, int sock, int unixfd,
    const sigset_t *ignored)
{
	exec_mount_ns(sock);
	exec_resolv(cfg, sock);
	exec_trust(cfg, sock);
	exec_hostsocks(cfg, unixfd, sock);
	exec_guard(cfg, sock);
	exec_env(cfg, sock);
	exec_close_fds();
	exec_wait_word(sock);
	exec_init(cfg, ignored, sock);
}

/* Read the child's report: 0 once the command started, or what failed. */
static int
exec_read_report(int fd, char *err, size_t errlen)
{
	struct exec_report	r;
	ssize_t			n;

	err[0] = '\0';
	while ((n = recv(fd, &r, sizeof(r), 0)) == -1 && errno == EINTR)
		;
	if (n != (ssize_t)sizeof(r))
		return (-1);
	r.err[sizeof(r.err) - 1] = '\0';
	snprintf(err, errlen, "%s", r.err);
	return (r.err[0] == '\0' ? 0 : -1);
}

/* Let the sandbox child start the command. */
pid_t
netns_sandbox_exec(struct netns_sandbox *sb, char *err, size_t errlen)
{
	pid_t	pid = sb->pid;

	if (pid == -1 || sb->sock == -1) {
		snprintf(err, errlen, "the sandbox child is gone");
		return (-1);
	}
	/* If the child failed already, the report is waiting: read it. */
	send(sb->sock, "g", 1, MSG_NOSIGNAL);
	if (exec_read_report(sb->sock, err, errlen) == 0) {
		close(sb->sock);
		sb->sock = -1;
		sb->pid = -1;
		return (pid);
	}
	if (err[0] == '\0')
		snprintf(err, errlen, "the sandbox child died");
	return (-1);
}
