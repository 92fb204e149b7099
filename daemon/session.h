/*
 * A session's runtime, what pinhole session start serves around
 * gwloop_run(): it holds session-NAME.lock in the control directory
 * while it lives, so a killed one is seen as dead, and keeps its record
 * there, session-NAME.json (its pid, since when, listeners, log and
 * control socket, the commands attached, since when it is idle); it
 * takes sandboxes on NAME.attach (daemon/attach-server.h), and stops
 * once idle for --stop-idle.  Reading a record is here too, the one
 * place that knows its format.
 */
#ifndef SESSION_H
#define SESSION_H

#include <limits.h>
#include <stdint.h>
#include <time.h>

#include "daemon/runguard.h"

struct attach_server;
struct event;
struct gwctx;
struct json_obj;

#define SESSION_IDLE_MAX	(366L * 24 * 3600)	/* --stop-idle */

/* A session being started, and then served. */
struct session {
	/* What session start was asked for. */
	const char	*name;		/* NAME, or id */
	char		 id[16];	/* a name made up */
	int		 foreground;
	unsigned int	 max_sandboxes;	/* 0: ATTACH_MAX_DEFAULT */
	long		 stop_idle;	/* s idle before it stops; 0 never */

	/* The runtime's own. */
	char		 dir[PATH_MAX];
	char		 lock[PATH_MAX];
	char		 record[PATH_MAX];
	int		 lockfd;
	int		 notify;	/* to the waiting parent, or -1 */
	int		 recorded;
	char		 since[32];
	char		 listening[512];
	struct gwctx	*c;
	struct attach_server *attach;
	struct runguard	 guard;		/* what every sandbox gets */
	struct event	*idle;		/* the look at what goes on */
	uint64_t	 decisions;	/* the gateway's, at the last look */
	time_t		 looked;	/* when last looked */
	time_t		 idle_since;	/* 0: busy */
};

/* Make a session to be started: nothing asked for, nothing held. */
void	session_init(struct session *);

/*
 * gwloop_run()'s hooks, with the session as their argument.  Before
 * the gateway: take the lock, or say the session runs already, and
 * detach unless foreground (the parent prints the name once the child
 * serves, or what it said, and exits).  Serving: take sandboxes, write
 * the record, let the terminal go.  Stopped: the record removed.
 */
int	session_prepare(void *);
int	session_ready(void *, struct gwctx *, const char *);
void	session_done(void *, int);
/* After gwloop_run(), torn down and shipped: the lock removed, let go. */
void	session_end(struct session *);

/*
 * Read the record of the session name in dir, if its lock says it lives
 * (0; with lockfd, the lock stays open there); else remove what a dead
 * one left (-1).
 */
int	session_probe(const char *, const char *, struct json_obj *, int *);
/* Take the session's name from a record's file name; 0: not a record. */
int	session_file_name(const char *, char *, size_t);
/* Wait for a session told to stop to let its lock go: 0, or -1. */
int	session_wait_stopped(int, int64_t);
/* The socket where the session name in dir takes sandboxes. */
int	session_attach_path(char *, size_t, const char *, const char *);

#endif
