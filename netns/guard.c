/*
 * Guarded paths: what the gateway reads (the policy, the log key) and
 * writes (the log) must be out of the command's reach, in this run and
 * for the next.  The command runs as the invoking user, so a read-only
 * bind on a file alone is not enough: a symlink on the way could be
 * swapped, a directory on the way renamed and a new one put in its
 * place, and a file replaced from outside (an editor's rename, `pinhole
 * allow`) takes the mount on it away.  So, in the sandbox's mount
 * namespace, for each guarded path:
 *
 *  - every directory and every symlink met on the way to it (but "/")
 *    gets a mount of itself: a mount point cannot be renamed, removed or
 *    renamed over (EBUSY), so the way stays the way it was, while what
 *    lies in those directories stays as writable as before;
 *  - the path itself is bound read-only onto itself (for a policy file,
 *    pinhole guards its directory: files replaced from outside show up
 *    read-only too), or hidden: an empty read-only tmpfs over a
 *    directory, /dev/null over a file.
 *
 * The walk resolves the path the way the kernel does, one component at
 * a time, following symlinks (at most 40) from where they sit.
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

#include "netns/netns-int.h"
#include "netns/netns.h"

#define GUARD_MAX_LINKS		40
#define GUARD_MAX_MOUNTS	512

/* What has been mounted on already: pinned, or made read-only. */
struct guard {
	char	*done[GUARD_MAX_MOUNTS];
	char	 kind[GUARD_MAX_MOUNTS];	/* 'p' or 'r' */
	size_t	 ndone;
	char	 err[256];
};

/* Say what failed (errno names why); -1. */
static int
guard_fail(struct guard *g, const char *what, const char *path)
{
	snprintf(g->err, sizeof g->err, "%s %s: %s", what, path,
	    strerror(errno));
	return (-1);
}

/*
 * Is the path pinned (kind 'p': any mount on it pins it) or read-only
 * ('r') already?  If not, note that it is about to be.
 */
static int
guard_seen(struct guard *g, const char *path, char kind)
{
	size_t	i;

	for (i = 0; i < g->ndone; i++) {
		if (strcmp(g->done[i], path) == 0 &&
		    (kind == 'p' || g->kind[i] == kind))
			return (1);
	}
	if (g->ndone < GUARD_MAX_MOUNTS &&
	    (g->done[g->ndone] = strdup(path)) != NULL)
		g->kind[g->ndone++] = kind;
	return (0);
}

/*
 * Mount a copy of source (with what is mounted below it) onto target,
 * neither followed if a symlink; read-only if asked.
 */
static int
guard_mount(const char *source, const char *target, int rdonly)
{
	struct mount_attr	attr = { .attr_set = MOUNT_ATTR_RDONLY };
	int			tree, saved, r;

	tree = open_tree(AT_FDCWD, source, OPEN_TREE_CLONE |
	    OPEN_TREE_CLOEXEC | AT_RECURSIVE | AT_SYMLINK_NOFOLLOW);
	if (tree == -1)
		return (-1);
	r = 0;
	if (rdonly && mount_setattr(tree, "", AT_EMPTY_PATH | AT_RECURSIVE,
	    &attr, sizeof attr) == -1)
		r = errno == ENOSYS ? 1 : -1;	/* before 5.12: remount */
	if (r != -1 && move_mount(tree, "", AT_FDCWD, target,
	    MOVE_MOUNT_F_EMPTY_PATH) == -1)
		r = -1;
	if (r == 1)
		r = mount(NULL, target, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY,
		    NULL);
	saved = errno;
	close(tree);
	errno = saved;
	return (r);
}

/* Pin a directory or symlink on the way: a mount of itself. */
static int
guard_pin(struct guard *g, const char *path)
{
	if (guard_seen(g, path, 'p'))
		return (0);
	if (guard_mount(path, path, 0) == -1)
		return (guard_fail(g, "pin", path));
	return (0);
}

/* Append "/name" (len bytes of it) to a physical path. */
static int
guard_append(char *cur, const char *name, size_t len)
{
	size_t	n = strlen(cur);

	if (n + 1 + len >= PATH_MAX) {
		errno = ENAMETOOLONG;
		return (-1);
	}
	cur[n] = '/';
	memcpy(cur + n + 1, name, len);
	cur[n + 1 + len] = '\0';
	return (0);
}

