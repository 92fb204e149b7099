/*
 * pinhole proxy: the gateway alone, as a default-deny allowlisting HTTP
 * proxy (CONNECT and absolute-form HTTP) and SOCKS5 proxy, with no
 * namespace.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "cli/gwopts.h"
#include "cli/pinhole.h"
#include "cli/proxy.h"
#include "lib/log.h"
#include "lib/sdnotify.h"
#include "proxy/audit/audit.h"
#include "proxy/dns/dns.h"
#include "proxy/dns/fakeip.h"
#include "proxy/gateway.h"
#include "proxy/tls/tls.h"

#define PROXY_LISTEN_DEFAULT	"127.0.0.1:3128"
#define PROXY_GRACE		10

/* What the command line asked for. */
struct proxy_opts {
	struct gwopts		 g;		/* first: shared options */
	const char		*listen[GWOPTS_MAX_ARGS];
	size_t			 nlisten;
	const char		*dns_listen[GWOPTS_MAX_ARGS];
	size_t			 ndns_listen;
	const char		*socks[GWOPTS_MAX_ARGS];
	size_t			 nsocks;
};

/* The running proxy. */
struct proxy {
	struct proxy_opts	*o;
	struct gwctx		 c;
	struct event		*sigterm;
	struct event		*sigint;
	int			 stopping;
};

enum {
	OPT_DNS_LISTEN = GWOPTS_LAST, OPT_SOCKS
};

/* Read the command line. */
static int
proxy_options(const struct cmd_entry *cmd, int argc, char **argv,
    struct proxy_opts *o, const struct proxy_hooks *h)
{
	int	ch, rv = 0;

	gwopts_init(&o->g, PROXY_GRACE, GWOPTS_USER_ALONE);
	while (rv == 0 && (ch = cmd_getopt(cmd, argc, argv)) != -1) {
		if (ch == '?')
			return (EXIT_USAGE);
		if (ch == 'l')
			rv = gwopts_push_addr(cmd, o->listen, &o->nlisten,
			    "--listen", optarg, 0);
		else if (ch == OPT_DNS_LISTEN)
			rv = gwopts_push_addr(cmd, o->dns_listen,
			    &o->ndns_listen, "--dns-listen", optarg, 0);
		else if (ch == OPT_SOCKS)
			rv = gwopts_push_addr(cmd, o->socks, &o->nsocks,
			    "--socks", optarg, 0);
		else if (h->option == NULL ||
		    (rv = h->option(h->arg, cmd, ch, optarg)) == -1)
			rv = gwopts_option(cmd, &o->g, ch, optarg);
	}
	if (rv != 0)
		return (rv);
	if (h->args != NULL)
		rv = h->args(h->arg, cmd, &o->g, argc - optind, argv + optind);
	else if (optind < argc)
		rv = cmd_usage_error(cmd, "unexpected argument '%s'",
		    argv[optind]);
	if (rv != 0)
		return (rv);
	if (o->nlisten == 0 && !h->listen_none)
		o->listen[o->nlisten++] = PROXY_LISTEN_DEFAULT;
	return (0);
}

/* SIGTERM or SIGINT: stop accepting, let tunnels finish, exit. */
static void
proxy_sigterm_cb(evutil_socket_t sig, short what, void *arg)
{
	struct proxy	*p = arg;

	if (p->stopping) {
		event_base_loopexit(p->c.base, NULL);
		return;
	}
	p->stopping = 1;
	log_info("stopping: %zu connections open", gateway_connections(p->c.gw));
	if (sdnotify("STOPPING=1\nSTATUS=stopping: %zu connections open",
	    gateway_connections(p->c.gw)) == -1)
		log_warn("cannot tell the service manager");
	gwctx_stop(&p->c);
}

/* Answer DNS where --dns-listen says. */
static int
proxy_dns(struct proxy *p)
{
	struct proxy_opts	*o = p->o;
	char			 err[1024];
	size_t			 i;

	if (o->ndns_listen == 0)
		return (0);
	if (gwctx_dns(&p->c, err, sizeof err) == -1) {
		log_warnx("dns: %s", err);
		return (-1);
	}
	for (i = 0; i < o->ndns_listen; i++) {
		if (dns_server_listen(p->c.dns, o->dns_listen[i], err,
		    sizeof err) == -1) {
			log_warnx("cannot serve DNS on %s", err);
			return (-1);
		}
		log_info("DNS on %s", o->dns_listen[i]);
	}
	return (0);
}

