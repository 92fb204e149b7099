/*
 * pinhole proxy: the gateway alone, as a default-deny allowlisting HTTP
 * proxy (CONNECT and absolute-form HTTP), with no namespace.
 */
#include "config.h"

#include <sys/resource.h>

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "cli/log.h"
#include "cli/pinhole.h"
#include "proxy/audit.h"
#include "proxy/control.h"
#include "proxy/escalate.h"
#include "proxy/gateway.h"
#include "proxy/http.h"
#include "proxy/resolver.h"
#include "rules/grants.h"
#include "rules/rules.h"

#define PROXY_LISTEN_DEFAULT	"127.0.0.1:3128"
#define PROXY_MAX_ARGS		64
#define PROXY_GRACE		10

/* What the command line asked for. */
struct proxy_opts {
	const char		*listen[PROXY_MAX_ARGS];
	size_t			 nlisten;
	const char		*policy[PROXY_MAX_ARGS];
	size_t			 npolicy;
	const char		*allow[PROXY_MAX_ARGS];
	size_t			 nallow;
	const char		*resolver[PROXY_MAX_ARGS + 1];
	size_t			 nresolver;
	struct audit_config	 audit;
	int			 grace;
	int			 verbose;
	int			 max_clients_set;
	struct gateway_config	 cfg;
	char			 about[1024];
	int			 ask;
	char			 always_path[PATH_MAX];
};

/* The running proxy. */
struct proxy {
	struct proxy_opts	*o;
	struct event_base	*base;
	struct gateway		*gw;
	struct resolver		*resolver;
	struct audit		*audit;
	struct escalate		*esc;
	struct control		*ctl;
	struct grants		*grants;
	struct event		*sighup;
	struct event		*sigterm;
	struct event		*sigint;
	int			 stopping;
};

enum {
	OPT_MAX_CLIENTS = 256, OPT_MAX_HEAD, OPT_MAX_HEADERS,
	OPT_HANDSHAKE_TIMEOUT, OPT_IDLE_TIMEOUT, OPT_CONNECT_TIMEOUT,
	OPT_GRACE, OPT_LOG_KEY, OPT_LOG_MAX_SIZE, OPT_LOG_KEEP, OPT_ASK
};

static const struct option proxy_longopts[] = {
	{ "listen", required_argument, NULL, 'l' },
	{ "policy", required_argument, NULL, 'p' },
	{ "allow", required_argument, NULL, 'a' },
	{ "log", required_argument, NULL, 'L' },
	{ "resolver", required_argument, NULL, 'r' },
	{ "log-key", required_argument, NULL, OPT_LOG_KEY },
	{ "log-max-size", required_argument, NULL, OPT_LOG_MAX_SIZE },
	{ "log-keep", required_argument, NULL, OPT_LOG_KEEP },
	{ "max-clients", required_argument, NULL, OPT_MAX_CLIENTS },
	{ "max-head", required_argument, NULL, OPT_MAX_HEAD },
	{ "max-headers", required_argument, NULL, OPT_MAX_HEADERS },
	{ "handshake-timeout", required_argument, NULL, OPT_HANDSHAKE_TIMEOUT },
	{ "idle-timeout", required_argument, NULL, OPT_IDLE_TIMEOUT },
	{ "connect-timeout", required_argument, NULL, OPT_CONNECT_TIMEOUT },
	{ "grace", required_argument, NULL, OPT_GRACE },
	{ "ask", required_argument, NULL, OPT_ASK },
	{ "verbose", no_argument, NULL, 'v' },
	{ NULL, 0, NULL, 0 }
};

/* Add one value of a repeatable option. */
static int
proxy_push(const struct cmd_entry *cmd, const char **list, size_t *n,
    const char *opt, const char *value)
{
	if (*n == PROXY_MAX_ARGS)
		return (cmd_usage_error(cmd, "too many %s options", opt));
	list[(*n)++] = value;
	return (0);
}

/* Parse a number option within [min, max]. */
static int
proxy_number(const struct cmd_entry *cmd, const char *opt, const char *s,
    long long min, long long max, long long *v)
{
	char	*end;

	errno = 0;
	*v = strtoll(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || *v < min || *v > max)
		return (cmd_usage_error(cmd, "%s: '%s' is not a number from "
		    "%lld to %lld", opt, s, min, max));
	return (0);
}

