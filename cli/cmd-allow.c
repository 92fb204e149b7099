/*
 * pinhole allow, pinhole disallow: add or remove lines of the person's
 * policy file (allow, deny, allow-private, include, ...), in place and
 * atomically (rules_file_edit), a rule added refused when it cannot take
 * effect.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/pinhole.h"
#include "proxy/escalate/escalate.h"
#include "rules/policy.h"
#include "rules/rules.h"

#define ALLOW_MAX_RULES	256
#define ALLOW_ERR_LEN	4096

/* What the command line asked for. */
struct allow_args {
	char			 path[4096];
	struct rules_lines	 lines;
};

/* What the policy after an edit says of the rules that cannot take effect. */
struct allow_vet {
	const char		*path;
	const struct rules_edit	*res;
	size_t			 n;
	char			**before;	/* "FILE:LINE" dead already */
	size_t			 nbefore;
	char			 refused[ALLOW_ERR_LEN];
	char			 warn[ALLOW_ERR_LEN];
	int			 dead;		/* a new rule is refused */
	int			 sysbad;	/* the system policy failed */
};

/* Give each allow line an end, secs from now: "allow RULE until TIME". */
static int
allow_set_end(const struct cmd_entry *self, struct allow_args *a, long secs)
{
	char	when[32], *line;
	size_t	i;

	rules_time_format(time(NULL) + secs, when, sizeof when);
	for (i = 0; i < a->lines.n; i++) {
		if (strncmp(a->lines.v[i], "allow ", 6) != 0 ||
		    strstr(a->lines.v[i], " until ") != NULL) {
			cmd_usage_error(self, "--for: '%s' %s", a->lines.v[i],
			    strncmp(a->lines.v[i], "allow ", 6) != 0 ?
			    "is not an allow rule, and only those end" :
			    "has an end already");
			return (-1);
		}
		if (asprintf(&line, "%s until %s", a->lines.v[i], when) ==
		    -1) {
			fprintf(stderr, "pinhole %s: out of memory\n",
			    self->name);
			return (-1);
		}
		free(a->lines.v[i]);
		a->lines.v[i] = line;
	}
	return (0);
}

/* Turn the arguments into policy lines. */
static int
allow_lines(const struct cmd_entry *self, int argc, char **argv,
    struct allow_args *a)
{
	char	err[1024];

	if (optind == argc) {
		cmd_usage_error(self, "no RULE given");
		return (-1);
	}
	if (rules_args_lines((const char *const *)argv + optind,
	    (size_t)(argc - optind), &a->lines, err, sizeof err) == -1) {
		cmd_usage_error(self, "%s", err);
		return (-1);
	}
	if (a->lines.n > ALLOW_MAX_RULES) {
		cmd_usage_error(self, "more than %d rules", ALLOW_MAX_RULES);
		return (-1);
	}
	return (0);
}

/* Collect --policy and the rules; find the default policy file. */
static int
allow_parse_args(const struct cmd_entry *self, int argc, char **argv,
    struct allow_args *a)
{
	const char	*policy = NULL;
	long		 secs = 0;
	int		 ch;

	while ((ch = cmd_getopt(self, argc, argv)) != -1) {
		if (ch == '?')
			return (-1);
		if (ch == 'p')
			policy = optarg;
		else if ((secs = escalate_duration_parse(optarg)) <= 0) {
			cmd_usage_error(self, "--for: bad duration '%s' (90s, "
			    "15m, 2h, 7d)", optarg);
			return (-1);
		}
	}
	if (allow_lines(self, argc, argv, a) == -1)
		return (-1);
	if (secs > 0 && allow_set_end(self, a, secs) == -1)
		return (-1);
	if (policy != NULL &&
	    (size_t)snprintf(a->path, sizeof a->path, "%s", policy) <
	    sizeof a->path)
		return (0);
	if (policy != NULL ||
	    rules_default_path(a->path, sizeof a->path) == -1) {
		cmd_usage_error(self, policy != NULL ? "policy path too long" :
		    "no policy file: set HOME or XDG_CONFIG_HOME, or give "
		    "--policy FILE");
		return (-1);
	}
	return (0);
}

