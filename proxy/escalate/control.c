/*
 * The control socket server: a unix stream socket in a directory only
 * the user can reach, peers checked with SO_PEERCRED, one JSON line at a
 * time through control_handle(), events pushed to subscribers.  A client
 * whose queued output grows past CONTROL_OUT_MAX is dropped, not
 * buffered without bound.
 */
#include "config.h"

#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>

#include "lib/log.h"
#include "lib/unixsock.h"
#include "proxy/escalate/control.h"
#include "proxy/escalate/control-proto.h"

struct control_client {
	TAILQ_ENTRY(control_client)	 entry;
	struct control			*ctl;
	struct bufferevent		*bev;
	struct control_peer		 peer;
	struct escalate_sub		*sub;
	int				 closing;	/* once drained */
	int				 dead;
};

TAILQ_HEAD(control_clients, control_client);

struct control {
	struct event_base		*base;
	struct escalate			*e;
	char				 path[PATH_MAX];
	char				*agent;
	struct evconnlistener		*listener;
	struct event			*resume;	/* after EMFILE */
	struct event			*reaper;
	struct control_clients		 clients;
	struct control_clients		 dead;
	size_t				 nclients;
};

/* $XDG_RUNTIME_DIR when it is set to an absolute path, else NULL. */
static const char *
control_xdg(void)
{
	const char	*xdg = getenv("XDG_RUNTIME_DIR");

	return (xdg != NULL && xdg[0] == '/' ? xdg : NULL);
}

/* The directory of the user's control sockets without XDG_RUNTIME_DIR. */
int
control_dir_tmp(char *buf, size_t len)
{
	int	n;

	n = snprintf(buf, len, "/tmp/pinhole-%lu", (unsigned long)getuid());
	return (n < 0 || (size_t)n >= len ? -1 : 0);
}

/* The directory of the user's control sockets. */
int
control_dir(char *buf, size_t len)
{
	const char	*xdg = control_xdg();
	int		 n;

	if (xdg == NULL)
		return (control_dir_tmp(buf, len));
	n = snprintf(buf, len, "%s/pinhole", xdg);
	return (n < 0 || (size_t)n >= len ? -1 : 0);
}

/* Is this a session's name: [A-Za-z0-9._-]{1,64}, not starting with '.'? */
int
control_session_name_ok(const char *s)
{
	size_t	n = strlen(s);

	return (n >= 1 && n <= CONTROL_NAME_MAX && s[0] != '.' &&
	    strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	    "0123456789._-") == n);
}

/* Say what is wrong with the directory, and what to do about it. */
static int
control_dir_error(const char *problem, int remove, char *err, size_t errlen)
{
	const char	*xdg = control_xdg();

	snprintf(err, errlen, "%s%s%s%s: %sset XDG_RUNTIME_DIR to a directory "
	    "of yours with mode 0700%s", xdg != NULL ? "XDG_RUNTIME_DIR=" : "",
	    xdg != NULL ? xdg : "", xdg != NULL ? ": " : "", problem,
	    remove ? "remove it, or " : "", xdg != NULL ? ", or unset it" : "");
	return (-1);
}

/* Create the directory, or check that it is safe to use. */
int
control_dir_make(char *buf, size_t len, char *err, size_t errlen)
{
	char	problem[PATH_MAX + 64];

	if (control_dir(buf, len) == -1)
		return (control_dir_error("path too long", 0, err, errlen));
	if (mkdir(buf, 0700) == -1 && errno != EEXIST) {
		if (control_xdg() != NULL && (errno == ENOENT ||
		    errno == ENOTDIR))
			snprintf(problem, sizeof problem, "%s",
			    strerror(errno));
		else
			snprintf(problem, sizeof problem, "cannot create %s: "
			    "%s", buf, strerror(errno));
		return (control_dir_error(problem, 0, err, errlen));
	}
	if (control_dir_ours(buf, len, NULL, 0) == -1) {
		snprintf(problem, sizeof problem, "%s is not a directory of "
		    "ours with mode 0700", buf);
		return (control_dir_error(problem, 1, err, errlen));
	}
	return (0);
}

