/*
 * The subcommand table and the option handling they all share.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli/pinhole.h"

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

/*
 * getopt_long() that reports unknown options and missing arguments our
 * way.  Returns the option, -1 at the end, or '?' after reporting.
 */
int
cmd_getopt(const struct cmd_entry *cmd, int argc, char **argv,
    const char *shortopts, const struct option *longopts)
{
	int	ch;

	opterr = 0;
	ch = getopt_long(argc, argv, shortopts, longopts, NULL);
	if (ch == '?' || ch == ':') {
		if (optopt != 0 && ch == ':')
			cmd_usage_error(cmd, "option '-%c' needs a value",
			    optopt);
		else if (optopt != 0)
			cmd_usage_error(cmd, "unknown option '-%c'", optopt);
		else
			cmd_usage_error(cmd, "unknown option or missing value "
			    "in '%s'", argv[optind - 1]);
		return ('?');
	}
	return (ch);
}