/* Add a line of text to a buffer of lines. */
static void
allow_say(char *buf, size_t len, const char *fmt, ...)
{
	va_list	ap;
	size_t	n = strlen(buf);

	if (n > 0 && n + 1 < len) {
		buf[n++] = '\n';
		buf[n] = '\0';
	}
	va_start(ap, fmt);
	vsnprintf(buf + n, len - n, fmt, ap);
	va_end(ap);
}

/*
 * The policy a gateway would load with this text as the user's file:
 * the system layer, then the text.  NULL when the text does not parse.
 */
static struct rules *
allow_policy(struct allow_vet *v, const char *path, const char *text,
    size_t len)
{
	struct rules	*r;
	char		 err[1024];

	if ((r = rules_create()) == NULL)
		return (NULL);
	if (rules_load_system(r, rules_system_dir(), err, sizeof err) == -1 &&
	    !v->sysbad) {
		v->sysbad = 1;
		allow_say(v->warn, sizeof v->warn, "pinhole allow: the system "
		    "policy does not load, and no gateway starts until it "
		    "does: %s (only an administrator can fix it)", err);
	}
	if (rules_load_buffer(r, path, text, len, err, sizeof err) == -1) {
		rules_free(r);
		return (NULL);
	}
	return (r);
}

/* "FILE:LINE" of a rule, for telling rules apart across two loads. */
static void
allow_where(const struct rules_verdict *rule, char *buf, size_t len)
{
	snprintf(buf, len, "%s:%u:%d", rule->file != NULL ? rule->file : "",
	    rule->line, (int)rule->layer);
}

/* Note a rule that could not take effect before the edit either. */
static int
allow_before_cb(const struct rules_dead *d, void *arg)
{
	struct allow_vet	*v = arg;
	char			 where[4200], **b;

	allow_where(&d->rule, where, sizeof where);
	if ((b = reallocarray(v->before, v->nbefore + 1, sizeof *b)) == NULL)
		return (-1);
	v->before = b;
	if ((b[v->nbefore] = strdup(where)) == NULL)
		return (-1);
	v->nbefore++;
	return (0);
}

/* Is this rule one the edit adds? */
static int
allow_is_new(const struct allow_vet *v, const struct rules_dead *d)
{
	size_t	i;

	if (d->rule.layer != RULES_USER || d->rule.file == NULL ||
	    strcmp(d->rule.file, v->path) != 0)
		return (0);
	for (i = 0; i < v->n; i++) {
		if (v->res[i].count > 0 && v->res[i].line == d->rule.line)
			return (1);
	}
	return (0);
}

/* Was this rule dead before the edit? */
static int
allow_was_dead(const struct allow_vet *v, const struct rules_dead *d)
{
	char	where[4200];
	size_t	i;

	allow_where(&d->rule, where, sizeof where);
	for (i = 0; i < v->nbefore; i++) {
		if (strcmp(v->before[i], where) == 0)
			return (1);
	}
	return (0);
}

/*
 * Judge a rule that cannot take effect after the edit: a rule added
 * that takes effect nowhere is refused, one that takes effect only on
 * some of its ports is added and said; a rule of the policy the edit
 * leaves idle is said.
 */
static int
allow_after_cb(const struct rules_dead *d, void *arg)
{
	struct allow_vet	*v = arg;
	const char		*admin = d->by_deny && d->by.layer ==
				    RULES_SYSTEM ? "; only an administrator "
				    "can lift a deny of the system policy" : "";
	char			 text[2048], where[4200];
	size_t			 skip;

	rules_dead_text(d, text, sizeof text);
	if (!allow_is_new(v, d)) {
		if (!allow_was_dead(v, d))
			allow_say(v->warn, sizeof v->warn, "pinhole allow: "
			    "this leaves another rule idle: %s", text);
		return (0);
	}
	policy_rule_text(&d->rule, where, sizeof where);
	skip = strncmp(text, where, strlen(where)) == 0 ?
	    strlen(where) + 2 : 0;
	if (!d->all) {
		allow_say(v->warn, sizeof v->warn, "pinhole allow: %s%s",
		    text + skip, admin);
		return (0);
	}
	v->dead = 1;
	allow_say(v->refused, sizeof v->refused, "pinhole allow: not added, "
	    "for it cannot take effect: %s%s", text + skip, admin);
	return (0);
}