/*
 * The directory of the user's control sockets, for a client: only when
 * it is the user's own with mode 0700 and not a symlink, as a gateway
 * makes it.  Another user may have made /tmp/pinhole-UID first, and
 * what answers in such a directory is not the user's gateway.  -1 with
 * errno (EPERM: not ours, said in err when given).
 */
int
control_dir_ours(char *buf, size_t len, char *err, size_t errlen)
{
	struct stat	st;

	if (control_dir(buf, len) == -1) {
		errno = ENAMETOOLONG;
		return (-1);
	}
	if (lstat(buf, &st) == -1)
		return (-1);
	if (!S_ISDIR(st.st_mode) || st.st_uid != getuid() ||
	    (st.st_mode & 077) != 0) {
		if (err != NULL)
			snprintf(err, errlen, "%s is not a directory of yours "
			    "with mode 0700: another user may have made it; "
			    "remove it, or set XDG_RUNTIME_DIR to a directory "
			    "of yours with mode 0700", buf);
		errno = EPERM;
		return (-1);
	}
	return (0);
}

/* Drop a client: stop it now, free it from the event loop. */
static void
control_client_drop(struct control_client *cc, const char *why)
{
	struct control	*ctl = cc->ctl;

	if (cc->dead)
		return;
	if (why != NULL)
		log_debug("control: client dropped: %s", why);
	cc->dead = 1;
	escalate_unsubscribe(cc->sub);
	cc->sub = NULL;
	bufferevent_disable(cc->bev, EV_READ | EV_WRITE);
	TAILQ_REMOVE(&ctl->clients, cc, entry);
	TAILQ_INSERT_TAIL(&ctl->dead, cc, entry);
	ctl->nclients--;
	event_active(ctl->reaper, EV_TIMEOUT, 0);
}

/* Free dropped clients. */
static void
control_reap_cb(evutil_socket_t fd, short what, void *arg)
{
	struct control		*ctl = arg;
	struct control_client	*cc;

	while ((cc = TAILQ_FIRST(&ctl->dead)) != NULL) {
		TAILQ_REMOVE(&ctl->dead, cc, entry);
		bufferevent_free(cc->bev);
		free(cc);
	}
}

/* Queue text for a client, dropping it when too much is queued. */
static void
control_client_send(struct control_client *cc, const struct json_writer *w)
{
	struct evbuffer	*out = bufferevent_get_output(cc->bev);

	if (w->failed) {
		control_client_drop(cc, "out of memory");
		return;
	}
	if (evbuffer_get_length(out) + w->len > CONTROL_OUT_MAX) {
		log_warnx("control: dropping a client that does not read");
		control_client_drop(cc, NULL);
		return;
	}
	if (w->len > 0 && evbuffer_add(out, w->buf, w->len) == -1)
		control_client_drop(cc, "out of memory");
}

/*
 * Push a note to a subscribed client: requests, blocked attempts and
 * decisions (a held connection is told as its request was, a sandbox's
 * refusals are its run's to show).
 */
static void
control_note_cb(const struct escalate_event *ev, void *arg)
{
	struct control_client	*cc = arg;
	struct json_writer	 w;

	if (cc->dead || ev->note > ESCALATE_NOTE_DECIDED)
		return;
	json_writer_init(&w, 0);
	control_format_note(cc->ctl->e, ev->note, ev->request, ev->blocked,
	    &w);
	control_client_send(cc, &w);
	json_writer_free(&w);
}

