/*
 * pinhole check: explain the verdict the policy gives one host and port.
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/stat.h>

#include <netinet/in.h>

#include <errno.h>
#include <ifaddrs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/gwopts-argv.h"
#include "cli/pinhole.h"
#include "daemon/gwopts.h"
#include "proxy/wire/http.h"
#include "rules/policy.h"
#include "rules/rules.h"

#define CHECK_MAX_ARGS	64		/* --header */
#define CHECK_PRESETS	256		/* presets listed */
#define OPT_HEADER	256		/* --header, long only (-H is log --host) */
#define OPT_PRESETS	257		/* --presets */

/* What the command line asked for. */
struct check_args {
	struct gwopts	 g;		/* --policy and --allow, as run's */
	int		 presets;	/* --presets */
	const char	*target;
	const char	*method;	/* with path: one request */
	const char	*path;
	const char	*headers[CHECK_MAX_ARGS];	/* its --header */
	size_t		 nheaders;
};

/*
 * Print "allow HOST:PORT (FILE:LINE: RULE)", "deny HOST:PORT (system
 * FILE:LINE: RULE)" or the reason for a deny.
 */
static void
check_print(const struct host *h, uint16_t port, const struct rules_verdict *v,
    const char *what)
{
	const char	*fmt = h->kind == HOST_IPV6 ? "%s [%s]:%u (" : "%s %s:%u (";
	char		 where[4200];

	printf(fmt, what != NULL ? what : v->allow ? "allow" : "deny", h->text,
	    port);
	policy_rule_text(v, where, sizeof where);
	if (v->file == NULL)
		printf("%s)\n", v->why);
	else
		printf("%s: %s)\n", where, v->text);
}

/*
 * The request's --header lines, read by the gateway's own parser into
 * what the rules see of them (an upgrade, a method override); head
 * holds them, as the request's buffer.  Returns 0, or -1 when they do
 * not parse.
 */
static int
check_headers(const struct check_args *a, struct http_request *hr,
    char *head, size_t len, struct rules_request *rq)
{
	struct http_limits	lim = { HTTP_MAX_HEAD, HTTP_MAX_HEADERS };
	size_t			i, n;

	n = (size_t)snprintf(head, len, "GET / HTTP/1.0\r\n");
	for (i = 0; i < a->nheaders && n < len; i++) {
		if (strpbrk(a->headers[i], "\r\n") != NULL)
			return (-1);
		n += (size_t)snprintf(head + n, len - n, "%s\r\n",
		    a->headers[i]);
	}
	if (n + 2 >= len)
		return (-1);
	memcpy(head + n, "\r\n", 3);
	if (http_request_parse(head, n + 2, &lim, hr) != 0)
		return (-1);
	http_request_rules(hr, rq);
	return (0);
}

/*
 * Decide one request too, on a host whose rules check requests: which
 * rule lets it through, or which constraint refuses it.  Returns 0
 * allowed, 1 refused, 2 for a path that reads more than one way.
 */
static int
check_request(const struct rules *r, const struct host *h, uint16_t port,
    const struct check_args *a, struct rules_verdict *v)
{
	struct rules_request	rq;
	struct http_request	hr;
	char			what[2048], head[HTTP_MAX_HEAD];
	int			rv;

	memset(&rq, 0, sizeof rq);
	if (a->nheaders > 0 && check_headers(a, &hr, head, sizeof head,
	    &rq) == -1) {
		fprintf(stderr, "pinhole check: the --header lines do not "
		    "parse as HTTP headers\n");
		return (EXIT_USAGE);
	}
	rq.method = a->method;
	rq.method_len = strlen(a->method);
	rq.target = a->path;
	rq.target_len = strlen(a->path);
	rv = rules_match_request(r, h, port, &rq, v);
	if (rv == -1) {
		printf("deny %s %s (%s)\n", a->method, a->path, v->why);
		return (2);
	}
	snprintf(what, sizeof what, "%s %s %s on", rv ? "allow" : "deny",
	    a->method, a->path);
	check_print(h, port, v, what);
	if (!rv && v->constraint != NULL)
		printf("refused by: %s\n", v->why);
	return (rv ? 0 : 1);
}