/* Refuse an edit that adds a rule that cannot take effect. */
static int
allow_vet_cb(void *arg, const char *path, const char *old, size_t oldlen,
    const char *text, size_t len, const struct rules_edit *res, size_t n,
    char *err, size_t errlen)
{
	struct allow_vet	*v = arg;
	struct rules		*before, *after;

	v->path = path;
	v->res = res;
	v->n = n;
	if ((after = allow_policy(v, path, text, len)) == NULL)
		return (0);
	if ((before = allow_policy(v, path, old, oldlen)) != NULL)
		rules_dead(before, allow_before_cb, v);
	rules_dead(after, allow_after_cb, v);
	rules_free(before);
	rules_free(after);
	if (!v->dead)
		return (0);
	snprintf(err, errlen, "%s", v->refused);
	return (-1);
}

/* Free what a vet kept. */
static void
allow_vet_free(struct allow_vet *v)
{
	size_t	i;

	for (i = 0; i < v->nbefore; i++)
		free(v->before[i]);
	free(v->before);
}

/*
 * Edit the file for every rule; returns the results, or NULL with *rv
 * the exit status (1: a rule refused as one that cannot take effect).
 */
static struct rules_edit *
allow_edit(const struct cmd_entry *self, int argc, char **argv,
    struct allow_args *a, struct allow_vet *v, int *rv)
{
	const struct rules_file_vet	 vet = { allow_vet_cb, v };
	struct rules_edit		*res;
	char				 err[ALLOW_ERR_LEN];
	int				 remove = v == NULL;

	*rv = EXIT_USAGE;
	if (allow_parse_args(self, argc, argv, a) == -1)
		return (NULL);
	if ((res = calloc(a->lines.n, sizeof *res)) == NULL) {
		fprintf(stderr, "pinhole %s: out of memory\n", self->name);
		return (NULL);
	}
	if (rules_file_edit(a->path, remove, (const char *const *)a->lines.v,
	    a->lines.n, res, remove ? NULL : &vet, err, sizeof err) == -1) {
		fprintf(stderr, "%s\n", err);
		if (v != NULL && v->dead)
			*rv = 1;
		free(res);
		return (NULL);
	}
	*rv = 0;
	return (res);
}

/* Add each rule unless it is there already. */
static int
cmd_allow_exec(const struct cmd_entry *self, int argc, char **argv)
{
	struct allow_args	 a;
	struct allow_vet	 v;
	struct rules_edit	*res;
	size_t			 i;
	int			 rv = 0;

	memset(&a, 0, sizeof a);
	memset(&v, 0, sizeof v);
	if ((res = allow_edit(self, argc, argv, &a, &v, &rv)) != NULL) {
		for (i = 0; i < a.lines.n; i++) {
			printf("%s %s:%u: %s\n", res[i].count ? "added to" :
			    "already in", a.path, res[i].line, res[i].rule);
		}
		fflush(stdout);
		if (v.warn[0] != '\0')
			fprintf(stderr, "%s\n", v.warn);
	}
	free(res);
	allow_vet_free(&v);
	rules_lines_free(&a.lines);
	return (rv);
}

/* Remove each rule's lines; exit 1 when a rule had none. */
static int
cmd_disallow_exec(const struct cmd_entry *self, int argc, char **argv)
{
	struct allow_args	 a;
	struct rules_edit	*res;
	size_t			 i;
	int			 rv = 0;

	memset(&a, 0, sizeof a);
	if ((res = allow_edit(self, argc, argv, &a, NULL, &rv)) == NULL) {
		rules_lines_free(&a.lines);
		return (rv);
	}
	for (i = 0; i < a.lines.n; i++) {
		if (res[i].count == 0) {
			fprintf(stderr, "pinhole disallow: no such rule in %s: "
			    "%s\n", a.path, res[i].rule);
			rv = 1;
		} else
			printf("removed from %s:%u: %s%s\n", a.path,
			    res[i].line, res[i].rule, res[i].count > 1 ?
			    " (and its duplicates)" : "");
	}
	free(res);
	rules_lines_free(&a.lines);
	return (rv);
}