/* Handle one line; subscribe when asked. */
static void
control_client_line(struct control_client *cc, char *line, size_t len)
{
	struct json_writer	w;
	int			want;

	if (len > 0 && line[len - 1] == '\r')
		len--;
	json_writer_init(&w, 0);
	want = control_handle(cc->ctl->e, &cc->peer, cc->ctl->agent, line, len,
	    &w);
	control_client_send(cc, &w);
	json_writer_free(&w);
	if (!cc->dead && (want & CONTROL_WANT_SUBSCRIBE) && cc->sub == NULL) {
		cc->sub = escalate_subscribe(cc->ctl->e, control_note_cb, cc);
		if (cc->sub == NULL)
			control_client_drop(cc, "out of memory");
	}
}

/* Refuse an overlong line and close once the error is out. */
static void
control_client_overlong(struct control_client *cc)
{
	static const char	msg[] =
	    "{\"ok\":false,\"error\":\"line too long\"}\n";

	bufferevent_write(cc->bev, msg, sizeof msg - 1);
	bufferevent_disable(cc->bev, EV_READ);
	cc->closing = 1;
}

/* Read whole lines. */
static void
control_read_cb(struct bufferevent *bev, void *arg)
{
	struct control_client	*cc = arg;
	struct evbuffer		*in = bufferevent_get_input(bev);
	char			*line;
	size_t			 len;

	while (!cc->dead && !cc->closing) {
		line = evbuffer_readln(in, &len, EVBUFFER_EOL_LF);
		if (line == NULL) {
			if (evbuffer_get_length(in) > CONTROL_LINE_MAX)
				control_client_overlong(cc);
			return;
		}
		if (len > CONTROL_LINE_MAX)
			control_client_overlong(cc);
		else if (len > 0)
			control_client_line(cc, line, len);
		free(line);
	}
}

/* Close a closing client once its output is out. */
static void
control_write_cb(struct bufferevent *bev, void *arg)
{
	struct control_client	*cc = arg;

	if (cc->closing)
		control_client_drop(cc, "closed after an error");
}

/* The peer went away, or an error. */
static void
control_event_cb(struct bufferevent *bev, short what, void *arg)
{
	control_client_drop(arg, "end of connection");
}

/*
 * Tell whether a peer may speak to us, or we to it: the same uid (or
 * root), in our network namespace.  The sandbox never is: a second wall
 * behind the tmpfs that hides the control directory from it.
 */
int
control_peer_ok(int fd, uid_t *uid)
{
	return (unixsock_peer_local(fd, uid) == 1 &&
	    (*uid == getuid() || *uid == 0));
}

/*
 * Is the listener a client reached the user's gateway: the same uid (or
 * root), not seen in another network namespace?  A gateway makes itself
 * undumpable (its sandbox's command, of the same uid, must not ptrace
 * it), so its namespace may be out of our sight; a sandbox cannot bind
 * in either control directory, both hidden from it.
 */
int
control_gateway_ok(int fd, uid_t *uid)
{
	return (unixsock_peer_local(fd, uid) != 0 &&
	    (*uid == getuid() || *uid == 0));
}

/* Accept a client. */
static void
control_accept_cb(struct evconnlistener *l, evutil_socket_t fd,
    struct sockaddr *sa, int salen, void *arg)
{
	struct control		*ctl = arg;
	struct control_client	*cc;
	uid_t			 uid = (uid_t)-1;

	if (!control_peer_ok(fd, &uid) ||
	    ctl->nclients >= CONTROL_CLIENTS_MAX) {
		log_warnx("control: refused a client (uid %ld)", (long)uid);
		close(fd);
		return;
	}
	if ((cc = calloc(1, sizeof *cc)) == NULL) {
		close(fd);
		return;
	}
	cc->ctl = ctl;
	cc->peer.uid = uid;
	cc->bev = bufferevent_socket_new(ctl->base, fd, BEV_OPT_CLOSE_ON_FREE);
	if (cc->bev == NULL) {
		close(fd);
		free(cc);
		return;
	}
	bufferevent_setcb(cc->bev, control_read_cb, control_write_cb,
	    control_event_cb, cc);
	bufferevent_enable(cc->bev, EV_READ | EV_WRITE);
	TAILQ_INSERT_TAIL(&ctl->clients, cc, entry);
	ctl->nclients++;
}