/* Collect options and the one HOST[:PORT]. */
static int
check_parse_args(const struct cmd_entry *self, int argc, char **argv,
    struct check_args *a)
{
	int	ch;

	gwopts_init(&a->g, 0, GWOPTS_USER_ALWAYS);
	while ((ch = cmd_getopt(self, argc, argv)) != -1) {
		if (ch == '?')
			return (-1);
		if (ch == OPT_PRESETS)
			a->presets = 1;
		else if (ch != OPT_HEADER) {
			if (gwopts_option(self, &a->g, ch, optarg) != 0)
				return (-1);
		} else if (a->nheaders < CHECK_MAX_ARGS)
			a->headers[a->nheaders++] = optarg;
		else {
			cmd_usage_error(self, "too many --header options");
			return (-1);
		}
	}
	if (a->presets && argc - optind == 0)
		return (0);
	if (a->presets) {
		cmd_usage_error(self, "--presets takes no HOST");
		return (-1);
	}
	if (argc - optind != 1 && argc - optind != 3) {
		cmd_usage_error(self, optind == argc ? "no HOST[:PORT] given" :
		    "HOST[:PORT], or HOST[:PORT] METHOD PATH");
		return (-1);
	}
	if (a->nheaders > 0 && argc - optind != 3) {
		cmd_usage_error(self, "--header goes with METHOD PATH");
		return (-1);
	}
	a->target = argv[optind];
	if (argc - optind == 3) {
		a->method = argv[optind + 1];
		a->path = argv[optind + 2];
	}
	return (0);
}

/* List the presets, what each is for, and how to add one. */
static int
check_presets(void)
{
	char	names[CHECK_PRESETS][RULES_PRESET_LEN], about[256];
	int	n, i;

	if ((n = rules_presets(names, CHECK_PRESETS)) == -1) {
		fprintf(stderr, "pinhole check: %s: %s\n", rules_preset_dir(),
		    strerror(errno));
		return (EXIT_USAGE);
	}
	for (i = 0; i < n && i < CHECK_PRESETS; i++) {
		rules_preset_about(names[i], about, sizeof about);
		printf("%-12s %s\n", names[i], about);
	}
	printf("%s%d preset%s in %s: add one with `pinhole allow include "
	    "preset:NAME`\n", n > 0 ? "\n" : "", n, n == 1 ? "" : "s",
	    rules_preset_dir());
	return (0);
}

/*
 * Is this a name every resolver answers with loopback addresses
 * (RFC 6761: localhost and the names below it)?
 */
static int
check_loopback_name(const struct host *h)
{
	size_t	n = strlen(h->text);

	return (h->kind == HOST_NAME && (strcmp(h->text, "localhost") == 0 ||
	    (n > 10 && strcmp(h->text + n - 10, ".localhost") == 0)));
}

/*
 * Is this address one of this host's own, which the gateway refuses to
 * dial as it refuses a private one (its services are the host's)?
 */
static int
check_own(const struct host *h)
{
	struct ifaddrs	*ifa, *i;
	const void	*a;
	size_t		 len = h->kind == HOST_IPV4 ? 4 : 16;
	int		 own = 0, fam = h->kind == HOST_IPV4 ? AF_INET : AF_INET6;

	if (h->kind == HOST_NAME || getifaddrs(&ifa) == -1)
		return (0);
	for (i = ifa; i != NULL && !own; i = i->ifa_next) {
		if (i->ifa_addr == NULL || i->ifa_addr->sa_family != fam)
			continue;
		if (fam == AF_INET)
			a = &((struct sockaddr_in *)(void *)i->ifa_addr)->
			    sin_addr;
		else
			a = &((struct sockaddr_in6 *)(void *)i->ifa_addr)->
			    sin6_addr;
		own = memcmp(a, h->addr, len) == 0;
	}
	freeifaddrs(ifa);
	return (own);
}

