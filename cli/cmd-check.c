/*
 * pinhole check: explain the verdict the policy gives one host and port.
 */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/gwopts.h"
#include "cli/pinhole.h"
#include "proxy/wire/http.h"
#include "rules/grants.h"
#include "rules/rules.h"

#define CHECK_MAX_ARGS	64		/* --policy and --allow, each */
#define OPT_HEADER	256		/* --header, long only (-H is log --host) */

/* What the command line asked for. */
struct check_args {
	const char	*policies[CHECK_MAX_ARGS];
	size_t		 npolicies;
	const char	*allows[CHECK_MAX_ARGS];
	size_t		 nallows;
	const char	*target;
	const char	*method;	/* with path: one request */
	const char	*path;
	const char	*headers[CHECK_MAX_ARGS];	/* its --header */
	size_t		 nheaders;
};

/* Print text from the command line, escaping what is not printable. */
static void
check_print_escaped(FILE *f, const char *s)
{
	for (; *s != '\0'; s++) {
		if (*s >= 0x20 && *s < 0x7f)
			fputc(*s, f);
		else
			fprintf(f, "\\x%02x", (unsigned char)*s);
	}
}

/* Load the user's policy file; a missing one is an empty policy. */
static int
check_load_default(struct rules *r, char *err, size_t errlen)
{
	char		path[4096];
	struct stat	st;

	if (rules_default_path(path, sizeof path) == -1)
		return (0);
	if (stat(path, &st) == -1 && errno == ENOENT)
		return (0);
	return (rules_load_file(r, path, err, errlen));
}

/* Load the system layer, then every policy file and --allow rule. */
static int
check_load(struct rules *r, const struct check_args *a, char *err,
    size_t errlen)
{
	char	rule[1100];
	size_t	i;

	if (rules_load_system(r, rules_system_dir(), err, errlen) == -1)
		return (-1);
	if (a->npolicies == 0 && check_load_default(r, err, errlen) == -1)
		return (-1);
	for (i = 0; i < a->npolicies; i++) {
		if (rules_load_file(r, a->policies[i], err, errlen) == -1)
			return (-1);
	}
	for (i = 0; i < a->nallows; i++) {
		if ((size_t)snprintf(rule, sizeof rule, "allow %s",
		    a->allows[i]) >= sizeof rule) {
			snprintf(err, errlen, "--allow: rule too long");
			return (-1);
		}
		if (rules_load_text(r, "--allow", rule, strlen(rule), err,
		    errlen) == -1)
			return (-1);
	}
	return (0);
}

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

	while ((ch = cmd_getopt(self, argc, argv)) != -1) {
		if (ch == '?')
			return (-1);
		if (ch == 'p' && a->npolicies < CHECK_MAX_ARGS)
			a->policies[a->npolicies++] = optarg;
		else if (ch == 'a' && a->nallows < CHECK_MAX_ARGS)
			a->allows[a->nallows++] = optarg;
		else if (ch == OPT_HEADER && a->nheaders < CHECK_MAX_ARGS)
			a->headers[a->nheaders++] = optarg;
		else {
			cmd_usage_error(self, "too many --%s options",
			    ch == 'p' ? "policy" : ch == 'a' ? "allow" :
			    "header");
			return (-1);
		}
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

/* Decide one host and port, and say why. */
static int
cmd_check_exec(const struct cmd_entry *self, int argc, char **argv)
{
	struct check_args	 a = { .npolicies = 0 };
	struct rules_verdict	 v;
	struct rules		*r = NULL;
	struct host		 h;
	uint16_t		 port;
	const char		*errstr;
	char			 err[1024];
	int			 rv = EXIT_USAGE;

	if (check_parse_args(self, argc, argv, &a) == -1)
		return (EXIT_USAGE);
	if (host_port_parse(a.target, &h, &port, 443, &errstr) == -1) {
		fprintf(stderr, "pinhole check: bad host '");
		check_print_escaped(stderr, a.target);
		fprintf(stderr, "': %s\n", errstr);
		return (EXIT_USAGE);
	}
	if ((r = rules_create()) == NULL) {
		fprintf(stderr, "pinhole check: out of memory\n");
		return (EXIT_USAGE);
	}
	if (check_load(r, &a, err, sizeof err) == -1) {
		fprintf(stderr, "%s\n", err);
		goto out;
	}
	gwopts_warn_dead(r);
	rv = rules_match(r, &h, port, &v) ? 0 : 1;
	if (rv == 0 && v.inspect && a.method != NULL)
		rv = check_request(r, &h, port, &a, &v);
	else
		check_print(&h, port, &v, NULL);
	if (rv == 0 && v.inspect)
		printf("inspected: TLS is ended at the gateway and each "
		    "request is checked\n");
out:
	rules_free(r);
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
	    .help = "add the rule 'allow RULE' (repeatable)" },
	{ "header", 0, CMD_ARG_REQUIRED, "'NAME: VALUE'", .key = OPT_HEADER,
	    .help = "with METHOD PATH, a header the request carries "
	    "(repeatable): 'Connection: upgrade' with 'Upgrade: websocket', "
	    "'X-HTTP-Method-Override: DELETE'" },
	{ .name = NULL }
};

const struct cmd_entry cmd_check_entry = {
	.name = "check",
	.usage = "[--policy FILE]... [--allow RULE]... HOST[:PORT] "
	    "[METHOD PATH [--header 'NAME: VALUE']...]",
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
