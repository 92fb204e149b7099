/*
 * The options and set-up shared by the commands that run a gateway:
 * pinhole proxy and pinhole run.
 */
#include "config.h"

#include <sys/resource.h>
#include <sys/stat.h>

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "cli/gwopts.h"
#include "cli/pinhole.h"
#include "lib/log.h"
#include "proxy/audit/audit.h"
#include "proxy/audit/budget.h"
#include "proxy/audit/ship.h"
#include "proxy/audit/spool.h"
#include "proxy/dns/dns.h"
#include "proxy/dns/fakeip.h"
#include "proxy/escalate/control.h"
#include "proxy/escalate/decider.h"
#include "proxy/escalate/escalate.h"
#include "proxy/gateway.h"
#include "proxy/policywatch.h"
#include "proxy/scrape.h"
#include "proxy/resolver/resolver.h"
#include "proxy/sandbox/sandbox.h"
#include "proxy/tls/tls.h"
#include "proxy/wire/decider.h"
#include "proxy/wire/http.h"
#include "rules/policy.h"
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

/*
 * One --allow value as the policy lines it makes (rules_args_lines():
 * "HOST[:PORTS]", a whole line such as "allow-private 10.0.0.0/8", or
 * several), each loaded into r: the one way every command reads it.
 * Returns 0, or -1 with err ("--allow: message").
 */
static int
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

/* Would the user's policy file apply?  Its path goes in path. */
static int
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
static void
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

/* Write a lifecycle line of the gateway, or of one of its sandboxes. */
void
gwctx_audit_sandbox(struct gwctx *c, const struct sandbox *sb,
    const char *event, const char *verdict, const char *reason,
    const char *detail)
{
	struct audit_event	e;

	if (c->audit == NULL)
		return;
	audit_event_init(&e);
	e.event = event;
	e.verdict = verdict;
	e.reason = reason;
	e.detail = detail;
	e.session = c->o->cfg.session;
	audit_event_sandbox(&e, sandbox_ident(sb));
	/* So that `pinhole log verify` can tell whether it still runs. */
	if (strcmp(event, "start") == 0)
		e.gateway_pid = getpid();
	audit_write(c->audit, &e);
}

/* Write a lifecycle line (start, stop, reload) to the audit log. */
void
gwctx_audit(struct gwctx *c, const char *event, const char *verdict,
    const char *reason, const char *detail)
{
	gwctx_audit_sandbox(c, NULL, event, verdict, reason, detail);
}

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
static void
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
static void
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
static int
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
static void
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
static void
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

/* Make the directories above a file (0700) unless they exist. */
static int
gwopts_mkdirs(char *path)
{
	char	*p;
	int	 rv = 0;

	for (p = strchr(path + 1, '/'); p != NULL && rv == 0;
	    p = strchr(p + 1, '/')) {
		*p = '\0';
		if (mkdir(path, 0700) == -1 && errno != EEXIST)
			rv = -1;
		*p = '/';
	}
	return (rv);
}

/*
 * Without --log, log to the default file (audit_default_path()), making
 * its directory.
 */
static int
gwopts_default_log(struct gwopts *o, char *err, size_t errlen)
{
	if (o->audit.log != NULL)
		return (0);
	if (audit_default_path(o->default_log, sizeof o->default_log) == -1) {
		snprintf(err, errlen, "audit log: no HOME or XDG_STATE_HOME to "
		    "put it in: give --log");
		return (-1);
	}
	if (gwopts_mkdirs(o->default_log) == -1) {
		snprintf(err, errlen, "audit log: cannot make the directory of "
		    "%s: %s (give --log)", o->default_log, strerror(errno));
		return (-1);
	}
	o->audit.log = o->default_log;
	return (0);
}

/* Open the log the options name, or the default file. */
struct audit *
gwopts_open_log(struct gwopts *o, char *err, size_t errlen)
{
	if (gwopts_default_log(o, err, errlen) == -1)
		return (NULL);
	return (audit_open_config(&o->audit, err, errlen));
}

