/*
 * pinhole run's notices on its stderr (daemon/notify.h): the limit's timer,
 * the requests told of (whose decision is said, once), and the writing.
 */
#include "config.h"

#include <sys/stat.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "daemon/notice.h"
#include "daemon/notify.h"
#include "lib/clock.h"
#include "lib/io.h"
#include "proxy/escalate/escalate.h"

#define NOTIFY_TOLD_MAX	16	/* requests told of, undecided */

struct notify {
	int			 fd;		/* our own stderr */
	char			 session[ESCALATE_SESSION_LEN];
	struct notice_limit	 limit;
	struct event		*timer;
	struct escalate_sub	*sub;
	char			 told[NOTIFY_TOLD_MAX][ATTACH_WORD_MAX];
	size_t			 next_told;
};

/*
 * A descriptor for stderr that never blocks the gateway: a file of our
 * own on the same pipe or terminal, non-blocking (stderr's own is the
 * command's too, and stays as it is); a file is written as it is.
 */
static int
notify_stderr(void)
{
	struct stat	st;
	int		fd;

	if (fstat(STDERR_FILENO, &st) == 0 && !S_ISREG(st.st_mode) &&
	    (fd = open("/proc/self/fd/2", O_WRONLY | O_APPEND | O_NONBLOCK |
	    O_NOCTTY | O_CLOEXEC)) != -1)
		return (fd);
	return (fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3));
}

/* Write one line, whole; one the descriptor cannot take now is lost. */
static void
notify_write(struct notify *nf, const char *line, size_t len)
{
	if (len > 0 && nf->fd != -1)
		(void)write_all(nf->fd, line, len);
}

/* Arm the timer for the next line the limit holds back. */
static void
notify_arm(struct notify *nf)
{
	struct timeval	tv;
	int64_t		ms = notice_limit_next(&nf->limit, mono_ms());

	if (ms < 0)
		return;
	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	evtimer_add(nf->timer, &tv);
}

/* Say what is due now (everything held back, with all). */
static void
notify_due(struct notify *nf, int all)
{
	struct notice_due	*d;
	char			 line[NOTICE_LINE_MAX];

	if ((d = malloc(sizeof *d)) == NULL)
		return;
	while (notice_limit_due(&nf->limit, mono_ms(), all, d))
		notify_write(nf, line, notice_due_format(d, line,
		    sizeof line));
	free(d);
}

/* A window of the limit has ended: say its repeats. */
static void
notify_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct notify	*nf = arg;

	notify_due(nf, 0);
	notify_arm(nf);
}

/* Start saying notices on stderr. */
struct notify *
notify_create(struct event_base *base, const char *session)
{
	struct notify	*nf;

	if ((nf = calloc(1, sizeof *nf)) == NULL)
		return (NULL);
	if ((nf->timer = evtimer_new(base, notify_timer_cb, nf)) == NULL) {
		free(nf);
		return (NULL);
	}
	snprintf(nf->session, sizeof nf->session, "%s",
	    session != NULL ? session : "");
	notice_limit_init(&nf->limit, mono_ms());
	nf->fd = notify_stderr();
	return (nf);
}

/* Say what is still held back, then stop. */
void
notify_free(struct notify *nf)
{
	if (nf == NULL)
		return;
	notify_due(nf, 1);
	escalate_unsubscribe(nf->sub);
	event_free(nf->timer);
	if (nf->fd != -1)
		close(nf->fd);
	free(nf);
}

/* Find a request told of; -1 when it was not. */
static int
notify_told(const struct notify *nf, const char *id)
{
	size_t	i;

	for (i = 0; i < NOTIFY_TOLD_MAX; i++) {
		if (id[0] != '\0' && strcmp(nf->told[i], id) == 0)
			return ((int)i);
	}
	return (-1);
}

/*
 * Should a request's notice be said?  Held or asked for: once, noted;
 * decided: when it was told of, once.
 */
static int
notify_request_news(struct notify *nf, const struct attach_notice *n)
{
	int	i = notify_told(nf, n->request);

	if (n->kind == ATTACH_NOTICE_DECIDED) {
		if (i != -1)
			nf->told[i][0] = '\0';
		return (i != -1);
	}
	if (i != -1)
		return (0);
	snprintf(nf->told[nf->next_told], sizeof nf->told[0], "%s",
	    n->request);
	nf->next_told = (nf->next_told + 1) % NOTIFY_TOLD_MAX;
	return (1);
}

/* Say (or count) one notice. */
void
notify_notice(struct notify *nf, const struct attach_notice *n)
{
	char	line[NOTICE_LINE_MAX];

	if (notice_limited(n)) {
		if (notice_limit_admit(&nf->limit, n, mono_ms()))
			notify_write(nf, line, notice_format(n, nf->session, 0,
			    0, line, sizeof line));
		if (!evtimer_pending(nf->timer, NULL))
			notify_arm(nf);
		return;
	}
	if (notify_request_news(nf, n))
		notify_write(nf, line, notice_format(n, nf->session, 0, 0,
		    line, sizeof line));
}

/* An event of the embedded gateway's queue. */
static void
notify_event_cb(const struct escalate_event *ev, void *arg)
{
	struct notify		*nf = arg;
	struct attach_notice	*n;
	const char		*sandbox;

	if ((n = malloc(sizeof *n)) == NULL)
		return;
	if (notice_from_event(ev, n, &sandbox) == 0)
		notify_notice(nf, n);
	free(n);
}

/* Take notices from the embedded gateway's queue. */
int
notify_subscribe(struct notify *nf, struct escalate *e)
{
	if ((nf->sub = escalate_subscribe(e, notify_event_cb, nf)) == NULL)
		return (-1);
	return (0);
}
