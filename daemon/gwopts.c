/*
 * What a gateway's options make before it runs: the defaults, the
 * policy they name (the system's, the user's, --policy, --allow,
 * --upstream), the gateway's page about it and the descriptor limit.
 */
#include "config.h"

#include <sys/resource.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/gwctx-int.h"
#include "daemon/gwopts.h"
#include "lib/log.h"
#include "proxy/audit/audit.h"
#include "proxy/audit/budget.h"
#include "proxy/audit/spool.h"
#include "proxy/gateway.h"
#include "rules/rules.h"

/* Start from the defaults. */
void
gwopts_init(struct gwopts *o, int grace, enum gwopts_userpolicy up)
{
	memset(o, 0, sizeof *o);
	gateway_config_defaults(&o->cfg);
	audit_config_init(&o->audit);
	o->shipcfg.spool_max = SPOOL_MAX_DEFAULT;
	o->ship_wait = GWOPTS_SHIP_WAIT;
	o->budget_lines = AUDIT_BUDGET_LINES;
	o->budget_bytes = AUDIT_BUDGET_BYTES;
	o->grace = grace;
	o->userpolicy = up;
}

/*
 * One --allow value as the policy lines it makes (rules_args_lines():
 * "HOST[:PORTS]", a whole line such as "allow-private 10.0.0.0/8", or
 * several), each loaded into r: the one way every command reads it.
 * Returns 0, or -1 with err ("--allow: message").
 */
int
gwopts_allow_load(struct rules *r, const char *arg, char *err, size_t errlen)
{
	struct rules_lines	l;
	char			why[1024];
	size_t			i;
	int			rv = 0;

	if (rules_args_lines(&arg, 1, &l, why, sizeof why) == -1) {
		snprintf(err, errlen, "--allow: %s", why);
		return (-1);
	}
	for (i = 0; i < l.n && rv == 0; i++)
		rv = rules_load_text(r, "--allow", l.v[i], strlen(l.v[i]), err,
		    errlen);
	rules_lines_free(&l);
	return (rv);
}

/* Would the user's policy file apply?  Its path goes in path. */
int
gwopts_user_path(const struct gwopts *o, char *path, size_t len)
{
	if (o->npolicy != 0)
		return (0);
	if (o->userpolicy == GWOPTS_USER_ALONE && o->nallow != 0)
		return (0);
	return (rules_default_path(path, len) == 0);
}

/* Does the user's policy file apply (and exist)? */
static int
gwopts_user_policy(const struct gwopts *o, char *path, size_t len)
{
	return (gwopts_user_path(o, path, len) && access(path, R_OK) == 0);
}

/* Say each rule that cannot take effect; one line each. */
static int
gwopts_dead_cb(const struct rules_dead *d, void *arg)
{
	char	line[2048];

	(void)arg;
	rules_dead_text(d, line, sizeof line);
	log_warnx("%s", line);
	return (0);
}

/* Say the rules of a policy that cannot take effect; how many. */
size_t
gwopts_warn_dead(const struct rules *r)
{
	return (rules_dead(r, gwopts_dead_cb, NULL));
}

/*
 * --upstream and --upstream-auth as the policy's last lines: the
 * command line's upstream replaces the policy's.
 */
static int
gwopts_upstream_lines(const struct gwopts *o, struct rules *r, char *err,
    size_t errlen)
{
	char	line[PATH_MAX + 32];

	if (o->upstream != NULL) {
		snprintf(line, sizeof line, "upstream %s", o->upstream);
		if (rules_load_text(r, "--upstream", line, strlen(line), err,
		    errlen) == -1)
			return (-1);
	}
	if (o->upstream_auth != NULL) {
		snprintf(line, sizeof line, "upstream-auth %s",
		    o->upstream_auth);
		if (rules_load_text(r, "--upstream-auth", line, strlen(line),
		    err, errlen) == -1)
			return (-1);
	}
	return (0);
}

/*
 * Build the policy: the system layer, then the files and rules given
 * (or the user's file), then the command line's upstream.
 */
