/*
 * The policy in force, whose one owner is the gateway's context: put in
 * force at start and on every reload (SIGHUP, a policy file changed, a
 * rule's "until" come), with what follows from it: the names the CA may
 * vouch for, the secrets' values, the upstream proxy, the files watched.
 * A policy that does not load, that the vet refuses or whose upstream
 * cannot be made leaves the one in force as it is.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "daemon/gwctx-int.h"
#include "daemon/gwopts.h"
#include "daemon/policywatch.h"
#include "lib/log.h"
#include "proxy/audit/audit.h"
#include "proxy/escalate/control.h"
#include "proxy/gateway.h"
#include "proxy/tls/tls.h"
#include "rules/policy.h"
#include "rules/rules.h"

static void	gwctx_reload(struct gwctx *);

/* A rule's "until" has come: reload, which leaves it out. */
static void
gwctx_ending_cb(evutil_socket_t fd, short what, void *arg)
{
	log_info("a rule of the policy has ended");
	gwctx_reload(arg);
}

/*
 * The names the CA may vouch for: the hosts the policy inspects, or a
 * reserved name that no real host has while it inspects none (a reload
 * that adds some makes a new CA for them); none when there are too many
 * to list (or a rule inspects every host).
 */
static size_t
gwctx_inspected(const struct rules *r, const char **names, size_t max)
{
	size_t	n = rules_inspected(r, names, max);

	if (n == 0) {
		names[0] = "pinhole.invalid";
		return (1);
	}
	return (n > max ? 0 : n);
}

/* The files of a session's CA, in the control directory. */
int
gwctx_tls_files(const char *session, char *ca, char *trust, size_t len)
{
	char	dir[4096];

	if (control_dir(dir, sizeof dir) == -1 ||
	    (size_t)snprintf(ca, len, "%s/%s.ca.pem", dir, session) >= len ||
	    (size_t)snprintf(trust, len, "%s/%s.trust.pem", dir,
	    session) >= len)
		return (-1);
	return (0);
}

/*
 * TLS inspection: the session's CA, its certificate and the trust bundle
 * written beside the control socket (a sandbox mounts the bundle).  A
 * gateway that cannot make them refuses the hosts it would inspect.
 */
void
gwctx_tls(struct gwctx *c)
{
	const char	*names[GWCTX_INSPECT_MAX];
	const char	*session = c->o->cfg.session;
	char		 dir[4096], prefix[4096 + CONTROL_NAME_MAX + 2];
	char		 err[512];
	size_t		 n;

	n = gwctx_inspected(policy_rules(gateway_policy(c->gw)), names,
	    GWCTX_INSPECT_MAX);
	if (control_dir_make(dir, sizeof dir, err, sizeof err) == -1 ||
	    (size_t)snprintf(prefix, sizeof prefix, "%s/%s", dir, session) >=
	    sizeof prefix || (c->tls = tls_new(session, names, n, prefix,
	    err, sizeof err)) == NULL) {
		log_warnx("no TLS inspection: %s", err);
		return;
	}
	gateway_set_tls(c->gw, c->tls);
}

/* Forget the secrets' values. */
void
gwctx_secrets_free(struct gwctx *c)
{
	struct conn_secret	*s;
	size_t			 i;

	for (i = 0; i < c->nsecrets; i++) {
		s = &c->secrets[i];
		if (s->value != NULL) {
			explicit_bzero((char *)s->value, s->len);
			free((char *)s->value);
		}
	}
	c->nsecrets = 0;
}

/* A secret's value from a file: its first line.  NULL after saying why. */
static char *
gwctx_secret_file(const struct rules_secret *rs, size_t *len)
{
	char	*buf;
	FILE	*f;
	size_t	 n;

	if ((f = fopen(rs->file, "re")) == NULL) {
		log_warn("secret %s: %s", rs->name, rs->file);
		return (NULL);
	}
	if ((buf = malloc(GWCTX_SECRET_LEN + 1)) == NULL)
		fatal("malloc");
	n = fread(buf, 1, GWCTX_SECRET_LEN + 1, f);
	fclose(f);
	buf[n < GWCTX_SECRET_LEN ? n : GWCTX_SECRET_LEN] = '\0';
	buf[strcspn(buf, "\r\n")] = '\0';
	if (n > GWCTX_SECRET_LEN || buf[0] == '\0') {
		log_warnx("secret %s: %s is %s", rs->name, rs->file,
		    n > GWCTX_SECRET_LEN ? "too long" : "empty");
		explicit_bzero(buf, GWCTX_SECRET_LEN + 1);
		free(buf);
		return (NULL);
	}
	*len = strlen(buf);
	return (buf);
}

