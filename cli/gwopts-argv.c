/*
 * The options every command that runs a gateway takes (pinhole proxy,
 * pinhole run, pinhole session start; doctor takes some): their table
 * for cmd_getopt() and --help, and each value read into struct gwopts,
 * a bad one a usage error.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/gwopts-argv.h"
#include "cli/pinhole.h"
#include "daemon/gwopts.h"
#include "lib/log.h"
#include "proxy/audit/audit.h"
#include "proxy/audit/budget.h"
#include "proxy/audit/ship.h"
#include "proxy/dns/fakeip.h"
#include "proxy/escalate/decider.h"
#include "proxy/escalate/escalate.h"
#include "proxy/wire/decidermsg.h"
#include "proxy/wire/http.h"
#include "rules/rules.h"

/*
 * Where the rules, the log and the answers come from: options run and
 * proxy share, and doctor, which checks what they name.
 */
const struct cmd_opt gwopts_where_opts[] = {
	{ "allow", 'a', CMD_ARG_REQUIRED, "RULE",
	    .help = "one more rule, as `pinhole allow` takes it: HOST[:PORTS] "
	    "[constraints], or any line of a policy, such as "
	    "'allow-private 10.0.0.0/8' or 'include preset:python' "
	    "(repeatable)" },
	{ "log", 'L', CMD_ARG_REQUIRED, "FILE|-|URL",
	    .help = "audit log, JSON lines ('-': stdout; also syslog, "
	    "journald; default ~/.local/state/pinhole/audit.log); "
	    "syslog+tcp://HOST:PORT, syslog+tls://HOST:PORT, "
	    "syslog+relp[+tls]://HOST:PORT or otlp+http[s]://HOST:PORT "
	    "ships it as well (repeatable)" },
	{ "log-key", 0, CMD_ARG_REQUIRED, "FILE", .key = GWOPTS_LOG_KEY,
	    .help = "HMAC key for the log's chain" },
	{ "resolver", 'r', CMD_ARG_REQUIRED, "ADDR[:PORT]",
	    .help = "DNS server instead of /etc/resolv.conf (repeatable)" },
	{ "upstream", 0, CMD_ARG_REQUIRED, "URL", .key = GWOPTS_UPSTREAM,
	    .help = "go through this proxy, http://HOST:PORT, which resolves "
	    "the names ('none': dial directly; the policy's upstream line "
	    "otherwise)" },
	{ "upstream-auth", 0, CMD_ARG_REQUIRED, "FILE",
	    .key = GWOPTS_UPSTREAM_AUTH,
	    .help = "the upstream's Basic credentials, USER:PASSWORD on the "
	    "first line (read at start, hidden from the sandbox)" },
	{ .name = NULL }
};