/*
 * The gateway's guard, as `run` applies it: an allowed address of a
 * special-purpose range or of this host's own, or a loopback name, that
 * no allow-private rule covers is refused, and only allow-private lifts
 * that.  Returns 1 when the guard refuses, after saying so.
 */
static int
check_guard(struct policy *p, const struct host *h, uint16_t port)
{
	const struct rules	*r = policy_rules(p);
	struct policy_ask	 q = { .host = h, .port = port,
				    .flags = POLICY_GUARD };
	struct policy_decision	 d;
	struct rules_verdict	 v;
	const char		*fmt = h->kind == HOST_IPV6 ?
				    "deny [%s]:%u (%s)\n" : "deny %s:%u (%s)\n";
	static const uint8_t	 lo[4] = { 127, 0, 0, 1 };
	char			 why[1536];

	if (check_loopback_name(h)) {
		if (rules_private_ok(r, lo, sizeof lo, &v))
			return (0);
		printf("deny %s:%u (%s is a loopback name, and its addresses "
		    "(127.0.0.1, ::1) are special-purpose: only an "
		    "allow-private rule lets pinhole connect to them)\n"
		    "lift it with: pinhole allow allow-private 127.0.0.1\n",
		    h->text, port, h->text);
		return (1);
	}
	if (h->kind == HOST_NAME)
		return (0);
	if (policy_decide(p, &q, &d)) {
		if (!check_own(h) || rules_private_ok(r, h->addr,
		    h->kind == HOST_IPV4 ? 4 : 16, &v))
			return (0);
		snprintf(why, sizeof why, "%s is an address of this host's "
		    "own: only an allow-private rule lets pinhole connect to "
		    "it", h->text);
	} else
		policy_decision_why(&d, h, why, sizeof why);
	printf(fmt, h->text, port, why);
	printf("lift it with: pinhole allow allow-private %s\n", h->text);
	return (1);
}

/* Decide one host and port, and say why. */
static int
check_decide(struct policy *p, const struct host *h, uint16_t port,
    const struct check_args *a)
{
	const struct rules	*r = policy_rules(p);
	struct rules_verdict	 v;
	int			 rv;

	if (!rules_match(r, h, port, &v)) {
		check_print(h, port, &v, NULL);
		return (1);
	}
	if (check_guard(p, h, port))
		return (1);
	if (v.inspect && a->method != NULL)
		rv = check_request(r, h, port, a, &v);
	else {
		check_print(h, port, &v, NULL);
		rv = 0;
	}
	if (rv == 0 && v.inspect)
		printf("inspected: TLS is ended at the gateway and each "
		    "request is checked\n");
	if (rv == 0 && h->kind == HOST_NAME)
		printf("vetted when it connects: an address %s resolves to "
		    "that is special-purpose (private, loopback, link-local, "
		    "...) or this host's own is refused, unless an "
		    "allow-private rule covers it\n", h->text);
	return (rv);
}

/* Decide one host and port, and say why. */
static int
cmd_check_exec(const struct cmd_entry *self, int argc, char **argv)
{
	struct check_args	*a;
	struct policy		*p = NULL;
	struct rules		*r;
	struct host		 h;
	uint16_t		 port;
	const char		*errstr;
	char			 err[1024];
	int			 rv = EXIT_USAGE;

	if ((a = calloc(1, sizeof *a)) == NULL) {
		fprintf(stderr, "pinhole check: out of memory\n");
		return (EXIT_USAGE);
	}
	if (check_parse_args(self, argc, argv, a) == -1)
		goto out;
	if (a->presets) {
		rv = check_presets();
		goto out;
	}
	if (host_port_parse(a->target, &h, &port, 443, &errstr) == -1) {
		fprintf(stderr, "pinhole check: bad host '");
		cmd_print_escaped(stderr, a->target);
		fprintf(stderr, "': %s\n", errstr);
		goto out;
	}
	if ((r = gwopts_load_rules(&a->g, err, sizeof err)) == NULL) {
		fprintf(stderr, "%s\n", err);
		goto out;
	}
	gwopts_warn_dead(r);
	fflush(stderr);
	if ((p = policy_create(NULL)) == NULL) {
		rules_free(r);
		fprintf(stderr, "pinhole check: out of memory\n");
		goto out;
	}
	policy_set_rules(p, r);
	rv = check_decide(p, &h, port, a);
out:
	policy_free(p);
	free(a);
	return (rv);
}

