/*
 * pinhole session: a long-lived gateway, named, that an agent's session
 * shares: start, list, status, stop.  Each running session has a record
 * in the control directory, session-NAME.json, and holds a lock on
 * session-NAME.lock while it lives, so a killed one is seen as dead.
 */
#include "config.h"

#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <arpa/inet.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "cli/ctl.h"
#include "cli/gwopts-argv.h"
#include "cli/pinhole.h"
#include "cli/proxy.h"
#include "daemon/attach-server.h"
#include "daemon/gwopts.h"
#include "daemon/runguard.h"
#include "lib/json.h"
#include "lib/log.h"
#include "netns/netns.h"
#include "proxy/escalate/control.h"
#include "proxy/escalate/escalate.h"
#include "proxy/gateway.h"
#include "proxy/tls/tls.h"
#include "proxy/wire/attachmsg.h"
#include "rules/policy.h"

#define SESSION_STOP_EXTRA	5	/* s past the grace period */
#define SESSION_POLL_US		100000
#define SESSION_LOCK_TRIES	10	/* 20 ms apart */
#define SESSION_IDLE_TICK	10	/* s between looks at what goes on */
#define SESSION_IDLE_MAX	(366L * 24 * 3600)	/* --stop-idle */

enum {
	OPT_FOREGROUND = GWOPTS_LAST + 16, OPT_MAX_SANDBOXES, OPT_STOP_IDLE
};

/* A session being started, and then served. */
struct session {
	const char	*name;
	char		 id[16];
	int		 foreground;
	char		 dir[PATH_MAX];
	char		 lock[PATH_MAX];
	char		 record[PATH_MAX];
	int		 lockfd;
	int		 notify;	/* to the waiting parent, or -1 */
	int		 recorded;
	char		 since[32];
	char		 listening[512];
	struct gwctx	*c;
	unsigned int	 max_sandboxes;
	struct attach_server *attach;
	struct runguard	 guard;		/* what every sandbox gets */
	long		 stop_idle;	/* s idle before it stops; 0 never */
	struct event	*idle;		/* the look at what goes on */
	uint64_t	 decisions;	/* the gateway's, at the last look */
	time_t		 looked;	/* when last looked */
	time_t		 idle_since;	/* 0: busy */
};

/* Refuse a bad session name; returns EXIT_USAGE. */
static int
session_name_error(const struct cmd_entry *cmd, const char *name)
{
	return (cmd_usage_error(cmd, "bad session name '%s' (letters, digits, "
	    "'.', '_', '-', not starting with '.'; at most 64)", name));
}

/* Fill a file's path in the control directory: DIR/session-NAME.EXT. */
static int
session_path(char *buf, size_t len, const char *dir, const char *name,
    const char *ext)
{
	int	n = snprintf(buf, len, "%s/session-%s.%s", dir, name, ext);

	return (n < 0 || (size_t)n >= len ? -1 : 0);
}

