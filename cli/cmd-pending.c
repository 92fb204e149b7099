/*
 * pinhole pending: the open requests and recent blocked hosts of the
 * user's running sessions.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "cli/ctl.h"
#include "cli/pinhole.h"
#include "lib/json.h"

/* What the command line asked for, and what was seen. */
struct pending_args {
	int		 json;
	int		 all;
	const char	*session;
	size_t		 nrequests;
	size_t		 nblocked;
};

/* Copy a string member into a writer, when present. */
static void
pending_copy_str(struct json_writer *w, const struct json_obj *o,
    const char *from, const char *to)
{
	json_put_str(w, to, json_get_str(o, from));
}

/* Copy an integer member into a writer, when present. */
static void
pending_copy_int(struct json_writer *w, const struct json_obj *o,
    const char *key)
{
	int64_t	v;

	if (json_get_int(o, key, &v) == 0)
		json_put_int(w, key, v);
}

/* Print one item as a JSON line of our own schema. */
static void
pending_print_json(const struct json_obj *o, int request)
{
	static const char	*strs[] = { "reason", "session", "sandbox",
	    "cmd", "since", "state", "via", "first", "last", "scope", "answer",
	    "by", "hint", "fix", "sandboxes", "lifts", "written" };
	static const char	*ints[] = { "count", "pid", "others", "ttl" };
	struct json_writer	 w;
	size_t			 i;

	json_writer_init(&w, 0);
	json_open(&w);
	json_put_str(&w, "kind", request ? "request" : "blocked");
	if (request)
		pending_copy_str(&w, o, "request", "id");
	pending_copy_str(&w, o, "host", "host");
	pending_copy_int(&w, o, "port");
	for (i = 0; i < sizeof strs / sizeof strs[0]; i++)
		pending_copy_str(&w, o, strs[i], strs[i]);
	for (i = 0; i < sizeof ints / sizeof ints[0]; i++)
		pending_copy_int(&w, o, ints[i]);
	json_close(&w);
	if (!w.failed)
		printf("%s\n", w.buf);
	json_writer_free(&w);
}

/*
 * Print "host:port" (IPv6 bracketed), escaped; port 0 is a request's
 * any port, a blocked attempt's lookup of the name.
 */
static void
pending_print_hostport(const struct json_obj *o, int request)
{
	const char	*h = json_get_str(o, "host");
	int64_t		 port = 0;

	json_get_int(o, "port", &port);
	if (request)
		ctl_print_request_target(stdout, h != NULL ? h : "?", port);
	else
		ctl_print_target(stdout, h != NULL ? h : "?", port);
}

/* Print a string member, escaped, or a dash. */
static void
pending_print_member(const struct json_obj *o, const char *key)
{
	const char	*v = json_get_str(o, key);

	ctl_print_safe(stdout, v != NULL && v[0] != '\0' ? v : "-");
}

/* Print one request for people. */
static void
pending_print_request(const struct json_obj *o)
{
	int64_t	count = 1;
	const char *state = json_get_str(o, "state");

	json_get_int(o, "count", &count);
	pending_print_member(o, "request");
	printf("  ");
	pending_print_hostport(o, 1);
	printf("  session ");
	pending_print_member(o, "session");
	printf(", since ");
	pending_print_member(o, "since");
	if (count > 1)
		printf(", asked %lld times", (long long)count);
	if (state != NULL && strcmp(state, "pending") != 0) {
		printf(", ");
		pending_print_member(o, "state");
	}
	putchar('\n');
	ctl_print_sandbox(stdout, "    ", o);
	printf("    reason: ");
	pending_print_member(o, "reason");
	putchar('\n');
	ctl_print_lifts(stdout, "    ", o);
}

/* Print one blocked attempt for people. */
static void
pending_print_blocked(const struct json_obj *o)
{
	int64_t	count = 1;

	json_get_int(o, "count", &count);
	printf("  ");
	pending_print_hostport(o, 0);
	printf(" via ");
	pending_print_member(o, "via");
	printf(", %lld time%s, last ", (long long)count, count == 1 ? "" : "s");
	pending_print_member(o, "last");
	printf(" (session ");
	pending_print_member(o, "session");
	if (json_get_str(o, "sandbox") != NULL) {
		printf(", sandbox ");
		pending_print_member(o, "sandbox");
	}
	printf(")\n");
	if (json_get_str(o, "fix") != NULL) {
		printf("    ");
		pending_print_member(o, "fix");
		putchar('\n');
	}
}

