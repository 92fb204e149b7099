/*
 * A session's runtime (daemon/session.h): its lock and record in the
 * control directory, detaching, the sandboxes it takes, the look at
 * what goes on; and reading a record back, for session list, status
 * and stop.
 */
#include "config.h"

#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "daemon/attach-server.h"
#include "daemon/gwopts.h"
#include "daemon/runguard.h"
#include "daemon/session.h"
#include "lib/json.h"
#include "lib/log.h"
#include "netns/netns.h"
#include "proxy/escalate/control.h"
#include "proxy/gateway.h"
#include "proxy/tls/tls.h"
#include "proxy/wire/attachmsg.h"
#include "rules/policy.h"

#define SESSION_STOP_EXTRA	5	/* s past the grace period */
#define SESSION_POLL_US		100000
#define SESSION_LOCK_TRIES	10	/* 20 ms apart */
#define SESSION_IDLE_TICK	10	/* s between looks at what goes on */

/* Make a session to be started: nothing asked for, nothing held. */
void
session_init(struct session *s)
{
	memset(s, 0, sizeof *s);
	s->lockfd = s->notify = -1;
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
int
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

/* Take the session name from "session-NAME.json"; 0 when not one. */
int
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

/* The socket where the session name in dir takes sandboxes. */
int
session_attach_path(char *buf, size_t len, const char *dir, const char *name)
{
	int	n = snprintf(buf, len, "%s/%s.attach", dir, name);

	return (n < 0 || (size_t)n >= len ? -1 : 0);
}

/* Wait for a session told to stop to let its lock go: 0, or -1. */
int
session_wait_stopped(int lockfd, int64_t grace)
{
	long	i, tries;

	tries = (long)(grace + SESSION_STOP_EXTRA) * 1000000 / SESSION_POLL_US;
	for (i = 0; i < tries; i++) {
		if (flock(lockfd, LOCK_SH | LOCK_NB) == 0)
			return (0);
		usleep(SESSION_POLL_US);
	}
	return (-1);
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
int
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
	json_put_int(&w, "ship_wait", c->o->ship_wait);
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
	if (session_attach_path(path, sizeof path, s->dir, s->name) == -1) {
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

/* Serving: take sandboxes, write the record, let the terminal go. */
int
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
	if (s->notify == -1)
		return (0);
	if ((null = open("/dev/null", O_WRONLY | O_CLOEXEC)) == -1 ||
	    write(s->notify, "", 1) != 1 || dup2(null, 2) == -1)
		fatal("cannot detach");
	close(null);
	close(s->notify);
	s->notify = -1;
	return (0);
}

/* The gateway has stopped: remove the record and the lock. */
void
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
	if (s->notify != -1)
		close(s->notify);
}

/*
 * The gateway is torn down, its last lines shipped: let the lock go,
 * last, so that session stop returns only once the session has ended.
 */
void
session_end(struct session *s)
{
	if (s->lockfd == -1)
		return;
	unlink(s->lock);
	close(s->lockfd);
	s->lockfd = -1;
}
