/*
 * Control socket client: blocking I/O with timeouts, one connection per
 * running session found in the user's control directory.
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/ctl.h"
#include "lib/io.h"
#include "lib/json.h"
#include "lib/unixsock.h"
#include "proxy/escalate/control.h"
#include "proxy/escalate/escalate.h"

/*
 * Connect to one socket of our directory, whose listener must be ours;
 * remove it when nobody listens any more.
 */
static int
ctl_connect(const char *path)
{
	struct stat	st;
	uid_t		uid = (uid_t)-1;
	int		fd;

	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return (-1);
	if (unixsock_connect(fd, path) == -1) {
		if (errno == ECONNREFUSED && lstat(path, &st) == 0 &&
		    S_ISSOCK(st.st_mode))
			unlink(path);
		close(fd);
		return (-1);
	}
	if (!control_gateway_ok(fd, &uid)) {
		fprintf(stderr, "pinhole: %s answers from uid %ld or another "
		    "network namespace: not your gateway, not asked\n", path,
		    (long)uid);
		close(fd);
		return (-1);
	}
	return (fd);
}

/* Take the session name from "SESSION.sock"; 0 when it is not one. */
static int
ctl_session_name(const char *name, char *out, size_t outlen)
{
	size_t	n = strlen(name);

	if (n <= 5 || n - 5 >= outlen || strcmp(name + n - 5, ".sock") != 0 ||
	    name[0] == '.')
		return (0);
	memcpy(out, name, n - 5);
	out[n - 5] = '\0';
	return (1);
}

/* Connect to the user's sessions. */
size_t
ctl_open_all(struct ctl_conn *conns, size_t max, const char *want, char *err,
    size_t errlen)
{
	DIR		*d;
	struct dirent	*de;
	char		 dir[PATH_MAX - 300], path[PATH_MAX];
	char		 name[CTL_SESSION_LEN];
	size_t		 n = 0;
	int		 fd;

	if (control_dir_ours(dir, sizeof dir, err, errlen) == -1 &&
	    errno == EPERM)
		return (0);
	if ((d = opendir(dir)) == NULL) {
		snprintf(err, errlen, "no running pinhole session (nothing in "
		    "%s)", dir);
		return (0);
	}
	while (n < max && (de = readdir(d)) != NULL) {
		if (!ctl_session_name(de->d_name, name, sizeof name) ||
		    (want != NULL && strcmp(want, name) != 0))
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		if ((fd = ctl_connect(path)) == -1)
			continue;
		memset(&conns[n], 0, sizeof conns[n]);
		conns[n].fd = fd;
		conns[n].next_id = 1;
		snprintf(conns[n].session, sizeof conns[n].session, "%s", name);
		n++;
	}
	closedir(d);
	if (n == 0 && want != NULL)
		snprintf(err, errlen, "no running session %s", want);
	else if (n == 0)
		snprintf(err, errlen, "no running pinhole session (is "
		    "`pinhole run` or `pinhole proxy` running as this user?)");
	return (n);
}

/* Close a connection. */
void
ctl_close(struct ctl_conn *c)
{
	if (c->fd != -1)
		close(c->fd);
	c->fd = -1;
}

/* Send a request, adding its id. */
int
ctl_send(struct ctl_conn *c, struct json_writer *w, int64_t *id)
{
	*id = c->next_id++;
	json_put_int(w, "id", *id);
	json_close(w);
	json_put_raw(w, "\n", 1);
	if (w->failed)
		return (-1);
	return (write_all(c->fd, w->buf, w->len));
}

/* Take one line out of the buffer, if a whole one is there. */
int
ctl_take_line(struct ctl_conn *c, struct json_obj *o)
{
	char		*nl;
	size_t		 n;
	const char	*err;
	int		 rv;

	if ((nl = memchr(c->buf, '\n', c->len)) == NULL)
		return (0);
	n = nl - c->buf;
	rv = json_parse(c->buf, n, o, &err) == 0 ? 1 : -1;
	memmove(c->buf, nl + 1, c->len - n - 1);
	c->len -= n + 1;
	return (rv);
}

/* Read what is there once; -1 at EOF, on error or a full buffer. */
int
ctl_fill(struct ctl_conn *c)
{
	ssize_t	n;

	if (c->len == sizeof c->buf)
		return (-1);
	do {
		n = read(c->fd, c->buf + c->len, sizeof c->buf - c->len);
	} while (n == -1 && errno == EINTR);
	if (n <= 0)
		return (-1);
	c->len += n;
	return (0);
}

