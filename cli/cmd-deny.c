/*
 * pinhole deny: refuse a pending request; the reason reaches the agent.
 */
#include "config.h"

#include <stdio.h>

#include "cli/ctl.h"
#include "cli/pinhole.h"
#include "lib/json.h"

/* Refuse a pending request. */
static int
cmd_deny_exec(const struct cmd_entry *self, int argc, char **argv)
{
	struct json_writer	 w;
	const char		*reason = NULL, *session = NULL;
	int			 ch, rv;

	while ((ch = cmd_getopt(self, argc, argv)) != -1) {
		if (ch == '?')
			return (EXIT_USAGE);
		if (ch == 'R')
			reason = optarg;
		else if (ch == 's')
			session = optarg;
	}
	if (optind != argc - 1)
		return (cmd_usage_error(self, optind == argc ?
		    "no request ID given" : "one request ID only"));
	json_writer_init(&w, 0);
	json_open(&w);
	json_put_str(&w, "op", "deny");
	json_put_str(&w, "reason", reason);
	rv = ctl_decide(self->name, session, argv[optind], &w);
	json_writer_free(&w);
	return (rv);
}

/* The options of deny. */
static const struct cmd_opt deny_opts[] = {
	{ "reason", 'R', CMD_ARG_REQUIRED, "TEXT",
	    .help = "told to the agent (pinhole request --wait prints it)" },
	{ "session-id", 's', CMD_ARG_REQUIRED, "SESSION",
	    .help = "the session holding ID, when several run" },
	{ .name = "session" },
	{ .name = NULL }
};

const struct cmd_entry cmd_deny_entry = {
	.name = "deny",
	.usage = "[--reason TEXT] [--session-id SESSION] ID",
	.summary = "Refuse a pending request for a host",
	.opts = deny_opts,
	.help =
	    "Exit status: 0 denied, 1 not (no such pending request), 2 bad usage.\n",
	.exec = cmd_deny_exec,
};
