/*
 * Loads of a policy: a file, the system layer (SYSCONFDIR/pinhole/policy
 * then policy.d/), a text or one rule; what a load parsed is added
 * whole, or nothing.  And what a loaded policy lists: its files, its
 * directories, its sockets.  The parsing is parse.c's.
 */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rules/parse-int.h"

#ifndef SYSCONFDIR
#define SYSCONFDIR "/usr/local/etc"
#endif

/* Add what a load parsed, or nothing when it failed. */
static int
load_finish(struct load *l, int rv)
{
	struct parse		  top = { .load = l, .file = "policy" };
	struct rules_file	**tail;
	struct secret		**stail;

	if (rv == 0 && rules_add(l->r, l->specs, l->nspecs) == -1)
		rv = parse_error(&top, "out of memory");
	if (rv == 0) {
		for (tail = &l->r->files; *tail != NULL; tail = &(*tail)->next)
			;
		*tail = l->files;
		for (tail = &l->r->dirs; *tail != NULL; tail = &(*tail)->next)
			;
		*tail = l->dirs;
		for (stail = &l->r->secrets; *stail != NULL;
		    stail = &(*stail)->next)
			;
		*stail = l->secrets;
		for (tail = &l->r->sockets; *tail != NULL;
		    tail = &(*tail)->next)
			;
		*tail = l->sockets;
		l->r->allow_vsock |= l->allow_vsock;
		rules_upstream_merge(l->r, &l->up);
		if (l->next_end != 0 && (l->r->next_end == 0 ||
		    l->next_end < l->r->next_end))
			l->r->next_end = l->next_end;
	}
	free(l->specs);
	return (rv);
}

/* Add a policy file. */
int
rules_load_file(struct rules *r, const char *path, char *err, size_t errlen)
{
	struct load	l = { .r = r, .err = err, .errlen = errlen };

	l.now = time(NULL);
	return (load_finish(&l, load_file(&l, NULL, path)));
}

/* Copy a path into a glob pattern, its pattern characters escaped. */
static int
glob_escape(char *out, size_t size, const char *path)
{
	size_t	n = 0;

	for (; *path != '\0'; path++) {
		if (n + 2 >= size)
			return (-1);
		if (strchr(GLOB_CHARS "\\", *path) != NULL)
			out[n++] = '\\';
		out[n++] = *path;
	}
	out[n] = '\0';
	return (0);
}

/* Read DIR/policy (if there) and DIR/policy.d/NAME.policy into a load. */
static int
load_system(struct load *l, const char *dir)
{
	struct parse	top = { .load = l, .file = dir };
	struct stat	st;
	char		path[PATH_MAX], pattern[2 * PATH_MAX];
	size_t		n;

	if ((size_t)snprintf(path, sizeof path, "%s/policy.d", dir) >=
	    sizeof path || glob_escape(pattern, sizeof pattern, path) == -1)
		return (parse_error(&top, "path too long"));
	n = strlen(pattern);
	if ((size_t)snprintf(pattern + n, sizeof pattern - n, "/*.policy") >=
	    sizeof pattern - n)
		return (parse_error(&top, "path too long"));
	if (load_note(l, &l->dirs, dir, strlen(dir)) == -1 ||
	    load_note(l, &l->dirs, path, strlen(path)) == -1)
		return (parse_error(&top, "out of memory"));
	snprintf(path, sizeof path, "%s/policy", dir);
	if ((stat(path, &st) == 0 || errno != ENOENT) &&
	    load_file(l, NULL, path) == -1)
		return (-1);
	return (load_glob(l, NULL, pattern));
}

/* Add the system layer, all its files or nothing. */
int
rules_load_system(struct rules *r, const char *dir, char *err, size_t errlen)
{
	struct load	l = { .r = r, .err = err, .errlen = errlen,
			    .layer = RULES_SYSTEM };

	l.now = time(NULL);
	return (load_finish(&l, load_system(&l, dir)));
}

/* Where the system layer lives: SYSCONFDIR/pinhole. */
const char *
rules_system_dir(void)
{
	return (SYSCONFDIR "/pinhole");
}

/* Check includes, read none. */
void
rules_no_includes(struct rules *r)
{
	r->no_files = 1;
}

/*
 * Add rules given as text; origin names them in messages.  Text with no
 * newline is one rule, reported without a line number ("--allow: ...").
 */
