/*
 * pinhole run: run a command in a private network namespace whose only
 * way out is an embedded gateway, living as long as the command.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "cli/gwopts-argv.h"
#include "cli/pinhole.h"
#include "daemon/gwopts.h"
#include "daemon/run-sandbox.h"
#include "lib/log.h"
#include "netns/netns.h"

#define RUN_GRACE	1	/* s open tunnels get once the command ends */

enum {
	OPT_NET = GWOPTS_LAST,
	OPT_NAME
};

/* Read the command line: options up to the command. */
static int
run_options(const struct cmd_entry *cmd, int argc, char **argv,
    struct run_opts *o)
{
	const char	*errstr, *gwopt = NULL;	/* a gateway option given */
	int		 ch, rv = 0;

	gwopts_init(&o->loop.g, RUN_GRACE, GWOPTS_USER_ALWAYS);
	if (netns_net_parse(NETNS_NET_DEFAULT, &o->net, &errstr) != 0)
		fatalx("%s: %s", NETNS_NET_DEFAULT, errstr);
	while (rv == 0 && (ch = cmd_getopt(cmd, argc, argv)) != -1) {
		if (ch == '?')
			return (EXIT_USAGE);
		if (ch == OPT_NET && netns_net_parse(optarg, &o->net,
		    &errstr) != 0)
			return (cmd_usage_error(cmd, "--net %s: %s", optarg,
			    errstr));
		else if (ch == 's')
			o->session = optarg;
		else if (ch == 'q')
			o->quiet = 1;
		else if (ch == OPT_NAME)
			o->name = optarg;
		else if (ch != OPT_NET) {
			gwopt = optarg != NULL && optind >= 2 &&
			    optarg == argv[optind - 1] ? argv[optind - 2] :
			    argv[optind - 1];
			rv = gwopts_option(cmd, &o->loop.g, ch, optarg);
		}
	}
	if (rv != 0)
		return (rv);
	if (o->session == NULL && (o->session = getenv("PINHOLE_SESSION")) !=
	    NULL && o->session[0] == '\0')
		o->session = NULL;
	if (o->session != NULL && gwopt != NULL)
		return (cmd_usage_error(cmd, "%s belongs to the session's "
		    "gateway (pinhole session start); a command attached to "
		    "session %s takes its policy and log", gwopt,
		    o->session));
	if (optind >= argc)
		return (cmd_usage_error(cmd, "no command to run"));
	if (o->loop.g.ask_bare && argv[optind][0] != '\0' &&
	    strspn(argv[optind], "0123456789") == strlen(argv[optind]))
		return (cmd_usage_error(cmd, "--ask takes its time with '=': "
		    "--ask=%s", argv[optind]));
	o->argv = argv + optind;
	return (0);
}
/* Run the command in the sandbox; exit with its status. */
static int
cmd_run_exec(const struct cmd_entry *cmd, int argc, char **argv)
{
	struct run_opts	*o;
	int		 rv;

	if ((o = calloc(1, sizeof *o)) == NULL)
		fatal("calloc");
	if ((rv = run_options(cmd, argc, argv, o)) == 0) {
		log_setverbose(o->loop.g.verbose);
		rv = o->session != NULL ? run_attached(o) :
		    run_standalone(o);
	}
	free(o);
	return (rv);
}

#ifdef HAVE_NFTABLES
#define RUN_CAPTURE_HELP						\
	"connection to any other port is brought to the gateway by one\n" \
	"nftables rule, and decided and logged the same way.  UDP other\n" \
	"than DNS is logged and refused at once (ICMP port unreachable).\n"
#else
#define RUN_CAPTURE_HELP						\
	"connection to any other port is refused at once by the kernel,\n" \
	"without a log line (this pinhole was built without nftables);\n" \
	"so is UDP other than DNS (ICMP port unreachable).\n"
#endif

/* The options of run: its own, then those it shares with proxy. */
static const struct cmd_opt run_opts[] = {
	{ "policy", 'p', CMD_ARG_REQUIRED, "FILE",
	    .help = "policy file (repeatable; default: the user's policy "
	    "file, if any)" },
	{ "session", 's', CMD_ARG_REQUIRED, "SESSION",
	    .help = "attach to the running SESSION: its gateway, policy, "
	    "grants and log (default: $PINHOLE_SESSION)" },
	{ .name = "session-id" },
	{ "name", 0, CMD_ARG_REQUIRED, "TEXT", .key = OPT_NAME,
	    .help = "how the log, pending and watch name the command "
	    "(default: its command line)" },
	{ "quiet", 'q', CMD_ARG_NONE, NULL,
	    .help = "say nothing on stderr of refusals and held connections "
	    "(the audit log has them all)" },
	{ "net", 0, CMD_ARG_REQUIRED, "CIDR", .key = OPT_NET,
	    .help = "the sandbox link's network (default " NETNS_NET_DEFAULT
	    ")" },
	{ "grace", 0, CMD_ARG_REQUIRED, "S", .key = GWOPTS_GRACE,
	    .help = "time open tunnels get once CMD ends (1)" },
	{ .include = gwopts_opts },
	{ .name = NULL }
};

const struct cmd_entry cmd_run_entry = {
	.name = "run",
	.usage = "[--policy FILE]... [--allow RULE]... [--log FILE|-] "
	    "[--resolver ADDR[:PORT]]... [--net CIDR] [--quiet] -- CMD "
	    "[ARG...]",
	.summary = "Run a command whose only network is the gateway",
	.intro =
	    "Run CMD in a private network namespace whose only way out is an\n"
	    "embedded gateway enforcing the policy; HTTP_PROXY, HTTPS_PROXY\n"
	    "and ALL_PROXY point at it, and /etc/resolv.conf names it.  The\n"
	    "gateway lives as long as CMD; pinhole exits with CMD's status.\n"
	    "Options end at CMD (or at \"--\").\n",
	.opts = run_opts,
	.stop = 1,
	.help =
	    "Programs that ignore HTTP_PROXY are captured: a TCP connection\n"
	    "to ports 80, 443 or a port the policy names is decided by the\n"
	    "name behind the address the gateway's DNS gave (checked against\n"
	    "the TLS SNI or HTTP Host it sends, 'fronting' when they differ;\n"
	    "an address that is not one of those needs an IP rule).  A TCP\n"
	    RUN_CAPTURE_HELP
	    "\n"
	    "Each refusal is said in one line on pinhole's stderr (the same\n"
	    "host and reason once every 10 s, its repeats counted), and a\n"
	    "connection held by --ask with the pinhole approve command that\n"
	    "lets it through; --quiet says none of them.\n"
	    "\n"
	    "Signals sent to pinhole are passed on to CMD.  pinhole exits with\n"
	    "CMD's status (128+N if signal N killed it), or 125 when the sandbox\n"
	    "could not be set up and CMD did not run.\n",
	.exec = cmd_run_exec,
};
