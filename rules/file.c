/*
 * Writing a policy file: the one place in rules/ that writes.  It sits
 * here, next to the parser that checks every edit, because both
 * `pinhole allow` and the gateway (for `always` grants) edit the file
 * the same way: read, edit the text (rules/edit.c), check the whole new
 * policy, then replace the file atomically under a directory lock.
 */
#include "config.h"

#include <sys/file.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/io.h"
#include "rules/rules-int.h"

#define FILE_HEADER	"# pinhole policy, one rule a line: see pinhole-policy(5)\n"

/* One edit of one file: where it is, what it held, what it will hold. */
struct file_edit {
	const char	*path;		/* as given: for messages, includes */
	char		 target[PATH_MAX];	/* what is replaced */
	char		 dir[PATH_MAX];
	int		 dirfd;
	int		 exists;
	mode_t		 mode;
	uid_t		 uid;
	gid_t		 gid;
	char		*text;
	size_t		 len;
	char		*err;
	size_t		 errlen;
};

/* Write "FILE: what: strerror" and return -1. */
static int
file_fail(struct file_edit *f, const char *what)
{
	snprintf(f->err, f->errlen, "%s: %s%s%s", f->path, what,
	    what[0] != '\0' ? ": " : "", strerror(errno));
	return (-1);
}

/* Make a directory and its missing parents, each 0700. */
static int
file_mkdirs(char *dir)
{
	char	*slash;

	if (mkdir(dir, 0700) == 0 || errno == EEXIST)
		return (0);
	if (errno != ENOENT || (slash = strrchr(dir, '/')) == NULL ||
	    slash == dir)
		return (-1);
	*slash = '\0';
	if (file_mkdirs(dir) == -1) {
		*slash = '/';
		return (-1);
	}
	*slash = '/';
	return (mkdir(dir, 0700) == 0 || errno == EEXIST ? 0 : -1);
}

/* Find the file to replace (a symlink's target) and its directory. */
static int
file_locate(struct file_edit *f)
{
	char	*slash;

	if (realpath(f->path, f->target) == NULL) {
		if (errno != ENOENT)
			return (file_fail(f, ""));
		if ((size_t)snprintf(f->target, sizeof f->target, "%s",
		    f->path) >= sizeof f->target) {
			errno = ENAMETOOLONG;
			return (file_fail(f, ""));
		}
	}
	snprintf(f->dir, sizeof f->dir, "%s", f->target);
	if ((slash = strrchr(f->dir, '/')) == NULL)
		snprintf(f->dir, sizeof f->dir, ".");
	else if (slash == f->dir)
		slash[1] = '\0';
	else
		*slash = '\0';
	return (0);
}