/* Handle one of the limit options. */
static int
proxy_limit(const struct cmd_entry *cmd, struct proxy_opts *o, int ch,
    const char *arg)
{
	struct gateway_config	*c = &o->cfg;
	long long		 v;

	switch (ch) {
	case OPT_MAX_CLIENTS:
		if (proxy_number(cmd, "--max-clients", arg, 1, 1000000, &v))
			return (EXIT_USAGE);
		c->max_clients = v;
		o->max_clients_set = 1;
		break;
	case OPT_MAX_HEAD:
		if (proxy_number(cmd, "--max-head", arg, 256, 1048576, &v))
			return (EXIT_USAGE);
		c->max_head = v;
		break;
	case OPT_MAX_HEADERS:
		if (proxy_number(cmd, "--max-headers", arg, 1,
		    HTTP_HEADERS_MAX, &v))
			return (EXIT_USAGE);
		c->max_headers = v;
		break;
	case OPT_ASK:
		if (proxy_number(cmd, "--ask", arg, 1, ESCALATE_WAIT_MAX, &v))
			return (EXIT_USAGE);
		o->ask = v;
		break;
	case OPT_HANDSHAKE_TIMEOUT:
	case OPT_IDLE_TIMEOUT:
	case OPT_CONNECT_TIMEOUT:
	case OPT_GRACE:
		if (proxy_number(cmd, "timeout", arg, 1, 86400, &v))
			return (EXIT_USAGE);
		if (ch == OPT_HANDSHAKE_TIMEOUT)
			c->handshake_timeout = v;
		else if (ch == OPT_IDLE_TIMEOUT)
			c->idle_timeout = v;
		else if (ch == OPT_CONNECT_TIMEOUT)
			c->connect_timeout = v;
		else
			o->grace = v;
		break;
	}
	return (0);
}

/* Handle one of the audit log options. */
static int
proxy_log_option(const struct cmd_entry *cmd, struct proxy_opts *o, int ch,
    const char *arg)
{
	long long	v;

	switch (ch) {
	case 'L':
		o->audit.log = arg;
		break;
	case OPT_LOG_KEY:
		o->audit.keyfile = arg;
		break;
	case OPT_LOG_MAX_SIZE:
		if (audit_parse_size(arg, &o->audit.max_size) == -1)
			return (cmd_usage_error(cmd, "--log-max-size: '%s' is "
			    "not a size (such as 100M, or 0)", arg));
		break;
	case OPT_LOG_KEEP:
		if (proxy_number(cmd, "--log-keep", arg, 1, 1000, &v))
			return (EXIT_USAGE);
		o->audit.keep = v;
		break;
	}
	return (0);
}

/* Read the command line. */
static int
proxy_options(const struct cmd_entry *cmd, int argc, char **argv,
    struct proxy_opts *o)
{
	int	ch, rv = 0;

	gateway_config_defaults(&o->cfg);
	audit_config_init(&o->audit);
	o->grace = PROXY_GRACE;
	while (rv == 0 && (ch = cmd_getopt(cmd, argc, argv, "l:p:a:L:r:v",
	    proxy_longopts)) != -1) {
		switch (ch) {
		case 'l':
			rv = proxy_push(cmd, o->listen, &o->nlisten,
			    "--listen", optarg);
			break;
		case 'p':
			rv = proxy_push(cmd, o->policy, &o->npolicy,
			    "--policy", optarg);
			break;
		case 'a':
			rv = proxy_push(cmd, o->allow, &o->nallow, "--allow",
			    optarg);
			break;
		case 'r':
			rv = proxy_push(cmd, o->resolver, &o->nresolver,
			    "--resolver", optarg);
			break;
		case 'L':
		case OPT_LOG_KEY:
		case OPT_LOG_MAX_SIZE:
		case OPT_LOG_KEEP:
			rv = proxy_log_option(cmd, o, ch, optarg);
			break;
		case 'v':
			o->verbose++;
			break;
		case '?':
			return (EXIT_USAGE);
		default:
			rv = proxy_limit(cmd, o, ch, optarg);
			break;
		}
	}
	if (rv != 0)
		return (rv);
	if (optind < argc)
		return (cmd_usage_error(cmd, "unexpected argument '%s'",
		    argv[optind]));
	if (o->nlisten == 0)
		o->listen[o->nlisten++] = PROXY_LISTEN_DEFAULT;
	return (0);
}