/* Hand lines written to the log on to each shipping destination. */
static void
gwctx_ship_cb(void *arg, const char *lines, size_t len)
{
	struct gwctx	*c = arg;
	size_t		 i;

	for (i = 0; i < c->nships; i++)
		ship_lines(c->ships[i], lines, len);
}

/*
 * Name the spool's directory when --log-spool is not given: spool/ in
 * the directory of the log file, or of the default file when the log is
 * not a file.
 */
static int
gwopts_spool_dir(struct gwopts *o, char *err, size_t errlen)
{
	const char	*log = o->audit.log;
	char		 def[4096], *slash;

	if (o->shipcfg.spool_dir != NULL)
		return (0);
	if (strcmp(log, "-") == 0 || strncmp(log, "syslog", 6) == 0 ||
	    strncmp(log, "journald", 8) == 0) {
		if (audit_default_path(def, sizeof def) == -1) {
			snprintf(err, errlen, "audit shipping: no HOME or "
			    "XDG_STATE_HOME for the spool: give --log-spool");
			return (-1);
		}
		log = def;
	}
	snprintf(o->spool_dir, sizeof o->spool_dir, "%s", log);
	if ((slash = strrchr(o->spool_dir, '/')) != NULL)
		snprintf(slash + 1, sizeof o->spool_dir -
		    (slash + 1 - o->spool_dir), "spool");
	else
		snprintf(o->spool_dir, sizeof o->spool_dir, "spool");
	if (gwopts_mkdirs(o->spool_dir) == -1) {
		snprintf(err, errlen, "audit shipping: cannot make the "
		    "directory of %.512s: %s", o->spool_dir, strerror(errno));
		return (-1);
	}
	o->shipcfg.spool_dir = o->spool_dir;
	return (0);
}

/* Open the shipping destinations, and hand them every line written. */
static int
gwctx_ships(struct gwctx *c, char *err, size_t errlen)
{
	struct gwopts	*o = c->o;
	size_t		 i;

	if (o->nship == 0)
		return (0);
	if (gwopts_spool_dir(o, err, errlen) == -1)
		return (-1);
	for (i = 0; i < o->nship; i++) {
		c->ships[i] = ship_open(c->base, o->ship[i], &o->shipcfg,
		    err, errlen);
		if (c->ships[i] == NULL)
			return (-1);
		c->nships++;
	}
	audit_set_hook(c->audit, gwctx_ship_cb, c);
	return (0);
}

/* Read the shipping destinations' counts for a scrape. */
static size_t
gwctx_ship_stats(void *arg, struct metrics_ship *out, size_t max)
{
	struct gwctx		*c = arg;
	struct ship_stats	 st;
	size_t			 i;

	for (i = 0; i < c->nships && i < max; i++) {
		ship_stats(c->ships[i], &st);
		out[i].dest = c->o->ship[i];
		out[i].delivered = st.delivered;
		out[i].pending = st.pending;
		out[i].dropped = st.dropped;
		out[i].connects = st.connects;
		out[i].otlp = st.otlp;
		out[i].rejected = st.rejected;
		out[i].refused = st.refused;
	}
	return (i);
}

/* The time to ship what waits is over. */
static void
gwctx_ships_late_cb(evutil_socket_t fd, short what, void *arg)
{
	int	*late = arg;

	*late = 1;
}

/* Tell whether a destination still has lines to send, or a session to end. */
static int
gwctx_ships_busy(const struct gwctx *c)
{
	size_t	i;

	for (i = 0; i < c->nships; i++)
		if (ship_busy(c->ships[i]))
			return (1);
	return (0);
}

/*
 * The gateway stops: every destination sends what waits, the stop line
 * among it, connecting if it must, for at most --log-ship-wait seconds
 * (the loop runs on the events of the sending alone: the gateway's are
 * gone).  Then each says what is left and where it waits; the next start
 * with the same spool sends it.
 */
