/*
 * pinhole run's sandbox and its command (daemon/run-sandbox.h): its
 * network's configuration and guard, its listeners served by a gateway
 * of its own or handed to a session's, the notices, the command.
 */
#include "config.h"

#include <sys/random.h>
#include <sys/socket.h>

#include <arpa/inet.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "daemon/attach-client.h"
#include "daemon/gwloop.h"
#include "daemon/gwopts.h"
#include "daemon/notify.h"
#include "daemon/run-sandbox.h"
#include "daemon/runguard.h"
#include "daemon/session.h"
#include "lib/log.h"
#include "lib/unixsock.h"
#include "netns/netns.h"
#include "proxy/audit/audit.h"
#include "proxy/capture/udpcatch.h"
#include "proxy/dns/dns.h"
#include "proxy/escalate/control.h"
#include "proxy/gateway.h"
#include "proxy/tls/tls.h"
#include "proxy/wire/attachmsg.h"
#include "rules/policy.h"
#include "rules/rules.h"

#define RUN_MAX_PORTS	NETNS_MAX_PORTS	/* captured ports with a listener */

/* The sandbox, its gateway and its command. */
struct run {
	struct run_opts		*o;
	struct gwctx		*c;		/* the gateway's, once set up */
	struct event_base	*base;		/* the gateway's, or attached
						   one of its own */
	struct netns_sandbox	*sb;
	struct netns_child	*child;
	int			 status;
	char			 session[32];
	struct runguard		 guard;		/* what the sandbox must not
						   change or see */
	uint16_t		 ports[RUN_MAX_PORTS];	/* captured */
	size_t			 nports;
	struct udpcatch		*udp;		/* UDP but DNS, logged */
	char			 ctldir[PATH_MAX];	/* control sockets */
	struct event		*gone;		/* attached: the session's end */
	struct notify		*notify;	/* refusals on stderr */
	struct attach_msg	*notice;	/* attached: one read */
};

/* Name this run in the audit log: "run-" and 12 random hex digits. */
static void
run_session(struct run *r)
{
	unsigned char	b[6];
	size_t		i;

	if (getrandom(b, sizeof b, GRND_NONBLOCK) != (ssize_t)sizeof b)
		snprintf(r->session, sizeof r->session, "run-%ld",
		    (long)getpid());
	else {
		snprintf(r->session, sizeof r->session, "run-");
		for (i = 0; i < sizeof b; i++)
			snprintf(r->session + 4 + 2 * i, 3, "%02x", b[i]);
	}
	r->o->loop.g.cfg.session = r->session;
}

/*
 * The ports captured with a listener of their own: 80, 443 and those the
 * policy names (the catch-all, when there is one, takes the others).
 */
static void
run_capture_ports(struct run *r, const uint16_t *named, size_t n)
{
	size_t		i;

	r->nports = 0;
	r->ports[r->nports++] = 80;
	r->ports[r->nports++] = 443;
	for (i = 0; i < n && i < RUN_MAX_PORTS && r->nports < RUN_MAX_PORTS;
	    i++) {
		if (named[i] != 80 && named[i] != 443 &&
		    named[i] != NETNS_PROXY_PORT && named[i] != NETNS_DNS_PORT)
			r->ports[r->nports++] = named[i];
	}
	if (i < n)
		log_info("the policy names more than %d ports: the others "
		    "are captured only through nftables", RUN_MAX_PORTS);
}

/*
 * Make the control socket directory, which the sandbox is not to see:
 * first, so that the command cannot make it, nor pinhole start without.
 */
static int
run_control_dir(struct run *r)
{
	char	err[PATH_MAX + 256];

	if (control_dir_make(r->ctldir, sizeof r->ctldir, err,
	    sizeof err) == -1) {
		log_refuse("%s", err);
		return (-1);
	}
	return (0);
}

/*
 * The namespaces' configuration: the options, the ports the policy
 * names, whether it allows vsock.
 */