/* One --allow value as a policy line: "HOST[:PORTS]" or a whole rule. */
static void
proxy_allow_line(const char *arg, char *buf, size_t len)
{
	static const char	*kw[] = { "allow ", "deny ", "allow-private ",
	    NULL };
	const char		**k;

	for (k = kw; *k != NULL; k++) {
		if (strncmp(arg, *k, strlen(*k)) == 0) {
			snprintf(buf, len, "%s", arg);
			return;
		}
	}
	snprintf(buf, len, "allow %s", arg);
}

/* Build the policy from the files and rules given (or the user's file). */
static struct rules *
proxy_load_rules(struct proxy_opts *o, char *err, size_t errlen)
{
	struct rules	*r;
	char		 line[1024], path[PATH_MAX];
	size_t		 i;

	if ((r = rules_create()) == NULL) {
		snprintf(err, errlen, "out of memory");
		return (NULL);
	}
	if (o->npolicy == 0 && o->nallow == 0 &&
	    rules_default_path(path, sizeof path) == 0 &&
	    access(path, R_OK) == 0 &&
	    rules_load_file(r, path, err, errlen) == -1)
		goto fail;
	for (i = 0; i < o->npolicy; i++) {
		if (rules_load_file(r, o->policy[i], err, errlen) == -1)
			goto fail;
	}
	for (i = 0; i < o->nallow; i++) {
		proxy_allow_line(o->allow[i], line, sizeof line);
		if (rules_load_text(r, "--allow", line, strlen(line), err,
		    errlen) == -1)
			goto fail;
	}
	return (r);
fail:
	rules_free(r);
	return (NULL);
}

/* Describe the policy's sources for the proxy's own page. */
static void
proxy_about(struct proxy_opts *o)
{
	size_t	i, n = 0;

	o->about[0] = '\0';
	for (i = 0; i < o->npolicy && n < sizeof o->about; i++)
		n += snprintf(o->about + n, sizeof o->about - n, "%s%s",
		    n ? ", " : "the rules in ", o->policy[i]);
	for (i = 0; i < o->nallow && n < sizeof o->about; i++)
		n += snprintf(o->about + n, sizeof o->about - n, "%s%s",
		    n ? ", " : "", o->allow[i]);
	if (n == 0)
		snprintf(o->about, sizeof o->about, "the user's policy file, "
		    "if any; nothing else");
	o->cfg.about = o->about;
}

/* Write a lifecycle line to the audit log. */
static void
proxy_audit(struct proxy *p, const char *event, const char *verdict,
    const char *reason, const char *detail)
{
	struct audit_event	e;

	if (p->audit == NULL)
		return;
	audit_event_init(&e);
	e.event = event;
	e.verdict = verdict;
	e.reason = reason;
	e.detail = detail;
	audit_write(p->audit, &e);
}

/* SIGHUP: reload the policy (keeping the old one on error), reopen the log. */
static void
proxy_sighup_cb(evutil_socket_t sig, short what, void *arg)
{
	struct proxy	*p = arg;
	struct rules	*r;
	char		 err[1024];

	if (p->audit != NULL && audit_reopen(p->audit) == -1)
		log_warnx("cannot reopen the log %s", p->o->audit.log);
	if ((r = proxy_load_rules(p->o, err, sizeof err)) == NULL) {
		log_warnx("policy not reloaded, the old one stays: %s", err);
		proxy_audit(p, "reload", "deny", "bad policy", err);
		return;
	}
	gateway_set_rules(p->gw, r);
	log_info("policy reloaded");
	proxy_audit(p, "reload", "allow", NULL, NULL);
}

/* The gateway has let its connections go. */
static void
proxy_stopped(void *arg)
{
	struct proxy	*p = arg;

	event_base_loopexit(p->base, NULL);
}

/* SIGTERM or SIGINT: stop accepting, let tunnels finish, exit. */
static void
proxy_sigterm_cb(evutil_socket_t sig, short what, void *arg)
{
	struct proxy	*p = arg;

	if (p->stopping) {
		event_base_loopexit(p->base, NULL);
		return;
	}
	p->stopping = 1;
	log_info("stopping: %zu connections open", gateway_sessions(p->gw));
	gateway_stop(p->gw, p->o->grace, proxy_stopped, p);
}

