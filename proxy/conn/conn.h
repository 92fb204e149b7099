/*
 * What the gateway's listeners and its sessions share.  Internal to
 * proxy/: callers use gateway.h.
 */
#ifndef SESSION_H
#define SESSION_H

#include <sys/queue.h>
#include <sys/socket.h>

#include "proxy/escalate/grants.h"
#include "proxy/gateway.h"
#include "proxy/resolver/resolver.h"
#include "proxy/wire/http.h"

#define GATEWAY_OWN_MAX		64	/* own addresses remembered */

struct evconnlistener;
struct session;

struct gateway_listener {
	TAILQ_ENTRY(gateway_listener)	 entry;
	struct gateway			*gw;
	struct evconnlistener		*l;
	int				 transparent;
	int				 nodelay;	/* accepted sockets inherit it */
};

struct gateway {
	struct event_base		*base;
	struct gateway_config		 cfg;
	struct http_limits		 lim;
	struct resolver			*resolver;
	struct audit			*audit;
	struct rules			*rules;
	const struct fakeip		*fakeip;	/* NULL: no DNS side */
	struct escalate			*esc;		/* or NULL */
	struct escalate_grants		 eg;		/* .grants or NULL */
	int				 ask;		/* s to hold, 0: no */
	TAILQ_HEAD(, gateway_listener)	 listeners;
	TAILQ_HEAD(, session)		 sessions;
	TAILQ_HEAD(, session)		 dead;
	size_t				 nsessions;
	struct event			*reaper;	/* frees dead sessions */
	struct event			*resume;	/* after EMFILE */
	struct event			*grace;		/* end of stop */
	int				 paused_fd;
	int				 fd_warned;
	int				 paused_full;
	int				 stopping;
	void				(*stopped)(void *);
	void				*stopped_arg;
	unsigned long long		 next_id;
	struct resolver_addr		 own[GATEWAY_OWN_MAX];
	size_t				 nown;
};

int	session_open(struct gateway *, int, const struct sockaddr *,
	    socklen_t, int);
void	session_stop_all(struct gateway *);
void	session_close_all(struct gateway *, const char *);
size_t	session_reap(struct gateway *, int);

int	gateway_own(const struct gateway *, const struct resolver_addr *);


#endif
