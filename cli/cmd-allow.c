/*
 * pinhole allow, pinhole disallow: add or remove `allow` lines in the
 * person's policy file, in place and atomically (rules_file_edit).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/pinhole.h"
#include "proxy/escalate/escalate.h"
#include "rules/rules.h"

#define ALLOW_MAX_RULES	256

/* What the command line asked for. */
struct allow_args {
	char		 path[4096];
	const char	*rules[ALLOW_MAX_RULES];
	size_t		 nrules;
	char		*ending[ALLOW_MAX_RULES];	/* "RULE until TIME" */
};

/* Give each rule an end, secs from now: "RULE until TIME". */
static int
allow_set_end(const struct cmd_entry *self, struct allow_args *a, long secs)
{
	char	when[32];
	size_t	i;

	rules_time_format(time(NULL) + secs, when, sizeof when);
	for (i = 0; i < a->nrules; i++) {
		if (strchr(a->rules[i], ' ') != NULL) {
			cmd_usage_error(self, "--for: '%s' has an end already",
			    a->rules[i]);
			return (-1);
		}
		if (asprintf(&a->ending[i], "%s until %s", a->rules[i],
		    when) == -1) {
			a->ending[i] = NULL;
			fprintf(stderr, "pinhole %s: out of memory\n",
			    self->name);
			return (-1);
		}
		a->rules[i] = a->ending[i];
	}
	return (0);
}

/* Free what allow_set_end() made. */
static void
allow_args_free(struct allow_args *a)
{
	size_t	i;

	for (i = 0; i < a->nrules; i++)
		free(a->ending[i]);
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
	if (optind == argc) {
		cmd_usage_error(self, "no RULE given");
		return (-1);
	}
	if (argc - optind > ALLOW_MAX_RULES) {
		cmd_usage_error(self, "more than %d rules", ALLOW_MAX_RULES);
		return (-1);
	}
	for (; optind < argc; optind++)
		a->rules[a->nrules++] = argv[optind];
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

/* Edit the file for every rule; returns the results or NULL (exit 2). */
static struct rules_edit *
allow_edit(const struct cmd_entry *self, int argc, char **argv,
    struct allow_args *a, int remove)
{
	struct rules_edit	*res;
	char			 err[1024];

	if (allow_parse_args(self, argc, argv, a) == -1)
		return (NULL);
	if ((res = calloc(a->nrules, sizeof *res)) == NULL) {
		fprintf(stderr, "pinhole %s: out of memory\n", self->name);
		return (NULL);
	}
	if (rules_file_edit(a->path, remove, a->rules, a->nrules, res, err,
	    sizeof err) == -1) {
		fprintf(stderr, "%s\n", err);
		free(res);
		return (NULL);
	}
	return (res);
}

/*
 * Say which rules the system policy still denies: no rule of the user's
 * lifts a deny of the system layer, only its administrator can.
 */
static void
allow_warn_system(const struct allow_args *a, const struct rules_edit *res)
{
	struct rules_verdict	 v;
	struct rules		*sys;
	uint16_t		 port;
	char			 err[1024];
	size_t			 i;

	fflush(stdout);
	if ((sys = rules_create()) == NULL)
		return;
	if (rules_load_system(sys, rules_system_dir(), err, sizeof err) == -1) {
		fprintf(stderr, "pinhole allow: the system policy does not load, "
		    "and no gateway starts until it does: %s\n", err);
		goto out;
	}
	for (i = 0; i < a->nrules; i++) {
		if (rules_edit_denied(sys, a->rules[i], &port, &v) == 1)
			fprintf(stderr, "pinhole allow: the system policy still "
			    "denies %s on port %u (%s:%u: %s): no rule of yours "
			    "lifts that, only an administrator can\n",
			    res[i].rule, port, v.file, v.line, v.text);
	}
out:
	rules_free(sys);
}

/* Add each rule unless it is there already. */
static int
cmd_allow_exec(const struct cmd_entry *self, int argc, char **argv)
{
	struct allow_args	 a = { .nrules = 0 };
	struct rules_edit	*res;
	size_t			 i;

	if ((res = allow_edit(self, argc, argv, &a, 0)) == NULL) {
		allow_args_free(&a);
		return (EXIT_USAGE);
	}
	for (i = 0; i < a.nrules; i++) {
		printf("%s %s:%u: allow %s\n", res[i].count ? "added to" :
		    "already in", a.path, res[i].line, res[i].rule);
	}
	allow_warn_system(&a, res);
	free(res);
	allow_args_free(&a);
	return (0);
}

/* Remove each rule's allow lines; exit 1 when a rule had none. */
static int
cmd_disallow_exec(const struct cmd_entry *self, int argc, char **argv)
{
	struct allow_args	 a = { .nrules = 0 };
	struct rules_edit	*res;
	size_t			 i;
	int			 rv = 0;

	if ((res = allow_edit(self, argc, argv, &a, 1)) == NULL)
		return (EXIT_USAGE);
	for (i = 0; i < a.nrules; i++) {
		if (res[i].count == 0) {
			fprintf(stderr, "pinhole disallow: no such rule in %s: "
			    "allow %s\n", a.path, res[i].rule);
			rv = 1;
		} else
			printf("removed from %s:%u: allow %s%s\n", a.path,
			    res[i].line, res[i].rule, res[i].count > 1 ?
			    " (and its duplicates)" : "");
	}
	free(res);
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
	.summary = "Add hosts to the policy file",
	.opts = allow_opts,
	.help =
	    "Each RULE is written as in the policy: pypi.org, *.example.org,\n"
	    "github.com:22,443, 203.0.113.0/24:443.  An `allow RULE` line is\n"
	    "appended for each, unless the same rule (in any spelling) is\n"
	    "there already.  The file keeps its comments, order and mode; it\n"
	    "is replaced atomically, and only when the whole new policy\n"
	    "parses.  A missing file is created, with its directory.\n"
	    "Running gateways pick the change up at once.  A rule the system\n"
	    "policy (" SYSCONFDIR "/pinhole) denies is added all the same,\n"
	    "and said so: its deny wins until an administrator lifts it.\n"
	    "\n"
	    "Exit status: 0 added or already there, 2 bad usage or a rule or\n"
	    "policy refused (reported as FILE:LINE: message).\n"
	    "See pinhole-policy(5).\n",
	.exec = cmd_allow_exec,
};

const struct cmd_entry cmd_disallow_entry = {
	.name = "disallow",
	.usage = "[--policy FILE] RULE...",
	.summary = "Remove hosts from the policy file",
	.opts = disallow_opts,
	.help =
	    "Removes every `allow` line of the policy file for the same rule\n"
	    "(PyPI.org. is pypi.org; github.com:443,22 is github.com:22,443).\n"
	    "Lines of included files and presets are not touched, and no\n"
	    "`deny` line is ever added: to block a host that an include\n"
	    "allows, write `deny HOST` in the policy yourself.\n"
	    "\n"
	    "Exit status: 0 removed, 1 no such rule in the file, 2 bad usage\n"
	    "or a policy refused.  See pinhole-policy(5).\n",
	.exec = cmd_disallow_exec,
};
