/*
 * Live policy reload: inotify on the directories of the policy files,
 * filtered by name, read from the libevent loop and debounced.  Each
 * time changes settle, the watches are rebuilt (a file may now be a
 * symlink, a missing directory may have appeared) and the caller's
 * callback reloads the policy.
 */
#include "config.h"

#include <sys/inotify.h>

#include <errno.h>
#include <event2/event.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/policywatch.h"
#include "lib/log.h"

#define PW_MASK	(IN_CLOSE_WRITE | IN_MODIFY | IN_MOVED_TO | IN_MOVED_FROM | \
	IN_CREATE | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)
#define PW_READS_MAX	64		/* reads per wakeup */

/* A watched directory and the name in it that matters ("": any). */
struct pw_watch {
	int	 wd;
	char	*name;
};

struct policywatch {
	struct event_base	*base;
	int			 fd;
	struct event		*ev;
	struct event		*timer;
	struct pw_watch		*w;
	size_t			 nw;
	char			**files;
	void			(*cb)(void *);
	void			*arg;
};

/* Free a watch table. */
static void
pw_watches_free(struct pw_watch *w, size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++)
		free(w[i].name);
	free(w);
}

/* Free a NULL-terminated list of files. */
static void
pw_files_free(char **files)
{
	size_t	i;

	for (i = 0; files != NULL && files[i] != NULL; i++)
		free(files[i]);
	free(files);
}

/* Copy a NULL-terminated list of files. */
static char **
pw_files_copy(const char *const *files)
{
	char	**copy;
	size_t	  i, n = 0;

	while (files[n] != NULL)
		n++;
	if ((copy = calloc(n + 1, sizeof *copy)) == NULL)
		return (NULL);
	for (i = 0; i < n; i++) {
		if ((copy[i] = strdup(files[i])) == NULL) {
			pw_files_free(copy);
			return (NULL);
		}
	}
	return (copy);
}

/* Note one (watch, name) pair in a table being built. */
static int
pw_note(struct pw_watch **w, size_t *n, int wd, const char *name)
{
	struct pw_watch	*nw;

	if ((nw = reallocarray(*w, *n + 1, sizeof *nw)) == NULL)
		return (-1);
	*w = nw;
	if ((nw[*n].name = strdup(name)) == NULL)
		return (-1);
	nw[(*n)++].wd = wd;
	return (0);
}

/*
 * Watch dir for name; when dir is missing, watch the nearest existing
 * parent for the first missing component instead.
 */
static int
pw_watch_dir(struct policywatch *pw, struct pw_watch **w, size_t *n,
    const char *dir, const char *name)
{
	char	 parent[PATH_MAX], *slash;
	int	 wd;

	if ((wd = inotify_add_watch(pw->fd, dir, PW_MASK)) != -1)
		return (pw_note(w, n, wd, name));
	if ((errno != ENOENT && errno != ENOTDIR) || strcmp(dir, ".") == 0 ||
	    (size_t)snprintf(parent, sizeof parent, "%s", dir) >= sizeof parent)
		return (-1);
	if ((slash = strrchr(parent, '/')) == NULL)
		return (pw_watch_dir(pw, w, n, ".", dir));
	if (slash[1] == '\0')
		return (-1);
	*slash = '\0';
	return (pw_watch_dir(pw, w, n, slash == parent ? "/" : parent,
	    slash + 1));
}

/*
 * Watch one path: its directory, by its name; "DIR/" is the directory
 * itself, any name in it.
 */
static int
pw_watch_path(struct policywatch *pw, struct pw_watch **w, size_t *n,
    const char *path)
{
	char	 dir[PATH_MAX], *slash;

	if ((size_t)snprintf(dir, sizeof dir, "%s", path) >= sizeof dir)
		return (-1);
	if ((slash = strrchr(dir, '/')) == NULL)
		return (pw_watch_dir(pw, w, n, ".", path));
	*slash = '\0';
	return (pw_watch_dir(pw, w, n, slash == dir ? "/" : dir, slash + 1));
}

/* Watch a path where a symlink on its way leads, if one does. */
static int
pw_watch_real(struct policywatch *pw, struct pw_watch **w, size_t *n,
    const char *path)
{
	char	real[PATH_MAX], dir[PATH_MAX];
	size_t	len = strlen(path);

	if (len > 1 && path[len - 1] == '/') {
		if ((size_t)snprintf(dir, sizeof dir, "%.*s", (int)len - 1,
		    path) >= sizeof dir || realpath(dir, real) == NULL ||
		    strcmp(real, dir) == 0 ||
		    (size_t)snprintf(dir, sizeof dir, "%s/", real) >= sizeof dir)
			return (0);
		return (pw_watch_path(pw, w, n, dir));
	}
	if (realpath(path, real) == NULL || strcmp(real, path) == 0)
		return (0);
	return (pw_watch_path(pw, w, n, real));
}