/* Print request items at once; count blocked ones for later. */
static void
pending_item_cb(struct ctl_conn *c, const struct json_obj *o, void *arg)
{
	struct pending_args	*a = arg;
	const char		*item = json_get_str(o, "item");
	int			 request = item != NULL &&
				    strcmp(item, "request") == 0;

	if (a->json)
		pending_print_json(o, request);
	else if (request) {
		if (a->nrequests == 0)
			printf("Requests (answer with pinhole approve ID "
			    "[--once|--session|--always] or pinhole deny "
			    "ID):\n");
		pending_print_request(o);
	}
	if (request)
		a->nrequests++;
	else
		a->nblocked++;
}

/* Print blocked items, after every request. */
static void
pending_blocked_cb(struct ctl_conn *c, const struct json_obj *o, void *arg)
{
	struct pending_args	*a = arg;
	const char		*item = json_get_str(o, "item");

	if (item == NULL || strcmp(item, "blocked") != 0)
		return;
	if (a->nblocked++ == 0)
		printf("Recently blocked:\n");
	pending_print_blocked(o);
}

/* Ask one session for its items. */
static int
pending_ask(struct ctl_conn *c, struct pending_args *a, ctl_item_cb *cb)
{
	struct json_writer	w;
	struct json_obj		reply;
	char			err[256];
	int			rv;

	json_writer_init(&w, 0);
	json_open(&w);
	json_put_str(&w, "op", "pending");
	json_put_bool(&w, "all", a->all);
	rv = ctl_call(c, &w, cb, a, &reply, err, sizeof err);
	json_writer_free(&w);
	if (rv == -1)
		fprintf(stderr, "pinhole pending: %s\n", err);
	return (rv);
}

/* Parse the options. */
static int
pending_parse_args(const struct cmd_entry *self, int argc, char **argv,
    struct pending_args *a)
{
	int	ch;

	while ((ch = cmd_getopt(self, argc, argv)) != -1) {
		if (ch == '?')
			return (-1);
		if (ch == 'j')
			a->json = 1;
		else if (ch == 'A')
			a->all = 1;
		else if (ch == 's')
			a->session = optarg;
	}
	if (optind != argc) {
		cmd_usage_error(self, "takes no arguments");
		return (-1);
	}
	return (0);
}

/* List the open requests and recent blocks of every session. */
static int
cmd_pending_exec(const struct cmd_entry *self, int argc, char **argv)
{
	struct pending_args	 a = { 0, 0, NULL, 0, 0 };
	struct ctl_conn		 conns[CTL_SESSIONS_MAX];
	size_t			 n, i;
	char			 err[256];
	int			 rv = 0;

	if (pending_parse_args(self, argc, argv, &a) == -1)
		return (EXIT_USAGE);
	if ((n = ctl_open_all(conns, CTL_SESSIONS_MAX, a.session, err,
	    sizeof err)) == 0) {
		fprintf(stderr, "pinhole pending: %s\n", err);
		return (1);
	}
	for (i = 0; i < n; i++) {
		if (pending_ask(&conns[i], &a, pending_item_cb) == -1)
			rv = 1;
	}
	if (!a.json && a.nblocked > 0) {
		a.nblocked = 0;
		for (i = 0; i < n; i++)
			pending_ask(&conns[i], &a, pending_blocked_cb);
	}
	if (!a.json && a.nrequests == 0 && a.nblocked == 0)
		printf("No pending requests and nothing blocked lately "
		    "(%zu session%s).\n", n, n == 1 ? "" : "s");
	for (i = 0; i < n; i++)
		ctl_close(&conns[i]);
	return (rv);
}

/* The options of pending. */
static const struct cmd_opt pending_opts[] = {
	{ "json", 'j', CMD_ARG_NONE, NULL,
	    .help = "one JSON object a line: kind (request or blocked), id, "
	    "host, port, reason, session, sandbox, cmd, pid, since, state, "
	    "via, count, ..." },
	{ "all", 'A', CMD_ARG_NONE, NULL,
	    .help = "also requests already decided" },
	{ "session", 's', CMD_ARG_REQUIRED, "SESSION",
	    .help = "only this session (default: every running session of "
	    "this user)" },
	{ .name = "session-id" },
	{ .name = NULL }
};

const struct cmd_entry cmd_pending_entry = {
	.name = "pending",
	.usage = "[--json] [--all] [--session SESSION]",
	.summary = "List the sandbox's open requests and recently blocked hosts",
	.opts = pending_opts,
	.help =
	    "Answer a request with pinhole approve ID or pinhole deny ID, or\n"
	    "answer them as they come with pinhole watch.  Each request names\n"
	    "the sandbox that asked (its id, pid and command) when the\n"
	    "gateway knows it.  Text that came from the sandbox (reasons,\n"
	    "names) is shown escaped.\n",
	.exec = cmd_pending_exec,
};