/*
 * Read the values of a policy's secrets: from pinhole's environment or
 * a file, never shown to the sandbox (it sees placeholders).  One that
 * cannot be read is warned of; requests carrying its placeholder are
 * refused.
 */
static void
gwctx_secrets_load(struct gwctx *c, const struct rules *r)
{
	const struct rules_secret	*rs[GWCTX_SECRETS_MAX];
	struct conn_secret		*s;
	const char			*env;
	size_t				 i, n;

	gwctx_secrets_free(c);
	if ((n = rules_secrets(r, rs, GWCTX_SECRETS_MAX)) > GWCTX_SECRETS_MAX) {
		log_warnx("only the first %d secrets are used", GWCTX_SECRETS_MAX);
		n = GWCTX_SECRETS_MAX;
	}
	for (i = 0; i < n; i++) {
		s = &c->secrets[i];
		s->rule = rs[i];
		s->value = NULL;
		s->len = 0;
		if (rs[i]->file != NULL)
			s->value = gwctx_secret_file(rs[i], &s->len);
		else if ((env = getenv(rs[i]->name)) == NULL || *env == '\0')
			log_warnx("secret %s: not in pinhole's environment",
			    rs[i]->name);
		else if ((s->value = strdup(env)) == NULL)
			fatal("strdup");
		else
			s->len = strlen(env);
	}
	c->nsecrets = n;
}

/*
 * The upstream a policy names, made anew at every load: resolved by the
 * host's resolver, its credentials read again (a changed password is
 * taken by a reload).  Returns it (NULL: none) or -1 with err, which
 * leaves the one in force as it is.
 */
int
gwctx_upstream_make(const struct rules *r, struct conn_upstream **u,
    char *err, size_t errlen)
{
	const struct rules_upstream	*ru = rules_upstream(r);

	*u = NULL;
	if (ru == NULL && r != NULL && rules_upstream_auth(r) != NULL)
		log_warnx("upstream-auth %s: there is no upstream to give "
		    "it to", rules_upstream_auth(r));
	if (ru != NULL && (*u = conn_upstream_create(ru, err, errlen)) == NULL)
		return (-1);
	return (0);
}

/* Go through the upstream u from now on (NULL: dial the hosts). */
void
gwctx_upstream_set(struct gwctx *c, struct conn_upstream *u,
    const struct rules *r)
{
	const struct rules_upstream	*ru = rules_upstream(r);

	if (u != NULL && strcmp(c->upstream, u->label) != 0)
		log_info("through the upstream proxy %s (%s)%s", u->label,
		    ru->origin, u->auth != NULL ? ", with credentials" : "");
	else if (u == NULL && c->upstream[0] != '\0')
		log_info("no upstream proxy: dialing hosts directly");
	snprintf(c->upstream, sizeof c->upstream, "%s", u != NULL ? u->label :
	    "");
	gateway_set_upstream(c->gw, u);
	conn_upstream_unref(u);
}

/* Put a policy in force (the gateway owns it); reload when a rule ends. */
void
gwctx_set_rules(struct gwctx *c, struct rules *r)
{
	struct timeval	tv = { 0, 100000 };
	time_t		end = rules_next_end(r), now = time(NULL);
	const char	*names[GWCTX_INSPECT_MAX];
	char		 err[512];

	if (c->tls != NULL && tls_set_names(c->tls, names,
	    gwctx_inspected(r, names, GWCTX_INSPECT_MAX), err,
	    sizeof err) == -1)
		log_warnx("the CA stays as it was: %s", err);
	gwctx_secrets_load(c, r);
	gateway_set_rules(c->gw, r);
	gateway_set_secrets(c->gw, c->secrets, c->nsecrets);
	if (c->ending == NULL && (c->ending = evtimer_new(c->base,
	    gwctx_ending_cb, c)) == NULL)
		fatalx("cannot create a timer");
	evtimer_del(c->ending);
	if (end == 0)
		return;
	if (end > now)
		tv.tv_sec = end - now;
	evtimer_add(c->ending, &tv);
}

/* May we watch the directory of this file (or wait for it to appear)? */
static int
gwopts_dir_ok(const char *path)
{
	char	dir[PATH_MAX], *slash;

	snprintf(dir, sizeof dir, "%s", path);
	if ((slash = strrchr(dir, '/')) == NULL || slash == dir)
		return (0);
	*slash = '\0';
	return (access(dir, X_OK) == 0 || errno == ENOENT);
}