/* The options of allow. */
static const struct cmd_opt allow_opts[] = {
	{ "policy", 'p', CMD_ARG_REQUIRED, "FILE",
	    .help = "edit FILE instead of the user's policy file, "
	    "$XDG_CONFIG_HOME/pinhole/policy, or ~/.config/pinhole/policy "
	    "when XDG_CONFIG_HOME is unset" },
	{ "for", 'f', CMD_ARG_REQUIRED, "DURATION",
	    .help = "the rules end after DURATION (90s, 15m, 2h, 7d): "
	    "written `allow RULE until TIME`" },
	{ .name = NULL }
};

/* The options of disallow. */
static const struct cmd_opt disallow_opts[] = {
	{ "policy", 'p', CMD_ARG_REQUIRED, "FILE",
	    .help = "edit FILE instead of the user's policy file" },
	{ .name = NULL }
};

const struct cmd_entry cmd_allow_entry = {
	.name = "allow",
	.usage = "[--policy FILE] [--for DURATION] RULE...",
	.summary = "Add rules to the policy file",
	.opts = allow_opts,
	.help =
	    "Each RULE is a line of the policy: pypi.org, *.example.org,\n"
	    "github.com:22,443, 'github.com read-only path /myorg/**',\n"
	    "allow-private 10.0.0.0/8, deny upload.pypi.org, include\n"
	    "preset:python (pinhole check --presets lists them),\n"
	    "allow-vsock, allow-socket PATH, secret NAME for HOSTS; a\n"
	    "rule with no directive is an allow rule.  Typed without\n"
	    "quotes, its words are put back together by what each\n"
	    "directive takes; a word that is no host but a misspelt\n"
	    "directive or constraint is refused.  A line is appended for\n"
	    "each rule, unless the same rule (in any spelling) is there\n"
	    "already.  The file keeps its comments, order and mode; it is\n"
	    "replaced atomically, and only when the whole new policy\n"
	    "parses.  A missing file is created, with its directory.\n"
	    "Running gateways pick the change up at once.\n"
	    "\n"
	    "The policy after the edit, the system policy (" SYSCONFDIR
	    "/pinhole)\n"
	    "first, is read as a gateway reads it: a rule that could not\n"
	    "take effect there (a deny covers all its ports, or an allow\n"
	    "rule without constraints makes its constraints moot) is\n"
	    "refused; one that takes effect on some ports only, or that\n"
	    "leaves another rule idle, is added and said.\n"
	    "\n"
	    "Exit status: 0 added or already there, 1 a rule refused that\n"
	    "could not take effect (nothing added), 2 bad usage or a rule\n"
	    "or policy refused (reported as FILE:LINE: message).  See\n"
	    "pinhole-policy(5).\n",
	.exec = cmd_allow_exec,
};

const struct cmd_entry cmd_disallow_entry = {
	.name = "disallow",
	.usage = "[--policy FILE] RULE...",
	.summary = "Remove rules from the policy file",
	.opts = disallow_opts,
	.help =
	    "Removes every line of the policy file for the same rule, read as\n"
	    "pinhole allow reads it (PyPI.org. is pypi.org; github.com:443,22\n"
	    "is github.com:22,443; deny x:1-65535 is deny x).  Lines of\n"
	    "included files and presets are not touched: to block a host that\n"
	    "an include allows, pinhole allow deny HOST.\n"
	    "\n"
	    "Exit status: 0 removed, 1 no such rule in the file, 2 bad usage\n"
	    "or a policy refused.  See pinhole-policy(5).\n",
	.exec = cmd_disallow_exec,
};