static void
run_netns_config(struct run *r, struct netns_config *cfg,
    const uint16_t *named, size_t nnamed, int vsock)
{
	memset(cfg, 0, sizeof *cfg);
	cfg->net = r->o->net;
	cfg->proxy_port = NETNS_PROXY_PORT;
	cfg->dns_port = NETNS_DNS_PORT;
	run_capture_ports(r, named, nnamed);
	cfg->tcp_ports = r->ports;
	cfg->ntcp_ports = r->nports;
	cfg->capture_port = NETNS_CAPTURE_PORT;
	cfg->argv = r->o->argv;
	cfg->allow_vsock = vsock;
}

/* Hand one listener of the sandbox to the DNS server. */
static int
run_listen_dns(struct run *r, int type)
{
	char	err[512];
	int	fd;

	fd = netns_sandbox_take(r->sb, type, NETNS_DNS_PORT);
	if (fd == -1 || dns_server_listen_fd(r->c->dns, fd, NULL, err,
	    sizeof err) == -1) {
		log_warnx("cannot serve DNS in the sandbox: %s",
		    fd == -1 ? "no listener" : err);
		return (-1);
	}
	return (0);
}

/* Hand one capture listener of the sandbox to the gateway. */
static int
run_listen_capture(struct run *r, uint16_t port)
{
	char	err[512];
	int	fd;

	fd = netns_sandbox_take(r->sb, SOCK_STREAM, port);
	if (fd == -1 || gateway_listen_fd(r->c->gw, fd,
	    CONN_TRANSPARENT, NULL, err,
	    sizeof err) == -1) {
		log_warnx("cannot capture port %u: %s", port,
		    fd == -1 ? "no listener" : err);
		return (-1);
	}
	return (0);
}

/* Log and refuse UDP caught by the capture rule. */
static int
run_listen_udp(struct run *r)
{
	int	fd, raw;

	fd = netns_sandbox_take(r->sb, SOCK_DGRAM, NETNS_CAPTURE_PORT);
	raw = netns_sandbox_take(r->sb, SOCK_RAW, NETNS_CAPTURE_PORT);
	if (fd == -1 || raw == -1 || (r->udp = udpcatch_create(r->base,
	    fd, raw, r->c->audit, r->session, NULL, r->c->fakeip)) == NULL) {
		log_warnx("cannot catch UDP in the sandbox");
		return (-1);
	}
	return (0);
}

/* Serve the capture listeners: their own ports, then the catch-all. */
static int
run_listen_captures(struct run *r)
{
	size_t	i;

	for (i = 0; i < r->nports; i++) {
		if (run_listen_capture(r, r->ports[i]) == -1)
			return (-1);
	}
	if (!r->sb->capture) {
		log_info("other TCP ports are refused unlogged: %s",
		    r->sb->capture_err);
		return (0);
	}
	if (r->sb->capture_udp && run_listen_udp(r) == -1)
		return (-1);
	else if (!r->sb->capture_udp)
		log_info("UDP is refused unlogged: %s", r->sb->capture_err);
	for (i = 0; i < r->nports; i++) {
		if (r->ports[i] == NETNS_CAPTURE_PORT)
			return (0);
	}
	return (run_listen_capture(r, NETNS_CAPTURE_PORT));
}

/* Serve the sandbox's listeners: the HTTP proxy, DNS and captures. */
static int
run_listen(struct run *r)
{
	char	err[512];
	int	fd;

	fd = netns_sandbox_take(r->sb, SOCK_STREAM, NETNS_PROXY_PORT);
	if (fd == -1 || gateway_listen_fd(r->c->gw, fd, CONN_PROXY, NULL, err,
	    sizeof err) == -1) {
		log_warnx("cannot serve the proxy listener: %s",
		    fd == -1 ? "no listener" : err);
		return (-1);
	}
	if (gwctx_dns(r->c, err, sizeof err) == -1) {
		log_warnx("cannot start the DNS server: %s", err);
		return (-1);
	}
	if (run_listen_dns(r, SOCK_DGRAM) == -1 ||
	    run_listen_dns(r, SOCK_STREAM) == -1 ||
	    run_listen_captures(r) == -1)
		return (-1);
	return (0);
}

