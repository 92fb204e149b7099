/*
 * The gateway's loop that pinhole proxy, pinhole session start and
 * pinhole run share: the context set up, the DNS server and the
 * listeners the options name, the signals, then the loop until SIGTERM
 * or SIGINT (run: until its command ends), between a start and a stop
 * line.
 */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "daemon/gwloop.h"
#include "daemon/gwopts.h"
#include "lib/log.h"
#include "lib/sdnotify.h"
#include "proxy/audit/audit.h"
#include "proxy/dns/dns.h"
#include "proxy/gateway.h"
#include "proxy/tls/tls.h"

/* The running loop. */
struct gwloop {
	struct gwloop_opts	*o;
	struct gwctx		 c;
	struct event		*sigterm;
	struct event		*sigint;
	int			 stopping;
};

/* SIGTERM or SIGINT: stop accepting, let tunnels finish, exit. */
static void
gwloop_sigterm_cb(evutil_socket_t sig, short what, void *arg)
{
	struct gwloop	*p = arg;

	if (p->stopping) {
		event_base_loopexit(p->c.base, NULL);
		return;
	}
	p->stopping = 1;
	log_info("stopping: %zu connections open", gateway_connections(p->c.gw));
	if (sdnotify("STOPPING=1\nSTATUS=stopping: %zu connections open",
	    gateway_connections(p->c.gw)) == -1)
		log_warn("cannot tell the service manager");
	gwctx_stop(&p->c);
}

/* Answer DNS where --dns-listen says. */
static int
gwloop_dns(struct gwloop *p)
{
	struct gwloop_opts	*o = p->o;
	char			 err[1024];
	size_t			 i;

	if (o->ndns_listen == 0)
		return (0);
	if (gwctx_dns(&p->c, err, sizeof err) == -1) {
		log_warnx("dns: %s", err);
		return (-1);
	}
	for (i = 0; i < o->ndns_listen; i++) {
		if (dns_server_listen(p->c.dns, o->dns_listen[i], err,
		    sizeof err) == -1) {
			log_warnx("cannot serve DNS on %s", err);
			return (-1);
		}
		log_info("DNS on %s", o->dns_listen[i]);
	}
	return (0);
}

/* Listen on each of n addresses for clients of one kind. */
static int
gwloop_listen(struct gwloop *p, const char **addrs, size_t n,
    enum conn_kind kind)
{
	char	err[1024];
	size_t	i;

	for (i = 0; i < n; i++) {
		if (gateway_listen(p->c.gw, addrs[i], kind, err,
		    sizeof err) == -1) {
			log_warnx("cannot listen on %s", err);
			return (-1);
		}
		log_info("%s on %s", kind == CONN_SOCKS ? "SOCKS5" :
		    "listening", addrs[i]);
	}
	return (0);
}

/* Set up the gateway and its listeners. */
static int
gwloop_setup(struct gwloop *p, const struct gwloop_hooks *h)
{
	struct gwloop_opts	*o = p->o;
	char			 err[1024];

	if (gwctx_setup(&p->c, &o->g) == -1)
		return (-1);
	/* For clients wired by hand: what to trust for inspected hosts. */
	if (p->c.tls != NULL && !h->command)
		log_warnx("CA certificate: %s", tls_ca_path(p->c.tls));
	if (!h->command)
		gwctx_catch_sighup(&p->c);
	gwctx_watch_policy(&p->c);
	if (gwloop_dns(p) == -1 ||
	    gwloop_listen(p, o->listen, o->nlisten, CONN_PROXY) == -1 ||
	    gwloop_listen(p, o->socks, o->nsocks, CONN_SOCKS) == -1)
		return (-1);
	if (o->nlisten > 0) {
		snprintf(err, sizeof err, "http://%s", o->listen[0]);
		gwctx_agent_url(&p->c, err);
	}
	return (0);
}

/* Catch the signals the proxy answers to. */
static void
gwloop_signals(struct gwloop *p)
{
	p->sigterm = evsignal_new(p->c.base, SIGTERM, gwloop_sigterm_cb, p);
	p->sigint = evsignal_new(p->c.base, SIGINT, gwloop_sigterm_cb, p);
	if (p->sigterm == NULL || p->sigint == NULL ||
	    evsignal_add(p->sigterm, NULL) == -1 ||
	    evsignal_add(p->sigint, NULL) == -1)
		fatalx("cannot catch signals");
}

/* Free whatever was set up. */
static void
gwloop_teardown(struct gwloop *p)
{
	if (p->sigterm != NULL)
		event_free(p->sigterm);
	if (p->sigint != NULL)
		event_free(p->sigint);
	gwctx_teardown(&p->c);
}

/*
 * Tell the service manager, if one started us (systemd's Type=notify),
 * that the gateway serves: its listeners are bound.
 */
static void
gwloop_notify_ready(const char *session, const char *listening)
{
	if (sdnotify("READY=1\nSTATUS=session %s: serving%s%s\nMAINPID=%ld",
	    session, listening[0] != '\0' ? " on " : "", listening,
	    (long)getpid()) == -1)
		log_warn("cannot tell the service manager");
}

/* Write the listeners as one line: ADDR:PORT... socks5://ADDR:PORT... */
static void
gwloop_listening(const struct gwloop_opts *o, char *buf, size_t len)
{
	size_t	i, n = 0;

	buf[0] = '\0';
	for (i = 0; i < o->nlisten && n < len; i++)
		n += snprintf(buf + n, len - n, "%s%s", i ? " " : "",
		    o->listen[i]);
	for (i = 0; i < o->nsocks && n < len; i++)
		n += snprintf(buf + n, len - n, "%ssocks5://%s", n ? " " : "",
		    o->socks[i]);
}

/* The loop has ended: the stop line, after what goes first. */
static int
gwloop_ended(struct gwloop *p, const struct gwloop_hooks *h)
{
	char	detail[1024];
	int	rv = 0;

	detail[0] = '\0';
	if (h->ended != NULL)
		rv = h->ended(h->arg, &p->c, detail, sizeof detail);
	gwctx_budget_end(&p->c);
	gwctx_audit(&p->c, "stop", NULL, NULL, detail[0] != '\0' ? detail :
	    NULL);
	/* In the file before the hooks' done: a session's record goes then. */
	audit_flush(p->c.audit);
	return (rv);
}

/* Run the gateway until SIGTERM or SIGINT, or its command's end. */
int
gwloop_run(struct gwloop_opts *o, const struct gwloop_hooks *h)
{
	struct gwloop	p;
	char		listening[512];
	int		rv, prepared = 0;

	memset(&p, 0, sizeof p);
	p.o = o;
	if (h->prepare != NULL && (rv = h->prepare(h->arg)) != 0)
		goto out;
	prepared = 1;
	log_setverbose(o->g.verbose);
	gwopts_fd_limit(&o->g);
	rv = h->failed != 0 ? h->failed : 1;
	if (gwloop_setup(&p, h) == -1)
		goto out;
	if (!h->command)
		gwloop_signals(&p);
	gwloop_listening(o, listening, sizeof listening);
	if (h->ready != NULL && h->ready(h->arg, &p.c, listening) == -1)
		goto out;
	if (!h->command)
		gwloop_notify_ready(o->g.cfg.session, listening);
	gwctx_audit(&p.c, "start", NULL, NULL, h->start != NULL ? h->start :
	    listening);
	event_base_dispatch(p.c.base);
	rv = gwloop_ended(&p, h);
out:
	if (prepared && h->done != NULL)
		h->done(h->arg, rv);
	gwloop_teardown(&p);
	return (rv);
}
