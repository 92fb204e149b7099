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

#include "daemon/runguard.h"
#include "proxy/escalate/control.h"
#include "proxy/wire/placeholder.h"
#include "rules/rules.h"

static int	runguard_text_line(char *, size_t, size_t *, char,
		    const char *);

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
	for (i = 0; i < rg->nenv; i++)
		free(rg->env[i]);
	rg->nenv = 0;
	for (i = 0; i < rg->nsockets; i++)
		free(rg->sockets[i]);
	rg->nsockets = 0;
	free(rg->log);
	rg->log = NULL;
	free(rg->ca);
	free(rg->trust);
	rg->ca = rg->trust = NULL;
}

/* A path made absolute against the working directory (not resolved). */
static int
runguard_abs(const char *path, char *out, size_t len)
{
	char	cwd[PATH_MAX];

	if (path[0] == '/')
		return ((size_t)snprintf(out, len, "%s", path) < len ? 0 : -1);
	while (path[0] == '.' && path[1] == '/')
		path += 2 + strspn(path + 2, "/");
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

/* Keep the log's directories read-only, knowing it for the log. */
static int
runguard_log(struct runguard *rg, const char *file)
{
	char	abs[PATH_MAX];

	if (runguard_abs(file, abs, sizeof abs) == -1)
		return (-1);
	free(rg->log);
	if ((rg->log = strdup(abs)) == NULL)
		return (-1);
	return (runguard_file(rg, abs));
}

/* Keep one path read-only (as named and as found), if it exists. */
int
runguard_ro(struct runguard *rg, const char *file)
{
	char	abs[PATH_MAX];

	if (runguard_abs(file, abs, sizeof abs) == -1)
		return (-1);
	if (access(abs, F_OK) == -1)
		return (0);
	return (runguard_both(rg, abs, abs));
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

/* A path as found ("/a/b/../c" is "/a/c"), for messages. */
static void
runguard_tidy(const char *path, char *out, size_t len)
{
	char		 dir[PATH_MAX], real[PATH_MAX];
	const char	*base;
	size_t		 n;

	if (realpath(path, real) != NULL) {
		snprintf(out, len, "%s", real);
		return;
	}
	snprintf(dir, sizeof dir, "%s", path);
	runguard_dirname(dir);
	base = path + strlen(dir) + (strcmp(dir, "/") != 0);
	if (strcmp(dir, path) != 0 && realpath(dir, real) != NULL &&
	    (n = strlen(real)) + 1 + strlen(base) < len) {
		memcpy(out, real, n);
		if (strcmp(real, "/") != 0)
			out[n++] = '/';
		memcpy(out + n, base, strlen(base) + 1);
	} else
		snprintf(out, len, "%s", path);
}

/* Refuse a read-only directory that holds what the command writes. */
int
runguard_check(const struct runguard *rg, char *err, size_t errlen)
{
	const char	*tmp = getenv("TMPDIR");
	const char	*what[] = { "the working directory", "HOME",
	    "the temporary directory" };
	const char	*where[3];
	char		 cwd[PATH_MAX], file[PATH_MAX], dir[PATH_MAX];
	size_t		 i, k;
	int		 log;

	where[0] = getcwd(cwd, sizeof cwd);
	where[1] = getenv("HOME");
	where[2] = tmp != NULL && tmp[0] == '/' ? tmp : "/tmp";
	for (i = 0; i < rg->n; i++) {
		if (rg->g[i].how != NETNS_GUARD_RO)
			continue;
		for (k = 0; k < 3; k++) {
			if (!runguard_holds(rg->g[i].path, where[k]))
				continue;
			log = rg->log != NULL && strcmp(rg->why[i],
			    rg->log) == 0;
			runguard_tidy(rg->why[i], file, sizeof file);
			runguard_tidy(rg->g[i].path, dir, sizeof dir);
			snprintf(err, errlen, "%s: the sandbox must not change "
			    "it, so %s would be read-only there, and it holds "
			    "%s (%s): keep %s in a directory of %s own, such "
			    "as %s", file, dir, what[k], where[k], log ?
			    "the log" : "the policy, the log and its key",
			    log ? "its" : "their", log ?
			    "~/.local/state/pinhole (the default: leave out "
			    "--log)" : "~/.config/pinhole");
			return (-1);
		}
	}
	return (0);
}

/*
 * Is this directory read-only: one of the read-only paths, or below one
 * (a read-only bind covers what lies below it, made later too)?
 */
static int
runguard_has(const struct runguard *rg, const char *dir)
{
	size_t	i, n;

	for (i = 0; i < rg->n; i++) {
		if (rg->g[i].how != NETNS_GUARD_RO)
			continue;
		n = strlen(rg->g[i].path);
		if (strncmp(rg->g[i].path, dir, n) == 0 && (dir[n] == '\0' ||
		    dir[n] == '/' || (n == 1 && dir[0] == '/')))
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

/* Is a secret masked in the command's environment? */
static int
runguard_masks(const struct runguard *rg, const char *name)
{
	size_t	i, n = strlen(name);

	for (i = 0; i < rg->nenv; i++) {
		if (strncmp(rg->env[i], name, n) == 0 && rg->env[i][n] == '=')
			return (1);
	}
	return (0);
}

/* Is a path hidden? */
static int
runguard_hides(const struct runguard *rg, const char *path)
{
	char	abs[PATH_MAX];
	size_t	i;

	if (runguard_abs(path, abs, sizeof abs) == -1)
		return (0);
	for (i = 0; i < rg->n; i++) {
		if (rg->g[i].how == NETNS_GUARD_HIDE &&
		    strcmp(rg->g[i].path, abs) == 0)
			return (1);
	}
	return (0);
}

/*
 * A running sandbox sees a new secret's real value in its environment,
 * or can read its new file: such a secret waits for the next sandbox.
 */
static int
runguard_vet_secrets(const struct runguard *rg, const struct rules *rules,
    char *err, size_t len)
{
	const struct rules_secret	*rs[RUNGUARD_ENV_MAX];
	size_t				 i, n;

	n = rules_secrets(rules, rs, RUNGUARD_ENV_MAX);
	for (i = 0; i < n && i < RUNGUARD_ENV_MAX; i++) {
		if (!runguard_masks(rg, rs[i]->name) ||
		    (rs[i]->file != NULL && !runguard_hides(rg, rs[i]->file))) {
			snprintf(err, len, "secret %s is new to a running "
			    "sandbox, which could read its value: it is used "
			    "from the next run on", rs[i]->name);
			return (-1);
		}
	}
	if (n > RUNGUARD_ENV_MAX) {
		snprintf(err, len, "the policy has more than %d secrets",
		    RUNGUARD_ENV_MAX);
		return (-1);
	}
	return (0);
}

/*
 * May a reloaded policy be put in force: does it read only files a
 * running sandbox cannot change, and are its secrets' and the upstream's
 * credentials hidden from it?  A new include in another directory
 * waits for the next gateway.  0, or -1 with err saying why not.
 */
int
runguard_vet(const struct runguard *rg, const struct rules *rules, char *err,
    size_t len)
{
	const struct rules_upstream	*up = rules_upstream(rules);
	const char			*files[RUNGUARD_MAX];
	size_t				 i, n;

	if (runguard_vet_secrets(rg, rules, err, len) == -1)
		return (-1);
	if (up != NULL && up->auth != NULL && !runguard_hides(rg, up->auth)) {
		snprintf(err, len, "upstream-auth %s is new to a running "
		    "sandbox, which could read it: it is used from the next "
		    "run on", up->auth);
		return (-1);
	}
	n = rules_files(rules, files, RUNGUARD_MAX);
	for (i = 0; i < n && i < RUNGUARD_MAX; i++) {
		if (!runguard_covers(rg, files[i])) {
			snprintf(err, len, "%s is in a directory a running "
			    "sandbox can change: it is read from the next run "
			    "on", files[i]);
			return (-1);
		}
	}
	if (n > RUNGUARD_MAX) {
		snprintf(err, len, "the policy reads more than %d files",
		    RUNGUARD_MAX);
		return (-1);
	}
	return (0);
}

/* Is the audit log a file (not stdout, syslog or journald)? */
static int
runguard_log_file(const char *log)
{
	if (log == NULL || strcmp(log, "-") == 0)
		return (0);
	return (strcmp(log, "syslog") != 0 && strcmp(log, "journald") != 0 &&
	    strncmp(log, "syslog:", 7) != 0 && strncmp(log, "journald:", 9) != 0);
}

/* Add one plan line "K /PATH"; -1 when it does not fit or cannot be. */
static int
runguard_line(char *buf, size_t len, size_t *n, char kind, const char *path)
{
	char	abs[PATH_MAX];
	int	w;

	if (runguard_abs(path, abs, sizeof abs) == -1 ||
	    strchr(abs, '\n') != NULL) {
		errno = EINVAL;
		return (-1);
	}
	w = snprintf(buf + *n, len - *n, "%c %s\n", kind, abs);
	if (w < 0 || (size_t)w >= len - *n) {
		errno = ENAMETOOLONG;
		return (-1);
	}
	*n += (size_t)w;
	return (0);
}

/* The user's policy directory, $XDG_CONFIG_HOME/pinhole, and its parent. */
static int
runguard_plan_userdir(char *buf, size_t len, size_t *n)
{
	char	dir[PATH_MAX], *slash;

	if (rules_default_path(dir, sizeof dir) == -1 ||
	    (slash = strrchr(dir, '/')) == NULL)
		return (0);
	*slash = '\0';
	/* Its parent too ($XDG_CONFIG_HOME or ~/.config) may be missing. */
	if ((slash = strrchr(dir, '/')) != NULL && slash != dir) {
		*slash = '\0';
		if (mkdir(dir, 0700) == -1 && errno != EEXIST)
			return (0);
		*slash = '/';
	}
	return (runguard_line(buf, len, n, 'd', dir));
}

/*
 * The directories where a new file would change the policy (the system
 * directory, policy.d, a glob include's): read-only.  A missing system
 * directory is made when it can be (as root: 0755), so that the command
 * cannot make it and fill it for the next run.
 */
static int
runguard_plan_dirs(char *buf, size_t len, size_t *n, const struct rules *rules)
{
	const char	*dirs[RUNGUARD_MAX];
	size_t		 i, nd;

	if ((nd = rules_dirs(rules, dirs, RUNGUARD_MAX)) > RUNGUARD_MAX) {
		errno = E2BIG;
		return (-1);
	}
	for (i = 0; i < nd; i++) {
		if (strcmp(dirs[i], rules_system_dir()) == 0)
			(void)mkdir(dirs[i], 0755);
		if (runguard_line(buf, len, n, 'r', dirs[i]) == -1)
			return (-1);
	}
	return (0);
}

/* The host sockets the policy opens: "s PATH", as written. */
static int
runguard_plan_sockets(char *buf, size_t len, size_t *n,
    const struct rules *rules)
{
	const char	*socks[NETNS_OPEN_MAX];
	size_t		 i, ns;

	if ((ns = rules_sockets(rules, socks, NETNS_OPEN_MAX)) >
	    NETNS_OPEN_MAX) {
		errno = E2BIG;
		return (-1);
	}
	for (i = 0; i < ns; i++) {
		if (runguard_text_line(buf, len, n, 's', socks[i]) == -1)
			return (-1);
	}
	return (0);
}

/*
 * The other control directory, /tmp/pinhole-UID when the gateway's is
 * under XDG_RUNTIME_DIR: hidden too, made first if missing, so that the
 * command cannot make it and bind there what the user's next client
 * without XDG_RUNTIME_DIR would take for a gateway.  Only a directory:
 * a link another user put there is left (clients refuse it).
 */
static int
runguard_plan_tmpctl(char *buf, size_t len, size_t *n, const char *ctldir)
{
	struct stat	st;
	char		dir[64];

	if (control_dir_tmp(dir, sizeof dir) == -1 || strcmp(dir, ctldir) == 0)
		return (0);
	(void)mkdir(dir, 0700);
	if (lstat(dir, &st) == -1 || !S_ISDIR(st.st_mode))
		return (0);
	return (runguard_line(buf, len, n, 'h', dir));
}

/*
 * What a sandbox of a gateway must not change or see, as lines "K /PATH"
 * (proxy/wire/attachmsg.h): the user's policy directory, the policy files',
 * the directories of the system policy and of glob includes, the log's,
 * the private keys (NULL-ended), the control directory, the secrets' and
 * the upstream's credentials hidden, /etc/hosts.
 */
int
runguard_plan(char *buf, size_t len, const struct rules *rules,
    const char *log, const char *const *keys, const char *ctldir,
    const char *ca, const char *trust)
{
	const char			*files[RUNGUARD_MAX];
	const struct rules_secret	*rs[RUNGUARD_ENV_MAX];
	const struct rules_upstream	*up = rules_upstream(rules);
	size_t				 i, nf, n = 0;

	buf[0] = '\0';
	if (runguard_plan_userdir(buf, len, &n) == -1)
		return (-1);
	if ((nf = rules_files(rules, files, RUNGUARD_MAX)) > RUNGUARD_MAX) {
		errno = E2BIG;
		return (-1);
	}
	for (i = 0; i < nf; i++) {
		if (runguard_line(buf, len, &n, 'f', files[i]) == -1)
			return (-1);
	}
	if (runguard_plan_dirs(buf, len, &n, rules) == -1)
		return (-1);
	if (runguard_log_file(log) && runguard_line(buf, len, &n, 'l',
	    log) == -1)
		return (-1);
	for (i = 0; keys != NULL && keys[i] != NULL; i++) {
		if (runguard_line(buf, len, &n, 'h', keys[i]) == -1)
			return (-1);
	}
	if (runguard_line(buf, len, &n, 'h', ctldir) == -1 ||
	    runguard_plan_tmpctl(buf, len, &n, ctldir) == -1 ||
	    runguard_line(buf, len, &n, 'r', "/etc/hosts") == -1)
		return (-1);
	if ((nf = rules_secrets(rules, rs, RUNGUARD_ENV_MAX)) >
	    RUNGUARD_ENV_MAX) {
		errno = E2BIG;
		return (-1);
	}
	for (i = 0; i < nf; i++) {
		if ((rs[i]->file != NULL && runguard_line(buf, len, &n, 'h',
		    rs[i]->file) == -1) || runguard_text_line(buf, len, &n,
		    'e', rs[i]->name) == -1)
			return (-1);
	}
	if (up != NULL && up->auth != NULL &&
	    runguard_line(buf, len, &n, 'h', up->auth) == -1)
		return (-1);
	if (runguard_plan_sockets(buf, len, &n, rules) == -1)
		return (-1);
	if (ca != NULL && trust != NULL &&
	    (runguard_line(buf, len, &n, 'c', ca) == -1 ||
	    runguard_line(buf, len, &n, 't', trust) == -1))
		return (-1);
	return (0);
}

/* Guard what a plan says, check it, and hand it to a sandbox. */
int
runguard_sandbox(struct runguard *g, const char *plan,
    struct netns_config *cfg, char *err, size_t errlen)
{
	if (runguard_apply(g, plan) == -1) {
		snprintf(err, errlen, "cannot guard the policy and log: %s",
		    strerror(errno));
		return (-1);
	}
	if (runguard_check(g, err, errlen) == -1)
		return (-1);
	cfg->guards = g->g;
	cfg->nguards = g->n;
	cfg->env = (const char *const *)g->env;
	cfg->nenv = g->nenv;
	cfg->trust_ca = g->ca;
	cfg->trust_bundle = g->trust;
	cfg->sockets = (const char *const *)g->sockets;
	cfg->nsockets = g->nsockets;
	return (0);
}

/* Add one plan line "K TEXT", the text as it is. */
static int
runguard_text_line(char *buf, size_t len, size_t *n, char kind,
    const char *text)
{
	int	w;

	if (strchr(text, '\n') != NULL) {
		errno = EINVAL;
		return (-1);
	}
	w = snprintf(buf + *n, len - *n, "%c %s\n", kind, text);
	if (w < 0 || (size_t)w >= len - *n) {
		errno = ENAMETOOLONG;
		return (-1);
	}
	*n += (size_t)w;
	return (0);
}

/* Mask a secret: the command sees NAME=PLACEHOLDER. */
static int
runguard_env(struct runguard *rg, const char *name)
{
	char	ph[SECRET_PLACEHOLDER_MAX], *e;

	if (secret_placeholder(name, ph, sizeof ph) == -1) {
		errno = EINVAL;
		return (-1);
	}
	if (runguard_masks(rg, name))
		return (0);
	if (rg->nenv == RUNGUARD_ENV_MAX) {
		errno = E2BIG;
		return (-1);
	}
	if (asprintf(&e, "%s=%s", name, ph) == -1)
		return (-1);
	rg->env[rg->nenv++] = e;
	return (0);
}

/* Keep the path of a file the command trusts. */
static int
runguard_trust(char **slot, const char *path)
{
	free(*slot);
	return ((*slot = strdup(path)) == NULL ? -1 : 0);
}

/*
 * A socket's path as the policy wrote it, expanded: a leading $NAME,
 * ${NAME} or ~/ from this process's environment (the command's).
 * Returns 0, or 1 when it names nothing here (a variable not set, or
 * not an absolute path), with why said on stderr.
 */
static int
runguard_expand(const char *text, char *out, size_t len)
{
	const char	*rest = text, *val = "";
	char		 name[128];
	size_t		 n;

	if (strncmp(text, "~/", 2) == 0) {
		val = getenv("HOME");
		rest = text + 1;
		snprintf(name, sizeof name, "HOME");
	} else if (text[0] == '$') {
		n = strspn(text + 1 + (text[1] == '{'), "ABCDEFGHIJKLMNOPQRSTUV"
		    "WXYZabcdefghijklmnopqrstuvwxyz0123456789_");
		if (n == 0 || n >= sizeof name)
			return (1);
		memcpy(name, text + 1 + (text[1] == '{'), n);
		name[n] = '\0';
		rest = text + 1 + n + (text[1] == '{' ? 2 : 0);
		val = getenv(name);
	}
	if (val == NULL || (text[0] != '/' && val[0] == '\0')) {
		fprintf(stderr, "pinhole: allow-socket %s: %s is not set; "
		    "that socket stays closed\n", text, name);
		return (1);
	}
	if ((size_t)snprintf(out, len, "%s%s", val, rest) >= len ||
	    out[0] != '/') {
		fprintf(stderr, "pinhole: allow-socket %s: not an absolute "
		    "path here; that socket stays closed\n", text);
		return (1);
	}
	return (0);
}

/* Note a host socket the command may reach. */
static int
runguard_socket(struct runguard *rg, const char *text)
{
	char	path[PATH_MAX];

	if (runguard_expand(text, path, sizeof path) != 0)
		return (0);
	if (rg->nsockets == NETNS_OPEN_MAX) {
		errno = E2BIG;
		return (-1);
	}
	if ((rg->sockets[rg->nsockets] = strdup(path)) == NULL)
		return (-1);
	rg->nsockets++;
	return (0);
}

/* Guard what a plan says.  Returns 0, or -1 with errno set. */
int
runguard_apply(struct runguard *rg, const char *plan)
{
	char		 path[PATH_MAX];
	const char	*nl;
	size_t		 len;
	int		 rv;

	for (; *plan != '\0'; plan = nl + 1) {
		if ((nl = strchr(plan, '\n')) == NULL || nl - plan < 3 ||
		    (len = (size_t)(nl - plan - 2)) >= sizeof path) {
			errno = EINVAL;
			return (-1);
		}
		memcpy(path, plan + 2, len);
		path[len] = '\0';
		switch (plan[0]) {
		case 'd':
			/* Made if missing; one that cannot be is not fatal. */
			(void)runguard_dir(rg, path);
			rv = 0;
			break;
		case 'f':
			rv = runguard_file(rg, path);
			break;
		case 'l':
			rv = runguard_log(rg, path);
			break;
		case 'h':
			rv = runguard_hide(rg, path);
			break;
		case 'r':
			rv = runguard_ro(rg, path);
			break;
		case 'e':
			rv = runguard_env(rg, path);
			break;
		case 's':
			rv = runguard_socket(rg, path);
			break;
		case 'c':
			rv = runguard_trust(&rg->ca, path);
			break;
		case 't':
			rv = runguard_trust(&rg->trust, path);
			break;
		default:
			errno = EINVAL;
			rv = -1;
		}
		if (rv == -1)
			return (-1);
	}
	return (0);
}
