/*
 * The host's unix sockets.  A network namespace does not confine unix
 * sockets on the filesystem: a session bus, an ssh-agent, docker's API
 * socket or a relay to TCP would lead around the gateway.  So in the
 * sandbox's mount namespace:
 *
 *  - /run (where services bind their sockets, and the runtime
 *    directory /run/user/UID), the runtime directory wherever
 *    $XDG_RUNTIME_DIR puts it, /tmp/.X11-unix, and every directory that
 *    holds nothing but sockets (an ssh-agent's, tmux's) become empty
 *    tmpfs of the sandbox's own, so what is bound there later, a
 *    restarted service's socket too, is out of reach; /run keeps its
 *    symlinks, /run/lock and the filesystems mounted below it;
 *  - every other pathname socket bound on the host when the sandbox
 *    starts, as the host's /proc/net/unix lists them, gets /dev/null
 *    over it: a connect() is refused;
 *  - the sockets the policy opens (allow-socket) are left as they are,
 *    or bound back into the emptied directory they lie in;
 *  - the sockets that resolve names (lib/namesock.h) are covered
 *    whatever the policy says (exec.c covers them first).
 *
 * Abstract sockets belong to the network namespace: the sandbox has
 * none of the host's.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/namesock.h"
#include "netns/netns-int.h"
#include "netns/netns.h"

#define HOSTSOCK_LIST_MAX	(256u << 20)	/* bytes of /proc/net/unix */
#define HOSTSOCK_DIR_SCAN	256		/* entries read of a directory */
#define HOSTSOCK_RUN_MOUNTS	32		/* kept below /run */

/* Parse a field of hex digits ending in a space; advance *s past it. */
static int
hostsock_hex(const char **s, const char *end, unsigned int *out)
{
	const char	*p = *s;
	unsigned int	 v = 0;
	int		 d, n = 0;

	for (; p < end && *p != ' '; p++, n++) {
		if (*p >= '0' && *p <= '9')
			d = *p - '0';
		else if (*p >= 'A' && *p <= 'F')
			d = *p - 'A' + 10;
		else if (*p >= 'a' && *p <= 'f')
			d = *p - 'a' + 10;
		else
			return (-1);
		if (n == 8)
			return (-1);
		v = v << 4 | (unsigned int)d;
	}
	if (n == 0 || p == end)
		return (-1);
	*out = v;
	*s = p + 1;
	return (0);
}

/*
 * One line of /proc/net/unix, without its newline:
 *   "ADDR: REFCOUNT PROTOCOL FLAGS TYPE ST INODE[ PATH]"
 * (ADDR hex and a colon, INODE decimal padded with spaces on the left).
 * Pure.  Returns 0 with e filled, or -1: not such a line.
 */
int
netns_unix_line(const char *line, size_t len, struct netns_unix_ent *e)
{
	const char	*s = line, *end = line + len;
	unsigned int	 ref, proto, st;
	size_t		 n;

	memset(e, 0, sizeof *e);
	for (n = 0; s < end && *s != ':'; s++, n++) {
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f') ||
		    (*s >= 'A' && *s <= 'F')) || n == 16)
			return (-1);
	}
	if (n == 0 || end - s < 2 || s[1] != ' ')
		return (-1);
	s += 2;
	if (hostsock_hex(&s, end, &ref) == -1 ||
	    hostsock_hex(&s, end, &proto) == -1 ||
	    hostsock_hex(&s, end, &e->flags) == -1 ||
	    hostsock_hex(&s, end, &e->type) == -1 ||
	    hostsock_hex(&s, end, &st) == -1)
		return (-1);
	e->state = st;
	while (s < end && *s == ' ')
		s++;
	for (n = 0; s < end && *s >= '0' && *s <= '9'; s++)
		n++;
	if (n == 0 || n > 20)
		return (-1);
	if (s == end)
		return (0);
	/* The kernel writes a NUL in a name as '@'. */
	if (*s != ' ' || end - s < 2 || memchr(s, '\0', (size_t)(end - s)))
		return (-1);
	e->path = s + 1;
	e->pathlen = (size_t)(end - s - 1);
	return (0);
}

