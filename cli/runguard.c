/*
 * The paths a sandbox must not change or see: see runguard.h.
 */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/runguard.h"

/* Start empty. */
void
runguard_init(struct runguard *rg)
{
	memset(rg, 0, sizeof *rg);
}

/* Free the paths. */
void
runguard_free(struct runguard *rg)
{
	size_t	i;

	for (i = 0; i < rg->n; i++) {
		free((char *)rg->g[i].path);
		free(rg->why[i]);
	}
	rg->n = 0;
}

/* A path made absolute against the working directory (not resolved). */
static int
runguard_abs(const char *path, char *out, size_t len)
{
	char	cwd[PATH_MAX];

	if (path[0] == '/')
		return ((size_t)snprintf(out, len, "%s", path) < len ? 0 : -1);
	if (getcwd(cwd, sizeof cwd) == NULL)
		return (-1);
	return ((size_t)snprintf(out, len, "%s/%s", cwd, path) < len ? 0 : -1);
}

/* Cut a path to its directory ("/" stays "/"). */
static void
runguard_dirname(char *path)
{
	char	*slash = strrchr(path, '/');

	if (slash == path)
		slash[1] = '\0';
	else if (slash != NULL)
		*slash = '\0';
}

/* Note one guarded path, once. */
static int
runguard_add(struct runguard *rg, const char *path, enum netns_guard_how how,
    const char *why)
{
	size_t	i;

	for (i = 0; i < rg->n; i++) {
		if (rg->g[i].how == how && strcmp(rg->g[i].path, path) == 0)
			return (0);
	}
	if (rg->n == RUNGUARD_MAX) {
		errno = E2BIG;
		return (-1);
	}
	if ((rg->g[rg->n].path = strdup(path)) == NULL)
		return (-1);
	if ((rg->why[rg->n] = strdup(why)) == NULL) {
		free((char *)rg->g[rg->n].path);
		return (-1);
	}
	rg->g[rg->n++].how = how;
	return (0);
}

/* Guard a directory as named and as found through symlinks. */
static int
runguard_both(struct runguard *rg, const char *dir, const char *why)
{
	char	real[PATH_MAX];

	if (runguard_add(rg, dir, NETNS_GUARD_RO, why) == -1)
		return (-1);
	if (realpath(dir, real) != NULL && strcmp(real, dir) != 0)
		return (runguard_add(rg, real, NETNS_GUARD_RO, why));
	return (0);
}

/* Keep a directory read-only, made first if missing. */
int
runguard_dir(struct runguard *rg, const char *dir)
{
	char	abs[PATH_MAX];

	if (runguard_abs(dir, abs, sizeof abs) == -1)
		return (-1);
	if (mkdir(abs, 0700) == -1 && errno != EEXIST)
		return (-1);
	return (runguard_both(rg, abs, abs));
}

/* Keep a file's directories read-only. */
int
runguard_file(struct runguard *rg, const char *file)
{
	char	abs[PATH_MAX], dir[PATH_MAX], real[PATH_MAX];

	if (runguard_abs(file, abs, sizeof abs) == -1)
		return (-1);
	memcpy(dir, abs, strlen(abs) + 1);
	runguard_dirname(dir);
	if (runguard_both(rg, dir, abs) == -1)
		return (-1);
	if (realpath(abs, real) == NULL)
		return (0);
	runguard_dirname(real);
	return (runguard_both(rg, real, abs));
}

/* Keep one file read-only, if it exists. */
int
runguard_ro(struct runguard *rg, const char *file)
{
	char	abs[PATH_MAX];

	if (runguard_abs(file, abs, sizeof abs) == -1)
		return (-1);
	if (access(abs, F_OK) == -1)
		return (0);
	return (runguard_add(rg, abs, NETNS_GUARD_RO, abs));
}

/* Hide a file (its directories read-only) or a directory. */
int
runguard_hide(struct runguard *rg, const char *path)
{
	char		abs[PATH_MAX];
	struct stat	st;

	if (runguard_abs(path, abs, sizeof abs) == -1)
		return (-1);
	if (stat(abs, &st) == 0 && !S_ISDIR(st.st_mode) &&
	    runguard_file(rg, abs) == -1)
		return (-1);
	return (runguard_add(rg, abs, NETNS_GUARD_HIDE, abs));
}

/* Is dir (resolved) the path p (resolved) or one of its parents? */
static int
runguard_holds(const char *dir, const char *p)
{
	char	rd[PATH_MAX], rp[PATH_MAX];
	size_t	n;

	if (p == NULL || p[0] == '\0' || realpath(dir, rd) == NULL ||
	    realpath(p, rp) == NULL)
		return (0);
	n = strlen(rd);
	if (strcmp(rd, "/") == 0)
		return (1);
	return (strncmp(rd, rp, n) == 0 && (rp[n] == '\0' || rp[n] == '/'));
}

/* Refuse a read-only directory that holds what the command writes. */
int
runguard_check(const struct runguard *rg, char *err, size_t errlen)
{
	const char	*tmp = getenv("TMPDIR");
	const char	*what[] = { "the working directory", "HOME",
	    "the temporary directory" };
	const char	*where[3];
	char		 cwd[PATH_MAX];
	size_t		 i, k;

	where[0] = getcwd(cwd, sizeof cwd);
	where[1] = getenv("HOME");
	where[2] = tmp != NULL && tmp[0] == '/' ? tmp : "/tmp";
	for (i = 0; i < rg->n; i++) {
		if (rg->g[i].how != NETNS_GUARD_RO)
			continue;
		for (k = 0; k < 3; k++) {
			if (!runguard_holds(rg->g[i].path, where[k]))
				continue;
			snprintf(err, errlen, "%s: the sandbox must not change "
			    "it, so %s would be read-only there, and it holds "
			    "%s (%s): keep the policy, the log and its key in "
			    "a directory of their own, such as "
			    "~/.config/pinhole", rg->why[i], rg->g[i].path,
			    what[k], where[k]);
			return (-1);
		}
	}
	return (0);
}

/* Is this one of the read-only directories? */
static int
runguard_has(const struct runguard *rg, const char *dir)
{
	size_t	i;

	for (i = 0; i < rg->n; i++) {
		if (rg->g[i].how == NETNS_GUARD_RO &&
		    strcmp(rg->g[i].path, dir) == 0)
			return (1);
	}
	return (0);
}

/* Are a file's directories (as named, and as found) read-only? */
int
runguard_covers(const struct runguard *rg, const char *file)
{
	char	abs[PATH_MAX], real[PATH_MAX];

	if (runguard_abs(file, abs, sizeof abs) == -1)
		return (0);
	if (realpath(abs, real) != NULL) {
		runguard_dirname(real);
		if (!runguard_has(rg, real))
			return (0);
	}
	runguard_dirname(abs);
	return (runguard_has(rg, abs));
}