/* The options run and proxy share, for cmd_getopt() and --help. */
const struct cmd_opt gwopts_opts[] = {
	{ .include = gwopts_where_opts },
	{ "log-max-size", 0, CMD_ARG_REQUIRED, "SIZE",
	    .key = GWOPTS_LOG_MAX_SIZE,
	    .help = "rotate past SIZE (100M; 0: never)" },
	{ "log-keep", 0, CMD_ARG_REQUIRED, "N", .key = GWOPTS_LOG_KEEP,
	    .help = "rotated files kept (5)" },
	{ "log-budget", 0, CMD_ARG_REQUIRED, "LINES,SIZE",
	    .key = GWOPTS_LOG_BUDGET,
	    .help = "allowed traffic lines a sandbox may log a second, and "
	    "their bytes (100,128K; bursts of 10 s); past it they are summed "
	    "up, refusals never; 0: no budget" },
	{ "log-fail", 0, CMD_ARG_REQUIRED, "closed|open",
	    .key = GWOPTS_LOG_FAIL,
	    .help = "while the log cannot be written: refuse new "
	    "connections (closed, the default) or let traffic go on "
	    "unlogged (open); lost lines are counted either way" },
	{ "log-fsync", 0, CMD_ARG_REQUIRED, "never|batch|always",
	    .key = GWOPTS_LOG_FSYNC,
	    .help = "fdatasync the log never (the default), after each "
	    "write of the lines one pass of the event loop made, or after "
	    "every line, each written on its own" },
	{ "log-spool", 0, CMD_ARG_REQUIRED, "DIR", .key = GWOPTS_LOG_SPOOL,
	    .help = "where lines wait until a collector has them (spool/ "
	    "next to the log)" },
	{ "log-spool-max", 0, CMD_ARG_REQUIRED, "SIZE",
	    .key = GWOPTS_LOG_SPOOL_MAX,
	    .help = "bytes waiting per destination (64M)" },
	{ "log-ship-wait", 0, CMD_ARG_REQUIRED, "S",
	    .key = GWOPTS_LOG_SHIP_WAIT,
	    .help = "at stop, time to send what waits to each destination, "
	    "connecting if need be (5); then what is left is said" },
	{ "log-tls-ca", 0, CMD_ARG_REQUIRED, "FILE", .key = GWOPTS_LOG_TLS_CA,
	    .help = "CA certificates that verify a TLS collector "
	    "(the system's)" },
	{ "log-tls-cert", 0, CMD_ARG_REQUIRED, "FILE",
	    .key = GWOPTS_LOG_TLS_CERT,
	    .help = "client certificate shown to a TLS collector" },
	{ "log-tls-key", 0, CMD_ARG_REQUIRED, "FILE",
	    .key = GWOPTS_LOG_TLS_KEY,
	    .help = "its private key" },
	{ "ask", 0, CMD_ARG_OPTIONAL, "S", .key = GWOPTS_ASK,
	    .help = "hold a blocked connection up to S seconds while the "
	    "person decides (default 60)" },
	{ "decider", 0, CMD_ARG_REQUIRED, "URL", .key = GWOPTS_DECIDER,
	    .help = "ask a program first about each blocked attempt: "
	    "http://ADDR:PORT/PATH, https://HOST:PORT/PATH or unix:/PATH "
	    "(waits --ask S, default 30; no answer denies)" },
	{ "decider-ca", 0, CMD_ARG_REQUIRED, "FILE", .key = GWOPTS_DECIDER_CA,
	    .help = "CA certificates that verify an https decider "
	    "(the system's)" },
	{ "decider-cert", 0, CMD_ARG_REQUIRED, "FILE",
	    .key = GWOPTS_DECIDER_CERT,
	    .help = "client certificate shown to an https decider" },
	{ "decider-key", 0, CMD_ARG_REQUIRED, "FILE",
	    .key = GWOPTS_DECIDER_KEY,
	    .help = "its private key" },
	{ "decider-max", 0, CMD_ARG_REQUIRED, "N", .key = GWOPTS_DECIDER_MAX,
	    .help = "questions out to the decider at once (16); the others "
	    "wait their turn" },
	{ "dns-real", 0, CMD_ARG_NONE, NULL, .key = GWOPTS_DNS_REAL,
	    .help = "DNS answers A/AAAA with real addresses" },
	{ "dns-refuse", 0, CMD_ARG_NONE, NULL, .key = GWOPTS_DNS_REFUSE,
	    .help = "DNS answers REFUSED instead of NXDOMAIN" },
	{ "fake-range", 0, CMD_ARG_REQUIRED, "CIDR", .key = GWOPTS_FAKE_RANGE,
	    .help = "fake addresses (" FAKEIP_DEFAULT ")" },
	{ "max-clients", 0, CMD_ARG_REQUIRED, "N", .key = GWOPTS_MAX_CLIENTS,
	    .help = "concurrent connections (512)" },
	{ "max-head", 0, CMD_ARG_REQUIRED, "BYTES", .key = GWOPTS_MAX_HEAD,
	    .help = "request-head size (16384)" },
	{ "max-headers", 0, CMD_ARG_REQUIRED, "N", .key = GWOPTS_MAX_HEADERS,
	    .help = "header lines in a request (100)" },
	{ "handshake-timeout", 0, CMD_ARG_REQUIRED, "S",
	    .key = GWOPTS_HANDSHAKE_TIMEOUT,
	    .help = "time to send a request head (10)" },
	{ "idle-timeout", 0, CMD_ARG_REQUIRED, "S", .key = GWOPTS_IDLE_TIMEOUT,
	    .help = "time without traffic (300)" },
	{ "connect-timeout", 0, CMD_ARG_REQUIRED, "S",
	    .key = GWOPTS_CONNECT_TIMEOUT,
	    .help = "time to connect to one address (10)" },
	{ "metrics", 0, CMD_ARG_REQUIRED, "ADDR:PORT", .key = GWOPTS_METRICS,
	    .help = "serve Prometheus metrics on http://ADDR:PORT/metrics" },
	{ "verbose", 'v', CMD_ARG_NONE, NULL,
	    .help = "say more on stderr (twice: debug)" },
	{ .name = NULL }
};

