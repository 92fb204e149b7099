/*
 * The host's unix sockets.  A network namespace does not confine unix
 * sockets on the filesystem: a session bus, an ssh-agent, docker's API
 * socket or a relay to TCP would lead around the gateway.  So in the
 * sandbox's mount namespace:
 *
 *  - the runtime directory ($XDG_RUNTIME_DIR, /run/user/UID) and
 *    /tmp/.X11-unix become empty tmpfs of the sandbox's own, so what is
 *    bound there later is out of reach too;
 *  - every other pathname socket bound on the host when the sandbox
 *    starts, as the host's /proc/net/unix lists them (listening, or
 *    datagram), gets /dev/null over it: a connect() is refused;
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
#define HOSTSOCK_ACCEPTCON	0x10000		/* __SO_ACCEPTCON: listening */

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
 * Does this entry hold a name a sandbox could connect or send to: a
 * listening stream or seqpacket socket, or a datagram one, bound to a
 * name on the filesystem?
 */
static int
hostsock_bound(const struct netns_unix_ent *e)
{
	if (e->path == NULL || e->path[0] == '@')
		return (0);
	return (e->type == 2 || (e->flags & HOSTSOCK_ACCEPTCON) != 0);
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

/* What becomes of a host socket of this name in the sandbox. */
static enum netns_sock_fate
hostsock_fate(const struct netns_hostsocks *hs, const char *path)
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
	return (NETNS_SOCK_COVERED);
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
 * the host's /proc/net/unix) and what becomes of it in the sandbox.
 * Returns 0, or -1 with errno set (cb's -1 stops the walk).
 */
int
netns_hostsocks_walk(const struct netns_hostsocks *hs, int fd,
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

/*
 * Should the sandbox get an empty directory here?  A directory of the
 * user's own with no access for others (as the runtime directory is),
 * or /tmp/.X11-unix; never one that holds the working directory or
 * HOME, which the command must see as they are.
 */
static int
hostsock_may_empty(const char *real, const struct stat *st, int x11)
{
	const char	*home = getenv("HOME");
	char		 cwd[PATH_MAX], rh[PATH_MAX];

	if (strcmp(real, "/") == 0 || strcmp(real, "/tmp") == 0)
		return (0);
	if (!x11 && (st->st_uid != geteuid() || (st->st_mode & 077) != 0))
		return (0);
	if (getcwd(cwd, sizeof cwd) != NULL && hostsock_below(cwd, real))
		return (0);
	if (home != NULL && realpath(home, rh) != NULL &&
	    hostsock_below(rh, real))
		return (0);
	return (1);
}

/* Note a directory the sandbox gets empty, if it exists and may be. */
static int
hostsock_dir(struct netns_hostsocks *hs, const char *path, int x11)
{
	char		real[PATH_MAX];
	struct stat	st;
	size_t		i;

	if (path == NULL || path[0] != '/' || hs->ndirs == NETNS_EMPTY_MAX ||
	    realpath(path, real) == NULL || stat(real, &st) == -1 ||
	    !S_ISDIR(st.st_mode) || !hostsock_may_empty(real, &st, x11))
		return (0);
	for (i = 0; i < hs->ndirs; i++) {
		if (strcmp(hs->dirs[i].real, real) == 0)
			return (0);
	}
	if ((hs->dirs[hs->ndirs].path = strdup(path)) == NULL ||
	    (hs->dirs[hs->ndirs].real = strdup(real)) == NULL) {
		free(hs->dirs[hs->ndirs].path);
		return (-1);
	}
	hs->dirs[hs->ndirs++].x11 = x11;
	return (0);
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
	if (hostsock_dir(hs, getenv("XDG_RUNTIME_DIR"), 0) == -1 ||
	    hostsock_dir(hs, run, 0) == -1 ||
	    hostsock_dir(hs, "/tmp/.X11-unix", 1) == -1)
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

/* Make the directories on the way to path in an emptied directory. */
static int
hostsock_mkdirs(const char *path)
{
	char	buf[PATH_MAX], *slash;

	if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
		return (-1);
	for (slash = strchr(buf + 1, '/'); slash != NULL;
	    slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		if (mkdir(buf, 0700) == -1 && errno != EEXIST)
			return (-1);
		*slash = '/';
	}
	return (0);
}

/* Bind an opened socket back at its place in an emptied directory. */
static int
hostsock_bind_back(const struct netns_open_sock *o, const char *at)
{
	int	fd, tree, r = -1;

	if (hostsock_mkdirs(at) == -1 ||
	    (fd = open(at, O_CREAT | O_WRONLY | O_CLOEXEC, 0600)) == -1)
		return (-1);
	close(fd);
	tree = open_tree(o->fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC |
	    AT_EMPTY_PATH);
	if (tree != -1) {
		r = move_mount(tree, "", AT_FDCWD, at, MOVE_MOUNT_F_EMPTY_PATH);
		close(tree);
	}
	return (r);
}

/* Empty one directory: a tmpfs of the sandbox's own over it. */
static int
hostsock_empty(const struct netns_hostsocks *hs, size_t i, char *err,
    size_t errlen)
{
	if (mount("pinhole", hs->dirs[i].real, "tmpfs", MS_NOSUID | MS_NODEV,
	    hs->dirs[i].x11 ? "mode=1777" : "mode=0700") == -1) {
		snprintf(err, errlen, "empty %s: %s", hs->dirs[i].real,
		    strerror(errno));
		return (-1);
	}
	return (0);
}

/*
 * Keep the host's sockets from the sandbox (see the top of this file),
 * in the current mount namespace: fd lists the host's sockets.  Returns
 * 0, or -1 with err saying what failed.
 */
int
netns_hostsocks_close(const struct netns_hostsocks *hs, int fd, char *err,
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
		/* A temporary directory there is made again, empty. */
		if (tmp != NULL && tmp[0] == '/' &&
		    (hostsock_below(tmp, hs->dirs[i].path) ||
		    hostsock_below(tmp, hs->dirs[i].real))) {
			(void)hostsock_mkdirs(tmp);
			(void)mkdir(tmp, 0700);
		}
		for (k = 0; k < hs->nopen; k++) {
			if (!hostsock_below(hs->open[k].real,
			    hs->dirs[i].real))
				continue;
			if (hostsock_bind_back(&hs->open[k],
			    hs->open[k].real) == -1) {
				snprintf(err, errlen, "open the socket %s: %s",
				    hs->open[k].path, strerror(errno));
				return (-1);
			}
		}
	}
	return (0);
}
