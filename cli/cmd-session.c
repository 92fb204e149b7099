/*
 * pinhole session: a long-lived gateway, named, that an agent's session
 * shares: start, list, status, stop.  What a session does while it runs,
 * its lock and its record in the control directory, is
 * daemon/session.c's; here, the command line and what is printed.
 */
#include "config.h"

#include <dirent.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/ctl.h"
#include "cli/gwopts-argv.h"
#include "cli/pinhole.h"
#include "cli/proxy.h"
#include "daemon/gwopts.h"
#include "daemon/session.h"
#include "lib/json.h"
#include "lib/log.h"
#include "proxy/escalate/control.h"
#include "proxy/escalate/escalate.h"

enum {
	OPT_FOREGROUND = GWOPTS_LAST + 16, OPT_MAX_SANDBOXES, OPT_STOP_IDLE
};

/* Refuse a bad session name; returns EXIT_USAGE. */
static int
session_name_error(const struct cmd_entry *cmd, const char *name)
{
	return (cmd_usage_error(cmd, "bad session name '%s' (letters, digits, "
	    "'.', '_', '-', not starting with '.'; at most 64)", name));
}

/* Copy a record's members to w. */
static void
session_put(struct json_writer *w, const struct json_obj *rec)
{
	static const char	*keys[] = { "name", "since", "listeners",
				    "log", "control" };
	int64_t			 pid = 0;
	size_t			 i;

	for (i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		if (i == 1 && json_get_int(rec, "pid", &pid) == 0)
			json_put_int(w, "pid", pid);
		if (json_get_str(rec, keys[i]) != NULL)
			json_put_str(w, keys[i], json_get_str(rec, keys[i]));
	}
	if (json_get_int(rec, "attached", &pid) == 0)
		json_put_int(w, "attached", pid);
	if (json_get_int(rec, "attached_total", &pid) == 0)
		json_put_int(w, "attached_total", pid);
	if (json_get_int(rec, "idle_since", &pid) == 0)
		json_put_int(w, "idle_s", time(NULL) > pid ? time(NULL) - pid :
		    0);
	if (json_get_int(rec, "stop_idle", &pid) == 0)
		json_put_int(w, "stop_idle", pid);
}

/* A record member, or "-". */
static const char *
session_str(const struct json_obj *rec, const char *key)
{
	const char	*v = json_get_str(rec, key);

	return (v != NULL && v[0] != '\0' ? v : "-");
}

#define SESSION_ROW	"%-16s %-8s %-20s %-28s %-6s %s"

/* The head of the table sessions are listed in. */
static void
session_print_head(void)
{
	printf(SESSION_ROW "\n", "NAME", "PID", "SINCE (UTC)", "LISTENS ON",
	    "IDLE", "COMMANDS");
}

/* How long a session has been idle, as "-" (busy), "42s", "17m", "5h". */
static void
session_idle_text(const struct json_obj *rec, char *buf, size_t len)
{
	int64_t	since;
	time_t	now = time(NULL);
	long	s;

	if (json_get_int(rec, "idle_since", &since) == -1) {
		snprintf(buf, len, "-");
		return;
	}
	s = now > since ? (long)(now - since) : 0;
	if (s < 120)
		snprintf(buf, len, "%lds", s);
	else if (s < 120 * 60)
		snprintf(buf, len, "%ldm", s / 60);
	else
		snprintf(buf, len, "%ldh", s / 3600);
}

/*
 * Print one session: a row of the table, or one JSON object (requests
 * < 0: none known).
 */
static void
session_print(const struct json_obj *rec, int json, int64_t requests)
{
	struct json_writer	w;
	int64_t			pid = 0, now = 0, total = 0;
	char			pidtext[24], cmds[96], idle[24];
	const char		*listeners = json_get_str(rec, "listeners");

	json_get_int(rec, "pid", &pid);
	json_get_int(rec, "attached", &now);
	json_get_int(rec, "attached_total", &total);
	if (!json) {
		snprintf(pidtext, sizeof pidtext, "%lld", (long long)pid);
		snprintf(cmds, sizeof cmds, "%lld attached now, %lld in all",
		    (long long)now, (long long)total);
		session_idle_text(rec, idle, sizeof idle);
		printf(SESSION_ROW, session_str(rec, "name"), pidtext,
		    session_str(rec, "since"), listeners != NULL &&
		    listeners[0] != '\0' ? listeners : "no network port",
		    idle, cmds);
		if (requests >= 0)
			printf(", %lld open request%s", (long long)requests,
			    requests == 1 ? "" : "s");
		printf("\n");
		return;
	}
	json_writer_init(&w, 0);
	json_open(&w);
	session_put(&w, rec);
	if (requests >= 0)
		json_put_int(&w, "requests", requests);
	json_close(&w);
	if (!w.failed)
		printf("%.*s\n", (int)w.len, w.buf);
	json_writer_free(&w);
}

