/*
 * The subcommand table and the option handling they all share.
 */
#include "config.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli/pinhole.h"
#include "lib/log.h"

extern const struct cmd_entry cmd_check_entry;
extern const struct cmd_entry cmd_help_entry;
extern const struct cmd_entry cmd_proxy_entry;
extern const struct cmd_entry cmd_run_entry;
extern const struct cmd_entry cmd_version_entry;
extern const struct cmd_entry cmd_allow_entry;
extern const struct cmd_entry cmd_disallow_entry;
extern const struct cmd_entry cmd_log_entry;
extern const struct cmd_entry cmd_request_entry;
extern const struct cmd_entry cmd_pending_entry;
extern const struct cmd_entry cmd_approve_entry;
extern const struct cmd_entry cmd_deny_entry;
extern const struct cmd_entry cmd_watch_entry;

/* Every subcommand, in the order `pinhole help` lists them. */
const struct cmd_entry *cmd_table[] = {
	&cmd_help_entry,
	&cmd_version_entry,
	&cmd_check_entry,
	&cmd_run_entry,
	&cmd_proxy_entry,
	&cmd_allow_entry,
	&cmd_disallow_entry,
	&cmd_log_entry,
	&cmd_request_entry,
	&cmd_pending_entry,
	&cmd_approve_entry,
	&cmd_deny_entry,
	&cmd_watch_entry,
	NULL
};

/* Find a subcommand by its name. */
const struct cmd_entry *
cmd_find(const char *name)
{
	const struct cmd_entry	**cmd;

	for (cmd = cmd_table; *cmd != NULL; cmd++) {
		if (strcmp((*cmd)->name, name) == 0)
			return (*cmd);
	}
	return (NULL);
}

/* Print `pinhole CMD --help`. */
void
cmd_print_help(const struct cmd_entry *cmd)
{
	printf("usage: pinhole %s%s%s\n", cmd->name,
	    cmd->usage[0] != '\0' ? " " : "", cmd->usage);
	printf("\n%s.\n", cmd->summary);
	if (cmd->help != NULL && cmd->help[0] != '\0')
		printf("\n%s", cmd->help);
}

/* Report a usage error in one line with a hint; return the exit status. */
int
cmd_usage_error(const struct cmd_entry *cmd, const char *fmt, ...)
{
	va_list	ap;

	fprintf(stderr, "pinhole %s: ", cmd->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (try 'pinhole %s --help')\n", cmd->name);
	return (EXIT_USAGE);
}

/* Report what getopt_long() found wrong: ch is ':' or '?'. */
static void
cmd_getopt_error(const struct cmd_entry *cmd, char **argv,
    const char *shortopts, int ch)
{
	const char	*arg = argv[optind - 1];
	int		 lng, n = (int)strcspn(arg, "=");	/* as typed */

	/*
	 * A long option always ends its element; a short one is in the
	 * element only if it is not itself unknown (optopt is then
	 * neither 0 nor an option letter).
	 */
	if (ch == ':')
		lng = strncmp(arg, "--", 2) == 0;
	else
		lng = optopt == 0 || optopt > UCHAR_MAX || (optopt != ':' &&
		    strchr(shortopts, optopt) != NULL);
	if (ch == ':' && lng)
		cmd_usage_error(cmd, "option '%.*s' needs a value", n, arg);
	else if (ch == ':')
		cmd_usage_error(cmd, "option '-%c' needs a value", optopt);
	else if (lng && optopt != 0)
		cmd_usage_error(cmd, "option '%.*s' takes no value", n, arg);
	else if (lng)
		cmd_usage_error(cmd, "unknown option '%.*s'", n, arg);
	else
		cmd_usage_error(cmd, "unknown option '-%c'", optopt);
}

/*
 * getopt_long() that reports unknown options and missing values our
 * way, naming the option as it was typed.  Returns the option, -1 at
 * the end, or '?' after reporting.
 */
int
cmd_getopt(const struct cmd_entry *cmd, int argc, char **argv,
    const char *shortopts, const struct option *longopts)
{
	char	opts[64];
	int	ch, plus = shortopts[0] == '+';

	/* ':' first (after '+') tells a missing value from an unknown option. */
	if (snprintf(opts, sizeof opts, "%s:%s", plus ? "+" : "",
	    shortopts + plus) >= (int)sizeof opts)
		fatalx("%s: options too long", __func__);
	opterr = 0;
	ch = getopt_long(argc, argv, opts, longopts, NULL);
	if (ch == '?' || ch == ':') {
		cmd_getopt_error(cmd, argv, shortopts, ch);
		return ('?');
	}
	return (ch);
}
