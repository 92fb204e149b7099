/*
 * A gateway's options (struct gwopts: what pinhole proxy, pinhole run
 * and pinhole session start were asked for; cli/gwopts-argv.h reads
 * them from the command line) and the running gateway they make
 * (struct gwctx): the event loop, resolver, audit log, policy in force
 * and gateway, set up and torn down here.
 */
#ifndef GWOPTS_H
#define GWOPTS_H

#include <stddef.h>
#include <stdint.h>

#include "lib/metrics.h"
#include "proxy/audit/audit.h"
#include "proxy/audit/ship.h"
#include "proxy/gateway.h"

struct event;
struct event_base;
struct audit;
struct audit_budget;
struct control;
struct dns_server;
struct escalate;
struct fakeip;
struct policywatch;
struct resolver;
struct rules;
struct scrape;

#define GWOPTS_MAX_ARGS		64
#define GWCTX_INSPECT_MAX	256	/* names a CA is constrained to */
#define GWCTX_SECRETS_MAX	64	/* secrets of a policy */
#define GWCTX_SECRET_LEN	(64 * 1024)	/* longest secret's value */
#define GWOPTS_SHIP_WAIT	5	/* s to ship what waits, at stop */

/* Where the policy comes from when no --policy is given. */
enum gwopts_userpolicy {
	GWOPTS_USER_ALONE,	/* the user's file, unless --allow is given */
	GWOPTS_USER_ALWAYS	/* the user's file, and --allow on top */
};

/* What the command line asked for. */
struct gwopts {
	const char		*policy[GWOPTS_MAX_ARGS];
	size_t			 npolicy;
	const char		*allow[GWOPTS_MAX_ARGS];
	size_t			 nallow;
	const char		*resolver[GWOPTS_MAX_ARGS + 1];
	size_t			 nresolver;
	struct audit_config	 audit;		/* --log and its options */
	char			 default_log[4096]; /* when no --log */
	const char		*ship[GWOPTS_MAX_ARGS];	/* --log syslog+tls://... */
	size_t			 nship;
	struct ship_config	 shipcfg;	/* --log-spool, --log-tls-* */
	int			 ship_wait;	/* --log-ship-wait, s */
	uint64_t		 budget_lines;	/* --log-budget, a second */
	uint64_t		 budget_bytes;
	char			 spool_dir[4096];	/* the default one */
	const char		*fake_range;	/* --fake-range, or NULL */
	const char		*metrics;	/* --metrics ADDR:PORT, or NULL */
	int			 dns_real;	/* --dns-real */
	int			 dns_refuse;	/* --dns-refuse */
	int			 grace;
	int			 verbose;
	int			 max_clients_set;
	enum gwopts_userpolicy	 userpolicy;
	struct gateway_config	 cfg;
	char			 about[1024];
	int			 ask;		/* --ask[=SECONDS] */
	int			 ask_bare;	/* --ask without =SECONDS */
	const char		*decider;	/* --decider URL, or NULL */
	const char		*decider_ca;	/* --decider-ca FILE */
	const char		*decider_cert;	/* --decider-cert FILE */
	const char		*decider_key;	/* --decider-key FILE */
	int			 decider_max;	/* --decider-max N, 0: default */
	const char		*upstream;	/* --upstream URL, or NULL */
	const char		*upstream_auth;	/* --upstream-auth FILE */
	char			 session[32];	/* a random one */
};

void	gwopts_init(struct gwopts *, int, enum gwopts_userpolicy);

/*
 * Load one --allow value into a policy, as the policy lines it makes
 * (rules_args_lines()).  Returns 0, or -1 with err ("--allow: ...").
 */
int	gwopts_allow_load(struct rules *, const char *, char *, size_t);

/* Build the policy the options name.  NULL with err set on error. */
struct rules *gwopts_load_rules(const struct gwopts *, char *, size_t);

/* Warn of each rule of the policy that cannot take effect; how many. */
size_t	gwopts_warn_dead(const struct rules *);

/*
 * Open the audit log the options name (without --log, the default file,
 * its directory made).  NULL with err set on error.
 */
struct audit *gwopts_open_log(struct gwopts *, char *, size_t);

/*
 * Raise the descriptor limit to fit max_clients, or lower a default
 * max_clients to fit it (an explicit one is only warned of).
 */
void	gwopts_fd_limit(struct gwopts *);