/* Read one line as an object. */
int
ctl_read(struct ctl_conn *c, struct json_obj *o, int timeout)
{
	struct pollfd	pfd = { c->fd, POLLIN, 0 };
	ssize_t		n;
	int		rv;

	for (;;) {
		if ((rv = ctl_take_line(c, o)) != 0)
			return (rv == 1 ? 0 : -1);
		if (c->len == sizeof c->buf)
			return (-1);
		if ((rv = poll(&pfd, 1, timeout)) == -1 && errno == EINTR)
			continue;
		if (rv <= 0)
			return (-1);
		n = read(c->fd, c->buf + c->len, sizeof c->buf - c->len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			return (-1);
		c->len += n;
	}
}

/* Send a request and collect its reply. */
int
ctl_call(struct ctl_conn *c, struct json_writer *w, ctl_item_cb *cb,
    void *arg, struct json_obj *reply, char *err, size_t errlen)
{
	const struct json_member	*ok;
	const char			*e;
	int64_t				 id, rid;

	if (ctl_send(c, w, &id) == -1) {
		snprintf(err, errlen, "session %s: %s", c->session,
		    strerror(errno));
		return (-1);
	}
	for (;;) {
		if (ctl_read(c, reply, CTL_TIMEOUT_MS) == -1) {
			snprintf(err, errlen, "session %s: no answer",
			    c->session);
			return (-1);
		}
		if (json_get_int(reply, "id", &rid) == -1 || rid != id)
			continue;	/* an event */
		if ((ok = json_get(reply, "ok")) == NULL) {
			if (cb != NULL)
				cb(c, reply, arg);
			continue;
		}
		if (ok->type == JSON_BOOL && ok->num)
			return (0);
		e = json_get_str(reply, "error");
		snprintf(err, errlen, "%s", e != NULL ? e : "failed");
		return (-1);
	}
}

/* Write untrusted text to a terminal, escaped. */
void
ctl_print_safe(FILE *f, const char *s)
{
	char	buf[ESCALATE_TEXT_LEN * 4];
	size_t	len = strlen(s);

	if (len > ESCALATE_TEXT_LEN)
		len = ESCALATE_TEXT_LEN;
	escalate_clean(s, len, len, buf, sizeof buf);
	fputs(buf, f);
}

/* Write HOST:PORT escaped ([HOST]:PORT for IPv6; port 0, a lookup: HOST). */
void
ctl_print_target(FILE *f, const char *host, int64_t port)
{
	int	v6 = strchr(host, ':') != NULL;

	if (v6 && port != 0)
		fputc('[', f);
	ctl_print_safe(f, host);
	if (port != 0)
		fprintf(f, v6 ? "]:%lld" : ":%lld", (long long)port);
}

/* Write a request's HOST:PORT escaped; port 0 is every port of HOST. */
void
ctl_print_request_target(FILE *f, const char *host, int64_t port)
{
	ctl_print_target(f, host, port);
	if (port == 0)
		fputs(" (any port)", f);
}

/* Write the line saying what approving a request lifts, if it says. */
void
ctl_print_lifts(FILE *f, const char *indent, const struct json_obj *o)
{
	const char	*lifts = json_get_str(o, "lifts");

	if (lifts == NULL)
		return;
	fprintf(f, "%sapproving lifts ", indent);
	ctl_print_safe(f, lifts);
	fputc('\n', f);
}

/* Write the line naming the sandbox a request came from, if it names one. */
void
ctl_print_sandbox(FILE *f, const char *indent, const struct json_obj *o)
{
	const char	*sb = json_get_str(o, "sandbox");
	const char	*cmd = json_get_str(o, "cmd");
	const char	*sbs;
	int64_t		 pid, others;

	if (sb == NULL)
		return;
	fprintf(f, "%ssandbox ", indent);
	ctl_print_safe(f, sb);
	if (json_get_int(o, "pid", &pid) == 0)
		fprintf(f, ", pid %lld", (long long)pid);
	fputs(": ", f);
	ctl_print_safe(f, cmd != NULL && cmd[0] != '\0' ? cmd : "-");
	if (json_get_int(o, "others", &others) == 0 && others > 0)
		fprintf(f, " (asked %lld more time%s from elsewhere)",
		    (long long)others, others == 1 ? "" : "s");
	if ((sbs = json_get_str(o, "sandboxes")) != NULL) {
		fprintf(f, "\n%sasked by sandboxes ", indent);
		ctl_print_safe(f, sbs);
	}
	fputc('\n', f);
}

/* Look for a pending request's id among a session's items. */
static void
ctl_find_cb(struct ctl_conn *c, const struct json_obj *o, void *arg)
{
	const char	*id = json_get_str(o, "request");
	const char	*want = arg;

	if (id != NULL && strcmp(id, want) == 0)
		c->found = 1;
}

/* Find the session holding a pending request. */
struct ctl_conn *
ctl_find_request(struct ctl_conn *conns, size_t n, const char *id, char *err,
    size_t errlen)
{
	struct json_writer	 w;
	struct json_obj		 reply;
	struct ctl_conn		*found = NULL;
	size_t			 i, nfound = 0;

	for (i = 0; i < n; i++) {
		conns[i].found = 0;
		json_writer_init(&w, 0);
		json_open(&w);
		json_put_str(&w, "op", "pending");
		if (ctl_call(&conns[i], &w, ctl_find_cb, (void *)id, &reply,
		    err, errlen) == 0 && conns[i].found) {
			found = &conns[i];
			nfound++;
		}
		json_writer_free(&w);
	}
	if (nfound > 1) {
		snprintf(err, errlen, "request %s is pending in %zu sessions: "
		    "name one with --session-id", id, nfound);
		return (NULL);
	}
	if (found == NULL)
		snprintf(err, errlen, "no pending request %s (see pinhole "
		    "pending)", id);
	return (found);
}

/* Say how long a grant lasts, when its ttl ends it sooner. */
static void
ctl_print_ttl(FILE *f, const struct json_obj *o)
{
	int64_t	ttl = 0;

	if (json_get_int(o, "ttl", &ttl) == 0 && ttl > 0)
		fprintf(f, ", for %lld s at most", (long long)ttl);
}

/*
 * Say a decision in words: what, and for an approval its scope (once for
 * which sandbox, this session, or always and where the rule was written);
 * for a denial what the agent is told.
 */
void
ctl_print_decision(FILE *f, const char *session, const struct json_obj *o)
{
	const char	*state = json_get_str(o, "state");
	const char	*scope = json_get_str(o, "scope");
	const char	*sb = json_get_str(o, "sandbox");
	const char	*written = json_get_str(o, "written");
	const char	*answer = json_get_str(o, "answer");
	const char	*host = json_get_str(o, "host");
	int64_t		 port = 0;

	json_get_int(o, "port", &port);
	ctl_print_safe(f, state != NULL ? state : "decided");
	fputc(' ', f);
	ctl_print_safe(f, json_get_str(o, "request") != NULL ?
	    json_get_str(o, "request") : "?");
	fputs(": ", f);
	ctl_print_request_target(f, host != NULL ? host : "?", port);
	if (state == NULL || (strcmp(state, "denied") != 0 &&
	    strcmp(state, "approved") != 0)) {
		fputs(" (session ", f);
		ctl_print_safe(f, session);
		fputc(')', f);
	} else if (strcmp(state, "denied") == 0) {
		fprintf(f, " (session ");
		ctl_print_safe(f, session);
		fputs("); the agent is told: ", f);
		ctl_print_safe(f, answer != NULL ? answer : "denied, no reason "
		    "given");
	} else if (scope != NULL && strcmp(scope, "always") == 0) {
		fputs(" always", f);
		ctl_print_ttl(f, o);
		if (written != NULL) {
			fputs(": added to ", f);
			ctl_print_safe(f, written);
		}
	} else if (scope != NULL && strcmp(scope, "session") == 0) {
		fputs(" for this session (", f);
		ctl_print_safe(f, session);
		fputs("), until it stops", f);
		ctl_print_ttl(f, o);
	} else {
		fputs(" once: the next connection of ", f);
		if (sb != NULL) {
			fputs("sandbox ", f);
			ctl_print_safe(f, sb);
		} else
			fputs("the command that asked", f);
		fputs(" (session ", f);
		ctl_print_safe(f, session);
		fputc(')', f);
		ctl_print_ttl(f, o);
	}
}

/*
 * Send a decision (w: an open object with op and its members) to the
 * session holding request id ("SESSION/ID" names the session too).
 * Prints the outcome; returns the exit status.
 */
int
ctl_decide(const char *cmd, const char *session, const char *id,
    struct json_writer *w)
{
	struct ctl_conn		 conns[CTL_SESSIONS_MAX], *c;
	struct json_obj		 reply;
	char			 err[512], sbuf[CTL_SESSION_LEN];
	const char		*slash;
	size_t			 n, i;
	int			 rv = 1;

	if ((slash = strchr(id, '/')) != NULL &&
	    (size_t)(slash - id) < sizeof sbuf) {
		memcpy(sbuf, id, slash - id);
		sbuf[slash - id] = '\0';
		session = sbuf;
		id = slash + 1;
	}
	json_put_str(w, "request", id);
	json_put_str(w, "via", "cli");
	if ((n = ctl_open_all(conns, CTL_SESSIONS_MAX, session, err,
	    sizeof err)) == 0) {
		fprintf(stderr, "pinhole %s: %s\n", cmd, err);
		return (1);
	}
	if ((c = ctl_find_request(conns, n, id, err, sizeof err)) == NULL ||
	    ctl_call(c, w, NULL, NULL, &reply, err, sizeof err) == -1) {
		fprintf(stderr, "pinhole %s: ", cmd);
		ctl_print_safe(stderr, err);
		fputc('\n', stderr);
		goto out;
	}
	ctl_print_decision(stdout, c->session, &reply);
	putchar('\n');
	rv = 0;
out:
	for (i = 0; i < n; i++)
		ctl_close(&conns[i]);
	return (rv);
}