/* Listen on each of n addresses for clients of one kind. */
static int
proxy_listen(struct proxy *p, const char **addrs, size_t n,
    enum conn_kind kind)
{
	char	err[1024];
	size_t	i;

	for (i = 0; i < n; i++) {
		if (gateway_listen(p->c.gw, addrs[i], kind, err,
		    sizeof err) == -1) {
			log_warnx("cannot listen on %s", err);
			return (-1);
		}
		log_info("%s on %s", kind == CONN_SOCKS ? "SOCKS5" :
		    "listening", addrs[i]);
	}
	return (0);
}

/* Set up the gateway and its listeners. */
static int
proxy_setup(struct proxy *p)
{
	struct proxy_opts	*o = p->o;
	char			 err[1024];

	if (gwctx_setup(&p->c, &o->g) == -1)
		return (-1);
	/* For clients wired by hand: what to trust for inspected hosts. */
	if (p->c.tls != NULL)
		log_warnx("CA certificate: %s", tls_ca_path(p->c.tls));
	gwctx_catch_sighup(&p->c);
	gwctx_watch_policy(&p->c);
	if (proxy_dns(p) == -1 ||
	    proxy_listen(p, o->listen, o->nlisten, CONN_PROXY) == -1 ||
	    proxy_listen(p, o->socks, o->nsocks, CONN_SOCKS) == -1)
		return (-1);
	if (o->nlisten > 0) {
		snprintf(err, sizeof err, "http://%s", o->listen[0]);
		gwctx_agent_url(&p->c, err);
	}
	return (0);
}

/* Catch the signals the proxy answers to. */
static void
proxy_signals(struct proxy *p)
{
	p->sigterm = evsignal_new(p->c.base, SIGTERM, proxy_sigterm_cb, p);
	p->sigint = evsignal_new(p->c.base, SIGINT, proxy_sigterm_cb, p);
	if (p->sigterm == NULL || p->sigint == NULL ||
	    evsignal_add(p->sigterm, NULL) == -1 ||
	    evsignal_add(p->sigint, NULL) == -1)
		fatalx("cannot catch signals");
}

/* Free whatever was set up. */
static void
proxy_teardown(struct proxy *p)
{
	if (p->sigterm != NULL)
		event_free(p->sigterm);
	if (p->sigint != NULL)
		event_free(p->sigint);
	gwctx_teardown(&p->c);
}

/*
 * Tell the service manager, if one started us (systemd's Type=notify),
 * that the gateway serves: its listeners are bound.
 */
static void
proxy_notify_ready(const char *session, const char *listening)
{
	if (sdnotify("READY=1\nSTATUS=session %s: serving%s%s\nMAINPID=%ld",
	    session, listening[0] != '\0' ? " on " : "", listening,
	    (long)getpid()) == -1)
		log_warn("cannot tell the service manager");
}

/* Write the listeners as one line: ADDR:PORT... socks5://ADDR:PORT... */
static void
proxy_listening(const struct proxy_opts *o, char *buf, size_t len)
{
	size_t	i, n = 0;

	buf[0] = '\0';
	for (i = 0; i < o->nlisten && n < len; i++)
		n += snprintf(buf + n, len - n, "%s%s", i ? " " : "",
		    o->listen[i]);
	for (i = 0; i < o->nsocks && n < len; i++)
		n += snprintf(buf + n, len - n, "%ssocks5://%s", n ? " " : "",
		    o->socks[i]);
}

/* Run the gateway from the command line until SIGTERM or SIGINT. */
int
proxy_main(const struct cmd_entry *cmd, int argc, char **argv,
    const struct proxy_hooks *h)
{
	struct proxy_opts	*o;
	struct proxy		 p;
	char			 listening[512];
	int			 rv, prepared = 0;

	if ((o = calloc(1, sizeof *o)) == NULL)
		fatal("calloc");
	memset(&p, 0, sizeof p);
	p.o = o;
	if ((rv = proxy_options(cmd, argc, argv, o, h)) != 0)
		goto out;
	if (h->prepare != NULL && (rv = h->prepare(h->arg)) != 0)
		goto out;
	prepared = 1;
	log_setverbose(o->g.verbose);
	gwopts_fd_limit(&o->g);
	rv = 1;
	if (proxy_setup(&p) == -1)
		goto out;
	proxy_signals(&p);
	proxy_listening(o, listening, sizeof listening);
	if (h->ready != NULL && h->ready(h->arg, &p.c, listening) == -1)
		goto out;
	proxy_notify_ready(o->g.cfg.session, listening);
	gwctx_audit(&p.c, "start", NULL, NULL, listening);
	event_base_dispatch(p.c.base);
	gwctx_budget_end(&p.c);
	gwctx_audit(&p.c, "stop", NULL, NULL, NULL);
	rv = 0;
out:
	if (prepared && h->done != NULL)
		h->done(h->arg, rv);
	proxy_teardown(&p);
	free(o);
	return (rv);
}