/* The options of check. */
static const struct cmd_opt check_opts[] = {
	{ "policy", 'p', CMD_ARG_REQUIRED, "FILE",
	    .help = "read the policy from FILE (repeatable); without it, "
	    "the user's policy file is read: "
	    "$XDG_CONFIG_HOME/pinhole/policy, or ~/.config/pinhole/policy "
	    "when XDG_CONFIG_HOME is unset (a missing one denies everything); "
	    "the system policy comes first either way" },
	{ "allow", 'a', CMD_ARG_REQUIRED, "RULE",
	    .help = "one more rule, as run's --allow: HOST[:PORTS] "
	    "[constraints], or any line of a policy (repeatable)" },
	{ "presets", 0, CMD_ARG_NONE, NULL, .key = OPT_PRESETS,
	    .help = "list the presets `include preset:NAME` reads, and what "
	    "each is for" },
	{ "header", 0, CMD_ARG_REQUIRED, "'NAME: VALUE'", .key = OPT_HEADER,
	    .help = "with METHOD PATH, a header the request carries "
	    "(repeatable): 'Connection: upgrade' with 'Upgrade: websocket', "
	    "'X-HTTP-Method-Override: DELETE'" },
	{ .name = NULL }
};

const struct cmd_entry cmd_check_entry = {
	.name = "check",
	.usage = "[--policy FILE]... [--allow RULE]... HOST[:PORT] "
	    "[METHOD PATH [--header 'NAME: VALUE']...] | --presets",
	.summary = "Say whether the policy allows a host (or one request), "
	    "and which rule decides",
	.opts = check_opts,
	.help =
	    "HOST is a name or an IPv4 or IPv6 address ([ADDRESS]:PORT with a\n"
	    "port); PORT defaults to 443.  `include preset:NAME` reads presets\n"
	    "from $PINHOLE_PRESETDIR, or else " PRESETDIR ".\n"
	    "The system policy, " SYSCONFDIR "/pinhole/policy and\n"
	    SYSCONFDIR "/pinhole/policy.d/*.policy, is read before the\n"
	    "user's; its deny rules win over any rule of the user's.\n"
	    "The policy is read, and the verdict given, as pinhole run gives\n"
	    "it: an address of a special-purpose range (loopback, private,\n"
	    "link-local, ...) or of this host's own, or a name under\n"
	    "localhost, is denied unless an allow-private rule covers it, and\n"
	    "the line that would is named;\n"
	    "a name's addresses are vetted when it connects.\n"
	    "\n"
	    "Prints the verdict and what decided it, for example\n"
	    "  allow pypi.org:443 (policy:3: allow pypi.org)\n"
	    "  deny evil.com:443 (system " SYSCONFDIR "/pinhole/policy:2: deny evil.com)\n"
	    "With METHOD PATH, on a host whose rules check requests (read-only,\n"
	    "methods, path), decides that request too and names the rule that\n"
	    "lets it through or the constraint that refuses it:\n"
	    "  deny POST /x/git-receive-pack on github.com:443 (policy:4: ...)\n"
	    "  refused by: read-only: POST /x/git-receive-pack is a git push\n"
	    "--header adds what the rules read of headers: an upgrade\n"
	    "(Connection: upgrade and Upgrade), a method override\n"
	    "(X-HTTP-Method-Override, X-HTTP-Method, X-Method-Override).\n"
	    "\n"
	    "Exit status: 0 allowed, 1 denied, 2 bad usage, a bad policy\n"
	    "(reported as FILE:LINE: message) or a path that reads more than\n"
	    "one way.  See pinhole-policy(5).\n",
	.exec = cmd_check_exec,
};
