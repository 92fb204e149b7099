/*
 * pinhole: default-deny network access for sandboxed commands.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "cli/inside.h"
#include "cli/pinhole.h"
#include "lib/log.h"

/* Is --help or -h among the options (before any "--")? */
static int
wants_help(int argc, char **argv)
{
	int	i;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			break;
		if (strcmp(argv[i], "--help") == 0 ||
		    strcmp(argv[i], "-h") == 0)
			return (1);
	}
	return (0);
}

/* Dispatch to the subcommand named first. */
int
main(int argc, char **argv)
{
	const struct cmd_entry	*cmd;
	const char		*near;

	log_init("pinhole", 0);
	if (argc < 2) {
		fprintf(stderr, "pinhole: no command given "
		    "(try 'pinhole help')\n");
		return (EXIT_USAGE);
	}
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0)
		argv[1] = (char *)"version";
	else if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)
		argv[1] = (char *)"help";
	if ((cmd = cmd_find(argv[1])) == NULL) {
		near = cmd_nearest(argv[1]);
		fprintf(stderr, "pinhole: unknown command '%s' (%s%s%s)\n",
		    argv[1], near != NULL ? "did you mean '" :
		    "try 'pinhole help'", near != NULL ? near : "",
		    near != NULL ? "'?" : "");
		return (EXIT_USAGE);
	}
	if (wants_help(argc - 1, argv + 1)) {
		cmd_print_help(cmd);
		return (0);
	}
	if (cmd_person(cmd) && inside_sandbox()) {
		inside_refuse(cmd->name);
		return (strcmp(cmd->name, "run") == 0 ? 125 : 1);
	}
	optind = 1;
	return (cmd->exec(cmd, argc - 1, argv + 1));
}
