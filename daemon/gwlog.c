/*
 * The gateway's audit log: opened where the options say (the default
 * file, its directory made, without --log), the gateway's lifecycle
 * lines (start, stop, reload; a sandbox's attach and detach), and
 * shipping: each line written handed on to every --log destination,
 * their spool's directory, their counts for a scrape, and at stop what
 * waits sent for at most --log-ship-wait.
 */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "daemon/gwctx-int.h"
#include "daemon/gwopts.h"
#include "lib/metrics.h"
#include "proxy/audit/audit.h"
#include "proxy/audit/ship.h"
#include "proxy/sandbox/sandbox.h"

/* Make the directories above a file (0700) unless they exist. */
static int
gwopts_mkdirs(char *path)
{
	char	*p;
	int	 rv = 0;

	for (p = strchr(path + 1, '/'); p != NULL && rv == 0;
	    p = strchr(p + 1, '/')) {
		*p = '\0';
		if (mkdir(path, 0700) == -1 && errno != EEXIST)
			rv = -1;
		*p = '/';
	}
	return (rv);
}

/*
 * Without --log, log to the default file (audit_default_path()), making
 * its directory.
 */
static int
gwopts_default_log(struct gwopts *o, char *err, size_t errlen)
{
	if (o->audit.log != NULL)
		return (0);
	if (audit_default_path(o->default_log, sizeof o->default_log) == -1) {
		snprintf(err, errlen, "audit log: no HOME or XDG_STATE_HOME to "
		    "put it in: give --log");
		return (-1);
	}
	if (gwopts_mkdirs(o->default_log) == -1) {
		snprintf(err, errlen, "audit log: cannot make the directory of "
		    "%s: %s (give --log)", o->default_log, strerror(errno));
		return (-1);
	}
	o->audit.log = o->default_log;
	return (0);
}

/* Open the log the options name, or the default file. */
struct audit *
gwopts_open_log(struct gwopts *o, char *err, size_t errlen)
{
	if (gwopts_default_log(o, err, errlen) == -1)
		return (NULL);
	return (audit_open_config(&o->audit, err, errlen));
}

/* Write a lifecycle line of the gateway, or of one of its sandboxes. */
void
gwctx_audit_sandbox(struct gwctx *c, const struct sandbox *sb,
    const char *event, const char *verdict, const char *reason,
    const char *detail)
{
	struct audit_event	e;

	if (c->audit == NULL)
		return;
	audit_event_init(&e);
	e.event = event;
	e.verdict = verdict;
	e.reason = reason;
	e.detail = detail;
	e.session = c->o->cfg.session;
	audit_event_sandbox(&e, sandbox_ident(sb));
	/* So that `pinhole log verify` can tell whether it still runs. */
	if (strcmp(event, "start") == 0)
		e.gateway_pid = getpid();
	audit_write(c->audit, &e);
}

/* Write a lifecycle line (start, stop, reload) to the audit log. */
void
gwctx_audit(struct gwctx *c, const char *event, const char *verdict,
    const char *reason, const char *detail)
{
	gwctx_audit_sandbox(c, NULL, event, verdict, reason, detail);
}

/*
 * Shipping the audit log: each line written handed on to every
 * --log destination, their spool's directory, their counts for a
 * scrape, and at stop what waits sent for at most --log-ship-wait.
 */
/* Hand lines written to the log on to each shipping destination. */
static void
gwctx_ship_cb(void *arg, const char *lines, size_t len)
{
	struct gwctx	*c = arg;
	size_t		 i;

	for (i = 0; i < c->nships; i++)
		ship_lines(c->ships[i], lines, len);
}

/*
 * Name the spool's directory when --log-spool is not given: spool/ in
 * the directory of the log file, or of the default file when the log is
 * not a file.
 */