/* Accept again after running out of descriptors. */
static void
control_resume_cb(evutil_socket_t fd, short what, void *arg)
{
	struct control	*ctl = arg;

	evconnlistener_enable(ctl->listener);
}

/* Back off for a second when accept() fails (EMFILE). */
static void
control_accept_error_cb(struct evconnlistener *l, void *arg)
{
	struct control	*ctl = arg;
	struct timeval	 tv = { 1, 0 };

	log_warn("control: accept");
	evconnlistener_disable(l);
	evtimer_add(ctl->resume, &tv);
}

/* Bind and listen on the socket path. */
static int
control_bind(struct control *ctl, char *err, size_t errlen)
{
	int	fd, bound = 0;

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd == -1 || unixsock_bind(fd, ctl->path) == -1)
		goto fail;
	bound = 1;
	if (chmod(ctl->path, 0600) == -1 || listen(fd, 16) == -1)
		goto fail;
	return (fd);
fail:
	snprintf(err, errlen, "%s: %s", ctl->path, strerror(errno));
	if (bound)
		unlink(ctl->path);
	if (fd != -1)
		close(fd);
	return (-1);
}

/* Listen on DIR/SESSION.sock. */
struct control *
control_open(struct event_base *base, struct escalate *e, char *err,
    size_t errlen)
{
	struct control	*ctl;
	char		 dir[PATH_MAX - 32];
	int		 fd = -1;

	if ((ctl = calloc(1, sizeof *ctl)) == NULL) {
		snprintf(err, errlen, "out of memory");
		return (NULL);
	}
	ctl->base = base;
	ctl->e = e;
	TAILQ_INIT(&ctl->clients);
	TAILQ_INIT(&ctl->dead);
	if (control_dir_make(dir, sizeof dir, err, errlen) == -1)
		goto fail;
	snprintf(ctl->path, sizeof ctl->path, "%s/%s.sock", dir,
	    escalate_session(e));
	if ((fd = control_bind(ctl, err, errlen)) == -1) {
		ctl->path[0] = '\0';
		goto fail;
	}
	ctl->reaper = event_new(base, -1, 0, control_reap_cb, ctl);
	ctl->resume = evtimer_new(base, control_resume_cb, ctl);
	ctl->listener = evconnlistener_new(base, control_accept_cb, ctl,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, 0, fd);
	if (ctl->reaper == NULL || ctl->resume == NULL ||
	    ctl->listener == NULL) {
		if (ctl->listener == NULL)
			close(fd);
		snprintf(err, errlen, "control: out of memory");
		goto fail;
	}
	evconnlistener_set_error_cb(ctl->listener, control_accept_error_cb);
	return (ctl);
fail:
	control_close(ctl);
	return (NULL);
}

/* Close every client and remove the socket. */
void
control_close(struct control *ctl)
{
	if (ctl == NULL)
		return;
	while (!TAILQ_EMPTY(&ctl->clients))
		control_client_drop(TAILQ_FIRST(&ctl->clients), NULL);
	if (ctl->reaper != NULL) {
		control_reap_cb(-1, 0, ctl);
		event_free(ctl->reaper);
	}
	if (ctl->resume != NULL)
		event_free(ctl->resume);
	if (ctl->listener != NULL)
		evconnlistener_free(ctl->listener);
	if (ctl->path[0] != '\0')
		unlink(ctl->path);
	free(ctl->agent);
	free(ctl);
}

/* The socket's path. */
const char *
control_path(const struct control *ctl)
{
	return (ctl->path);
}

/* Tell clients where the agent endpoint is. */
void
control_set_agent(struct control *ctl, const char *agent)
{
	free(ctl->agent);
	ctl->agent = agent != NULL ? strdup(agent) : NULL;
}
