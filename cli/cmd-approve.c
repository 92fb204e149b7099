/*
 * pinhole approve: grant a pending request, once (for one sandbox), for
 * the session, or always (written into the policy).
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "cli/ctl.h"
#include "cli/pinhole.h"
#include "lib/json.h"
#include "proxy/escalate/escalate.h"

enum {
	OPT_SESSION = 256, OPT_ALWAYS, OPT_SANDBOX
};

/* Grant a pending request. */
static int
cmd_approve_exec(const struct cmd_entry *self, int argc, char **argv)
{
	struct json_writer	 w;
	const char		*scope = "once", *session = NULL;
	const char		*sandbox = NULL;
	long			 ttl = 0;
	int			 ch, nscopes = 0, rv;

	while ((ch = cmd_getopt(self, argc, argv)) != -1) {
		if (ch == '?')
			return (EXIT_USAGE);
		if (ch == 'o' || ch == OPT_SESSION || ch == OPT_ALWAYS) {
			scope = ch == 'o' ? "once" : ch == OPT_SESSION ?
			    "session" : "always";
			nscopes++;
		} else if (ch == 't' &&
		    (ttl = escalate_duration_parse(optarg)) <= 0)
			return (cmd_usage_error(self, "bad --ttl '%s' "
			    "(seconds, or a number with s, m, h or d)", optarg));
		else if (ch == 's')
			session = optarg;
		else if (ch == OPT_SANDBOX && (optarg[0] == '\0' ||
		    strlen(optarg) >= AUDIT_SANDBOX_ID_LEN))
			return (cmd_usage_error(self, "bad --sandbox '%s' "
			    "(the number pinhole pending shows)", optarg));
		else if (ch == OPT_SANDBOX)
			sandbox = optarg;
	}
	if (nscopes > 1)
		return (cmd_usage_error(self, "one of --once, --session, "
		    "--always"));
	if (sandbox != NULL && strcmp(scope, "once") != 0)
		return (cmd_usage_error(self, "--sandbox goes with --once: "
		    "a --%s grant is for every sandbox", scope));
	if (optind != argc - 1)
		return (cmd_usage_error(self, optind == argc ?
		    "no request ID given" : "one request ID only"));
	json_writer_init(&w, 0);
	json_open(&w);
	json_put_str(&w, "op", "approve");
	json_put_str(&w, "scope", scope);
	if (sandbox != NULL)
		json_put_str(&w, "sandbox", sandbox);
	if (ttl > 0)
		json_put_int(&w, "ttl", ttl);
	rv = ctl_decide(self->name, session, argv[optind], &w);
	json_writer_free(&w);
	return (rv);
}

/* The options of approve. */
static const struct cmd_opt approve_opts[] = {
	{ "once", 'o', CMD_ARG_NONE, NULL,
	    .help = "one more connection, from the sandbox that asked (the "
	    "default)" },
	{ "sandbox", 0, CMD_ARG_REQUIRED, "N", .key = OPT_SANDBOX,
	    .help = "--once: for sandbox N of the session, one of those "
	    "that asked" },
	{ "session", 0, CMD_ARG_NONE, NULL, .key = OPT_SESSION,
	    .help = "for every command of the session, until it stops" },
	{ "always", 0, CMD_ARG_NONE, NULL, .key = OPT_ALWAYS,
	    .help = "and write it into the policy file" },
	{ "ttl", 't', CMD_ARG_REQUIRED, "DURATION",
	    .help = "end the grant sooner: 90, 90s, 15m, 2h, 7d" },
	{ "session-id", 's', CMD_ARG_REQUIRED, "SESSION",
	    .help = "the session holding ID, when several sessions run (or "
	    "write SESSION/ID)" },
	{ .name = NULL }
};

const struct cmd_entry cmd_approve_entry = {
	.name = "approve",
	.usage = "[--once [--sandbox N]|--session|--always] "
	    "[--ttl DURATION] [--session-id SESSION] ID",
	.summary = "Grant a pending request for a host",
	.opts = approve_opts,
	.help =
	    "ID is what pinhole pending or pinhole watch shows\n"
	    "(r7f3a09c41e2b5d86).  A --once grant is for one sandbox: the\n"
	    "one that asked first, or the one --sandbox names; the other\n"
	    "sandboxes that asked go on waiting, as a new request.  The\n"
	    "decision is audited with your uid.  A request no grant can\n"
	    "open (a deny rule, a private, loopback or metadata address) is\n"
	    "not approved: the error says what the policy would have to\n"
	    "change.  Exit status: 0 granted, 1 not (no such pending request,\n"
	    "no session, no grant can open it), 2 bad usage.\n",
	.exec = cmd_approve_exec,
};