int
rules_load_text(struct rules *r, const char *origin, const char *text,
    size_t len, char *err, size_t errlen)
{
	struct load	 l = { .r = r, .err = err, .errlen = errlen };
	struct parse	 p = { .load = &l, .file = origin };

	l.now = time(NULL);
	p.numbered = memchr(text, '\n', len) != NULL;
	if ((p.file = arena_strndup(&r->arena, origin, strlen(origin))) == NULL) {
		p.file = origin;
		return (load_finish(&l, parse_error(&p, "out of memory")));
	}
	return (load_finish(&l, parse_text(&p, text, len)));
}

/*
 * Add a policy given as text, as if read from path: numbered lines,
 * includes relative to path's directory.  For checking an edit before
 * it is written.
 */
int
rules_load_buffer(struct rules *r, const char *path, const char *text,
    size_t len, char *err, size_t errlen)
{
	struct load	l = { .r = r, .err = err, .errlen = errlen };
	struct stat	st;

	l.now = time(NULL);
	if (stat(path, &st) == -1)
		memset(&st, 0, sizeof st);
	return (load_finish(&l, parse_file(&l, NULL, path, &st, text, len)));
}

/*
 * Parse the argument of one allow or deny rule (HOST[:PORTS]), or of an
 * allow-private rule, as line `line` of origin (0: no line number) into
 * *out, its records in r's arena.  With check, refuse what a policy
 * would refuse; without, only parse.
 */
int
rules_parse_target(struct rules *r, const char *origin, unsigned int line,
    enum rule_action action, const char *arg, int check,
    struct rule_spec *out, char *err, size_t errlen)
{
	static const char *const names[] = { [RULE_ALLOW] = "allow",
	    [RULE_DENY] = "deny", [RULE_PRIVATE] = "allow-private" };
	struct load	 l = { .r = r, .err = err, .errlen = errlen };
	struct parse	 p = { .load = &l, .file = origin, .line = line };
	char		 text[RULES_LINE_MAX + 1], q[80];
	size_t		 n = strlen(arg);
	int		 rv = -1;

	p.numbered = line != 0;
	p.kw = names[action];
	if (n == 0 || arg[strcspn(arg, " \t\r\n\f\v#")] != '\0') {
		parse_error(&p, "bad rule '%s': one HOST[:PORTS], without "
		    "spaces or '#'", quote(q, sizeof q, arg, n));
		goto out;
	}
	if ((size_t)snprintf(text, sizeof text, "%s %s", p.kw, arg) >=
	    sizeof text) {
		parse_error(&p, "line longer than %d bytes", RULES_LINE_MAX);
		goto out;
	}
	if (check && action != RULE_PRIVATE ?
	    parse_rule(&p, arg, text, action) == -1 :
	    parse_target(&p, arg, text, action) == NULL)
		goto out;
	*out = l.specs[0];
	rv = 0;
out:
	free(l.specs);
	return (rv);
}

/* When the first rule with an "until" still to come ends; 0: none. */
time_t
rules_next_end(const struct rules *r)
{
	return (r->next_end);
}

/* Does the policy allow AF_VSOCK sockets in the sandbox? */
int
rules_allow_vsock(const struct rules *r)
{
	return (r->allow_vsock);
}

/* Store at most max paths of a list; returns how many there are. */
static size_t
file_list(const struct rules_file *f, const char **out, size_t max)
{
	size_t	n = 0;

	for (; f != NULL; f = f->next, n++) {
		if (n < max)
			out[n] = f->path;
	}
	return (n);
}

/* List the files a policy was read from, in order; returns how many. */
size_t
rules_files(const struct rules *r, const char **out, size_t max)
{
	return (file_list(r->files, out, max));
}

/* List the unix sockets the sandbox may reach, as written. */
size_t
rules_sockets(const struct rules *r, const char **out, size_t max)
{
	return (file_list(r->sockets, out, max));
}

/* List the directories whose new files would change the policy. */
size_t
rules_dirs(const struct rules *r, const char **out, size_t max)
{
	return (file_list(r->dirs, out, max));
}

/* The user's policy file: $XDG_CONFIG_HOME/pinhole/policy or ~/.config/... */
int
rules_default_path(char *buf, size_t size)
{
	const char	*xdg = getenv("XDG_CONFIG_HOME"), *home;
	int		 n;

	if (xdg != NULL && xdg[0] == '/')
		n = snprintf(buf, size, "%s/pinhole/policy", xdg);
	else if ((home = getenv("HOME")) != NULL && home[0] != '\0')
		n = snprintf(buf, size, "%s/.config/pinhole/policy", home);
	else
		return (-1);
	if (n < 0 || (size_t)n >= size)
		return (-1);
	return (0);
}