/* The command ended: drain the gateway, then stop. */
static void
run_done(int status, void *arg)
{
	struct run	*r = arg;

	r->status = status;
	log_debug("the command ended with status %d", status);
	gwctx_stop(r->c);
}

/* The command line, for the audit log. */
static void
run_cmdline(char *const argv[], char *buf, size_t len)
{
	size_t	n = 0;
	int	i;

	buf[0] = '\0';
	for (i = 0; argv[i] != NULL && n < len; i++)
		n += snprintf(buf + n, len - n, "%s%s", i ? " " : "", argv[i]);
}

/*
 * Keep what the gateway reads and writes out of the command's reach,
 * for this run and the next (see daemon/runguard.h): the plan a gateway
 * gives (a session's, or this run's own), guarded and checked here.
 */
static int
run_guard(struct run *r, const char *plan, struct netns_config *cfg)
{
	char	err[1024];

	runguard_init(&r->guard);
	if (runguard_sandbox(&r->guard, plan, cfg, err, sizeof err) == -1) {
		log_refuse("%s", err);
		return (-1);
	}
	return (0);
}

/* A reload may read only files the sandbox cannot change. */
static int
run_vet_rules(void *arg, const struct rules *rules, char *err, size_t len)
{
	struct run	*r = arg;

	return (runguard_vet(&r->guard, rules, err, len));
}

/* Tell control clients where the sandbox finds the agent endpoint. */
static void
run_agent_url(struct run *r)
{
	char	gw[INET_ADDRSTRLEN], url[64];

	inet_ntop(AF_INET, &r->sb->net.gateway, gw, sizeof gw);
	snprintf(url, sizeof url, "http://%s:%u", gw, NETNS_PROXY_PORT);
	gwctx_agent_url(r->c, url);
}

/*
 * Say refusals and held connections on stderr (unless --quiet), from
 * the gateway's queue or, attached, from the session.  Returns 0 or -1.
 */
static int
run_notices(struct run *r, const char *session, struct escalate *e)
{
	if (r->o->quiet)
		return (0);
	if ((r->notify = notify_create(r->base, session)) == NULL ||
	    (e != NULL && notify_subscribe(r->notify, e) == -1)) {
		log_warnx("out of memory");
		return (-1);
	}
	return (0);
}

/* Before the gateway: this run's name, the control directory. */
static int
run_prepare(void *arg)
{
	struct run	*r = arg;

	run_session(r);
	return (run_control_dir(r) == -1 ? RUN_FAILED : 0);
}

/* The gateway is set up: the sandbox, its listeners, the command. */
static int
run_ready(void *arg, struct gwctx *c, const char *listening)
{
	struct run		*r = arg;
	struct netns_config	 cfg;
	const struct rules	*rules;
	const char		*keys[GWOPTS_HIDDEN + 1];
	char			 err[512], plan[ATTACH_GUARDS_MAX];
	uint16_t		 named[RUN_MAX_PORTS];
	size_t			 nnamed;

	r->c = c;
	r->base = c->base;
	if (run_notices(r, r->session, c->esc) == -1)
		return (-1);
	rules = policy_rules(gateway_policy(c->gw));
	nnamed = rules_ports(rules, named, RUN_MAX_PORTS);
	run_netns_config(r, &cfg, named, nnamed, rules_allow_vsock(rules));
	gwopts_hidden(&r->o->loop.g, keys);
	if (runguard_plan(plan, sizeof plan, rules, r->o->loop.g.audit.log,
	    keys, r->ctldir, c->tls != NULL ? tls_ca_path(c->tls) : NULL,
	    c->tls != NULL ? tls_trust_path(c->tls) : NULL) == -1) {
		log_refuse("cannot guard the policy and log: %s",
		    strerror(errno));
		return (-1);
	}
	if (run_guard(r, plan, &cfg) == -1)
		return (-1);
	gwctx_vet_rules(c, run_vet_rules, r);
	if ((r->sb = netns_sandbox_open(&cfg, err, sizeof err)) == NULL) {
		log_refuse("cannot open the sandbox: %s", err);
		return (-1);
	}
	if (run_listen(r) == -1)
		return (-1);
	run_agent_url(r);
	r->child = netns_child_start(r->base, r->sb, run_done, r, err,
	    sizeof err);
	if (r->child == NULL) {
		log_refuse("cannot start the command: %s", err);
		return (-1);
	}
	return (0);
}

