/*
 * pinhole hook: the PreToolUse hook of an agent harness (Claude Code's
 * protocol).  A Bash call comes back with its command run in a sandbox
 * attached to the session named after the harness's, which is started
 * on first use; any other call is let be.  Whatever goes wrong blocks
 * the call: a command never runs unfiltered because the hook failed.
 */
#include "config.h"

#include <sys/wait.h>

#include <sched.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/ctl.h"
#include "cli/hook.h"
#include "cli/gwopts-argv.h"
#include "cli/pinhole.h"
#include "cli/proxy.h"
#include "lib/io.h"
#include "lib/json.h"
#include "proxy/wire/attachmsg.h"
#include "rules/rules.h"

#define HOOK_BLOCK		2	/* the protocol's "block this call" */
#define HOOK_ARGS_MAX		64	/* of session start */
#define HOOK_WAIT_TRIES		100	/* 50 ms apart: for a racing start */
#define HOOK_NOT_RUN		126	/* --exec: the shell's "cannot run" */
#define HOOK_SESSION_ENV	"CLAUDE_CODE_SESSION_ID"
#define HOOK_STOP_IDLE		"--stop-idle=28800"	/* 8 h, unless told */

/* Above session start's (cli/cmd-session.c): the hook takes those too. */
enum {
	OPT_SHELL = GWOPTS_LAST + 32,
	OPT_ALLOW_CALL,
	OPT_EXEC
};

/* What the hook was told. */
struct hook_args {
	const char	*shell;
	const char	*decision;
	int		 exec;		/* --exec: be the harness's shell */
	char		*start[HOOK_ARGS_MAX];	/* session start's options */
	size_t		 nstart;
};

/* Say why the call is blocked; returns HOOK_BLOCK. */
static int
hook_block(const char *fmt, const char *what)
{
	fprintf(stderr, "pinhole hook: ");
	fprintf(stderr, fmt, what);
	fprintf(stderr, "; the command was not run\n");
	return (HOOK_BLOCK);
}