/* Find the session NAME; -1 after saying it does not run. */
static int
session_find(const char *cmd, const char *name, char *dir, size_t dirlen,
    struct json_obj *rec, int *lockfd)
{
	if (control_dir_ours(dir, dirlen, NULL, 0) == -1 ||
	    session_probe(dir, name, rec, lockfd) == -1) {
		fprintf(stderr, "pinhole session %s: no running session %s\n",
		    cmd, name);
		return (-1);
	}
	return (0);
}

/* Take the options --json and NAME (want_name) of list and status. */
static int
session_args(const struct cmd_entry *cmd, int argc, char **argv, int *json,
    const char **name, int want_name)
{
	int	ch;

	while ((ch = cmd_getopt(cmd, argc, argv)) != -1) {
		if (ch == '?')
			return (EXIT_USAGE);
		if (ch == 'j')
			*json = 1;
	}
	if (argc - optind != want_name)
		return (cmd_usage_error(cmd, want_name ? "takes one session "
		    "name" : "takes no arguments"));
	if (want_name && !control_session_name_ok(argv[optind]))
		return (session_name_error(cmd, argv[optind]));
	if (want_name)
		*name = argv[optind];
	return (0);
}

static int64_t	session_requests(const char *);

/* List the running sessions; remove the records of dead ones. */
static int
cmd_session_list(const struct cmd_entry *cmd, int argc, char **argv)
{
	struct json_obj	 rec;
	struct dirent	*de;
	DIR		*d;
	char		 dir[PATH_MAX], name[CONTROL_NAME_MAX + 1];
	const char	*none = NULL;
	int		 json = 0, rv, n = 0;

	if ((rv = session_args(cmd, argc, argv, &json, &none, 0)) != 0)
		return (rv);
	if (control_dir_ours(dir, sizeof dir, NULL, 0) == 0 &&
	    (d = opendir(dir)) != NULL) {
		while ((de = readdir(d)) != NULL) {
			if (!session_file_name(de->d_name, name, sizeof name) ||
			    session_probe(dir, name, &rec, NULL) == -1)
				continue;
			if (!json && n++ == 0)
				session_print_head();
			session_print(&rec, json, session_requests(name));
		}
		closedir(d);
	}
	if (n == 0 && !json)
		fprintf(stderr, "pinhole session list: no running session: "
		    "start one with `pinhole session start NAME`\n");
	return (0);
}

/* Count the open requests among a session's pending items. */
static void
session_request_cb(struct ctl_conn *c, const struct json_obj *o, void *arg)
{
	int64_t		*n = arg;
	const char	*item = json_get_str(o, "item");

	if (item != NULL && strcmp(item, "request") == 0)
		(*n)++;
}

/* Ask a session's control socket how many requests are open; -1: no answer. */
static int64_t
session_requests(const char *name)
{
	struct ctl_conn		 c;
	struct json_writer	 w;
	struct json_obj		 reply;
	char			 err[256];
	int64_t			 n = 0;

	if (ctl_open_all(&c, 1, name, err, sizeof err) != 1)
		return (-1);
	json_writer_init(&w, 0);
	json_open(&w);
	json_put_str(&w, "op", "pending");
	if (ctl_call(&c, &w, session_request_cb, &n, &reply, err,
	    sizeof err) == -1)
		n = -1;
	json_writer_free(&w);
	ctl_close(&c);
	return (n);
}

/* Show one session, with its open requests. */
static int
cmd_session_status(const struct cmd_entry *cmd, int argc, char **argv)
{
	struct json_obj	 rec;
	char		 dir[PATH_MAX];
	const char	*name = NULL;
	int		 json = 0, rv;

	if ((rv = session_args(cmd, argc, argv, &json, &name, 1)) != 0)
		return (rv);
	if (session_find("status", name, dir, sizeof dir, &rec, NULL) == -1)
		return (1);
	if (!json)
		session_print_head();
	session_print(&rec, json, session_requests(name));
	return (0);
}