struct rules *
gwopts_load_rules(const struct gwopts *o, char *err, size_t errlen)
{
	struct rules	*r;
	char		 path[PATH_MAX];
	size_t		 i, n;

	if ((r = rules_create()) == NULL) {
		snprintf(err, errlen, "out of memory");
		return (NULL);
	}
	if (rules_load_system(r, rules_system_dir(), err, errlen) == -1) {
		n = strlen(err);
		snprintf(err + n, errlen - n, " (the system policy, %s: only "
		    "an administrator can fix it)", rules_system_dir());
		goto fail;
	}
	if (gwopts_user_policy(o, path, sizeof path) &&
	    rules_load_file(r, path, err, errlen) == -1)
		goto fail;
	for (i = 0; i < o->npolicy; i++) {
		if (rules_load_file(r, o->policy[i], err, errlen) == -1)
			goto fail;
	}
	for (i = 0; i < o->nallow; i++) {
		if (gwopts_allow_load(r, o->allow[i], err, errlen) == -1)
			goto fail;
	}
	if (gwopts_upstream_lines(o, r, err, errlen) == -1)
		goto fail;
	return (r);
fail:
	rules_free(r);
	return (NULL);
}

/* Describe the policy's sources for the gateway's own page. */
void
gwopts_about(struct gwopts *o)
{
	size_t	i, n, base;

	base = n = snprintf(o->about, sizeof o->about, "the system policy "
	    "in %s, if any; ", rules_system_dir());
	if (o->npolicy == 0 && (o->nallow == 0 ||
	    o->userpolicy == GWOPTS_USER_ALWAYS))
		n += snprintf(o->about + n, sizeof o->about - n, "the user's "
		    "policy file, if any");
	for (i = 0; i < o->npolicy && n < sizeof o->about; i++)
		n += snprintf(o->about + n, sizeof o->about - n, "%s%s",
		    n > base ? ", " : "the rules in ", o->policy[i]);
	for (i = 0; i < o->nallow && n < sizeof o->about; i++)
		n += snprintf(o->about + n, sizeof o->about - n, "%s%s",
		    n > base ? ", " : "", o->allow[i]);
	if (o->nallow == 0 && o->npolicy == 0 && n < sizeof o->about)
		snprintf(o->about + n, sizeof o->about - n, "; nothing else");
	o->cfg.about = o->about;
}

/*
 * Allow as many descriptors as the hard limit lets, and fit the default
 * connection limit to them (an explicit --max-clients is only warned of:
 * accepting then pauses whenever descriptors run out).
 */
void
gwopts_fd_limit(struct gwopts *o)
{
	struct rlimit	rl;
	rlim_t		need;

	if (getrlimit(RLIMIT_NOFILE, &rl) == -1)
		return;
	need = (rlim_t)o->cfg.max_clients * 2 + 64;
	if (rl.rlim_cur < need && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = need < rl.rlim_max ? need : rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur < need && o->max_clients_set)
		log_warnx("descriptor limit %llu: fewer than --max-clients "
		    "needs", (unsigned long long)rl.rlim_cur);
	else if (rl.rlim_cur < need) {
		o->cfg.max_clients = rl.rlim_cur > 96 ?
		    (rl.rlim_cur - 64) / 2 : 16;
		log_warnx("descriptor limit %llu: at most %u connections",
		    (unsigned long long)rl.rlim_cur, o->cfg.max_clients);
	}
}

/* The private keys the options name and the spool, NULL-ended. */
void
gwopts_hidden(const struct gwopts *o, const char **v)
{
	size_t	n = 0;

	if (o->audit.keyfile != NULL)
		v[n++] = o->audit.keyfile;
	if (o->decider_key != NULL)
		v[n++] = o->decider_key;
	if (o->shipcfg.key != NULL)
		v[n++] = o->shipcfg.key;
	if (o->shipcfg.spool_dir != NULL)
		v[n++] = o->shipcfg.spool_dir;
	v[n] = NULL;
}