/* Open and lock the directory (made first when create is set). */
static int
file_lock_dir(struct file_edit *f, int create)
{
	if (create && file_mkdirs(f->dir) == -1)
		return (file_fail(f, "cannot make its directory"));
	if ((f->dirfd = open(f->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		return (errno == ENOENT && !create ? 0 :
		    file_fail(f, "directory"));
	if (flock(f->dirfd, LOCK_EX) == -1)
		return (file_fail(f, "cannot lock its directory"));
	return (0);
}

/* Read the file whole; a missing file is empty text. */
static int
file_read(struct file_edit *f)
{
	struct stat	st;
	ssize_t		n;
	int		fd;

	f->mode = 0600;
	if ((fd = open(f->target, O_RDONLY | O_CLOEXEC)) == -1)
		return (errno == ENOENT ? 0 : file_fail(f, ""));
	if (fstat(fd, &st) == -1) {
		close(fd);
		return (file_fail(f, ""));
	}
	if (!S_ISREG(st.st_mode) || st.st_size > RULES_FILE_MAX) {
		close(fd);
		snprintf(f->err, f->errlen, "%s: %s", f->path,
		    S_ISREG(st.st_mode) ? "file too large" :
		    "not a regular file");
		return (-1);
	}
	f->exists = 1;
	f->mode = st.st_mode & 07777;
	f->uid = st.st_uid;
	f->gid = st.st_gid;
	if ((f->text = malloc(st.st_size + 1)) == NULL) {
		close(fd);
		return (file_fail(f, ""));
	}
	while (f->len < (size_t)st.st_size && ((n = read(fd, f->text + f->len,
	    st.st_size - f->len)) > 0 || (n == -1 && errno == EINTR)))
		f->len += n > 0 ? n : 0;
	f->text[f->len] = '\0';
	close(fd);
	return (0);
}

/* Apply each rule's edit to the text in turn. */
static int
file_apply(struct file_edit *f, int remove, const char *const *rules,
    size_t n, struct rules_edit *res)
{
	size_t	i;
	int	rv, changed = 0;

	for (i = 0; i < n; i++) {
		rv = remove ? rules_edit_remove(f->text, f->len, rules[i],
		    "pinhole disallow", &res[i], f->err, f->errlen) :
		    rules_edit_add(f->text, f->len, rules[i], "pinhole allow",
		    &res[i], f->err, f->errlen);
		if (rv == -1)
			return (-1);
		if (res[i].text == NULL)
			continue;
		free(f->text);
		f->text = res[i].text;
		f->len = res[i].len;
		res[i].text = NULL;
		changed++;
	}
	return (changed);
}

/* Check the new text as the whole policy, includes and all. */
static int
file_check(struct file_edit *f)
{
	struct rules	*r;
	int		 rv;

	if ((r = rules_create()) == NULL) {
		snprintf(f->err, f->errlen, "%s: out of memory", f->path);
		return (-1);
	}
	rv = rules_load_buffer(r, f->path, f->text, f->len, f->err, f->errlen);
	rules_free(r);
	return (rv);
}

/* Write the new text to a temp file beside the target, then rename. */
static int
file_replace(struct file_edit *f)
{
	const char	*base = strrchr(f->target, '/');
	char		 tmp[PATH_MAX];
	int		 fd = -1, rv = -1;

	base = base != NULL ? base + 1 : f->target;
	if ((size_t)snprintf(tmp, sizeof tmp, "%s/.%s.XXXXXX", f->dir,
	    base) >= sizeof tmp) {
		errno = ENAMETOOLONG;
		return (file_fail(f, "temp file"));
	}
	if ((fd = mkostemp(tmp, O_CLOEXEC)) == -1)
		return (file_fail(f, "cannot make a temp file"));
	if (f->exists && geteuid() == 0)
		(void)fchown(fd, f->uid, f->gid);
	if (fchmod(fd, f->mode) == -1 ||
	    write_all(fd, f->text, f->len) == -1 || fsync(fd) == -1) {
		file_fail(f, "cannot write the new file");
		goto out;
	}
	if (close(fd) == -1) {
		fd = -1;
		file_fail(f, "cannot write the new file");
		goto out;
	}
	fd = -1;
	if (rename(tmp, f->target) == -1) {
		file_fail(f, "cannot replace");
		goto out;
	}
	tmp[0] = '\0';
	if (f->dirfd != -1)
		(void)fsync(f->dirfd);
	rv = 0;
out:
	if (fd != -1)
		close(fd);
	if (tmp[0] != '\0')
		unlink(tmp);
	return (rv);
}

/* Let the caller's vet look at the edit; the text before is in old. */
static int
file_vet(struct file_edit *f, const struct rules_file_vet *vet,
    const char *old, size_t oldlen, const struct rules_edit *res, size_t n)
{
	if (vet == NULL || vet->fn == NULL)
		return (0);
	return (vet->fn(vet->arg, f->path, old, oldlen, f->text, f->len, res,
	    n, f->err, f->errlen));
}

/* Edit a policy file in place, atomically, checked by the parser. */
int
rules_file_edit(const char *path, int remove, const char *const *rules,
    size_t n, struct rules_edit *res, const struct rules_file_vet *vet,
    char *err, size_t errlen)
{
	struct file_edit	 f = { .path = path, .dirfd = -1, .err = err,
				     .errlen = errlen };
	char			*old = NULL;
	size_t			 oldlen;
	int			 rv = -1, changed;

	memset(res, 0, n * sizeof *res);
	if (file_locate(&f) == -1 || file_lock_dir(&f, !remove) == -1)
		goto out;
	if (f.dirfd != -1 && file_read(&f) == -1)
		goto out;
	if (!f.exists && (f.text = strdup(remove ? "" : FILE_HEADER)) == NULL) {
		file_fail(&f, "");
		goto out;
	}
	if (!f.exists)
		f.len = strlen(f.text);
	oldlen = f.len;
	if ((old = malloc(oldlen + 1)) == NULL) {
		file_fail(&f, "");
		goto out;
	}
	memcpy(old, f.text, oldlen + 1);
	if ((changed = file_apply(&f, remove, rules, n, res)) <= 0) {
		rv = changed;
		goto out;
	}
	if (file_check(&f) == -1 || file_vet(&f, vet, old, oldlen, res,
	    n) == -1 || file_replace(&f) == -1)
		goto out;
	rv = changed;
out:
	free(old);
	free(f.text);
	if (f.dirfd != -1)
		close(f.dirfd);
	return (rv);
}

/* Add one "allow RULE" to a policy file; res (or NULL) says where. */
int
rules_file_append(const char *path, const char *rule, struct rules_edit *res,
    char *err, size_t errlen)
{
	struct rules_edit	 own;
	char			 line[RULES_LINE_MAX + 1];
	const char		*lines[1] = { line };

	if ((size_t)snprintf(line, sizeof line, "allow %s", rule) >=
	    sizeof line) {
		snprintf(err, errlen, "%s: rule too long", path);
		return (-1);
	}
	if (res == NULL)
		res = &own;
	memset(res, 0, sizeof *res);
	return (rules_file_edit(path, 0, lines, 1, res, NULL, err, errlen));
}