/* Say no more on stderr, and catch no more UDP. */
static void
run_quiet(struct run *r)
{
	notify_free(r->notify);
	r->notify = NULL;
	udpcatch_free(r->udp);
	r->udp = NULL;
}

/*
 * The command has ended and the gateway drained: the last summary lines
 * (DNS, captured UDP) go before the stop line, which says its status.
 */
static int
run_ended(void *arg, struct gwctx *c, char *detail, size_t len)
{
	struct run	*r = arg;

	notify_free(r->notify);
	r->notify = NULL;
	dns_server_free(c->dns);
	c->dns = NULL;
	run_quiet(r);
	snprintf(detail, len, "exit %d", r->status);
	return (r->status);
}

/* The gateway stops: the command's sandbox goes first. */
static void
run_free(void *arg, int rv)
{
	struct run	*r = arg;

	run_quiet(r);
	netns_child_free(r->child);
	r->child = NULL;
	netns_sandbox_close(r->sb);
	r->sb = NULL;
	runguard_free(&r->guard);
}

/* The attached command ended: tell the session, stop. */
static void
run_attached_done(int status, void *arg)
{
	struct run	*r = arg;

	r->status = status;
	event_base_loopexit(r->base, NULL);
}

/*
 * What the session sends while the command runs: notices to say, or the
 * socket's end (the session has gone, and our network with it).
 */
static void
run_session_cb(evutil_socket_t fd, short what, void *arg)
{
	struct run	*r = arg;
	int		 rv;

	while ((rv = attach_recv_notice(fd, r->notice)) == 1) {
		if (r->notify != NULL)
			notify_notice(r->notify, &r->notice->notice);
	}
	if (rv == 0)
		return;
	log_warnx("session %s has gone: the command has no network now",
	    r->o->session);
	event_del(r->gone);
}

/* Connect to the session's attach socket; -1 after saying why not. */
static int
run_session_connect(struct run *r)
{
	char		 dir[PATH_MAX], path[PATH_MAX], err[PATH_MAX + 128];
	const char	*name = r->o->session;
	uid_t		 uid = (uid_t)-1;
	int		 fd;

	if (!control_session_name_ok(name)) {
		log_warnx("session %s: not a session name", name);
		return (-1);
	}
	if (control_dir_ours(dir, sizeof dir, err, sizeof err) == -1 &&
	    errno == EPERM) {
		log_warnx("session %s: %s", name, err);
		return (-1);
	}
	if (session_attach_path(path, sizeof path, dir, name) == -1) {
		log_warnx("session %s: the control directory's path is too "
		    "long", name);
		return (-1);
	}
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd == -1 || unixsock_connect(fd, path) == -1) {
		log_warnx("session %s is not running (pinhole session start "
		    "%s)", name, name);
		if (fd != -1)
			close(fd);
		return (-1);
	}
	if (!control_gateway_ok(fd, &uid)) {
		log_warnx("session %s: %s answers from uid %ld or another "
		    "network namespace: not your session, not attached", name,
		    path, (long)uid);
		close(fd);
		return (-1);
	}
	return (fd);
}