/* Add one value of a repeatable option. */
int
gwopts_push(const struct cmd_entry *cmd, const char **list, size_t *n,
    const char *opt, const char *value)
{
	if (*n == GWOPTS_MAX_ARGS)
		return (cmd_usage_error(cmd, "too many %s options", opt));
	list[(*n)++] = value;
	return (0);
}

/* Add one socket address, "ADDR:PORT" (ADDR alone too with defport). */
int
gwopts_push_addr(const struct cmd_entry *cmd, const char **list, size_t *n,
    const char *opt, const char *value, uint16_t defport)
{
	struct host	 h;
	uint16_t	 port;
	const char	*errstr;

	if (addr_port_parse(value, &h, &port, defport, &errstr) == -1)
		return (cmd_usage_error(cmd, "%s '%s': %s", opt, value,
		    errstr));
	return (gwopts_push(cmd, list, n, opt, value));
}

/* Parse a number option within [min, max]. */
int
gwopts_number(const struct cmd_entry *cmd, const char *opt, const char *s,
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

/* Handle one of the limit and log options. */
static int
gwopts_limit(const struct cmd_entry *cmd, struct gwopts *o, int ch,
    const char *arg)
{
	struct gateway_config	*c = &o->cfg;
	long long		 v, ll;

	switch (ch) {
	case GWOPTS_LOG_KEY:
		o->audit.keyfile = arg;
		break;
	case GWOPTS_ASK:
		if (arg == NULL)
			v = ESCALATE_ASK_DEFAULT;
		else if (gwopts_number(cmd, "--ask", arg, 1, ESCALATE_WAIT_MAX,
		    &v))
			return (EXIT_USAGE);
		o->ask = v;
		o->ask_bare = arg == NULL;
		break;
	case GWOPTS_LOG_MAX_SIZE:
		if (audit_parse_size(arg, &o->audit.max_size) == -1)
			return (cmd_usage_error(cmd, "--log-max-size: '%s' is "
			    "not a size (such as 100M, or 0)", arg));
		break;
	case GWOPTS_LOG_KEEP:
		if (gwopts_number(cmd, "--log-keep", arg, 1, 1000, &v))
			return (EXIT_USAGE);
		o->audit.keep = v;
		break;
	case GWOPTS_LOG_SPOOL_MAX:
		if (audit_parse_size(arg, &ll) == -1 || ll < 4096)
			return (cmd_usage_error(cmd, "--log-spool-max: '%s' is "
			    "not a size of 4K or more (such as 64M)", arg));
		o->shipcfg.spool_max = ll;
		break;
	case GWOPTS_LOG_BUDGET:
		if (audit_budget_parse(arg, &o->budget_lines,
		    &o->budget_bytes) == -1)
			return (cmd_usage_error(cmd, "--log-budget: '%s' is not "
			    "LINES,SIZE (such as 100,128K: 1 to 1000000 lines, "
			    "1K to 1G bytes) or 0", arg));
		break;
	case GWOPTS_LOG_SHIP_WAIT:
		if (gwopts_number(cmd, "--log-ship-wait", arg, 0, 3600, &v))
			return (EXIT_USAGE);
		o->ship_wait = v;
		break;
	case GWOPTS_LOG_FAIL:
		if (strcmp(arg, "closed") != 0 && strcmp(arg, "open") != 0)
			return (cmd_usage_error(cmd, "--log-fail: '%s' is not "
			    "closed or open", arg));
		o->audit.fail_open = strcmp(arg, "open") == 0;
		break;
	case GWOPTS_LOG_FSYNC:
		if ((v = audit_parse_fsync(arg)) == -1)
			return (cmd_usage_error(cmd, "--log-fsync: '%s' is not "
			    "never, batch or always", arg));
		o->audit.fsync = v;
		break;
	case GWOPTS_MAX_CLIENTS:
		if (gwopts_number(cmd, "--max-clients", arg, 1, 1000000, &v))
			return (EXIT_USAGE);
		c->max_clients = v;
		o->max_clients_set = 1;
		break;
	case GWOPTS_MAX_HEAD:
		if (gwopts_number(cmd, "--max-head", arg, 256, 1048576, &v))
			return (EXIT_USAGE);
		c->max_head = v;
		break;
	case GWOPTS_MAX_HEADERS:
		if (gwopts_number(cmd, "--max-headers", arg, 1,
		    HTTP_HEADERS_MAX, &v))
			return (EXIT_USAGE);
		c->max_headers = v;
		break;
	default:
		if (gwopts_number(cmd, "timeout", arg, 1, 86400, &v))
			return (EXIT_USAGE);
		if (ch == GWOPTS_HANDSHAKE_TIMEOUT)
			c->handshake_timeout = v;
		else if (ch == GWOPTS_IDLE_TIMEOUT)
			c->idle_timeout = v;
		else if (ch == GWOPTS_CONNECT_TIMEOUT)
			c->connect_timeout = v;
		else
			o->grace = v;
		break;
	}
	return (0);
}

/* --metrics ADDR:PORT: where the metrics are served. */
static int
gwopts_metrics(const struct cmd_entry *cmd, struct gwopts *o,
    const char *arg)
{
	struct host	 h;
	uint16_t	 port;
	const char	*errstr;

	if (addr_port_parse(arg, &h, &port, 0, &errstr) == -1)
		return (cmd_usage_error(cmd, "--metrics '%s': %s", arg,
		    errstr));
	o->metrics = arg;
	return (0);
}

/*
 * One --log: the local log (one at most), or a destination to ship it
 * to as well (any number).
 */
static int
gwopts_log(const struct cmd_entry *cmd, struct gwopts *o, const char *arg)
{
	if (ship_is_dest(arg))
		return (gwopts_push(cmd, o->ship, &o->nship, "--log", arg));
	if (strstr(arg, "://") != NULL && strncmp(arg, "syslog+", 7) == 0)
		return (cmd_usage_error(cmd, "--log '%s': ship to "
		    "syslog+tcp://HOST:PORT, syslog+tls://HOST:PORT, "
		    "syslog+relp://HOST:PORT or syslog+relp+tls://HOST:PORT",
		    arg));
	if (o->audit.log != NULL)
		return (cmd_usage_error(cmd, "--log '%s': the log is already "
		    "'%s'; give one file, '-', syslog or journald (more --log "
		    "only to ship it: syslog+tls://HOST:PORT)", arg,
		    o->audit.log));
	o->audit.log = arg;
	return (0);
}

/* --decider URL: checked now, connected to for each question. */
static int
gwopts_decider(const struct cmd_entry *cmd, struct gwopts *o,
    const char *arg)
{
	struct decider_url	 u;
	const char		*errstr;

	if (decider_url_parse(arg, &u, &errstr) == -1)
		return (cmd_usage_error(cmd, "--decider '%s': %s", arg,
		    errstr));
	o->decider = arg;
	return (0);
}

/* --allow RULE: refused now, with exit 2, when it does not load. */
static int
gwopts_allow(const struct cmd_entry *cmd, struct gwopts *o, const char *arg)
{
	struct rules	*r;
	char		 err[1024];
	int		 rv;

	if ((r = rules_create()) == NULL)
		fatalx("out of memory");
	rv = gwopts_allow_load(r, arg, err, sizeof err);
	rules_free(r);
	if (rv == -1)
		return (cmd_usage_error(cmd, "%s", err));
	return (gwopts_push(cmd, o->allow, &o->nallow, "--allow", arg));
}

/* --fake-range CIDR: refused now, with exit 2, when it is none. */
static int
gwopts_fake_range(const struct cmd_entry *cmd, struct gwopts *o,
    const char *arg)
{
	struct fakeip	*f;
	char		 err[256];

	if ((f = fakeip_create(arg, 1, 1, err, sizeof err)) == NULL)
		return (cmd_usage_error(cmd, "--fake-range: %s", err));
	fakeip_free(f);
	o->fake_range = arg;
	return (0);
}

/* --upstream URL: checked now; it goes into the policy as a line. */
static int
gwopts_upstream(const struct cmd_entry *cmd, struct gwopts *o,
    const char *arg)
{
	struct host	 h;
	uint16_t	 port;
	const char	*errstr;

	if (strcmp(arg, "none") != 0 &&
	    rules_upstream_parse(arg, &h, &port, &errstr) == -1)
		return (cmd_usage_error(cmd, "--upstream '%s': %s", arg,
		    errstr));
	o->upstream = arg;
	return (0);
}

/* The decider's TLS files and how many questions it takes at once. */
static int
gwopts_decider_more(const struct cmd_entry *cmd, struct gwopts *o, int ch,
    const char *arg)
{
	long long	v;

	switch (ch) {
	case GWOPTS_DECIDER_CA:
		o->decider_ca = arg;
		break;
	case GWOPTS_DECIDER_CERT:
		o->decider_cert = arg;
		break;
	case GWOPTS_DECIDER_KEY:
		o->decider_key = arg;
		break;
	default:
		if (gwopts_number(cmd, "--decider-max", arg, 1,
		    DECIDER_QUESTIONS_LIMIT, &v))
			return (EXIT_USAGE);
		o->decider_max = v;
		break;
	}
	return (0);
}

/* Handle one of the shared options. */
int
gwopts_option(const struct cmd_entry *cmd, struct gwopts *o, int ch,
    const char *arg)
{
	switch (ch) {
	case 'p':
		return (gwopts_push(cmd, o->policy, &o->npolicy, "--policy",
		    arg));
	case 'a':
		return (gwopts_allow(cmd, o, arg));
	case 'r':
		return (gwopts_push_addr(cmd, o->resolver, &o->nresolver,
		    "--resolver", arg, 53));
	case 'L':
		return (gwopts_log(cmd, o, arg));
	case GWOPTS_LOG_SPOOL:
		o->shipcfg.spool_dir = arg;
		return (0);
	case GWOPTS_LOG_TLS_CA:
		o->shipcfg.ca = arg;
		return (0);
	case GWOPTS_LOG_TLS_CERT:
		o->shipcfg.cert = arg;
		return (0);
	case GWOPTS_LOG_TLS_KEY:
		o->shipcfg.key = arg;
		return (0);
	case 'v':
		o->verbose++;
		return (0);
	case GWOPTS_DNS_REAL:
		o->dns_real = 1;
		return (0);
	case GWOPTS_DNS_REFUSE:
		o->dns_refuse = 1;
		return (0);
	case GWOPTS_FAKE_RANGE:
		return (gwopts_fake_range(cmd, o, arg));
	case GWOPTS_METRICS:
		return (gwopts_metrics(cmd, o, arg));
	case GWOPTS_DECIDER:
		return (gwopts_decider(cmd, o, arg));
	case GWOPTS_DECIDER_CA:
	case GWOPTS_DECIDER_CERT:
	case GWOPTS_DECIDER_KEY:
	case GWOPTS_DECIDER_MAX:
		return (gwopts_decider_more(cmd, o, ch, arg));
	case GWOPTS_UPSTREAM:
		return (gwopts_upstream(cmd, o, arg));
	case GWOPTS_UPSTREAM_AUTH:
		if (strchr(arg, '\n') != NULL || strpbrk(arg, " \t#") != NULL)
			return (cmd_usage_error(cmd, "--upstream-auth '%s': a "
			    "path without spaces or '#'", arg));
		o->upstream_auth = arg;
		return (0);
	}
	if (ch >= GWOPTS_MAX_CLIENTS && ch < GWOPTS_LAST)
		return (gwopts_limit(cmd, o, ch, arg));
	return (-1);
}