/*
 * Watch the files of the policy in force, the directories where a new
 * file would change it ("DIR/": policy.d, a glob's), and the user's
 * policy file.
 */
static void
gwctx_watch_files(struct gwctx *c)
{
	const struct rules	 *r = policy_rules(gateway_policy(c->gw));
	const char		**files;
	char			**dirs, path[PATH_MAX];
	size_t			  nf, nd, n, i;

	if (c->watch == NULL)
		return;
	nf = rules_files(r, NULL, 0);
	nd = rules_dirs(r, NULL, 0);
	if ((files = calloc(nf + nd + 2, sizeof *files)) == NULL ||
	    (dirs = calloc(nd + 1, sizeof *dirs)) == NULL)
		fatal("calloc");
	n = rules_files(r, files, nf);
	rules_dirs(r, files + n, nd);
	for (i = 0; i < nd; i++) {
		if (asprintf(&dirs[i], "%s/", files[n + i]) == -1)
			fatal("asprintf");
		files[n + i] = dirs[i];
	}
	n += nd;
	if (gwopts_user_path(c->o, path, sizeof path) && gwopts_dir_ok(path))
		files[n++] = path;
	files[n] = NULL;
	if (policywatch_set_files(c->watch, files) == -1)
		log_warnx("cannot watch the policy files");
	for (i = 0; i < nd; i++)
		free(dirs[i]);
	free(dirs);
	free(files);
}

/*
 * Load the policy for a reload, and its upstream: NULL with *why and
 * err saying what is wrong with it.
 */
static struct rules *
gwctx_reload_load(struct gwctx *c, struct conn_upstream **u,
    const char **why, char *err, size_t errlen)
{
	struct rules	*r;

	*why = "bad policy";
	if ((r = gwopts_load_rules(c->o, err, errlen)) == NULL)
		return (NULL);
	*why = "unguarded file";
	if (c->vet != NULL && c->vet(c->vet_arg, r, err, errlen) == -1)
		goto fail;
	*why = "upstream";
	if (gwctx_upstream_make(r, u, err, errlen) == -1)
		goto fail;
	return (r);
fail:
	rules_free(r);
	return (NULL);
}

/* Reload the policy, keeping the old one on error. */
static void
gwctx_reload(struct gwctx *c)
{
	struct rules		*r;
	struct conn_upstream	*u = NULL;
	const char		*why;
	char			 err[1024];

	if ((r = gwctx_reload_load(c, &u, &why, err, sizeof err)) == NULL) {
		log_warnx("policy not reloaded, the old one stays: %s", err);
		metrics_reload(&c->metrics, 0);
		gwctx_audit(c, "reload", "deny", why, err);
		return;
	}
	gwopts_warn_dead(r);
	/* What may be resolved, and how, may have changed: ask anew. */
	resolver_flush(c->resolver);
	gwctx_set_rules(c, r);
	gwctx_upstream_set(c, u, r);
	gwctx_watch_files(c);
	log_info("policy reloaded");
	metrics_reload(&c->metrics, 1);
	gwctx_audit(c, "reload", "allow", NULL, NULL);
}

/* SIGHUP: reload the policy, reopen the log. */
static void
gwctx_sighup_cb(evutil_socket_t sig, short what, void *arg)
{
	struct gwctx	*c = arg;

	if (c->audit != NULL && audit_reopen(c->audit) == -1)
		log_warnx("cannot reopen the log %s", c->o->audit.log);
	gwctx_reload(c);
}

/* A policy file changed. */
static void
gwctx_policy_cb(void *arg)
{
	gwctx_reload(arg);
}

/* Reload the policy whenever one of its files changes. */
void
gwctx_watch_policy(struct gwctx *c)
{
	const char	*none[] = { NULL };

	if ((c->watch = policywatch_start(c->base, none, gwctx_policy_cb,
	    c)) == NULL) {
		log_warnx("policy files not watched: %s", strerror(errno));
		return;
	}
	gwctx_watch_files(c);
}

/* Let vet refuse a reloaded policy. */
void
gwctx_vet_rules(struct gwctx *c, int (*vet)(void *, const struct rules *,
    char *, size_t), void *arg)
{
	c->vet = vet;
	c->vet_arg = arg;
}

/* Reload the policy and reopen the log on SIGHUP. */
void
gwctx_catch_sighup(struct gwctx *c)
{
	c->sighup = evsignal_new(c->base, SIGHUP, gwctx_sighup_cb, c);
	if (c->sighup == NULL || evsignal_add(c->sighup, NULL) == -1)
		fatalx("cannot catch SIGHUP");
}