/* Replace rest by target "/" rest (a symlink's text went first). */
static int
guard_splice(char *rest, const char *target)
{
	char	buf[PATH_MAX];

	if ((size_t)snprintf(buf, sizeof buf, "%s/%s", target, rest) >=
	    sizeof buf) {
		errno = ENAMETOOLONG;
		return (-1);
	}
	memcpy(rest, buf, strlen(buf) + 1);
	return (0);
}

/*
 * Walk an absolute path, pinning every directory and symlink on the way;
 * the physical path of its last component goes in cur.  Returns 0, 1 when
 * a component does not exist (there is nothing more to guard), or -1.
 */
static int
guard_walk(struct guard *g, const char *path, char *cur)
{
	char		 rest[PATH_MAX], target[PATH_MAX], *name, *slash;
	struct stat	 st;
	ssize_t		 n;
	size_t		 len;
	int		 links = 0, last;

	if (path[0] != '/' || strlen(path) >= sizeof rest) {
		errno = EINVAL;
		return (guard_fail(g, "guard", path));
	}
	memcpy(rest, path, strlen(path) + 1);
	cur[0] = '\0';
	for (;;) {
		name = rest + strspn(rest, "/");
		if (*name == '\0')
			return (0);
		len = strcspn(name, "/");
		last = name[len + strspn(name + len, "/")] == '\0';
		if (len == 1 && name[0] == '.')
			goto next;
		if (len == 2 && name[0] == '.' && name[1] == '.') {
			if ((slash = strrchr(cur, '/')) != NULL)
				*slash = '\0';
			goto next;
		}
		if (guard_append(cur, name, len) == -1)
			return (guard_fail(g, "guard", path));
		if (lstat(cur, &st) == -1)
			return (errno == ENOENT ? 1 :
			    guard_fail(g, "guard", cur));
		if (S_ISLNK(st.st_mode)) {
			if (++links > GUARD_MAX_LINKS) {
				errno = ELOOP;
				return (guard_fail(g, "guard", path));
			}
			if (guard_pin(g, cur) == -1)
				return (-1);
			if ((n = readlink(cur, target, sizeof target - 1)) == -1)
				return (guard_fail(g, "read the link", cur));
			target[n] = '\0';
			memmove(rest, name + len, strlen(name + len) + 1);
			if (guard_splice(rest, target) == -1)
				return (guard_fail(g, "guard", path));
			/* A relative target starts where the link sits. */
			if (target[0] == '/')
				cur[0] = '\0';
			else if ((slash = strrchr(cur, '/')) != NULL)
				*slash = '\0';
			continue;
		}
		if (!last && guard_pin(g, cur) == -1)
			return (-1);
next:
		memmove(rest, name + len, strlen(name + len) + 1);
	}
}

/* Make a guarded path read-only, or hide it. */
static int
guard_final(struct guard *g, const char *path, enum netns_guard_how how)
{
	struct stat	st;

	if (lstat(path, &st) == -1)
		return (guard_fail(g, "guard", path));
	if (how == NETNS_GUARD_RO && guard_seen(g, path, 'r'))
		return (0);
	if (how == NETNS_GUARD_RO) {
		if (guard_mount(path, path, 1) == -1)
			return (guard_fail(g, "make read-only", path));
	} else if (S_ISDIR(st.st_mode)) {
		if (mount("pinhole", path, "tmpfs", MS_NOSUID | MS_NODEV |
		    MS_NOEXEC | MS_RDONLY, "size=4k,mode=0555") == -1)
			return (guard_fail(g, "hide", path));
	} else if (guard_mount("/dev/null", path, 1) == -1)
		return (guard_fail(g, "hide", path));
	return (0);
}

/* Guard every path of the configuration; see the top of this file. */
int
netns_guard_paths(const struct netns_guard *guards, size_t n, char *err,
    size_t errlen)
{
	struct guard	*g;
	char		 cur[PATH_MAX];
	size_t		 i;
	int		 r = 0;

	if ((g = calloc(1, sizeof *g)) == NULL) {
		snprintf(err, errlen, "guard: out of memory");
		return (-1);
	}
	for (i = 0; i < n && r != -1; i++) {
		if ((r = guard_walk(g, guards[i].path, cur)) == 0)
			r = guard_final(g, cur, guards[i].how);
	}
	if (r == -1)
		snprintf(err, errlen, "%s", g->err);
	for (i = 0; i < g->ndone; i++)
		free(g->done[i]);
	free(g);
	return (r == -1 ? -1 : 0);
}