/* Stop a session: SIGTERM, then wait for its lock to be let go. */
static int
cmd_session_stop(const struct cmd_entry *cmd, int argc, char **argv)
{
	struct json_obj	 rec;
	char		 dir[PATH_MAX];
	const char	*name = NULL;
	int64_t		 pid = 0, grace = 0, ship_wait;
	int		 json = 0, fd = -1, rv;

	if ((rv = session_args(cmd, argc, argv, &json, &name, 1)) != 0)
		return (rv);
	if (session_find("stop", name, dir, sizeof dir, &rec, &fd) == -1)
		return (1);
	rv = 1;
	if (json_get_int(&rec, "pid", &pid) == -1 || pid <= 1 ||
	    kill((pid_t)pid, SIGTERM) == -1) {
		fprintf(stderr, "pinhole session stop: cannot signal session "
		    "%s\n", name);
		goto out;
	}
	/* Open tunnels have the grace, then the log its shipping. */
	json_get_int(&rec, "grace", &grace);
	if (json_get_int(&rec, "ship_wait", &ship_wait) == 0)
		grace += ship_wait;
	if ((rv = session_wait_stopped(fd, grace)) != 0)
		fprintf(stderr, "pinhole session stop: session %s has not "
		    "stopped\n", name);
out:
	close(fd);
	return (rv);
}

/* Take --foreground, --max-sandboxes and --stop-idle. */
static int
session_option(void *arg, const struct cmd_entry *cmd, int ch,
    const char *value)
{
	struct session	*s = arg;
	long long	 v;

	if (ch == OPT_MAX_SANDBOXES) {
		if (gwopts_number(cmd, "--max-sandboxes", value, 1, 4096,
		    &v) != 0)
			return (EXIT_USAGE);
		s->max_sandboxes = (unsigned int)v;
		return (0);
	}
	if (ch == OPT_STOP_IDLE) {
		if (gwopts_number(cmd, "--stop-idle", value, 0,
		    SESSION_IDLE_MAX, &v) != 0)
			return (EXIT_USAGE);
		s->stop_idle = (long)v;
		return (0);
	}
	if (ch != OPT_FOREGROUND)
		return (-1);
	s->foreground = 1;
	return (0);
}

/* Take NAME, or make one up; the gateway's session is the same. */
static int
session_name_arg(void *arg, const struct cmd_entry *cmd, struct gwopts *g,
    int argc, char **argv)
{
	struct session	*s = arg;

	if (argc > 1)
		return (cmd_usage_error(cmd, "unexpected argument '%s'",
		    argv[1]));
	if (argc == 1 && !control_session_name_ok(argv[0]))
		return (session_name_error(cmd, argv[0]));
	if (argc == 1)
		s->name = argv[0];
	else if (escalate_random_hex(s->id, 4) == 0)
		s->name = s->id;
	else
		fatalx("cannot make a session name");
	g->cfg.session = s->name;
	return (0);
}

/* In the foreground: say where the session serves, and how to use it. */
static void
session_announce(const struct session *s)
{
	fprintf(stderr, "pinhole session start: session %s serves%s%s%s\n",
	    s->name, s->listening[0] != '\0' ? " on " : "", s->listening,
	    s->listening[0] != '\0' ? ", and takes commands" :
	    " (on no network port): commands attach to it");
	fprintf(stderr, "pinhole session start: attach a command with "
	    "`pinhole run --session %s -- COMMAND`; answer its requests with "
	    "`pinhole watch --session %s`; stop it with `pinhole session stop "
	    "%s` (or SIGTERM)\n", s->name, s->name, s->name);
}

/* Serving: in the foreground, say so. */
static int
session_serving(void *arg, struct gwctx *c, const char *listening)
{
	struct session	*s = arg;

	if (session_ready(s, c, listening) == -1)
		return (-1);
	if (s->foreground)
		session_announce(s);
	return (0);
}

/* Start a session: the gateway, detached unless --foreground. */
static int
cmd_session_start(const struct cmd_entry *cmd, int argc, char **argv)
{
	struct session		s;
	struct proxy_hooks	h;
	int			rv;

	session_init(&s);
	memset(&h, 0, sizeof h);
	h.option = session_option;
	h.args = session_name_arg;
	h.prepare = session_prepare;
	h.ready = session_serving;
	h.done = session_done;
	h.arg = &s;
	h.listen_none = 1;
	rv = proxy_main(cmd, argc, argv, &h);
	session_end(&s);
	return (rv);
}