/*
 * What a sandbox must not see of the gateway's files: the private keys
 * the options name (--log-key, --decider-key, --log-tls-key) and the log
 * shipping's spool, whose lines wait for the collector: into v,
 * NULL-ended (v holds GWOPTS_HIDDEN + 1).
 */
#define GWOPTS_HIDDEN	4
void	gwopts_hidden(const struct gwopts *, const char **);

/* A running gateway with its loop, resolver, audit log and policy. */
struct gwctx {
	struct gwopts		*o;
	struct event_base	*base;
	struct gateway		*gw;
	struct resolver		*resolver;
	struct audit		*audit;
	struct audit_budget	*budget;	/* of allowed lines, or NULL */
	struct ship		*ships[GWOPTS_MAX_ARGS];	/* and shipped */
	size_t			 nships;
	struct fakeip		*fakeip;
	struct dns_server	*dns;
	struct event		*sighup;
	struct policywatch	*watch;
	struct event		*ending;	/* reload when a rule ends */
	struct escalate		*esc;		/* requests for hosts */
	struct control		*ctl;		/* where they are answered */
	struct decider		*decider;	/* asked first, or NULL */
	char			 upstream[HOST_TEXT_LEN + 16];	/* "" none */
	struct tls		*tls;		/* inspection, or NULL */
	struct metrics		 metrics;	/* counted by all of the above */
	struct scrape		*scrape;	/* --metrics, or NULL */
	struct conn_secret	 secrets[GWCTX_SECRETS_MAX];	/* values */
	size_t			 nsecrets;
	int			 ask;		/* s to hold a blocked attempt */
	/* May a reloaded policy be put in force?  0, or -1 with err. */
	int			(*vet)(void *, const struct rules *, char *,
				    size_t);
	void			*vet_arg;
};

/*
 * Create the loop, load the policy, open the log, create the resolver
 * and the gateway (no listeners yet).  Returns 0, or -1 after saying why.
 */
int	gwctx_setup(struct gwctx *, struct gwopts *);

/* Reload the policy and reopen the log on SIGHUP. */
void	gwctx_catch_sighup(struct gwctx *);

/* Let vet refuse a reloaded policy (the old one stays in force). */
void	gwctx_vet_rules(struct gwctx *, int (*)(void *, const struct rules *,
	    char *, size_t), void *);

/* Stop accepting; leave the loop once connections end or grace is over. */
void	gwctx_stop(struct gwctx *);

/*
 * Reload the policy whenever one of its files changes (the user's policy
 * file too, even while it does not exist: `pinhole allow` makes it).
 */
void	gwctx_watch_policy(struct gwctx *);

/*
 * Create the DNS server (fake addresses for allowed names, NXDOMAIN for
 * the others) on the same policy, resolver and log; listeners are the
 * caller's to add.  Returns 0, or -1 with err set.
 */
int	gwctx_dns(struct gwctx *, char *, size_t);
void	gwctx_teardown(struct gwctx *);
/* Write what the log budget summed up (before the stop line); no more. */
void	gwctx_budget_end(struct gwctx *);

/*
 * TLS inspection's files for a session: the CA certificate and the trust
 * bundle a sandbox mounts, CONTROLDIR/SESSION.ca.pem and .trust.pem.
 * Returns 0, or -1 when they do not fit or the directory is unusable.
 */
int	gwctx_tls_files(const char *, char *, char *, size_t);

/*
 * Escalation (gwctx_setup does it): the request queue of this session (named by cfg.session,
 * or a random id), deciding by the gateway's policy (gateway_policy()),
 * where `always` writes to the first --policy file or the user's, the
 * control socket in
 * control_dir(); with ask > 0 a blocked connection (or DNS name) is held
 * that long for the person, and with --decider the decider is asked first
 * (ask then defaults to DECIDER_WAIT_DEFAULT).  A control socket that cannot be made is only warned of.
 * Returns 0, or -1 after saying why.
 */
int	gwctx_escalate(struct gwctx *, int);
/* Tell control clients where the agent endpoint is. */
void	gwctx_agent_url(struct gwctx *, const char *);

/*
 * Write a lifecycle line (start, stop, reload) to the audit log; of a
 * sandbox (attach, detach) with gwctx_audit_sandbox().
 */
void	gwctx_audit_sandbox(struct gwctx *, const struct sandbox *,
	    const char *, const char *, const char *, const char *);
void	gwctx_audit(struct gwctx *, const char *, const char *, const char *,
	    const char *);

#endif