/*
 * Does this entry hold a name on the filesystem?  Listening or not yet,
 * stream, seqpacket or datagram: a sandbox could connect or send to any
 * (a socket bound now may listen later).
 */
static int
hostsock_bound(const struct netns_unix_ent *e)
{
	return (e->path != NULL && e->path[0] != '@');
}

/* Read a whole descriptor (the host's /proc/net/unix) into *buf. */
static int
hostsock_read(int fd, char **buf, size_t *len)
{
	size_t	cap = 1 << 16, n = 0;
	ssize_t	r;
	char	*b, *nb;

	if ((b = malloc(cap)) == NULL)
		return (-1);
	for (;;) {
		if (n == cap) {
			if (cap >= HOSTSOCK_LIST_MAX ||
			    (nb = realloc(b, cap * 2)) == NULL) {
				free(b);
				errno = ENOMEM;
				return (-1);
			}
			b = nb;
			cap *= 2;
		}
		if ((r = read(fd, b + n, cap - n)) == -1 && errno == EINTR)
			continue;
		if (r == -1) {
			free(b);
			return (-1);
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	*buf = b;
	*len = n;
	return (0);
}

/* Is path the directory dir or below it? */
static int
hostsock_below(const char *path, const char *dir)
{
	size_t	n = strlen(dir);

	if (n == 1 && dir[0] == '/')
		return (1);
	return (strncmp(path, dir, n) == 0 && (path[n] == '/' ||
	    path[n] == '\0'));
}

/* Is path below one of the emptied directories? */
static int
hostsock_under(const struct netns_hostsocks *hs, const char *path)
{
	size_t	i;

	for (i = 0; i < hs->ndirs; i++) {
		if (hostsock_below(path, hs->dirs[i].path) ||
		    hostsock_below(path, hs->dirs[i].real))
			return (1);
	}
	return (0);
}

/*
 * May the sandbox get an empty directory here?  Never "/" or /tmp, nor
 * one that holds the working directory or HOME, which the command must
 * see as they are.
 */
static int
hostsock_may_empty(const char *real)
{
	const char	*home = getenv("HOME");
	char		 cwd[PATH_MAX], rh[PATH_MAX];

	if (strcmp(real, "/") == 0 || strcmp(real, "/tmp") == 0)
		return (0);
	if (getcwd(cwd, sizeof cwd) != NULL && hostsock_below(cwd, real))
		return (0);
	if (home != NULL && realpath(home, rh) != NULL &&
	    hostsock_below(rh, real))
		return (0);
	return (1);
}

/* Note a directory the sandbox gets empty, with the tmpfs's mode. */
static int
hostsock_note_dir(struct netns_hostsocks *hs, const char *path,
    const char *real, mode_t mode)
{
	struct netns_empty_dir	*d = &hs->dirs[hs->ndirs];
	size_t			 i;

	for (i = 0; i < hs->ndirs; i++) {
		if (strcmp(hs->dirs[i].real, real) == 0)
			return (0);
	}
	if (hs->ndirs == NETNS_EMPTY_MAX)
		return (0);
	if ((d->path = strdup(path)) == NULL ||
	    (d->real = strdup(real)) == NULL) {
		free(d->path);
		return (-1);
	}
	d->mode = mode;
	hs->ndirs++;
	return (0);
}

/*
 * Empty a directory, if it exists and may be: the runtime directory only
 * when it is the user's own with no access for others, as it should be.
 */
static int
hostsock_dir(struct netns_hostsocks *hs, const char *path, mode_t mode,
    int runtime)
{
	char		real[PATH_MAX];
	struct stat	st;

	if (path == NULL || path[0] != '/' || realpath(path, real) == NULL ||
	    stat(real, &st) == -1 || !S_ISDIR(st.st_mode) ||
	    !hostsock_may_empty(real))
		return (0);
	if (runtime && (st.st_uid != geteuid() || (st.st_mode & 077) != 0))
		return (0);
	return (hostsock_note_dir(hs, path, real, mode));
}

/*
 * Does this directory hold nothing but sockets (an ssh-agent's, tmux's)?
 * Then the sandbox gets it empty, which also closes sockets bound there
 * later.  1 when it is (noted), 0 when not.
 */
static int
hostsock_sockdir(struct netns_hostsocks *hs, const char *path)
{
	char		 dir[PATH_MAX], *slash;
	struct dirent	*de;
	struct stat	 st;
	DIR		*d;
	int		 n = 0, only = 1;

	if (snprintf(dir, sizeof dir, "%s", path) >= (int)sizeof dir ||
	    (slash = strrchr(dir, '/')) == NULL || slash == dir)
		return (0);
	*slash = '\0';
	if (strcmp(dir, hs->last_dir) == 0)
		return (hs->last_only);
	snprintf(hs->last_dir, sizeof hs->last_dir, "%s", dir);
	hs->last_only = 0;
	if (!hostsock_may_empty(dir) || lstat(dir, &st) == -1 ||
	    !S_ISDIR(st.st_mode) || (d = opendir(dir)) == NULL)
		return (0);
	while (only && (de = readdir(d)) != NULL && n++ < HOSTSOCK_DIR_SCAN) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		only = de->d_type == DT_SOCK;
	}
	only = only && de == NULL;
	closedir(d);
	if (!only || hostsock_note_dir(hs, dir, dir, st.st_mode & 07777) == -1)
		return (0);
	hs->last_only = 1;
	return (1);
}

/* What becomes of a host socket of this name in the sandbox. */
static enum netns_sock_fate
hostsock_fate(struct netns_hostsocks *hs, const char *path)
{
	struct stat	st;
	size_t		i;

	if (path[0] != '/')
		return (NETNS_SOCK_RELATIVE);
	if (namesock_is(path))
		return (NETNS_SOCK_NAMES);
	if (hostsock_under(hs, path))
		return (NETNS_SOCK_EMPTIED);
	if (lstat(path, &st) == -1 || !S_ISSOCK(st.st_mode))
		return (NETNS_SOCK_GONE);
	for (i = 0; i < hs->nopen; i++) {
		if (hs->open[i].dev == st.st_dev && hs->open[i].ino == st.st_ino)
			return (NETNS_SOCK_OPEN);
	}
	return (hostsock_sockdir(hs, path) ? NETNS_SOCK_EMPTIED :
	    NETNS_SOCK_COVERED);
}

static int
hostsock_cmp(const void *a, const void *b)
{
	return (strcmp(*(char *const *)a, *(char *const *)b));
}

/* Add a candidate name (len bytes of s) to the list. */
static int
hostsock_note(char ***names, size_t *n, size_t *cap, const char *s,
    size_t len)
{
	char	**nn;

	if (*n == *cap) {
		*cap = *cap == 0 ? 64 : *cap * 2;
		if ((nn = reallocarray(*names, *cap, sizeof *nn)) == NULL)
			return (-1);
		*names = nn;
	}
	if (((*names)[*n] = strndup(s, len)) == NULL)
		return (-1);
	(*n)++;
	return (0);
}

/*
 * The names bound on the host, from the text of /proc/net/unix, sorted,
 * each once: netns.h.  A name may hold newlines, which the kernel
 * writes as they are: each bound entry's name is also tried with the
 * lines after it joined on, as long as a socket's name could be that
 * long.
 */
int
netns_unix_names(const char *text, size_t len, char ***namesp, size_t *np)
{
	struct netns_unix_ent	 e;
	char			 cand[NETNS_UNIX_NAME_MAX + 1], **names = NULL;
	const char		*line, *next, *nl, *end = text + len;
	size_t			 n = 0, cap = 0, k, w, i;

	for (line = text; line < end; line = next) {
		nl = memchr(line, '\n', (size_t)(end - line));
		next = nl == NULL ? end : nl + 1;
		if (netns_unix_line(line, (size_t)((nl ? nl : end) - line),
		    &e) == -1 || !hostsock_bound(&e) ||
		    e.pathlen > NETNS_UNIX_NAME_MAX)
			continue;
		memcpy(cand, e.path, e.pathlen);
		k = e.pathlen;
		if (hostsock_note(&names, &n, &cap, cand, k) == -1)
			goto fail;
		for (nl = next; nl < end; nl += w + 1) {
			const char *eol = memchr(nl, '\n', (size_t)(end - nl));

			w = (size_t)((eol ? eol : end) - nl);
			if (k + 1 + w > NETNS_UNIX_NAME_MAX ||
			    memchr(nl, '\0', w) != NULL)
				break;
			cand[k++] = '\n';
			memcpy(cand + k, nl, w);
			k += w;
			if (hostsock_note(&names, &n, &cap, cand, k) == -1)
				goto fail;
			if (eol == NULL)
				break;
		}
	}
	if (n > 0)
		qsort(names, n, sizeof *names, hostsock_cmp);
	for (i = k = 0; i < n; i++) {
		if (k > 0 && strcmp(names[k - 1], names[i]) == 0)
			free(names[i]);
		else
			names[k++] = names[i];
	}
	*namesp = names;
	*np = k;
	return (0);
fail:
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return (-1);
}

/*
 * Call cb with each pathname socket bound on the host (listed by fd,
 * the host's /proc/net/unix) and what becomes of it in the sandbox;
 * directories found to hold nothing but sockets join the plan.
 * Returns 0, or -1 with errno set (cb's -1 stops the walk).
 */
int
netns_hostsocks_walk(struct netns_hostsocks *hs, int fd,
    int (*cb)(const char *, enum netns_sock_fate, void *), void *arg)
{
	struct stat	 st;
	char		*text, **names;
	size_t		 len, n, i;
	int		 rv = 0, joined;

	if (hostsock_read(fd, &text, &len) == -1)
		return (-1);
	if (netns_unix_names(text, len, &names, &n) == -1) {
		free(text);
		return (-1);
	}
	free(text);
	for (i = 0; i < n; i++) {
		/* A name joined with the lines after it, if it is one. */
		joined = strchr(names[i], '\n') != NULL &&
		    (lstat(names[i], &st) == -1 || !S_ISSOCK(st.st_mode));
		if (rv == 0 && !joined && cb(names[i], hostsock_fate(hs,
		    names[i]), arg) == -1)
			rv = -1;
		free(names[i]);
	}
	free(names);
	return (rv);
}

/* Open a socket the policy lets the sandbox reach; a missing one is none. */
static int
hostsock_open(struct netns_hostsocks *hs, const char *path)
{
	struct netns_open_sock	*o = &hs->open[hs->nopen];
	struct stat		 st;
	char			 real[PATH_MAX];
	int			 fd;

	if (hs->nopen == NETNS_OPEN_MAX || path[0] != '/')
		return (0);
	if ((fd = open(path, O_PATH | O_CLOEXEC)) == -1)
		return (0);
	if (fstat(fd, &st) == -1 || !S_ISSOCK(st.st_mode) ||
	    realpath(path, real) == NULL || namesock_is(real)) {
		close(fd);
		return (0);
	}
	if ((o->path = strdup(path)) == NULL ||
	    (o->real = strdup(real)) == NULL) {
		free(o->path);
		close(fd);
		return (-1);
	}
	o->fd = fd;
	o->dev = st.st_dev;
	o->ino = st.st_ino;
	hs->nopen++;
	return (0);
}

/*
 * What the sandbox does with the host's sockets: the directories it
 * empties, and the sockets the policy opens (absolute paths, expanded),
 * opened now.  Returns 0, or -1 with errno set.
 */
int
netns_hostsocks_plan(struct netns_hostsocks *hs, const char *const *open,
    size_t nopen)
{
	char	run[64];
	size_t	i;

	memset(hs, 0, sizeof *hs);
	snprintf(run, sizeof run, "/run/user/%lu", (unsigned long)geteuid());
	/* Parents before what lies below them. */
	if (hostsock_dir(hs, "/run", 0755, 0) == -1 ||
	    hostsock_dir(hs, run, 0700, 1) == -1 ||
	    hostsock_dir(hs, getenv("XDG_RUNTIME_DIR"), 0700, 1) == -1 ||
	    hostsock_dir(hs, "/tmp/.X11-unix", 01777, 0) == -1)
		return (-1);
	for (i = 0; i < nopen; i++) {
		if (hostsock_open(hs, open[i]) == -1)
			return (-1);
	}
	return (0);
}

/* Free a plan and close what it opened. */
void
netns_hostsocks_free(struct netns_hostsocks *hs)
{
	size_t	i;

	for (i = 0; i < hs->ndirs; i++) {
		free(hs->dirs[i].path);
		free(hs->dirs[i].real);
	}
	for (i = 0; i < hs->nopen; i++) {
		free(hs->open[i].path);
		free(hs->open[i].real);
		if (hs->open[i].fd != -1)
			close(hs->open[i].fd);
	}
	memset(hs, 0, sizeof *hs);
}

/* The name of a fate, for a person. */
const char *
netns_sock_fate_name(enum netns_sock_fate f)
{
	switch (f) {
	case NETNS_SOCK_COVERED:
		return ("closed");
	case NETNS_SOCK_EMPTIED:
		return ("closed (its directory is emptied)");
	case NETNS_SOCK_OPEN:
		return ("REACHED (allow-socket)");
	case NETNS_SOCK_NAMES:
		return ("closed (it resolves names)");
	case NETNS_SOCK_GONE:
		return ("not here (no socket of that name, or not yours)");
	case NETNS_SOCK_RELATIVE:
		return ("NOT CLOSED: bound by a relative name, which cannot "
		    "be found");
	}
	return ("?");
}

/* What the covering walk keeps: the first failure. */
struct hostsock_cover {
	char	*err;
	size_t	 errlen;
};

/* Cover one host socket with /dev/null, if it is to be closed. */
static int
hostsock_cover_cb(const char *path, enum netns_sock_fate fate, void *arg)
{
	struct hostsock_cover	*c = arg;
	struct stat		 st;
	int			 saved;

	if (fate != NETNS_SOCK_COVERED ||
	    mount("/dev/null", path, NULL, MS_BIND, NULL) == 0)
		return (0);
	saved = errno;
	/* One unlinked meanwhile is none to cover. */
	if (lstat(path, &st) == -1 || !S_ISSOCK(st.st_mode))
		return (0);
	snprintf(c->err, c->errlen, "close the host socket %s: %s", path,
	    strerror(saved));
	return (-1);
}

/* Make the directories on the way to path (not path itself). */
static int
hostsock_mkdirs(const char *path, mode_t mode)
{
	char	buf[PATH_MAX], *slash;

	if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
		return (-1);
	for (slash = strchr(buf + 1, '/'); slash != NULL;
	    slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		if (mkdir(buf, mode) == -1 && errno != EEXIST)
			return (-1);
		*slash = '/';
	}
	return (0);
}

/* Bind a tree (an open_tree() clone) at a new place. */
static int
hostsock_attach(int tree, const char *at, int dir)
{
	int	fd;

	if (hostsock_mkdirs(at, 0755) == -1)
		return (-1);
	if (dir) {
		if (mkdir(at, 0755) == -1 && errno != EEXIST)
			return (-1);
	} else {
		if ((fd = open(at, O_CREAT | O_WRONLY | O_CLOEXEC, 0600)) == -1)
			return (-1);
		close(fd);
	}
	return (move_mount(tree, "", AT_FDCWD, at, MOVE_MOUNT_F_EMPTY_PATH));
}

/* Bind an opened socket back at its place in an emptied directory. */
static int
hostsock_bind_back(const struct netns_open_sock *o)
{
	int	tree, r;

	tree = open_tree(o->fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC |
	    AT_EMPTY_PATH);
	if (tree == -1)
		return (-1);
	r = hostsock_attach(tree, o->real, 0);
	close(tree);
	return (r);
}

/*
 * What /run keeps when emptied: its symlinks (/var/run's, NixOS's
 * current-system), and the filesystems mounted below it that hold
 * files (removable media in /run/media), not its tmpfs, sockets or
 * pseudo filesystems.
 */
struct hostsock_run {
	char	*link[HOSTSOCK_RUN_MOUNTS];
	char	*target[HOSTSOCK_RUN_MOUNTS];
	size_t	 nlinks;
	char	*mnt[HOSTSOCK_RUN_MOUNTS];
	int	 tree[HOSTSOCK_RUN_MOUNTS];
	size_t	 nmnts;
};

/* Is this a filesystem of files, worth keeping below /run? */
static int
hostsock_run_fs(const char *fstype)
{
	static const char *const keep[] = { "ext2", "ext3", "ext4", "xfs",
	    "btrfs", "vfat", "exfat", "ntfs", "ntfs3", "iso9660", "udf",
	    "f2fs", "nfs", "nfs4", "cifs", "smb3", "9p", "virtiofs",
	    "overlay", "squashfs", "fuseblk", NULL };
	const char *const	*k;

	if (strncmp(fstype, "fuse.", 5) == 0)
		return (1);
	for (k = keep; *k != NULL; k++) {
		if (strcmp(*k, fstype) == 0)
			return (1);
	}
	return (0);
}

/* Keep one mount below /run from a line of mountinfo. */
static void
hostsock_run_mount(struct hostsock_run *r, char *line)
{
	char	*f[10], *dash, *save = NULL;
	int	 n = 0, tree;

	if ((dash = strstr(line, " - ")) == NULL)
		return;
	*dash = '\0';
	for (f[n] = strtok_r(line, " ", &save); f[n] != NULL && n < 5;
	    f[n] = strtok_r(NULL, " ", &save))
		n++;
	/* f[4]: the mount point, escaped where it has blanks: left alone. */
	if (n < 5 || strncmp(f[4], "/run/", 5) != 0 ||
	    strncmp(f[4], "/run/user/", 10) == 0 || strchr(f[4], '\\') ||
	    (f[5] = strtok_r(dash + 3, " ", &save)) == NULL ||
	    !hostsock_run_fs(f[5]) || r->nmnts == HOSTSOCK_RUN_MOUNTS)
		return;
	tree = open_tree(AT_FDCWD, f[4], OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC |
	    AT_RECURSIVE);
	if (tree == -1 || (r->mnt[r->nmnts] = strdup(f[4])) == NULL) {
		if (tree != -1)
			close(tree);
		return;
	}
	r->tree[r->nmnts++] = tree;
}

/* Note what /run keeps, before it is emptied. */
static void
hostsock_run_keep(struct hostsock_run *r)
{
	struct dirent	*de;
	char		 path[PATH_MAX], target[PATH_MAX], *line = NULL;
	size_t		 cap = 0;
	ssize_t		 n;
	FILE		*f;
	DIR		*d;

	memset(r, 0, sizeof *r);
	if ((d = opendir("/run")) != NULL) {
		while ((de = readdir(d)) != NULL &&
		    r->nlinks < HOSTSOCK_RUN_MOUNTS) {
			snprintf(path, sizeof path, "/run/%s", de->d_name);
			if (de->d_type != DT_LNK || (n = readlink(path, target,
			    sizeof target - 1)) == -1)
				continue;
			target[n] = '\0';
			if ((r->link[r->nlinks] = strdup(path)) == NULL ||
			    (r->target[r->nlinks] = strdup(target)) == NULL) {
				free(r->link[r->nlinks]);
				break;
			}
			r->nlinks++;
		}
		closedir(d);
	}
	if ((f = fopen("/proc/self/mountinfo", "re")) == NULL)
		return;
	while (getline(&line, &cap, f) != -1)
		hostsock_run_mount(r, line);
	free(line);
	fclose(f);
}

/* Put back in the new /run what it keeps, and free the notes. */
static void
hostsock_run_restore(struct hostsock_run *r)
{
	size_t	i;

	(void)mkdir("/run/lock", 01777);
	(void)chmod("/run/lock", 01777);
	for (i = 0; i < r->nlinks; i++) {
		(void)symlink(r->target[i], r->link[i]);
		free(r->link[i]);
		free(r->target[i]);
	}
	for (i = 0; i < r->nmnts; i++) {
		(void)hostsock_attach(r->tree[i], r->mnt[i], 1);
		close(r->tree[i]);
		free(r->mnt[i]);
	}
}

/*
 * Empty one directory: a tmpfs of the sandbox's own over it, or, below
 * a directory emptied before it, a new directory there.
 */
static int
hostsock_empty(const struct netns_hostsocks *hs, size_t i, char *err,
    size_t errlen)
{
	const struct netns_empty_dir	*d = &hs->dirs[i];
	struct hostsock_run		 run;
	char				 opts[32];
	size_t				 k;
	int				 isrun = strcmp(d->real, "/run") == 0;

	for (k = 0; k < i; k++) {
		if (!hostsock_below(d->real, hs->dirs[k].real))
			continue;
		if (hostsock_mkdirs(d->real, 0755) == -1 ||
		    (mkdir(d->real, d->mode) == -1 && errno != EEXIST))
			goto fail;
		return (0);
	}
	if (isrun)
		hostsock_run_keep(&run);
	snprintf(opts, sizeof opts, "mode=%04o", (unsigned int)d->mode);
	if (mount("pinhole", d->real, "tmpfs", MS_NOSUID | MS_NODEV,
	    opts) == -1)
		goto fail;
	if (isrun)
		hostsock_run_restore(&run);
	return (0);
fail:
	snprintf(err, errlen, "empty %s: %s", d->real, strerror(errno));
	return (-1);
}

/*
 * Keep the host's sockets from the sandbox (see the top of this file),
 * in the current mount namespace: fd lists the host's sockets.  Returns
 * 0, or -1 with err saying what failed.
 */
int
netns_hostsocks_close(struct netns_hostsocks *hs, int fd, char *err,
    size_t errlen)
{
	struct hostsock_cover	 c = { err, errlen };
	const char		*tmp = getenv("TMPDIR");
	size_t			 i, k;

	err[0] = '\0';
	if (netns_hostsocks_walk(hs, fd, hostsock_cover_cb, &c) == -1) {
		if (err[0] == '\0')
			snprintf(err, errlen, "read the host's sockets: %s",
			    strerror(errno));
		return (-1);
	}
	for (i = 0; i < hs->ndirs; i++) {
		if (hostsock_empty(hs, i, err, errlen) == -1)
			return (-1);
	}
	/* A temporary directory there is made again, empty. */
	if (tmp != NULL && tmp[0] == '/' && hostsock_under(hs, tmp)) {
		(void)hostsock_mkdirs(tmp, 0700);
		(void)mkdir(tmp, 0700);
	}
	for (k = 0; k < hs->nopen; k++) {
		if (hostsock_under(hs, hs->open[k].real) &&
		    hostsock_bind_back(&hs->open[k]) == -1) {
			snprintf(err, errlen, "open the socket %s: %s",
			    hs->open[k].path, strerror(errno));
			return (-1);
		}
	}
	return (0);
}