/* Is this watch descriptor in the table? */
static int
pw_has_wd(const struct pw_watch *w, size_t n, int wd)
{
	size_t	i;

	for (i = 0; i < n; i++) {
		if (w[i].wd == wd)
			return (1);
	}
	return (0);
}

/* Set up the watches for every file (and symlink target) afresh. */
static int
pw_rebuild(struct policywatch *pw)
{
	struct pw_watch	*w = NULL;
	size_t		 n = 0, i;
	int		 rv = 0;

	for (i = 0; pw->files[i] != NULL; i++) {
		if (pw_watch_path(pw, &w, &n, pw->files[i]) == -1) {
			log_warn("%s: cannot watch %s", __func__, pw->files[i]);
			rv = -1;
		}
		if (pw_watch_real(pw, &w, &n, pw->files[i]) == -1)
			rv = -1;
	}
	for (i = 0; i < pw->nw; i++) {
		if (!pw_has_wd(w, n, pw->w[i].wd) &&
		    !pw_has_wd(pw->w, i, pw->w[i].wd))
			inotify_rm_watch(pw->fd, pw->w[i].wd);
	}
	pw_watches_free(pw->w, pw->nw);
	pw->w = w;
	pw->nw = n;
	return (rv);
}

/* Does an event concern a watched file (or a watched directory itself)? */
static int
pw_event_matters(const struct policywatch *pw, const struct inotify_event *e)
{
	size_t	i;

	if (e->wd == -1)			/* IN_Q_OVERFLOW */
		return (1);
	for (i = 0; i < pw->nw; i++) {
		if (pw->w[i].wd != e->wd)
			continue;
		if (e->len == 0 || pw->w[i].name[0] == '\0' ||
		    strcmp(e->name, pw->w[i].name) == 0)
			return (1);
	}
	return (0);
}

/* Read what inotify has; (re)start the quiet timer when a file changed. */
static void
policywatch_read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct policywatch		*pw = arg;
	char				 buf[4096]
	    __attribute__((aligned(__alignof__(struct inotify_event))));
	const struct inotify_event	*e;
	struct timeval			 tv = { 0, 0 };
	ssize_t				 len, off;
	int				 i, hit = 0;

	(void)what;
	tv.tv_usec = POLICYWATCH_DEBOUNCE_MS * 1000;
	for (i = 0; i < PW_READS_MAX; i++) {
		if ((len = read(fd, buf, sizeof buf)) <= 0)
			break;
		for (off = 0; off < len; off += sizeof *e + e->len) {
			e = (const struct inotify_event *)(buf + off);
			hit |= pw_event_matters(pw, e);
		}
	}
	if (hit)
		evtimer_add(pw->timer, &tv);
}

/* Changes have settled: rebuild the watches, then let the caller reload. */
static void
policywatch_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct policywatch	*pw = arg;

	(void)fd;
	(void)what;
	pw_rebuild(pw);
	pw->cb(pw->arg);
}

/* Start watching files. */
struct policywatch *
policywatch_start(struct event_base *base, const char *const *files,
    void (*cb)(void *), void *arg)
{
	struct policywatch	*pw;

	if ((pw = calloc(1, sizeof *pw)) == NULL)
		return (NULL);
	pw->fd = -1;
	pw->base = base;
	pw->cb = cb;
	pw->arg = arg;
	if ((pw->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) == -1)
		goto fail;
	if ((pw->files = pw_files_copy(files)) == NULL)
		goto fail;
	pw->ev = event_new(base, pw->fd, EV_READ | EV_PERSIST,
	    policywatch_read_cb, pw);
	pw->timer = evtimer_new(base, policywatch_timer_cb, pw);
	if (pw->ev == NULL || pw->timer == NULL ||
	    event_add(pw->ev, NULL) == -1)
		goto fail;
	pw_rebuild(pw);
	return (pw);
fail:
	policywatch_stop(pw);
	return (NULL);
}

/* Watch another set of files (after a reload found new includes). */
int
policywatch_set_files(struct policywatch *pw, const char *const *files)
{
	char	**copy;

	if ((copy = pw_files_copy(files)) == NULL)
		return (-1);
	pw_files_free(pw->files);
	pw->files = copy;
	return (pw_rebuild(pw));
}

/* Stop watching and free. */
void
policywatch_stop(struct policywatch *pw)
{
	if (pw == NULL)
		return;
	if (pw->ev != NULL)
		event_free(pw->ev);
	if (pw->timer != NULL)
		event_free(pw->timer);
	if (pw->fd != -1)
		close(pw->fd);
	pw_watches_free(pw->w, pw->nw);
	pw_files_free(pw->files);
	free(pw);
}