/* Say where the proxy listens, how clients use it, how to answer. */
static int
proxy_announce(void *arg, struct gwctx *c, const char *listening)
{
	const char	*session = c->o->cfg.session;
	char		 url[300];
	size_t		 n = strcspn(listening, " ");

	fprintf(stderr, "pinhole proxy: session %s serves on %s\n",
	    session != NULL ? session : "-", listening);
	if (n > 0 && strncmp(listening, "socks5://", 9) != 0) {
		snprintf(url, sizeof url, "http://%.*s", (int)n, listening);
		fprintf(stderr, "pinhole proxy: point clients at it: "
		    "HTTPS_PROXY=%s HTTP_PROXY=%s\n", url, url);
	}
	fprintf(stderr, "pinhole proxy: answer what they ask for with "
	    "`pinhole pending` or `pinhole watch`; SIGTERM or SIGINT stops "
	    "it\n");
	return (0);
}

/* Run the proxy until SIGTERM or SIGINT. */
static int
cmd_proxy_exec(const struct cmd_entry *cmd, int argc, char **argv)
{
	static const struct proxy_hooks	hooks = {
		.ready = proxy_announce
	};

	return (proxy_main(cmd, argc, argv, &hooks));
}

/* The options of proxy but --listen, whose default is proxy's own. */
const struct cmd_opt proxy_served_opts[] = {
	{ "policy", 'p', CMD_ARG_REQUIRED, "FILE",
	    .help = "policy file (repeatable; default: the user's policy "
	    "when no --allow is given)" },
	{ "dns-listen", 0, CMD_ARG_REQUIRED, "ADDR:PORT", .key = OPT_DNS_LISTEN,
	    .help = "answer DNS here, UDP and TCP: allowed names get a fake "
	    "address (a request to it is decided as the name), others "
	    "NXDOMAIN; nothing leaves for them" },
	{ "socks", 0, CMD_ARG_REQUIRED, "ADDR:PORT", .key = OPT_SOCKS,
	    .help = "serve SOCKS5 here too (CONNECT; no authentication, or "
	    "any username and password; repeatable)" },
	{ "grace", 0, CMD_ARG_REQUIRED, "S", .key = GWOPTS_GRACE,
	    .help = "time open tunnels get at exit (10)" },
	{ .include = gwopts_opts },
	{ .name = NULL }
};

/* The options of proxy: its own, then those it shares with run. */
const struct cmd_opt proxy_gateway_opts[] = {
	{ "listen", 'l', CMD_ARG_REQUIRED, "ADDR:PORT",
	    .help = "listen here (default " PROXY_LISTEN_DEFAULT "; "
	    "repeatable)" },
	{ .include = proxy_served_opts },
	{ .name = NULL }
};

const struct cmd_entry cmd_proxy_entry = {
	.name = "proxy",
	.usage = "[--listen ADDR:PORT]... [--policy FILE]... [--allow RULE]... "
	    "[--log FILE|-] [--resolver ADDR[:PORT]]... "
	    "[--dns-listen ADDR:PORT]... [--socks ADDR:PORT]...",
	.summary = "Run a default-deny allowlisting HTTP proxy",
	.intro =
	    "Serve HTTP CONNECT and absolute-form HTTP requests for the hosts\n"
	    "the policy allows; refuse everything else with 403 and a\n"
	    "Pinhole-Error header.  Point HTTPS_PROXY / HTTP_PROXY at it: once\n"
	    "it serves it says where on stderr, with the variables to set.\n"
	    "With --socks, serve SOCKS5 CONNECT too, decided the same way; a\n"
	    "refused SOCKS5 client gets only a reply code (the log says why).\n",
	.opts = proxy_gateway_opts,
	.help =
	    "SIGHUP reloads the policy and reopens the log; SIGTERM and SIGINT\n"
	    "stop accepting and exit once open connections end or the grace\n"
	    "period is over.\n",
	.exec = cmd_proxy_exec,
};