/* Read all of stdin, at most HOOK_INPUT_MAX bytes; NULL when it is more. */
static char *
hook_read_stdin(size_t *len)
{
	char	*buf;
	ssize_t	 n;

	if ((buf = malloc(HOOK_INPUT_MAX + 1)) == NULL)
		return (NULL);
	*len = 0;
	while (*len <= HOOK_INPUT_MAX) {
		n = read(0, buf + *len, HOOK_INPUT_MAX + 1 - *len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		*len += n;
	}
	if (n == -1 || *len > HOOK_INPUT_MAX) {
		free(buf);
		return (NULL);
	}
	return (buf);
}

/*
 * Run pinhole with args in "/", reading nothing, its output thrown
 * away (and its errors too when quiet); returns its exit status, or -1.
 */
static int
hook_spawn(char *const argv[], int quiet)
{
	pid_t	pid;
	int	status, null;

	fflush(NULL);
	if ((pid = fork()) == -1)
		return (-1);
	if (pid == 0) {
		if ((null = open("/dev/null", O_RDWR)) == -1 ||
		    chdir("/") == -1 || dup2(null, 0) == -1 ||
		    dup2(null, 1) == -1 || (quiet && dup2(null, 2) == -1))
			_exit(127);
		execv(argv[0], argv);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) == -1)
		if (errno != EINTR)
			return (-1);
	return (WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

/* The path of this program; -1 when it cannot be found. */
static int
hook_self(char *buf, size_t len)
{
	ssize_t	n;

	if ((n = readlink("/proc/self/exe", buf, len - 1)) <= 0)
		return (-1);
	buf[n] = '\0';
	return (0);
}

/* Tell whether the session runs: its control socket answers. */
static int
hook_session_runs(const char *name)
{
	struct ctl_conn	c;
	char		err[256];

	if (ctl_open_all(&c, 1, name, err, sizeof err) != 1)
		return (0);
	ctl_close(&c);
	return (1);
}

/* Was session start given the option --name? */
static int
hook_has(const struct hook_args *a, const char *name)
{
	size_t	i, n = strlen(name);

	for (i = 0; i < a->nstart; i++) {
		if (strncmp(a->start[i], "--", 2) == 0 &&
		    strncmp(a->start[i] + 2, name, n) == 0 &&
		    (a->start[i][2 + n] == '=' || a->start[i][2 + n] == '\0'))
			return (1);
	}
	return (0);
}

/*
 * Rules given to the hook add to the user's policy file, which session
 * start would leave out for them: name it, "--policy=PATH" in buf, when
 * there are rules, no --policy, and the file is there.  Returns 0, or
 * -1 for none.
 */
static int
hook_user_policy(const struct hook_args *a, char *buf, size_t len)
{
	char	path[PATH_MAX];

	if (!hook_has(a, "allow") || hook_has(a, "policy") ||
	    rules_default_path(path, sizeof path) == -1 ||
	    access(path, R_OK) == -1)
		return (-1);
	return (snprintf(buf, len, "--policy=%s", path) >= (int)len ? -1 : 0);
}

/*
 * Make sure the session runs: start it unless it does; when the start
 * fails because another call started it meanwhile, wait for that one.
 */
static int
hook_session_ensure(const struct hook_args *a, const char *pinhole,
    const char *name)
{
	char	*argv[HOOK_ARGS_MAX + 7], policy[PATH_MAX + 16];
	size_t	 n = 0, i;
	int	 tries;

	if (hook_session_runs(name))
		return (0);
	argv[n++] = (char *)pinhole;
	argv[n++] = "session";
	argv[n++] = "start";
	if (hook_user_policy(a, policy, sizeof policy) == 0)
		argv[n++] = policy;
	if (!hook_has(a, "stop-idle"))
		argv[n++] = HOOK_STOP_IDLE;
	for (i = 0; i < a->nstart; i++)
		argv[n++] = a->start[i];
	argv[n++] = "--";
	argv[n++] = (char *)name;
	argv[n] = NULL;
	if (hook_spawn(argv, 0) == 0)
		return (0);
	for (tries = 0; tries < HOOK_WAIT_TRIES; tries++) {
		if (hook_session_runs(name))
			return (0);
		usleep(50 * 1000);
	}
	return (-1);
}

/* Keep an option for session start: --NAME or --NAME=VALUE. */
static int
hook_keep(const struct cmd_entry *self, struct hook_args *a,
    const char *name, const char *value)
{
	char	*opt;

	if (a->nstart == HOOK_ARGS_MAX)
		return (cmd_usage_error(self, "too many options"));
	if (asprintf(&opt, "--%s%s%s", name, value != NULL ? "=" : "",
	    value != NULL ? value : "") == -1)
		return (1);
	a->start[a->nstart++] = opt;
	return (0);
}

/* Take the options. */
static int
hook_parse_args(const struct cmd_entry *self, int argc, char **argv,
    struct hook_args *a)
{
	int	ch, rv = 0;

	while (rv == 0 && (ch = cmd_getopt(self, argc, argv)) != -1) {
		if (ch == '?')
			return (EXIT_USAGE);
		if (ch == OPT_SHELL)
			a->shell = optarg;
		else if (ch == OPT_ALLOW_CALL)
			a->decision = "allow";
		else if (ch == OPT_EXEC)
			a->exec = 1;
		else	/* one of session start's: passed on */
			rv = hook_keep(self, a,
			    cmd_opt_find(self->opts, ch)->name, optarg);
	}
	if (rv != 0)
		return (rv);
	if (argc > optind && !a->exec)
		return (cmd_usage_error(self, "takes no arguments"));
	if (a->shell[0] != '/')
		return (cmd_usage_error(self, "--shell needs an absolute path"));
	return (0);
}

/* Answer one call read from stdin. */
static int
hook_answer_call(const struct hook_args *a)
{
	struct hook_call	 c;
	struct json_writer	 w;
	char			 pinhole[PATH_MAX], name[HOOK_NAME_MAX + 1];
	char			*buf, *store = NULL;
	const char		*err = NULL;
	size_t			 len;
	int			 rv = HOOK_BLOCK;

	json_writer_init(&w, 0);
	if ((buf = hook_read_stdin(&len)) == NULL)
		return (hook_block("%s", "cannot read the call (at most 1 MiB)"));
	if ((store = malloc(HOOK_STORE_SIZE(len))) == NULL) {
		hook_block("%s", "out of memory");
		goto out;
	}
	if (hook_parse(buf, len, store, &c, &err) == -1) {
		hook_block("malformed call: %s", err);
		goto out;
	}
	if (!hook_wraps(&c)) {
		rv = 0;
		goto out;
	}
	if (hook_self(pinhole, sizeof pinhole) == -1) {
		hook_block("%s", "cannot find the pinhole program");
		goto out;
	}
	hook_session_name(c.session, name);
	if (hook_session_ensure(a, pinhole, name) == -1) {
		hook_block("cannot start session %s", name);
		goto out;
	}
	hook_answer(&w, &c, pinhole, name, a->shell, a->decision);
	if (w.failed) {
		hook_block("%s", "cannot write the answer");
		goto out;
	}
	if (printf("%s\n", w.buf) < 0 || fflush(stdout) == EOF) {
		hook_block("%s", "cannot write the answer");
		goto out;
	}
	rv = 0;
out:
	json_writer_free(&w);
	free(store);
	free(buf);
	return (rv);
}

/* Write one line to a file of /proc/self. */
static int
hook_write_proc(const char *path, const char *line)
{
	int	fd, rv;

	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) == -1)
		return (-1);
	rv = write_all(fd, line, strlen(line));
	close(fd);
	return (rv);
}