/* Read a record of at most JSON_TEXT_MAX bytes. */
static int
session_read(const char *record, struct json_obj *rec)
{
	char	buf[JSON_TEXT_MAX];
	ssize_t	n;
	int	fd;

	if ((fd = open(record, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1)
		return (-1);
	n = read(fd, buf, sizeof buf);
	close(fd);
	if (n <= 0 || json_parse(buf, n, rec, NULL) == -1)
		return (-1);
	return (0);
}

/*
 * Hold a session's lock file exclusively: the one at the path now, not
 * one a probe of a dead session unlinked meanwhile, and not refused
 * for the instant a probe holds it shared.  Returns the descriptor, or
 * -1 with errno (EWOULDBLOCK: a live session holds it).
 */
static int
session_lock(const char *path)
{
	struct stat	held, named;
	int		fd, i;

	for (i = 0; i < SESSION_LOCK_TRIES; i++) {
		if ((fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
		    0600)) == -1)
			return (-1);
		if (flock(fd, LOCK_EX | LOCK_NB) == -1) {
			close(fd);
			if (errno != EWOULDBLOCK)
				return (-1);
			usleep(20 * 1000);
			continue;
		}
		if (fstat(fd, &held) == 0 && stat(path, &named) == 0 &&
		    held.st_dev == named.st_dev && held.st_ino == named.st_ino)
			return (fd);
		close(fd);
	}
	errno = EWOULDBLOCK;
	return (-1);
}

/* Read a session's record, if its lock says it lives; else remove it. */
static int
session_probe(const char *dir, const char *name, struct json_obj *rec,
    int *lockfd)
{
	char	lock[PATH_MAX], record[PATH_MAX];
	int	fd, rv = -1;

	if (session_path(lock, sizeof lock, dir, name, "lock") == -1 ||
	    session_path(record, sizeof record, dir, name, "json") == -1)
		return (-1);
	if ((fd = open(lock, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1) {
		unlink(record);
		return (-1);
	}
	if (flock(fd, LOCK_SH | LOCK_NB) == 0) {
		/* Nobody holds it: the session is dead. */
		unlink(record);
		unlink(lock);
	} else
		rv = session_read(record, rec);
	if (rv == 0 && lockfd != NULL)
		*lockfd = fd;
	else
		close(fd);
	return (rv);
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
	if (control_dir_ours(dir, dirlen) == -1 ||
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

/* Take the session name from "session-NAME.json"; 0 when not one. */
static int
session_file_name(const char *file, char *out, size_t outlen)
{
	size_t	n = strlen(file);

	if (n <= 13 || strncmp(file, "session-", 8) != 0 ||
	    strcmp(file + n - 5, ".json") != 0 || n - 13 >= outlen)
		return (0);
	memcpy(out, file + 8, n - 13);
	out[n - 13] = '\0';
	return (control_session_name_ok(out));
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
	if (control_dir_ours(dir, sizeof dir) == 0 &&
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
	int64_t		 pid = 0, grace = 0;
	long		 i, tries;
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
	json_get_int(&rec, "grace", &grace);
	tries = (long)(grace + SESSION_STOP_EXTRA) * 1000000 / SESSION_POLL_US;
	for (i = 0; i < tries; i++) {
		if (flock(fd, LOCK_SH | LOCK_NB) == 0) {
			rv = 0;
			break;
		}
		usleep(SESSION_POLL_US);
	}
	if (rv != 0)
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

/* The parent: wait for the child to serve, or to say why it cannot. */
static void
session_wait_child(struct session *s, pid_t pid, int fd)
{
	char	buf[8192];
	size_t	len = 0;
	ssize_t	n;
	int	status;

	while (len < sizeof buf && (n = read(fd, buf + len,
	    sizeof buf - len)) != 0) {
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			break;
		len += n;
	}
	if (len > 0 && buf[len - 1] == '\0') {
		printf("%s\n", s->name);
		fflush(stdout);
		_exit(0);
	}
	fwrite(buf, 1, len, stderr);
	waitpid(pid, &status, 0);
	_exit(1);
}

/* Detach: the parent waits; the child leaves the terminal behind. */
static int
session_detach(struct session *s)
{
	pid_t	pid;
	int	p[2], null;

	if (pipe2(p, O_CLOEXEC) == -1 || (null = open("/dev/null",
	    O_RDWR | O_CLOEXEC)) == -1) {
		log_warn("pipe");
		return (1);
	}
	fflush(NULL);
	if ((pid = fork()) == -1) {
		log_warn("fork");
		return (1);
	}
	if (pid != 0) {
		close(p[1]);
		session_wait_child(s, pid, p[0]);
	}
	close(p[0]);
	/* The parent is what a service manager waits for, not this one. */
	unsetenv("NOTIFY_SOCKET");
	setsid();
	/* Until it serves, what it says goes to the parent. */
	if (dup2(null, 0) == -1 || dup2(null, 1) == -1 || dup2(p[1], 2) == -1)
		fatal("dup2");
	close(null);
	s->notify = p[1];
	return (0);
}

/* Take the session's lock, or say it runs already; detach unless told. */
static int
session_prepare(void *arg)
{
	struct session	*s = arg;
	char		 err[PATH_MAX + 256];

	if (control_dir_make(s->dir, sizeof s->dir, err, sizeof err) == -1) {
		log_refuse("%s", err);
		return (1);
	}
	if (session_path(s->lock, sizeof s->lock, s->dir, s->name,
	    "lock") == -1 || session_path(s->record, sizeof s->record,
	    s->dir, s->name, "json") == -1) {
		log_warnx("%s: path too long", s->dir);
		return (1);
	}
	if ((s->lockfd = session_lock(s->lock)) == -1) {
		if (errno == EWOULDBLOCK)
			log_warnx("session %s is already running", s->name);
		else
			log_warn("%s", s->lock);
		return (1);
	}
	/* A dead session's record is ours to replace. */
	unlink(s->record);
	return (s->foreground ? 0 : session_detach(s));
}

/* Write the record, atomically: a temporary file renamed over it. */
static int
session_write_record(struct session *s)
{
	struct gwctx		*c = s->c;
	struct json_writer	 w;
	char			 tmp[PATH_MAX + 8];
	unsigned long long	 total;
	unsigned int		 now;
	FILE			*f;
	int			 rv = -1;

	now = attach_server_count(s->attach, &total);
	json_writer_init(&w, 0);
	json_open(&w);
	json_put_str(&w, "name", s->name);
	json_put_int(&w, "pid", getpid());
	json_put_str(&w, "since", s->since);
	json_put_str(&w, "listeners", s->listening);
	json_put_uint(&w, "attached", now);
	json_put_uint(&w, "attached_total", total);
	json_put_str(&w, "log", c->o->audit.log != NULL ? c->o->audit.log :
	    "");
	json_put_str(&w, "control", c->ctl != NULL ? control_path(c->ctl) :
	    "");
	json_put_int(&w, "grace", c->o->grace);
	if (s->idle_since != 0)
		json_put_int(&w, "idle_since", s->idle_since);
	if (s->stop_idle != 0)
		json_put_int(&w, "stop_idle", s->stop_idle);
	json_close(&w);
	snprintf(tmp, sizeof tmp, "%s.tmp", s->record);
	if (!w.failed && (f = fopen(tmp, "wxe")) != NULL) {
		if (fprintf(f, "%.*s\n", (int)w.len, w.buf) > 0 &&
		    fclose(f) == 0 && rename(tmp, s->record) == 0)
			rv = 0;
		else
			unlink(tmp);
	}
	json_writer_free(&w);
	if (rv == -1)
		log_warn("cannot write %s", s->record);
	return (rv);
}

/* Is anything going on: a command, a connection, a request? */
static int
session_busy(struct session *s)
{
	const struct metrics	*m = &s->c->metrics;
	uint64_t		 d = metrics_decided(m);
	int			 busy;

	busy = d != s->decisions || m->gauges[MG_SANDBOXES] > 0 ||
	    m->gauges[MG_TUNNELS] > 0 || m->gauges[MG_HELD] > 0 ||
	    m->gauges[MG_PENDING] > 0;
	s->decisions = d;
	return (busy);
}

/*
 * Look at what goes on: the record says since when nothing has (since
 * the last look that saw something), and a session idle for --stop-idle
 * stops.
 */
static void
session_idle_cb(evutil_socket_t fd, short what, void *arg)
{
	struct session	*s = arg;
	struct timeval	 tv = { SESSION_IDLE_TICK, 0 };
	time_t		 now = time(NULL);

	if (session_busy(s)) {
		if (s->idle_since != 0) {
			s->idle_since = 0;
			session_write_record(s);
		}
	} else if (s->idle_since == 0) {
		s->idle_since = s->looked;
		session_write_record(s);
	}
	s->looked = now;
	if (s->idle_since != 0 && s->stop_idle != 0 &&
	    now - s->idle_since >= s->stop_idle) {
		log_info("session %s: idle for %lld s, stopping", s->name,
		    (long long)(now - s->idle_since));
		gwctx_stop(s->c);
		return;
	}
	if (s->stop_idle != 0 && s->stop_idle < SESSION_IDLE_TICK * 10)
		tv.tv_sec = s->stop_idle / 10 > 0 ? s->stop_idle / 10 : 1;
	evtimer_add(s->idle, &tv);
}

/* A sandbox came or went: the record says how many are attached. */
static void
session_attach_changed(void *arg)
{
	session_write_record(arg);
}

/* May a reloaded policy be put in force (sandboxes cannot change it)? */
static int
session_vet_rules(void *arg, const struct rules *rules, char *err, size_t len)
{
	struct session	*s = arg;

	return (runguard_vet(&s->guard, rules, err, len));
}

/*
 * Take sandboxes: DNS for them, the guards every one gets (refused
 * here, once, if they cannot be), and the attach socket.
 */
static int
session_attach(struct session *s, struct gwctx *c)
{
	char			 plan[ATTACH_GUARDS_MAX], err[PATH_MAX + 256];
	char			 path[PATH_MAX], url[64], gw[INET_ADDRSTRLEN];
	struct netns_net	 net;
	const char		*errstr, *keys[GWOPTS_HIDDEN + 1];

	if (c->dns == NULL && gwctx_dns(c, err, sizeof err) == -1) {
		log_warnx("dns: %s", err);
		return (-1);
	}
	runguard_init(&s->guard);
	gwopts_hidden(c->o, keys);
	if (runguard_plan(plan, sizeof plan,
	    policy_rules(gateway_policy(c->gw)), c->o->audit.log,
	    keys, s->dir, c->tls != NULL ? tls_ca_path(c->tls) :
	    NULL, c->tls != NULL ? tls_trust_path(c->tls) : NULL) == -1 ||
	    runguard_apply(&s->guard, plan) == -1) {
		log_warn("cannot guard the policy and log");
		return (-1);
	}
	gwctx_vet_rules(c, session_vet_rules, s);
	if ((size_t)snprintf(path, sizeof path, "%s/%s.attach", s->dir,
	    s->name) >= sizeof path) {
		log_warnx("%s: path too long", s->dir);
		return (-1);
	}
	s->attach = attach_server_open(c, path, plan, s->max_sandboxes != 0 ?
	    s->max_sandboxes : ATTACH_MAX_DEFAULT, err, sizeof err);
	if (s->attach == NULL) {
		log_warnx("cannot take sandboxes: %s", err);
		return (-1);
	}
	attach_server_on_change(s->attach, session_attach_changed, s);
	if (s->listening[0] == '\0' &&
	    netns_net_parse(NETNS_NET_DEFAULT, &net, &errstr) == 0) {
		inet_ntop(AF_INET, &net.gateway, gw, sizeof gw);
		snprintf(url, sizeof url, "http://%s:%u", gw,
		    NETNS_PROXY_PORT);
		gwctx_agent_url(c, url);
	}
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

/* Serving: take sandboxes, write the record, let the terminal go. */
static int
session_ready(void *arg, struct gwctx *c, const char *listening)
{
	struct session	*s = arg;
	time_t		 now = time(NULL);
	struct tm	 tm;
	int		 null;

	s->c = c;
	snprintf(s->listening, sizeof s->listening, "%s", listening);
	strftime(s->since, sizeof s->since, "%Y-%m-%dT%H:%M:%SZ",
	    gmtime_r(&now, &tm));
	s->looked = s->idle_since = now;
	if (session_attach(s, c) == -1 || session_write_record(s) == -1 ||
	    (s->idle = evtimer_new(c->base, session_idle_cb, s)) == NULL)
		return (-1);
	session_idle_cb(-1, 0, s);
	s->recorded = 1;
	if (s->notify == -1) {
		session_announce(s);
		return (0);
	}
	if ((null = open("/dev/null", O_WRONLY | O_CLOEXEC)) == -1 ||
	    write(s->notify, "", 1) != 1 || dup2(null, 2) == -1)
		fatal("cannot detach");
	close(null);
	close(s->notify);
	s->notify = -1;
	return (0);
}

/* The gateway has stopped: remove the record and the lock. */
static void
session_done(void *arg, int rv)
{
	struct session	*s = arg;

	if (s->idle != NULL)
		event_free(s->idle);
	/* Attached sandboxes lose their network now. */
	attach_server_free(s->attach);
	s->attach = NULL;
	runguard_free(&s->guard);
	if (s->recorded)
		unlink(s->record);
	if (s->lockfd != -1) {
		unlink(s->lock);
		close(s->lockfd);
	}
	if (s->notify != -1)
		close(s->notify);
}

/* Start a session: the gateway, detached unless --foreground. */
static int
cmd_session_start(const struct cmd_entry *cmd, int argc, char **argv)
{
	struct session		s;
	struct proxy_hooks	h;

	memset(&s, 0, sizeof s);
	s.lockfd = s.notify = -1;
	memset(&h, 0, sizeof h);
	h.option = session_option;
	h.args = session_name_arg;
	h.prepare = session_prepare;
	h.ready = session_ready;
	h.done = session_done;
	h.arg = &s;
	h.listen_none = 1;
	return (proxy_main(cmd, argc, argv, &h));
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