static void
gwctx_ships_flush(struct gwctx *c)
{
	struct timeval	 tv = { 0, 0 };
	struct event	*timer = NULL;
	size_t		 i;
	int		 late = 0;

	if (c->nships == 0)
		return;
	tv.tv_sec = c->o->ship_wait;
	audit_flush(c->audit);		/* the lines this pass held */
	for (i = 0; i < c->nships; i++)
		ship_stop(c->ships[i]);
	if ((timer = evtimer_new(c->base, gwctx_ships_late_cb, &late)) !=
	    NULL && evtimer_add(timer, &tv) == 0) {
		while (!late && gwctx_ships_busy(c))
			event_base_loop(c->base, EVLOOP_ONCE);
	}
	if (timer != NULL)
		event_free(timer);
	for (i = 0; i < c->nships; i++)
		ship_close(c->ships[i]);
	c->nships = 0;
	if (c->audit != NULL)
		audit_set_hook(c->audit, NULL, NULL);
}

/* Set up the event base, policy, log, resolver and gateway. */
int
gwctx_setup(struct gwctx *c, struct gwopts *o)
{
	struct rules		*r;
	struct conn_upstream	*u;
	char			 err[1024];

	memset(c, 0, sizeof *c);
	c->o = o;
	metrics_init(&c->metrics, time(NULL));
	if ((c->base = event_base_new()) == NULL)
		fatalx("cannot create the event loop");
	if ((r = gwopts_load_rules(o, err, sizeof err)) == NULL) {
		cmd_refuse("%s", err);
		return (-1);
	}
	gwopts_warn_dead(r);
	if ((c->audit = gwopts_open_log(o, err, sizeof err)) == NULL ||
	    audit_check_room(c->audit, err, sizeof err) == -1) {
		cmd_refuse("%s", err);
		rules_free(r);
		return (-1);
	}
	if (gwctx_ships(c, err, sizeof err) == -1) {
		cmd_refuse("%s", err);
		rules_free(r);
		return (-1);
	}
	if (audit_set_base(c->audit, c->base) == -1)
		fatalx("audit log: out of memory");
	if ((c->resolver = resolver_create(c->base, o->nresolver ?
	    o->resolver : NULL, err, sizeof err)) == NULL) {
		cmd_refuse("resolver: %s", err);
		rules_free(r);
		return (-1);
	}
	audit_set_metrics(c->audit, &c->metrics);
	resolver_set_metrics(c->resolver, &c->metrics);
	if (o->metrics != NULL && (c->scrape = scrape_start(c->base,
	    o->metrics, &c->metrics, err, sizeof err)) == NULL) {
		cmd_refuse("--metrics: %s", err);
		rules_free(r);
		return (-1);
	}
	if (c->scrape != NULL)
		scrape_set_ships(c->scrape, gwctx_ship_stats, c);
	gwopts_about(o);
	if (o->cfg.session == NULL && escalate_random_hex(o->session, 4) == 0)
		o->cfg.session = o->session;
	if ((c->gw = gateway_create(c->base, &o->cfg, c->resolver,
	    c->audit)) == NULL)
		fatalx("cannot create the gateway");
	gateway_set_metrics(c->gw, &c->metrics);
	if (o->budget_lines > 0 && (c->budget = audit_budget_create(c->base,
	    c->audit, o->budget_lines, o->budget_bytes)) == NULL)
		fatalx("audit log: out of memory");
	gateway_set_budget(c->gw, c->budget);
	if (gwctx_upstream_make(r, &u, err, sizeof err) == -1) {
		cmd_refuse("%s", err);
		rules_free(r);
		return (-1);
	}
	gwctx_upstream_set(c, u, r);
	gwctx_set_rules(c, r);
	gwctx_tls(c);
	signal(SIGPIPE, SIG_IGN);
	if (o->decider != NULL && o->ask == 0)
		o->ask = DECIDER_WAIT_DEFAULT;
	return (gwctx_escalate(c, o->ask));
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

/* Create the DNS server on the gateway's policy, resolver and log. */
int
gwctx_dns(struct gwctx *c, char *err, size_t errlen)
{
	struct dns_server_params	p;

	if ((c->fakeip = fakeip_create(c->o->fake_range, FAKEIP_MAX,
	    FAKEIP_GRACE, err, errlen)) == NULL)
		return (-1);
	memset(&p, 0, sizeof p);
	p.base = c->base;
	p.policy = gateway_policy(c->gw);
	p.resolver = c->resolver;
	p.audit = c->audit;
	p.metrics = &c->metrics;
	p.fakeip = c->fakeip;
	p.session = c->o->cfg.session;
	p.real = c->o->dns_real;
	p.refuse = c->o->dns_refuse;
	p.esc = c->esc;
	p.ask = c->ask > 0;
	if ((c->dns = dns_server_create(&p, err, errlen)) == NULL)
		return (-1);
	/* A connection to a fake address is decided as its name. */
	gateway_set_fakeip(c->gw, c->fakeip);
	return (0);
}

/* The gateway has let its connections go: leave the loop. */
static void
gwctx_stopped(void *arg)
{
	struct gwctx	*c = arg;

	event_base_loopexit(c->base, NULL);
}

/* Stop accepting; leave the loop once connections end or grace is over. */
void
gwctx_stop(struct gwctx *c)
{
	gateway_stop(c->gw, c->o->grace, gwctx_stopped, c);
}

/*
 * Write what the log budget summed up, and write each line from now on:
 * before the stop line.
 */
void
gwctx_budget_end(struct gwctx *c)
{
	gateway_set_budget(c->gw, NULL);
	audit_budget_free(c->budget);
	c->budget = NULL;
}

/* Free whatever was set up. */
void
gwctx_teardown(struct gwctx *c)
{
	scrape_stop(c->scrape);
	if (c->sighup != NULL)
		event_free(c->sighup);
	if (c->ending != NULL)
		event_free(c->ending);
	if (c->watch != NULL)
		policywatch_stop(c->watch);
	dns_server_free(c->dns);
	if (c->fakeip != NULL)
		fakeip_free(c->fakeip);
	gateway_free(c->gw);
	audit_budget_free(c->budget);
	gwctx_secrets_free(c);
	if (c->tls != NULL) {
		unlink(tls_ca_path(c->tls));
		unlink(tls_trust_path(c->tls));
		tls_free(c->tls);
	}
	control_close(c->ctl);
	decider_free(c->decider);
	escalate_free(c->esc);
	if (c->resolver != NULL)
		resolver_free(c->resolver);
	gwctx_ships_flush(c);
	if (c->audit != NULL)
		audit_close(c->audit);
	if (c->base != NULL)
		event_base_free(c->base);
	memset(c, 0, sizeof *c);
}

/* Escalation: the queue, grants, the control socket. */
int
gwctx_escalate(struct gwctx *c, int ask)
{
	struct decider_config	dc;
	char			err[1024], always[4096];

	memset(&dc, 0, sizeof dc);
	c->ask = ask;
	if ((c->esc = escalate_create(c->base, c->o->cfg.session,
	    c->audit)) == NULL) {
		log_warnx("escalation: out of memory");
		return (-1);
	}
	escalate_set_metrics(c->esc, &c->metrics);
	if ((c->ctl = control_open(c->base, c->esc, err, sizeof err)) == NULL)
		log_warnx("no control socket, requests cannot be answered: "
		    "%s", err);
	else
		log_info("control socket %s", control_path(c->ctl));
	if (c->o->decider != NULL) {
		dc.url = c->o->decider;
		dc.secs = ask;
		dc.max = c->o->decider_max;
		dc.ca = c->o->decider_ca;
		dc.cert = c->o->decider_cert;
		dc.key = c->o->decider_key;
		if ((c->decider = decider_create(c->base, c->esc, &dc, err,
		    sizeof err)) == NULL) {
			log_warnx("%s", err);
			return (-1);
		}
		log_info("decider %s, %d s an answer", c->o->decider, ask);
	}
	if (c->o->npolicy > 0)
		snprintf(always, sizeof always, "%s", c->o->policy[0]);
	else if (!gwopts_user_path(c->o, always, sizeof always))
		always[0] = '\0';
	if (gateway_set_escalate(c->gw, c->esc, always[0] != '\0' ? always :
	    NULL, ask) == -1) {
		log_warnx("escalation: out of memory");
		return (-1);
	}
	return (0);
}

/* Tell control clients where the agent endpoint is. */
void
gwctx_agent_url(struct gwctx *c, const char *url)
{
	if (c->ctl != NULL)
		control_set_agent(c->ctl, url);
}