/*
 * Allow as many descriptors as the hard limit lets, and fit the default
 * connection limit to them (an explicit --max-clients is only warned of:
 * accepting then pauses whenever descriptors run out).
 */
static void
proxy_fd_limit(struct proxy_opts *o)
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

/*
 * Escalation: the request queue (its session id names the audit
 * session), grants on top of the policy, the control socket.  Without a
 * control socket the proxy still runs; requests then wait unanswered.
 */
static int
proxy_escalation(struct proxy *p)
{
	struct proxy_opts	*o = p->o;
	char			 err[1024];

	if ((p->esc = escalate_create(p->base, NULL, p->audit)) == NULL ||
	    (p->grants = grants_create()) == NULL) {
		log_warnx("escalation: out of memory");
		return (-1);
	}
	if (o->cfg.session == NULL)
		o->cfg.session = escalate_session(p->esc);
	if ((p->ctl = control_open(p->base, p->esc, err, sizeof err)) == NULL)
		log_warnx("no control socket, requests cannot be answered: "
		    "%s", err);
	else
		log_info("control socket %s", control_path(p->ctl));
	if (o->npolicy > 0)
		snprintf(o->always_path, sizeof o->always_path, "%s",
		    o->policy[0]);
	else if (o->nallow == 0 &&
	    rules_default_path(o->always_path, sizeof o->always_path) == -1)
		o->always_path[0] = '\0';
	return (0);
}

/* Set up the event base, resolver, log, policy and listeners. */
static int
proxy_setup(struct proxy *p)
{
	struct proxy_opts	*o = p->o;
	struct rules		*r;
	char			 err[1024];
	size_t			 i;

	if ((p->base = event_base_new()) == NULL)
		fatalx("cannot create the event loop");
	if ((r = proxy_load_rules(o, err, sizeof err)) == NULL) {
		log_warnx("%s", err);
		return (-1);
	}
	if (o->audit.log != NULL && (p->audit = audit_open_config(&o->audit,
	    err, sizeof err)) == NULL) {
		log_warnx("%s", err);
		rules_free(r);
		return (-1);
	}
	if ((p->resolver = resolver_create(p->base, o->nresolver ?
	    o->resolver : NULL, err, sizeof err)) == NULL) {
		log_warnx("resolver: %s", err);
		rules_free(r);
		return (-1);
	}
	proxy_about(o);
	if (proxy_escalation(p) == -1) {
		rules_free(r);
		return (-1);
	}
	if ((p->gw = gateway_create(p->base, &o->cfg, p->resolver,
	    p->audit)) == NULL)
		fatalx("cannot create the gateway");
	gateway_set_rules(p->gw, r);
	gateway_set_escalate(p->gw, p->esc, p->grants, o->always_path[0] !=
	    '\0' ? o->always_path : NULL, o->ask);
	for (i = 0; i < o->nlisten; i++) {
		if (gateway_listen(p->gw, o->listen[i], err, sizeof err) == -1) {
			log_warnx("cannot listen on %s", err);
			return (-1);
		}
		log_info("listening on %s", o->listen[i]);
	}
	if (p->ctl != NULL) {
		snprintf(err, sizeof err, "http://%s", o->listen[0]);
		control_set_agent(p->ctl, err);
	}
	return (0);
}

/* Catch the signals the proxy answers to. */
static void
proxy_signals(struct proxy *p)
{
	signal(SIGPIPE, SIG_IGN);
	p->sighup = evsignal_new(p->base, SIGHUP, proxy_sighup_cb, p);
	p->sigterm = evsignal_new(p->base, SIGTERM, proxy_sigterm_cb, p);
	p->sigint = evsignal_new(p->base, SIGINT, proxy_sigterm_cb, p);
	if (p->sighup == NULL || p->sigterm == NULL || p->sigint == NULL ||
	    evsignal_add(p->sighup, NULL) == -1 ||
	    evsignal_add(p->sigterm, NULL) == -1 ||
	    evsignal_add(p->sigint, NULL) == -1)
		fatalx("cannot catch signals");
}

