/*
 * pinhole help, pinhole version.
 */
#include "config.h"

#include <stdio.h>

#include "cli/pinhole.h"

/* List the subcommands, or show one's help. */
static int
cmd_help_exec(const struct cmd_entry *self, int argc, char **argv)
{
	const struct cmd_entry	**cmd, *one;
	const char		*near;

	if (argc > 1) {
		if ((one = cmd_find(argv[1])) == NULL) {
			near = cmd_nearest(argv[1]);
			return (cmd_usage_error(self, "unknown command "
			    "'%s'%s%s%s", argv[1], near != NULL ?
			    " (did you mean '" : "", near != NULL ? near : "",
			    near != NULL ? "'?)" : ""));
		}
		cmd_print_help(one);
		return (0);
	}
	printf("usage: pinhole COMMAND [OPTIONS] [ARGS]\n\n"
	    "pinhole runs a command with default-deny network access: only\n"
	    "hosts on its allowlist are reachable, and every refusal is logged.\n\n"
	    "Commands:\n");
	for (cmd = cmd_table; *cmd != NULL; cmd++)
		printf("  %-10s %s\n", (*cmd)->name, (*cmd)->summary);
	printf("\n'pinhole COMMAND --help' tells more about each; "
	    "see also pinhole(1), pinhole-policy(5).\n");
	return (0);
}

/* Print the version. */
static int
cmd_version_exec(const struct cmd_entry *self, int argc, char **argv)
{
	if (argc > 1)
		return (cmd_usage_error(self, "takes no arguments"));
	printf("pinhole %s\n", PACKAGE_VERSION);
	return (0);
}

const struct cmd_entry cmd_help_entry = {
	.name = "help",
	.usage = "[COMMAND]",
	.summary = "List the commands, or explain one",
	.exec = cmd_help_exec,
};

const struct cmd_entry cmd_version_entry = {
	.name = "version",
	.usage = "",
	.summary = "Print the version",
	.exec = cmd_version_exec,
};
