/*
 * pinhole proxy: the gateway alone, as a default-deny allowlisting HTTP
 * proxy (CONNECT and absolute-form HTTP) and SOCKS5 proxy, with no
 * namespace.  Its options read here; its loop is daemon/gwloop.c.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/gwopts-argv.h"
#include "cli/pinhole.h"
#include "cli/proxy.h"
#include "daemon/gwloop.h"
#include "daemon/gwopts.h"
#include "lib/log.h"

#define PROXY_LISTEN_DEFAULT	"127.0.0.1:3128"
#define PROXY_GRACE		10

enum {
	OPT_DNS_LISTEN = GWOPTS_LAST, OPT_SOCKS
};

/* Read the command line. */
static int
proxy_options(const struct cmd_entry *cmd, int argc, char **argv,
    struct gwloop_opts *o, const struct proxy_hooks *h)
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

/* Run the gateway from the command line until SIGTERM or SIGINT. */
int
proxy_main(const struct cmd_entry *cmd, int argc, char **argv,
    const struct proxy_hooks *h)
{
	struct gwloop_opts	*o;
	struct gwloop_hooks	 lh = {
		.prepare = h->prepare, .ready = h->ready, .done = h->done,
		.arg = h->arg
	};
	int			 rv;

	if ((o = calloc(1, sizeof *o)) == NULL)
		fatal("calloc");
	if ((rv = proxy_options(cmd, argc, argv, o, h)) == 0)
		rv = gwloop_run(o, &lh);
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