/*
 * Attach: the session gives the configuration, we make the sandbox and
 * hand its listeners over, then the command runs; its network is the
 * session's gateway, or none once the session has gone.
 */
static int
run_attach(struct run *r, int fd)
{
	struct attach_msg	*m;
	struct netns_config	 cfg;
	char			 line[ATTACH_CMD_MAX], err[512];
	int			 rv = -1;

	if ((m = calloc(1, sizeof *m)) == NULL ||
	    (r->notice = calloc(1, sizeof *r->notice)) == NULL)
		fatal("calloc");
	if (r->o->name != NULL)
		snprintf(line, sizeof line, "%s", r->o->name);
	else
		audit_cmdline(r->o->argv, line, sizeof line);
	if (attach_hello(fd, line, !r->o->quiet, m, err, sizeof err) == -1) {
		log_warnx("session %s: %s", r->o->session, err);
		goto out;
	}
	log_debug("sandbox %s of session %s", m->sandbox, r->o->session);
	run_netns_config(r, &cfg, m->ports, m->nports, m->vsock);
	if (run_guard(r, m->guards, &cfg) == -1)
		goto out;
	if ((r->sb = netns_sandbox_open(&cfg, err, sizeof err)) == NULL) {
		log_refuse("cannot open the sandbox: %s", err);
		goto out;
	}
	if (attach_handover(fd, r->sb, err, sizeof err) == -1) {
		log_warnx("session %s: %s", r->o->session, err);
		goto out;
	}
	if ((r->base = event_base_new()) == NULL ||
	    (r->gone = event_new(r->base, fd, EV_READ | EV_PERSIST,
	    run_session_cb, r)) == NULL || event_add(r->gone, NULL) == -1)
		fatalx("cannot make the event loop");
	if (run_notices(r, r->o->session, NULL) == -1)
		goto out;
	r->child = netns_child_start(r->base, r->sb, run_attached_done, r,
	    err, sizeof err);
	if (r->child == NULL) {
		log_refuse("cannot start the command: %s", err);
		goto out;
	}
	event_base_dispatch(r->base);
	/* The notices sent before the command ended, then what waits. */
	if (event_pending(r->gone, EV_READ, NULL))
		run_session_cb(fd, EV_READ, r);
	notify_free(r->notify);
	r->notify = NULL;
	attach_bye(fd, r->status);
	rv = r->status;
out:
	free(m);
	return (rv);
}

/* Run the command attached to a session; exit with its status. */
int
run_attached(struct run_opts *o)
{
	struct run	 run, *r = &run;
	int		 fd, rv = RUN_FAILED;

	memset(r, 0, sizeof *r);
	r->o = o;

	if ((fd = run_session_connect(r)) != -1) {
		rv = run_attach(r, fd);
		if (rv == -1)
			rv = RUN_FAILED;
	}
	netns_child_free(r->child);
	netns_sandbox_close(r->sb);
	notify_free(r->notify);
	free(r->notice);
	if (r->gone != NULL)
		event_free(r->gone);
	if (fd != -1)
		close(fd);
	if (r->base != NULL)
		event_base_free(r->base);
	runguard_free(&r->guard);
	return (rv);
}

/* Run the command in the sandbox, its gateway around it. */
int
run_standalone(struct run_opts *o)
{
	struct run		run, *r = &run;
	char			line[1024];
	struct gwloop_hooks	h = {
		.prepare = run_prepare, .ready = run_ready, .ended = run_ended,
		.done = run_free, .arg = r, .start = line,
		.failed = RUN_FAILED, .command = 1
	};

	memset(r, 0, sizeof *r);
	r->o = o;
	if (o->name != NULL)
		snprintf(line, sizeof line, "%s", o->name);
	else
		run_cmdline(o->argv, line, sizeof line);
	return (gwloop_run(&o->loop, &h));
}