/*
 * Leave every network: a network namespace of our own, with not even
 * loopback up; an unprivileged user makes a user namespace first, in
 * which it stays itself.
 */
static int
hook_unshare_net(void)
{
	char	map[64];
	uid_t	uid = getuid();
	gid_t	gid = getgid();

	if (unshare(CLONE_NEWNET) == 0)
		return (0);
	if (unshare(CLONE_NEWUSER | CLONE_NEWNET) == -1)
		return (-1);
	snprintf(map, sizeof map, "%lu %lu 1\n", (unsigned long)uid,
	    (unsigned long)uid);
	if (hook_write_proc("/proc/self/uid_map", map) == -1 ||
	    hook_write_proc("/proc/self/setgroups", "deny\n") == -1)
		return (-1);
	snprintf(map, sizeof map, "%lu %lu 1\n", (unsigned long)gid,
	    (unsigned long)gid);
	return (hook_write_proc("/proc/self/gid_map", map));
}

/* Say why the shell does not run the command; returns HOOK_NOT_RUN. */
static int
hook_not_run(const char *why, const char *what)
{
	fprintf(stderr, "pinhole hook: %s%s; the command was not run\n", why,
	    what);
	return (HOOK_NOT_RUN);
}

/*
 * Be the harness's shell (--exec): run the shell with args attached to
 * the session named after the harness session in the environment,
 * starting it on first use.  Without one (the harness's own start-up
 * probes) the shell runs in an empty network namespace.  Never
 * unfiltered.
 */
