/*
 * The control socket: where a person (pinhole approve/deny/pending/watch)
 * or an agent harness answers escalation requests, in JSON lines
 * (docs/control-protocol.md).  One unix stream socket per gateway
 * session, SESSION.sock in a directory only the user can reach; peers
 * of another uid (but root) are refused.  The sandbox must not see that
 * directory: its mount namespace hides control_dir() under an empty
 * tmpfs.
 */
#ifndef CONTROL_H
#define CONTROL_H

#include <sys/types.h>

#include <stddef.h>

#include "proxy/escalate/escalate.h"

#define CONTROL_LINE_MAX	8192		/* one request line */
#define CONTROL_OUT_MAX		(256 * 1024)	/* queued for one client */
#define CONTROL_CLIENTS_MAX	64

struct control;
struct event_base;

/*
 * The directory of the user's control sockets: $XDG_RUNTIME_DIR/pinhole
 * when XDG_RUNTIME_DIR is an absolute path, else (unset, empty or
 * relative) /tmp/pinhole-UID.  Returns 0, or -1 when it does not fit.
 */
int	control_dir(char *, size_t);
/* The one without XDG_RUNTIME_DIR, /tmp/pinhole-UID, whatever it says. */
int	control_dir_tmp(char *, size_t);
/*
 * Is this a session's name, as its sockets and record in that directory
 * are named: letters, digits, '.', '_', '-', 1 to CONTROL_NAME_MAX, not
 * starting with '.'?
 */
#define CONTROL_NAME_MAX	64
_Static_assert(ESCALATE_SESSION_LEN == CONTROL_NAME_MAX + 1,
    "a session's name travels whole");
int	control_session_name_ok(const char *);
/*
 * Create it (0700) or check it is ours, a directory, not a link; else
 * -1 with err naming the directory, the problem and the fix.
 */
int	control_dir_make(char *, size_t, char *, size_t);
/*
 * The directory, for a client: 0 when it is ours with mode 0700 and not
 * a link, else -1 with errno (EPERM: another's, said in err when not
 * NULL; ENOENT: none).
 */
int	control_dir_ours(char *, size_t, char *, size_t);

/*
 * May the peer of a unix socket speak to us, or we to it: the same uid
 * (or root), in our netns?  Its uid is put in *uid.
 */
int	control_peer_ok(int, uid_t *);
/*
 * Is the listener a client reached the user's gateway: the same uid (or
 * root), and not seen in another netns (a gateway's may be out of sight)?
 */
int	control_gateway_ok(int, uid_t *);

/* Listen on DIR/SESSION.sock for this queue.  NULL with err filled. */
struct control	*control_open(struct event_base *, struct escalate *,
		    char *, size_t);
/* Close every client and remove the socket. */
void		 control_close(struct control *);
const char	*control_path(const struct control *);
/* Tell clients where the agent endpoint is ("http://ADDR:PORT"). */
void		 control_set_agent(struct control *, const char *);

#endif