static int
gwopts_spool_dir(struct gwopts *o, char *err, size_t errlen)
{
	const char	*log = o->audit.log;
	char		 def[4096], *slash;

	if (o->shipcfg.spool_dir != NULL)
		return (0);
	if (strcmp(log, "-") == 0 || strncmp(log, "syslog", 6) == 0 ||
	    strncmp(log, "journald", 8) == 0) {
		if (audit_default_path(def, sizeof def) == -1) {
			snprintf(err, errlen, "audit shipping: no HOME or "
			    "XDG_STATE_HOME for the spool: give --log-spool");
			return (-1);
		}
		log = def;
	}
	snprintf(o->spool_dir, sizeof o->spool_dir, "%s", log);
	if ((slash = strrchr(o->spool_dir, '/')) != NULL)
		snprintf(slash + 1, sizeof o->spool_dir -
		    (slash + 1 - o->spool_dir), "spool");
	else
		snprintf(o->spool_dir, sizeof o->spool_dir, "spool");
	if (gwopts_mkdirs(o->spool_dir) == -1) {
		snprintf(err, errlen, "audit shipping: cannot make the "
		    "directory of %.512s: %s", o->spool_dir, strerror(errno));
		return (-1);
	}
	o->shipcfg.spool_dir = o->spool_dir;
	return (0);
}

/* Open the shipping destinations, and hand them every line written. */
int
gwctx_ships(struct gwctx *c, char *err, size_t errlen)
{
	struct gwopts	*o = c->o;
	size_t		 i;

	if (o->nship == 0)
		return (0);
	if (gwopts_spool_dir(o, err, errlen) == -1)
		return (-1);
	for (i = 0; i < o->nship; i++) {
		c->ships[i] = ship_open(c->base, o->ship[i], &o->shipcfg,
		    err, errlen);
		if (c->ships[i] == NULL)
			return (-1);
		c->nships++;
	}
	audit_set_hook(c->audit, gwctx_ship_cb, c);
	return (0);
}

/* Read the shipping destinations' counts for a scrape. */
size_t
gwctx_ship_stats(void *arg, struct metrics_ship *out, size_t max)
{
	struct gwctx		*c = arg;
	struct ship_stats	 st;
	size_t			 i;

	for (i = 0; i < c->nships && i < max; i++) {
		ship_stats(c->ships[i], &st);
		out[i].dest = c->o->ship[i];
		out[i].delivered = st.delivered;
		out[i].pending = st.pending;
		out[i].dropped = st.dropped;
		out[i].connects = st.connects;
		out[i].otlp = st.otlp;
		out[i].rejected = st.rejected;
		out[i].refused = st.refused;
	}
	return (i);
}

/* The time to ship what waits is over. */
static void
gwctx_ships_late_cb(evutil_socket_t fd, short what, void *arg)
{
	int	*late = arg;

	*late = 1;
}

/* Tell whether a destination still has lines to send, or a session to end. */
static int
gwctx_ships_busy(const struct gwctx *c)
{
	size_t	i;

	for (i = 0; i < c->nships; i++)
		if (ship_busy(c->ships[i]))
			return (1);
	return (0);
}

/*
 * The gateway stops: every destination sends what waits, the stop line
 * among it, connecting if it must, for at most --log-ship-wait seconds
 * (the loop runs on the events of the sending alone: the gateway's are
 * gone).  Then each says what is left and where it waits; the next start
 * with the same spool sends it.
 */
void
gwctx_ships_flush(struct gwctx *c)
{
	struct timeval	 tv = { 0, 0 };
	struct event	*timer = NULL;
	size_t		 i;
	int		 late = 0;

	if (c->nships == 0)
		return;
	tv.tv_sec = c->o->ship_wait;
	audit_flush(c->audit);		/* the lines this pass held */
	for (i = 0; i < c->nships; i++)
		ship_stop(c->ships[i]);
	if ((timer = evtimer_new(c->base, gwctx_ships_late_cb, &late)) !=
	    NULL && evtimer_add(timer, &tv) == 0) {
		while (!late && gwctx_ships_busy(c))
			event_base_loop(c->base, EVLOOP_ONCE);
	}
	if (timer != NULL)
		event_free(timer);
	for (i = 0; i < c->nships; i++)
		ship_close(c->ships[i]);
	c->nships = 0;
	if (c->audit != NULL)
		audit_set_hook(c->audit, NULL, NULL);
}