static int
hook_exec_shell(const struct hook_args *a, int argc, char **argv)
{
	char		 pinhole[PATH_MAX], name[HOOK_NAME_MAX + 1];
	char		 label[ATTACH_CMD_MAX];
	const char	*id = getenv(HOOK_SESSION_ENV);
	char		**av;
	int		 i, n = 0;

	if ((av = calloc(argc + 9, sizeof *av)) == NULL)
		return (hook_not_run("out of memory", ""));
	if (id == NULL || id[0] == '\0') {
		if (hook_unshare_net() == -1)
			return (hook_not_run("cannot leave the network: ",
			    strerror(errno)));
	} else {
		if (hook_self(pinhole, sizeof pinhole) == -1)
			return (hook_not_run("cannot find the pinhole program",
			    ""));
		hook_session_name(id, name);
		if (hook_session_ensure(a, pinhole, name) == -1)
			return (hook_not_run("cannot start session ", name));
		av[n++] = pinhole;
		av[n++] = "run";
		av[n++] = "--session";
		av[n++] = name;
		if (argc == 2 && strcmp(argv[0], "-c") == 0 &&
		    hook_shell_label(argv[1], label, sizeof label) == 0) {
			av[n++] = "--name";
			av[n++] = label;
		}
		av[n++] = "--";
	}
	av[n++] = (char *)a->shell;
	for (i = 0; i < argc; i++)
		av[n++] = argv[i];
	av[n] = NULL;
	execv(av[0], av);
	return (hook_not_run("cannot run ", av[0]));
}

/* pinhole hook: answer one PreToolUse call. */
static int
cmd_hook_exec(const struct cmd_entry *self, int argc, char **argv)
{
	struct hook_args	a = { .shell = "/bin/bash", .decision = "ask" };
	size_t			i;
	int			rv;

	if ((rv = hook_parse_args(self, argc, argv, &a)) == 0 && a.exec)
		rv = hook_exec_shell(&a, argc - optind, argv + optind);
	else if (rv == 0)
		rv = hook_answer_call(&a);
	for (i = 0; i < a.nstart; i++)
		free(a.start[i]);
	return (rv);
}

/* The options of hook. */
static const struct cmd_opt hook_opts[] = {
	{ "shell", 0, CMD_ARG_REQUIRED, "PATH", .key = OPT_SHELL,
	    .help = "the shell that runs the command in the sandbox "
	    "(default /bin/bash)" },
	{ "allow-call", 0, CMD_ARG_NONE, NULL, .key = OPT_ALLOW_CALL,
	    .help = "tell the harness to run the wrapped call without asking "
	    "(default: ask the person, showing the wrapped command)" },
	{ "exec", 0, CMD_ARG_NONE, NULL, .key = OPT_EXEC,
	    .help = "be the harness's shell (CLAUDE_CODE_SHELL): run the "
	    "shell with ARGS in the session of $CLAUDE_CODE_SESSION_ID, with "
	    "no network without it" },
	{ .include = session_served_opts },
	{ .name = NULL }
};

const struct cmd_entry cmd_hook_entry = {
	.name = "hook",
	.usage = "[--shell PATH] [--allow-call] [session start options] "
	    "[--exec -- ARG...]",
	.summary = "Run an agent harness's shell commands in a session",
	.intro =
	    "Reads one PreToolUse call of an agent harness (Claude Code's hook\n"
	    "protocol) on stdin.  A Bash call is answered with its command\n"
	    "wrapped in 'pinhole run --session NAME', NAME being the harness's\n"
	    "session id (or a hash of it); the session is started on first use,\n"
	    "in \"/\".  Any other call gets no answer.\n\n"
	    "With --exec it is the harness's shell instead (pinhole-bash is\n"
	    "that program, for CLAUDE_CODE_SHELL): the shell runs ARGS in a\n"
	    "sandbox of the session of $CLAUDE_CODE_SESSION_ID, and the\n"
	    "harness's own permission decisions stay as they are.\n\n"
	    "The options of session start but --foreground start the session\n"
	    "(when it does not run yet); --allow rules add to the user's policy\n"
	    "file unless --policy is given.\n",
	.opts = hook_opts,
	.help =
	    "A call that cannot be read, or a session that cannot be started,\n"
	    "exits 2 with the reason on stderr: the harness blocks the call.\n"
	    "With --exec it exits 126 instead, the command not run.\n",
	.exec = cmd_hook_exec,
};