/* Free whatever was set up. */
static void
proxy_teardown(struct proxy *p)
{
	if (p->sighup != NULL)
		event_free(p->sighup);
	if (p->sigterm != NULL)
		event_free(p->sigterm);
	if (p->sigint != NULL)
		event_free(p->sigint);
	gateway_free(p->gw);
	control_close(p->ctl);
	escalate_free(p->esc);
	grants_free(p->grants);
	if (p->resolver != NULL)
		resolver_free(p->resolver);
	if (p->audit != NULL)
		audit_close(p->audit);
	if (p->base != NULL)
		event_base_free(p->base);
}

/* Run the proxy until SIGTERM or SIGINT. */
static int
cmd_proxy_exec(const struct cmd_entry *cmd, int argc, char **argv)
{
	struct proxy_opts	*o;
	struct proxy		 p;
	char			 listening[512];
	size_t			 i, n = 0;
	int			 rv;

	if ((o = calloc(1, sizeof *o)) == NULL)
		fatal("calloc");
	memset(&p, 0, sizeof p);
	p.o = o;
	if ((rv = proxy_options(cmd, argc, argv, o)) != 0)
		goto out;
	log_setverbose(o->verbose);
	proxy_fd_limit(o);
	rv = 1;
	if (proxy_setup(&p) == -1)
		goto out;
	proxy_signals(&p);
	listening[0] = '\0';
	for (i = 0; i < o->nlisten && n < sizeof listening; i++)
		n += snprintf(listening + n, sizeof listening - n, "%s%s",
		    i ? " " : "", o->listen[i]);
	proxy_audit(&p, "start", NULL, NULL, listening);
	event_base_dispatch(p.base);
	proxy_audit(&p, "stop", NULL, NULL, NULL);
	rv = 0;
out:
	proxy_teardown(&p);
	free(o);
	return (rv);
}

const struct cmd_entry cmd_proxy_entry = {
	.name = "proxy",
	.usage = "[--listen ADDR:PORT]... [--policy FILE]... [--allow RULE]... "
	    "[--log FILE|-|syslog|journald] [--resolver ADDR[:PORT]]...",
	.summary = "Run a default-deny allowlisting HTTP proxy",
	.help =
	    "Serve HTTP CONNECT and absolute-form HTTP requests for the hosts\n"
	    "the policy allows; refuse everything else with 403 and a\n"
	    "Pinhole-Error header.  Point HTTPS_PROXY / HTTP_PROXY at it.\n"
	    "\n"
	    "  -l, --listen ADDR:PORT    listen here (default "
	    PROXY_LISTEN_DEFAULT "; repeatable)\n"
	    "  -p, --policy FILE         policy file (repeatable; default: the\n"
	    "                            user's policy when no --allow is given)\n"
	    "  -a, --allow RULE          one more rule: HOST[:PORTS], or a whole\n"
	    "                            line such as 'allow-private 10.0.0.0/8'\n"
	    "  -L, --log WHERE           audit log, JSON lines: FILE, '-' (stdout),\n"
	    "                            syslog or journald\n"
	    "      --log-key FILE        chain the log with an HMAC keyed by FILE\n"
	    "      --log-max-size SIZE   rotate the file past SIZE (100M; 0 never)\n"
	    "      --log-keep N          rotated files kept (5)\n"
	    "  -r, --resolver ADDR[:PORT] DNS server instead of /etc/resolv.conf\n"
	    "      --max-clients N       concurrent connections (512)\n"
	    "      --max-head BYTES      request-head size (16384)\n"
	    "      --max-headers N       header lines in a request (100)\n"
	    "      --handshake-timeout S time to send a request head (10)\n"
	    "      --idle-timeout S      time without traffic (300)\n"
	    "      --connect-timeout S   time to connect to one address (10)\n"
	    "      --grace S             time open tunnels get at exit (10)\n"
	    "      --ask S               hold a blocked connection up to S\n"
	    "                            seconds while the person decides\n"
	    "  -v, --verbose             say more on stderr (twice: debug)\n"
	    "\n"
	    "SIGHUP reloads the policy and reopens the log; SIGTERM and SIGINT\n"
	    "stop accepting and exit once open connections end or the grace\n"
	    "period is over.\n"
	    "\n"
	    "Programs may ask for a host through the agent endpoint on the\n"
	    "proxy's own address (pinhole request, or POST /pinhole/request);\n"
	    "answer with pinhole pending, approve, deny or watch, which reach\n"
	    "the proxy's control socket (docs/control-protocol.md).\n",
	.exec = cmd_proxy_exec,
};