/* What a session serves: its own options, then those of proxy. */
const struct cmd_opt session_served_opts[] = {
	{ "max-sandboxes", 0, CMD_ARG_REQUIRED, "N",
	    .key = OPT_MAX_SANDBOXES,
	    .help = "commands attached at once, at most (256)" },
	{ "stop-idle", 0, CMD_ARG_REQUIRED, "S", .key = OPT_STOP_IDLE,
	    .help = "stop once idle for S seconds: no command attached, no "
	    "connection, query or open request (0, the default: never)" },
	{ "listen", 'l', CMD_ARG_REQUIRED, "ADDR:PORT",
	    .help = "serve as an HTTP proxy here too (none by default; "
	    "repeatable)" },
	{ .include = proxy_served_opts },
	{ .name = NULL }
};

/* The options of session start. */
static const struct cmd_opt session_start_opts[] = {
	{ "foreground", 0, CMD_ARG_NONE, NULL, .key = OPT_FOREGROUND,
	    .help = "stay attached until SIGTERM or SIGINT" },
	{ .include = session_served_opts },
	{ .name = NULL }
};

/* The options of session list and status. */
static const struct cmd_opt session_json_opts[] = {
	{ "json", 'j', CMD_ARG_NONE, NULL,
	    .help = "one JSON object per session" },
	{ .name = NULL }
};

extern const struct cmd_entry cmd_session_entry;

static const struct cmd_entry cmd_session_start_entry = {
	.name = "start",
	.usage = "[NAME] [--foreground] [proxy options]",
	.summary = "Start a named gateway and print its name",
	.intro =
	    "Serve the gateway of pinhole proxy under NAME (default: a fresh\n"
	    "id), detach once it serves and print NAME.  It listens on no\n"
	    "network port unless --listen, --socks or --dns-listen say so: two\n"
	    "unix sockets in the control directory are its doors, NAME.attach,\n"
	    "where commands attach (pinhole run --session NAME -- COMMAND), and\n"
	    "NAME.sock, where requests are answered (pinhole pending, approve,\n"
	    "deny, watch --session NAME).  With --foreground it stays, and says\n"
	    "so on stderr.\n",
	.opts = session_start_opts,
	.parent = &cmd_session_entry,
	.exec = cmd_session_start,
};

static const struct cmd_entry cmd_session_list_entry = {
	.name = "list",
	.usage = "[--json]",
	.summary = "List the running sessions: name, pid, since, listeners, "
	    "commands attached",
	.opts = session_json_opts,
	.parent = &cmd_session_entry,
	.exec = cmd_session_list,
};

static const struct cmd_entry cmd_session_status_entry = {
	.name = "status",
	.usage = "SESSION [--json]",
	.summary = "Show one session, with its open requests",
	.opts = session_json_opts,
	.parent = &cmd_session_entry,
	.exec = cmd_session_status,
};

static const struct cmd_entry cmd_session_stop_entry = {
	.name = "stop",
	.usage = "SESSION",
	.summary = "Stop a session: it lets tunnels finish within --grace",
	.parent = &cmd_session_entry,
	.exec = cmd_session_stop,
};

static const struct cmd_entry *const cmd_session_verbs[] = {
	&cmd_session_start_entry,
	&cmd_session_list_entry,
	&cmd_session_status_entry,
	&cmd_session_stop_entry,
	NULL
};

/* Run the verb named first. */
static int
cmd_session_exec(const struct cmd_entry *cmd, int argc, char **argv)
{
	const struct cmd_entry *const	*v;

	if (argc < 2)
		return (cmd_usage_error(cmd, "no verb given"));
	for (v = cmd_session_verbs; *v != NULL; v++) {
		if (strcmp((*v)->name, argv[1]) == 0) {
			optind = 1;
			return ((*v)->exec(*v, argc - 1, argv + 1));
		}
	}
	return (cmd_usage_error(cmd, "unknown verb '%s'", argv[1]));
}

const struct cmd_entry cmd_session_entry = {
	.name = "session",
	.usage = "start [NAME] [options] | list [--json] | "
	    "status SESSION [--json] | stop SESSION",
	.summary = "Run named long-lived gateways, list and stop them",
	.intro =
	    "A session is a gateway of its own that outlives the command that\n"
	    "started it: commands attach to it (pinhole run --session NAME),\n"
	    "and pinhole pending, approve, deny and watch --session NAME reach\n"
	    "it through its control socket; it serves as a proxy on a network\n"
	    "port only where --listen says.\n",
	.help = "Records: session-NAME.json in the control directory.\n",
	.verbs = cmd_session_verbs,
	.exec = cmd_session_exec,
};
