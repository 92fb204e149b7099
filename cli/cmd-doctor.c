/*
 * pinhole doctor: try what pinhole run needs, for real where it can be
 * tried (a user namespace; the policy, the log and the control directory,
 * opened as run opens them; a question to the resolver; the guards, and
 * the sandbox made with them, its veth link and capture rule, a command
 * run in it), and say what is wrong and what fixes it.  The report is
 * cli/doctor.c's.
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "cli/doctor.h"
#include "cli/gwopts-argv.h"
#include "cli/pinhole.h"
#include "daemon/gwopts.h"
#include "daemon/runguard.h"
#include "lib/clock.h"
#include "lib/json.h"
#include "lib/log.h"
#include "netns/netns.h"
#include "proxy/audit/audit.h"
#include "proxy/conn/conn.h"
#include "proxy/escalate/control.h"
#include "proxy/resolver/resolver.h"
#include "proxy/wire/attachmsg.h"
#include "proxy/wire/http.h"
#include "proxy/wire/upstreammsg.h"
#include "rules/rules.h"

#define DOCTOR_DNS_MS		2000	/* the resolver's time to answer */
#define DOCTOR_UPSTREAM_MS	3000	/* the upstream's, to connect and answer */
#define DOCTOR_RULES_TEXT	16384	/* policy text searched for a name */
#define DOCTOR_DNS_A		1
#define DOCTOR_DNS_NS		2

/* The checks, in the order they run and are reported. */
enum {
	CK_USERNS, CK_APPARMOR, CK_POLICY, CK_RESOLVER, CK_UPSTREAM, CK_LOG,
	CK_CONTROL, CK_GUARD, CK_SOCKETS, CK_VETH, CK_TPROXY, CK_MAX
};

enum {
	OPT_NET = GWOPTS_LAST, OPT_JSON
};

/* What the command line asked for, and what the checks found. */
struct doctor {
	struct gwopts		 g;	/* --policy, --allow, --resolver, --log */
	struct netns_net	 net;
	int			 json;
	int			 root;
	struct rules		*rules;		/* the policy, if it parsed */
	struct runguard		 guard;		/* what the sandbox must not
						   change or see */
	struct netns_config	 cfg;		/* the sandbox's, guards
						   and all */
	int			 sandbox;	/* the sandbox was made */
	int			 capture;	/* and its capture rule */
	int			 capture_udp;
	char			 capture_err[256];
	struct doctor_check	 c[CK_MAX];
};

/* Read the options: those of run that bear on the checks, and --json. */
static int
doctor_options(const struct cmd_entry *cmd, int argc, char **argv,
    struct doctor *d)
{
	const char	*errstr;
	int		 ch, rv = 0;

	gwopts_init(&d->g, 0, GWOPTS_USER_ALWAYS);
	if (netns_net_parse(NETNS_NET_DEFAULT, &d->net, &errstr) != 0)
		fatalx("%s: %s", NETNS_NET_DEFAULT, errstr);
	while (rv == 0 && (ch = cmd_getopt(cmd, argc, argv)) != -1) {
		if (ch == '?')
			return (EXIT_USAGE);
		if (ch == OPT_JSON)
			d->json = 1;
		else if (ch == OPT_NET) {
			if (netns_net_parse(optarg, &d->net, &errstr) != 0)
				return (cmd_usage_error(cmd, "--net %s: %s",
				    optarg, errstr));
		} else
			rv = gwopts_option(cmd, &d->g, ch, optarg);
	}
	if (rv != 0)
		return (rv);
	if (optind < argc)
		return (cmd_usage_error(cmd, "takes no arguments"));
	return (0);
}

/* User namespaces: made for real in a child. */
static void
doctor_userns(struct doctor *d, struct doctor_check *c)
{
	const struct netns_knob	*k = netns_userns_knob();
	char			 err[256];

	if (netns_userns_probe(err, sizeof err) == 0) {
		doctor_set(c, DOCTOR_OK, "a user namespace and a network "
		    "namespace in it can be made%s", d->root ?
		    " (root needs none)" : "");
		return;
	}
	doctor_set(c, d->root ? DOCTOR_WARN : DOCTOR_FAIL, "%s%s%s", err,
	    k != NULL ? ": " : "", k != NULL ? k->why : "");
	if (k != NULL)
		doctor_fix(c, "%s", k->fix);
	else if (!d->root)
		doctor_fix(c, "run pinhole as root, or let unprivileged users "
		    "have user namespaces (pinhole(1), DOCTOR)");
}

/* AppArmor's restriction, when user namespaces fail under it. */
static void
doctor_apparmor_restricts(struct doctor_check *c,
    const struct netns_apparmor *aa)
{
	char	exe[PATH_MAX];
	ssize_t	n;

	if (aa->loaded != 1) {
		doctor_set(c, DOCTOR_FAIL, "AppArmor restricts unprivileged "
		    "user namespaces, and the %s profile is %s",
		    NETNS_APPARMOR_PROFILE, aa->loaded == 0 ? "not loaded" :
		    "not known to be loaded (only root may list them)");
		doctor_fix(c, "%s", NETNS_APPARMOR_FIX);
		return;
	}
	if ((n = readlink("/proc/self/exe", exe, sizeof exe - 1)) == -1)
		n = 0;
	exe[n] = '\0';
	doctor_set(c, DOCTOR_FAIL, "AppArmor restricts unprivileged user "
	    "namespaces; the %s profile is loaded, but this pinhole (%s) "
	    "runs as '%s'", NETNS_APPARMOR_PROFILE, exe, aa->label);
	doctor_fix(c, "name %s in %s, then apparmor_parser -r %s", exe,
	    NETNS_APPARMOR_FILE, NETNS_APPARMOR_FILE);
}

/* AppArmor: does it keep this pinhole from user namespaces? */
static void
doctor_apparmor(struct doctor *d, struct doctor_check *c)
{
	struct netns_apparmor	aa;

	netns_apparmor_state(&aa);
	if (!aa.enabled)
		doctor_set(c, DOCTOR_OK, "no AppArmor in this kernel");
	else if (aa.restrict_userns != 1)
		doctor_set(c, DOCTOR_OK, "AppArmor does not restrict user "
		    "namespaces");
	else if (d->root)
		doctor_set(c, DOCTOR_OK, "AppArmor restricts unprivileged "
		    "user namespaces, which root does not need");
	else if (d->c[CK_USERNS].verdict == DOCTOR_OK)
		doctor_set(c, DOCTOR_OK, "AppArmor restricts unprivileged "
		    "user namespaces, not this pinhole's (it runs as '%s')",
		    aa.label);
	else
		doctor_apparmor_restricts(c, &aa);
}

/* Let the sandbox run `true`; 0, or -1 with err saying what failed. */
static int
doctor_sandbox_run(struct netns_sandbox *sb, char *err, size_t errlen)
{
	pid_t	pid;
	int	status;

	if ((pid = netns_sandbox_exec(sb, err, errlen)) == -1)
		return (-1);
	while (waitpid(pid, &status, 0) == -1) {
		if (errno != EINTR) {
			snprintf(err, errlen, "waitpid: %s", strerror(errno));
			return (-1);
		}
	}
	if (netns_exit_status(status) != 0) {
		snprintf(err, errlen, "true exited with status %d in it",
		    netns_exit_status(status));
		return (-1);
	}
	return (0);
}

/* Keep what the sandbox said of its capture rule for the tproxy check. */
static void
doctor_sandbox_capture(struct doctor *d, const struct netns_sandbox *sb)
{
	d->sandbox = 1;
	d->capture = sb->capture;
	d->capture_udp = sb->capture_udp;
	snprintf(d->capture_err, sizeof d->capture_err, "%s", sb->capture_err);
}

/* What fixes a sandbox that could not be made. */
static void
doctor_veth_fix(struct doctor *d, struct doctor_check *c, const char *err)
{
	if (d->c[CK_USERNS].verdict == DOCTOR_FAIL)
		doctor_fix(c, "user namespaces first (userns, above)");
	else if (strstr(err, "veth") != NULL)
		doctor_fix(c, "modprobe veth (the kernel needs CONFIG_VETH)");
}

/*
 * The sandbox as pinhole run makes it: namespaces, the veth link, the
 * listeners, the capture rule and the guards; `true` run in it; all
 * removed.
 */
static void
doctor_veth(struct doctor *d, struct doctor_check *c)
{
	static char		 cmd[] = "true";
	static const uint16_t	 ports[] = { 80, 443 };
	static char		*argv[] = { cmd, NULL };
	struct netns_config	*cfg = &d->cfg;
	struct netns_sandbox	*sb;
	char			 err[512];
	uint64_t		 start = mono_ms();
	int			 rv;

	cfg->net = d->net;
	cfg->proxy_port = NETNS_PROXY_PORT;
	cfg->dns_port = NETNS_DNS_PORT;
	cfg->tcp_ports = ports;
	cfg->ntcp_ports = sizeof ports / sizeof ports[0];
	cfg->capture_port = NETNS_CAPTURE_PORT;
	cfg->argv = argv;
	if ((sb = netns_sandbox_open(cfg, err, sizeof err)) == NULL) {
		doctor_set(c, DOCTOR_FAIL, "cannot make the sandbox: %s", err);
		doctor_veth_fix(d, c, err);
		return;
	}
	doctor_sandbox_capture(d, sb);
	rv = doctor_sandbox_run(sb, err, sizeof err);
	netns_sandbox_close(sb);
	if (rv == -1)
		doctor_set(c, DOCTOR_FAIL, "the sandbox was made, but the "
		    "command in it did not run: %s", err);
	else
		doctor_set(c, DOCTOR_OK, "the namespaces and the veth link "
		    NETNS_GATEWAY_IF "-" NETNS_SANDBOX_IF " were made, true ran "
		    "in the sandbox%s, all was removed (%llu ms)",
		    cfg->nguards > 0 ? " with the guards" : "",
		    (unsigned long long)(mono_ms() - start));
}

/* nftables with tproxy: what the sandbox's capture rule came to. */
static void
doctor_tproxy(struct doctor *d, struct doctor_check *c)
{
	const char	*err = d->capture_err;

	if (!d->sandbox) {
		doctor_set(c, DOCTOR_SKIP, "not tried: it needs the sandbox "
		    "(veth)");
		return;
	}
	if (d->capture && d->capture_udp) {
		doctor_set(c, DOCTOR_OK, "nftables took the tproxy capture "
		    "rule, TCP and UDP");
		return;
	}
	if (d->capture)
		doctor_set(c, DOCTOR_WARN, "TCP is captured, UDP is not (%s): "
		    "UDP but DNS is refused unlogged", err);
	else
		doctor_set(c, DOCTOR_WARN, "no capture rule (%s): TCP to "
		    "ports the policy does not name is refused unlogged", err);
	if (strstr(err, "without nftables") != NULL)
		doctor_fix(c, "build pinhole with nftables (configure without "
		    "--without-nftables)");
	else if (strncmp(err, "nftables", 8) == 0)
		doctor_fix(c, "modprobe -a nf_tables nft_tproxy");
}

/* Where a policy error points, "FILE:LINE: ...": say to edit that line. */
static void
doctor_policy_fix(struct doctor_check *c, const char *err)
{
	const char	*p;
	size_t		 n;

	for (p = strchr(err, ':'); p != NULL; p = strchr(p + 1, ':')) {
		n = strspn(p + 1, "0123456789");
		if (n > 0 && p[1 + n] == ':') {
			doctor_fix(c, "edit line %.*s of %.*s", (int)n, p + 1,
			    (int)(p - err), err);
			return;
		}
	}
	doctor_fix(c, "correct the file or rule it names (pinhole-policy(5))");
}

/* List a rule that cannot take effect under the policy check. */
static int
doctor_dead_cb(const struct rules_dead *dead, void *arg)
{
	char	line[2048];

	rules_dead_text(dead, line, sizeof line);
	return (doctor_item(arg, "%s", line));
}

/* The policy, read as pinhole run reads it. */
static void
doctor_policy(struct doctor *d, struct doctor_check *c)
{
	const char	*files[GWOPTS_MAX_ARGS];
	char		 err[1024], path[PATH_MAX];
	size_t		 n;

	if ((d->rules = gwopts_load_rules(&d->g, err, sizeof err)) == NULL) {
		doctor_set(c, DOCTOR_FAIL, "%s", err);
		doctor_policy_fix(c, err);
		return;
	}
	n = rules_files(d->rules, files, GWOPTS_MAX_ARGS);
	if (n > 0)
		doctor_set(c, DOCTOR_OK, "%s%s parses", files[0], n == 1 ? "" :
		    " and the files it includes");
	else if (d->g.npolicy > 0 || rules_default_path(path,
	    sizeof path) == -1)
		doctor_set(c, DOCTOR_OK, "only --allow rules");
	else {
		doctor_set(c, DOCTOR_WARN, "no policy file: %s does not exist, "
		    "so all but --allow is denied", path);
		doctor_fix(c, "pinhole allow HOST (it makes %s)", path);
	}
	if (rules_dead(d->rules, doctor_dead_cb, c) > 0) {
		doctor_set(c, DOCTOR_WARN, "%zu rule%s cannot take effect",
		    c->nitems, c->nitems == 1 ? "" : "s");
		doctor_fix(c, "remove or change each rule named, or the rule "
		    "in its place (pinhole-policy(5), REQUEST RULES)");
	}
}

/*
 * A name to ask the resolver for: the first name an allow rule names
 * exactly (a rule as written: "allow NAME[:PORTS] ..."), and in *port
 * (when not NULL) the first port it names, or 443.  0, or -1.
 */
static int
doctor_dns_name(const struct rules *r, char *name, size_t len,
    uint16_t *port)
{
	struct host	 h;
	const char	*errstr;
	char		*text, *line, *save;
	int		 rv = -1;

	if (r == NULL || (text = malloc(DOCTOR_RULES_TEXT)) == NULL)
		return (-1);
	rules_text(r, text, DOCTOR_RULES_TEXT);
	for (line = strtok_r(text, "\n", &save); line != NULL && rv == -1;
	    line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "allow ", 6) != 0)
			continue;
		line += 6;
		if (host_parse(line, strcspn(line, ": \t"), &h, &errstr) == 0 &&
		    h.kind == HOST_NAME) {
			snprintf(name, len, "%s", h.text);
			rv = 0;
			line += strcspn(line, ": \t");
			if (port != NULL && (*line != ':' || port_parse(line +
			    1, strspn(line + 1, "0123456789"), port) == -1))
				*port = 443;
		}
	}
	free(text);
	return (rv);
}

/* The servers asked, for the report. */
static void
doctor_servers(const struct gwopts *g, char *buf, size_t len)
{
	size_t	i, n = 0;

	if (g->nresolver == 0) {
		snprintf(buf, len, "the resolver of /etc/resolv.conf");
		return;
	}
	buf[0] = '\0';
	for (i = 0; i < g->nresolver && n < len; i++)
		n += snprintf(buf + n, len - n, "%s%s", i ? ", " : "",
		    g->resolver[i]);
}

/* One question to the resolver and what came of it. */
struct doctor_dns {
	struct event_base	*base;
	int			 done;
	int			 rcode;		/* of the answer */
	char			 errstr[64];	/* or why none came */
	uint64_t		 ms;
};

/* The answer, or why none came. */
static void
doctor_dns_cb(int status, const char *errstr, const uint8_t *msg,
    size_t len, void *arg)
{
	struct doctor_dns	*q = arg;

	q->done = 1;
	if (status == 0 && len >= 4)
		q->rcode = msg[3] & 0x0f;
	else
		snprintf(q->errstr, sizeof q->errstr, "%s", status == 0 ?
		    "a short answer" : errstr);
	event_base_loopexit(q->base, NULL);
}

/* Ask, and wait at most DOCTOR_DNS_MS for the answer.  -1: cannot ask. */
static int
doctor_dns_ask(struct resolver *res, const char *name, int type,
    struct doctor_dns *q)
{
	struct resolver_query	*rq;
	struct timeval		 tv = { (DOCTOR_DNS_MS + 500) / 1000,
				    (DOCTOR_DNS_MS + 500) % 1000 * 1000 };
	uint64_t		 start = mono_ms();

	if (resolver_set_timeouts(res, DOCTOR_DNS_MS, 1) == -1 ||
	    resolver_every_answer(res) == -1 ||
	    (rq = resolver_raw(res, name, type, doctor_dns_cb, q)) == NULL)
		return (-1);
	event_base_loopexit(q->base, &tv);
	event_base_dispatch(q->base);
	q->ms = mono_ms() - start;
	if (!q->done) {
		resolver_cancel(rq);
		snprintf(q->errstr, sizeof q->errstr, "timed out");
	}
	return (0);
}

/* Say what came of the question. */
static void
doctor_dns_report(struct doctor_check *c, const struct doctor_dns *q,
    const char *servers, const char *name, int type)
{
	static const char	*rcodes[] = { "NOERROR", "FORMERR", "SERVFAIL",
	    "NXDOMAIN", "NOTIMP", "REFUSED" };
	const char		*what = type == DOCTOR_DNS_A ? "A" : "NS";

	if (!q->done || q->errstr[0] != '\0') {
		doctor_set(c, DOCTOR_FAIL, "no answer from %s for %s %s in "
		    "%llu ms: %s%s", servers, name, what,
		    (unsigned long long)q->ms, q->errstr,
		    strcmp(q->errstr, "unreachable") == 0 ? " (nothing "
		    "listens there, or it refused the question)" : "");
		doctor_fix(c, "name a DNS server that answers: --resolver ADDR "
		    "(to pinhole run too), or a nameserver line in "
		    "/etc/resolv.conf");
		return;
	}
	/* A server that refuses resolves nothing for the gateway. */
	doctor_set(c, q->rcode == 0 || q->rcode == 3 ? DOCTOR_OK :
	    q->rcode == 5 ? DOCTOR_FAIL : DOCTOR_WARN,
	    "%s answered %s %s in %llu ms (%s)%s", servers, name, what,
	    (unsigned long long)q->ms, q->rcode < 6 ? rcodes[q->rcode] :
	    "an error", q->rcode == 5 ? ": it does not resolve for this "
	    "host" : "");
	if (c->verdict != DOCTOR_OK)
		doctor_fix(c, "name a DNS server that resolves: --resolver "
		    "ADDR, or a nameserver line in /etc/resolv.conf");
}

/* The resolver: one question, a name of the policy (or the root's NS). */
static void
doctor_resolver(struct doctor *d, struct doctor_check *c)
{
	struct doctor_dns	 q;
	struct resolver		*res = NULL;
	char			 name[HOST_TEXT_LEN], servers[512], err[512];
	int			 type = DOCTOR_DNS_A;

	memset(&q, 0, sizeof q);
	doctor_servers(&d->g, servers, sizeof servers);
	if (doctor_dns_name(d->rules, name, sizeof name, NULL) == -1) {
		snprintf(name, sizeof name, ".");
		type = DOCTOR_DNS_NS;
	}
	if ((q.base = event_base_new()) == NULL)
		fatalx("cannot create the event loop");
	if ((res = resolver_create(q.base, d->g.nresolver ? d->g.resolver :
	    NULL, err, sizeof err)) == NULL) {
		doctor_set(c, DOCTOR_FAIL, "resolver: %s", err);
		doctor_fix(c, "--resolver ADDR, or a nameserver line in "
		    "/etc/resolv.conf");
	} else if (doctor_dns_ask(res, name, type, &q) == -1)
		doctor_set(c, DOCTOR_FAIL, "cannot ask %s: out of memory",
		    servers);
	else
		doctor_dns_report(c, &q, servers, name, type);
	if (res != NULL)
		resolver_free(res);
	event_base_free(q.base);
	if (c->verdict == DOCTOR_FAIL && rules_upstream(d->rules) != NULL) {
		/* The upstream resolves what goes through it. */
		c->verdict = DOCTOR_WARN;
		snprintf(c->detail + strlen(c->detail), sizeof c->detail -
		    strlen(c->detail), "; the upstream proxy resolves the "
		    "names it is asked for, so only no-upstream hosts and DNS "
		    "records other than addresses need it");
	}
}

/*
 * Connect to the upstream (its first address) within the time left of
 * deadline; -1 with err.
 */
static int
doctor_upstream_dial(const struct conn_upstream *u, uint64_t deadline,
    char *err, size_t errlen)
{
	struct sockaddr_storage	 ss;
	struct pollfd		 pfd;
	socklen_t		 len;
	int			 fd, e = 0;

	memset(&ss, 0, sizeof ss);
	ss.ss_family = u->addrs[0].family;
	if (ss.ss_family == AF_INET) {
		memcpy(&((struct sockaddr_in *)&ss)->sin_addr,
		    u->addrs[0].addr, 4);
		((struct sockaddr_in *)&ss)->sin_port = htons(u->port);
		len = sizeof(struct sockaddr_in);
	} else {
		memcpy(&((struct sockaddr_in6 *)&ss)->sin6_addr,
		    u->addrs[0].addr, 16);
		((struct sockaddr_in6 *)&ss)->sin6_port = htons(u->port);
		len = sizeof(struct sockaddr_in6);
	}
	if ((fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0)) == -1) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return (-1);
	}
	if (connect(fd, (struct sockaddr *)&ss, len) == -1 &&
	    errno != EINPROGRESS)
		e = errno;
	pfd.fd = fd;
	pfd.events = POLLOUT;
	len = sizeof e;
	if (e == 0 && (poll(&pfd, 1, (int)(deadline - mono_ms())) != 1 ||
	    getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &len) == -1))
		e = ETIMEDOUT;
	if (e != 0) {
		snprintf(err, errlen, "cannot connect: %s", strerror(e));
		close(fd);
		return (-1);
	}
	return (fd);
}

/*
 * Ask the upstream for a tunnel to (name, port) and read its answer's
 * head into resp (buf holds it).  0, or -1 with err.
 */
static int
doctor_upstream_ask(const struct conn_upstream *u, const struct host *h,
    uint16_t port, char *buf, size_t size, struct http_response *resp,
    char *err, size_t errlen)
{
	struct http_limits	 lim = { HTTP_MAX_HEAD, HTTP_MAX_HEADERS };
	struct pollfd		 pfd;
	uint64_t		 deadline = mono_ms() + DOCTOR_UPSTREAM_MS;
	char			 head[UPSTREAM_HEAD_MAX];
	size_t			 got = 0;
	ssize_t			 n;
	int			 fd, rv = -1;

	if ((fd = doctor_upstream_dial(u, deadline, err, errlen)) == -1)
		return (-1);
	n = upstream_connect_head(head, sizeof head, h, port, u->auth);
	if (n == -1 || send(fd, head, (size_t)n, MSG_NOSIGNAL) != n) {
		snprintf(err, errlen, "cannot send CONNECT");
		goto out;
	}
	pfd.fd = fd;
	pfd.events = POLLIN;
	while (memmem(buf, got, "\r\n\r\n", 4) == NULL) {
		if (got == size || poll(&pfd, 1, (int)(deadline -
		    mono_ms())) != 1 || (n = recv(fd, buf + got, size - got,
		    0)) <= 0) {
			snprintf(err, errlen, "no answer to CONNECT in %d s",
			    DOCTOR_UPSTREAM_MS / 1000);
			goto out;
		}
		got += (size_t)n;
	}
	if (http_response_parse(buf, (const char *)memmem(buf, got,
	    "\r\n\r\n", 4) + 4 - buf, &lim, 0, resp) == -1)
		snprintf(err, errlen, "a malformed answer to CONNECT");
	else
		rv = 0;
out:
	explicit_bzero(head, sizeof head);
	close(fd);
	return (rv);
}

/* Say what the upstream's answer to CONNECT means for pinhole run. */
static void
doctor_upstream_report(struct doctor_check *c, const struct conn_upstream *u,
    const char *target, const struct http_response *resp)
{
	struct upstream_verdict	v;
	char			why[512];

	upstream_answer_read(resp, 1, &v);
	upstream_why(&v, u->label, u->auth != NULL, why, sizeof why);
	if (v.answer == UPSTREAM_OPEN)
		doctor_set(c, DOCTOR_OK, "%s: reachable, %s, a tunnel to %s "
		    "opened (%d)", u->label, u->auth != NULL ? "credentials "
		    "accepted" : "no credentials needed", target, v.status);
	else if (v.answer == UPSTREAM_AUTH) {
		doctor_set(c, DOCTOR_FAIL, "%s", why);
		doctor_fix(c, "%s", u->auth != NULL ? "correct the "
		    "credentials in the upstream-auth file (USER:PASSWORD)" :
		    "give the credentials: --upstream-auth FILE, or "
		    "upstream-auth FILE in the policy");
	} else {
		doctor_set(c, DOCTOR_WARN, "%s: reachable, credentials "
		    "accepted; a tunnel to %s: %s", u->label, target, why);
		doctor_fix(c, "the upstream's own policy must let %s through "
		    "(or name it in no-upstream, to dial it directly)", target);
	}
}

/*
 * The upstream proxy: resolved, its credentials read, reached, and a
 * tunnel asked for to the first host the policy names.
 */
static void
doctor_upstream(struct doctor *d, struct doctor_check *c)
{
	const struct rules_upstream	*ru = rules_upstream(d->rules);
	struct conn_upstream		*u;
	struct http_response		*resp;
	struct host			 h;
	uint16_t			 port = 443;
	const char			*errstr;
	char				 err[512], buf[HTTP_MAX_HEAD];
	char				 target[HOST_TEXT_LEN + 16];

	if (d->rules == NULL) {
		doctor_set(c, DOCTOR_SKIP, "not tried: it needs the policy");
		return;
	}
	if (ru == NULL) {
		doctor_set(c, DOCTOR_OK, "none: hosts are dialed directly");
		return;
	}
	c->required = 1;
	if ((u = conn_upstream_create(ru, err, sizeof err)) == NULL) {
		doctor_set(c, DOCTOR_FAIL, "%s", err);
		doctor_fix(c, "correct %s, or the credentials file it names",
		    ru->origin);
		return;
	}
	if (doctor_dns_name(d->rules, target, sizeof target, &port) == -1)
		snprintf(target, sizeof target, "pinhole.invalid");
	host_parse(target, strlen(target), &h, &errstr);
	snprintf(target + strlen(target), sizeof target - strlen(target),
	    ":%u", port);
	if ((resp = malloc(sizeof *resp)) == NULL)
		fatal("malloc");
	if (doctor_upstream_ask(u, &h, port, buf, sizeof buf, resp, err,
	    sizeof err) == -1) {
		doctor_set(c, DOCTOR_FAIL, "%s: %s", u->label, err);
		doctor_fix(c, "check that %s is the proxy's address (%s), and "
		    "that this host may reach it", u->label, ru->origin);
	} else
		doctor_upstream_report(c, u, target, resp);
	free(resp);
	conn_upstream_unref(u);
}

/* A size for people: 1.5 GiB, 20.0 MiB, 12 KiB. */
static void
doctor_size(unsigned long long n, char *buf, size_t len)
{
	if (n >= 1024ULL * 1024 * 1024)
		snprintf(buf, len, "%.1f GiB", n / (1024.0 * 1024 * 1024));
	else if (n >= 1024ULL * 1024)
		snprintf(buf, len, "%.1f MiB", n / (1024.0 * 1024));
	else
		snprintf(buf, len, "%llu KiB", n / 1024);
}

/* The log file's room: free space against one rotation's worth. */
static void
doctor_log_space(struct doctor *d, struct doctor_check *c, const char *path)
{
	struct statvfs		sv;
	unsigned long long	avail, want;
	char			size[32];

	want = d->g.audit.max_size > 0 ? (unsigned long long)
	    d->g.audit.max_size : AUDIT_MAX_SIZE;
	if (statvfs(path, &sv) == -1) {
		doctor_set(c, DOCTOR_OK, "%s can be written", path);
		return;
	}
	avail = (unsigned long long)sv.f_bavail * sv.f_frsize;
	doctor_size(avail, size, sizeof size);
	doctor_set(c, avail < want ? DOCTOR_WARN : DOCTOR_OK, "%s can be "
	    "written, %s free", path, size);
	if (avail < want)
		doctor_fix(c, "make room on the file system of %s, or give "
		    "--log a file on another", path);
}

/* What fixes a log that cannot be opened (err says why). */
static void
doctor_log_fix(struct doctor *d, struct doctor_check *c, const char *path,
    const char *err)
{
	const char	*key = d->g.audit.keyfile;
	struct stat	 st;

	if (key != NULL && strncmp(err, key, strlen(key)) == 0)
		doctor_fix(c, "give --log-key a key file you can read (to "
		    "pinhole run too)");
	else if (path != NULL && stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
	    st.st_uid == geteuid() && access(path, W_OK) == -1)
		doctor_fix(c, "chmod u+w %s", path);
	else
		doctor_fix(c, "give --log a file in a directory you can write "
		    "(to pinhole run too)");
}

/*
 * The log, opened as pinhole run opens it, and the room left for it.  A
 * file that did not exist before is removed again.
 */
static void
doctor_log(struct doctor *d, struct doctor_check *c)
{
	struct audit	*a;
	struct stat	 st;
	char		 err[1024], def[PATH_MAX];
	const char	*path = d->g.audit.log;
	int		 existed;

	if (path == NULL && audit_default_path(def, sizeof def) == 0)
		path = def;
	existed = path != NULL && lstat(path, &st) == 0;
	if ((a = gwopts_open_log(&d->g, err, sizeof err)) == NULL) {
		doctor_set(c, DOCTOR_FAIL, "%s", err);
		doctor_log_fix(d, c, path, err);
	} else if (path == NULL || strcmp(path, "-") == 0 ||
	    lstat(path, &st) == -1 || !S_ISREG(st.st_mode))
		doctor_set(c, DOCTOR_OK, "%s can be written", path == NULL ?
		    "nothing" : strcmp(path, "-") == 0 ? "standard output" :
		    path);
	else
		doctor_log_space(d, c, path);
	if (a != NULL)
		audit_close(a);
	if (!existed && path != NULL && lstat(path, &st) == 0 &&
	    S_ISREG(st.st_mode))
		unlink(path);
}

/* What fixes the control directory, as far as one can tell. */
static void
doctor_control_fix(struct doctor_check *c, const char *dir)
{
	const char	*xdg = getenv("XDG_RUNTIME_DIR");
	struct stat	 st;

	if (lstat(dir, &st) == 0 && S_ISDIR(st.st_mode) &&
	    st.st_uid == getuid())
		doctor_fix(c, "chmod 700 %s", dir);
	else if (lstat(dir, &st) == -1 && xdg != NULL && xdg[0] == '/' &&
	    lstat(xdg, &st) == -1)
		doctor_fix(c, "mkdir -m 700 %s, or unset XDG_RUNTIME_DIR", xdg);
	else
		doctor_fix(c, "set XDG_RUNTIME_DIR to a directory of yours with "
		    "mode 0700");
}

/* The control directory, made or checked as pinhole run does. */
static void
doctor_control(struct doctor *d, struct doctor_check *c)
{
	struct stat	st;
	char		dir[PATH_MAX], err[PATH_MAX + 256];

	if (control_dir_make(dir, sizeof dir, err, sizeof err) == -1) {
		doctor_set(c, DOCTOR_FAIL, "%s", err);
		doctor_control_fix(c, dir);
	} else if (lstat(dir, &st) == 0)
		doctor_set(c, DOCTOR_OK, "%s: a directory of uid %lu, mode "
		    "%04o", dir, (unsigned long)st.st_uid,
		    (unsigned int)(st.st_mode & 07777));
	else
		doctor_set(c, DOCTOR_OK, "%s", dir);
}

/*
 * The guards: the policy, the log and the control directory kept out of
 * the sandbox's reach as pinhole run keeps them, refused as run refuses
 * a guarded directory that holds HOME, the temporary or the working
 * directory.  The sandbox (veth) is then made with them.
 */
static void
doctor_guard(struct doctor *d, struct doctor_check *c)
{
	char		*plan, dir[PATH_MAX], err[1024];
	const char	*keys[GWOPTS_HIDDEN + 1];

	if (d->rules == NULL) {
		doctor_set(c, DOCTOR_SKIP, "not tried: it needs the policy");
		return;
	}
	if ((plan = malloc(ATTACH_GUARDS_MAX)) == NULL)
		fatal("malloc");
	gwopts_hidden(&d->g, keys);
	if (control_dir(dir, sizeof dir) == -1 || runguard_plan(plan,
	    ATTACH_GUARDS_MAX, d->rules, d->g.audit.log, keys, dir, NULL,
	    NULL) == -1)
		doctor_set(c, DOCTOR_FAIL, "cannot guard the policy and log: "
		    "%s", strerror(errno));
	else if (runguard_sandbox(&d->guard, plan, &d->cfg, err,
	    sizeof err) == -1) {
		doctor_set(c, DOCTOR_FAIL, "%s", err);
		doctor_fix(c, "keep the policy and the log in directories of "
		    "their own (~/.config/pinhole, ~/.local/state/pinhole), "
		    "or run pinhole from another directory");
	} else
		doctor_set(c, DOCTOR_OK, "the sandbox can be kept from %zu "
		    "paths of the policy, the log and the control directory",
		    d->guard.n);
	free(plan);
}

/* What the host sockets check counts while it lists them. */
struct doctor_socks {
	struct doctor_check	*c;
	size_t			 n;
	size_t			 nopen;
	size_t			 nlost;		/* cannot be closed */
	char			 open[DOCTOR_TEXT_LEN / 3];
	char			 lost[DOCTOR_TEXT_LEN / 3];
};

/* Add a name to a list of names, as far as it fits. */
static void
doctor_names(char *buf, size_t size, const char *name)
{
	size_t	len = strlen(buf);

	snprintf(buf + len, size - len, "%s%s", len > 0 ? ", " : "", name);
}

/* List one host socket and what becomes of it. */
static int
doctor_socket_cb(const char *path, enum netns_sock_fate fate, void *arg)
{
	struct doctor_socks	*ds = arg;

	ds->n++;
	if (fate == NETNS_SOCK_OPEN) {
		ds->nopen++;
		doctor_names(ds->open, sizeof ds->open, path);
	} else if (fate == NETNS_SOCK_RELATIVE) {
		ds->nlost++;
		doctor_names(ds->lost, sizeof ds->lost, path);
	}
	return (doctor_item(ds->c, "%s  %s", path,
	    netns_sock_fate_name(fate)));
}

/*
 * The host's unix sockets: each one bound when a sandbox would start,
 * and whether that sandbox would reach it (the policy's allow-socket
 * lines as the guard check expanded them).
 */
static void
doctor_sockets(struct doctor *d, struct doctor_check *c)
{
	struct netns_hostsocks	hs;
	struct doctor_socks	ds = { .c = c };
	int			fd = -1;

	if (netns_hostsocks_plan(&hs, d->cfg.sockets, d->cfg.nsockets) ==
	    -1 || (fd = open("/proc/self/net/unix", O_RDONLY |
	    O_CLOEXEC)) == -1 ||
	    netns_hostsocks_walk(&hs, fd, doctor_socket_cb, &ds) == -1)
		doctor_set(c, DOCTOR_FAIL, "cannot list the host's unix "
		    "sockets: %s", strerror(errno));
	else if (ds.nlost > 0) {
		doctor_set(c, DOCTOR_WARN, "%zu bound on the host; %zu bound "
		    "by a relative name cannot be closed: %s", ds.n, ds.nlost,
		    ds.lost);
		doctor_fix(c, "bind it by its absolute path, or stop it while "
		    "sandboxes run");
	} else if (ds.nopen > 0)
		doctor_set(c, DOCTOR_OK, "%zu bound on the host; a sandbox "
		    "reaches %zu, by allow-socket: %s", ds.n, ds.nopen,
		    ds.open);
	else
		doctor_set(c, DOCTOR_OK, "%zu bound on the host; a sandbox "
		    "reaches none by these names", ds.n);
	if (fd != -1)
		close(fd);
	netns_hostsocks_free(&hs);
}

/* Which checks pinhole run needs to pass. */
enum doctor_need {
	NEED_NOT,
	NEED_UNPRIV,	/* only when not root */
	NEED_ALWAYS
};

/* The checks: name, function, need, in order (later ones read earlier). */
static const struct {
	const char		*name;
	void			(*fn)(struct doctor *, struct doctor_check *);
	enum doctor_need	 need;
} doctor_checks[CK_MAX] = {
	[CK_USERNS] = { "userns", doctor_userns, NEED_UNPRIV },
	[CK_APPARMOR] = { "apparmor", doctor_apparmor, NEED_UNPRIV },
	[CK_POLICY] = { "policy", doctor_policy, NEED_ALWAYS },
	[CK_RESOLVER] = { "resolver", doctor_resolver, NEED_ALWAYS },
	[CK_UPSTREAM] = { "upstream", doctor_upstream, NEED_NOT },
	[CK_LOG] = { "log", doctor_log, NEED_ALWAYS },
	[CK_CONTROL] = { "control", doctor_control, NEED_ALWAYS },
	[CK_GUARD] = { "guard", doctor_guard, NEED_ALWAYS },
	[CK_SOCKETS] = { "sockets", doctor_sockets, NEED_NOT },
	[CK_VETH] = { "veth", doctor_veth, NEED_ALWAYS },
	[CK_TPROXY] = { "tproxy", doctor_tproxy, NEED_NOT },
};

/* Print the report: text, or one JSON object. */
static void
doctor_report(const struct doctor *d)
{
	struct json_writer	w;

	if (!d->json) {
		doctor_print(stdout, d->c, CK_MAX);
		return;
	}
	json_writer_init(&w, 0);
	doctor_json(&w, d->c, CK_MAX);
	if (w.failed)
		fatalx("doctor: out of memory");
	printf("%s\n", w.buf);
	json_writer_free(&w);
}

/* Run every check, report, and exit 0 only when pinhole run will work. */
static int
cmd_doctor_exec(const struct cmd_entry *cmd, int argc, char **argv)
{
	struct doctor	*d;
	size_t		 i;
	int		 rv;

	if ((d = calloc(1, sizeof *d)) == NULL)
		fatal("calloc");
	if ((rv = doctor_options(cmd, argc, argv, d)) != 0)
		goto out;
	d->root = geteuid() == 0;
	runguard_init(&d->guard);
	for (i = 0; i < CK_MAX; i++) {
		d->c[i].name = doctor_checks[i].name;
		d->c[i].required = doctor_checks[i].need == NEED_ALWAYS ||
		    (doctor_checks[i].need == NEED_UNPRIV && !d->root);
		doctor_checks[i].fn(d, &d->c[i]);
	}
	doctor_report(d);
	rv = doctor_ok(d->c, CK_MAX) ? 0 : 1;
out:
	if (d->rules != NULL)
		rules_free(d->rules);
	runguard_free(&d->guard);
	doctor_free(d->c, CK_MAX);
	free(d);
	return (rv);
}

/* The options of doctor: run's that bear on the checks, and --json. */
static const struct cmd_opt doctor_opts[] = {
	{ "policy", 'p', CMD_ARG_REQUIRED, "FILE",
	    .help = "policy file, as pinhole run's (repeatable; default: the "
	    "user's policy file, if any)" },
	{ .include = gwopts_where_opts },
	{ "net", 0, CMD_ARG_REQUIRED, "CIDR", .key = OPT_NET,
	    .help = "the sandbox link's network (default " NETNS_NET_DEFAULT
	    ")" },
	{ "json", 0, CMD_ARG_NONE, NULL, .key = OPT_JSON,
	    .help = "print one JSON object: ok, and the checks, each with "
	    "name, verdict, required, detail and fix" },
	{ .name = NULL }
};

const struct cmd_entry cmd_doctor_entry = {
	.name = "doctor",
	.usage = "[--policy FILE]... [--allow RULE]... [--resolver "
	    "ADDR[:PORT]]... [--log FILE|-] [--upstream URL] "
	    "[--upstream-auth FILE] [--net CIDR] [--json]",
	.summary = "Check that pinhole run will work here, and say what "
	    "fixes what does not",
	.intro =
	    "Try what pinhole run needs, for real: it reads the policy, the\n"
	    "log and the control directory as run does, asks the resolver one\n"
	    "question and the upstream proxy (if any) for a tunnel, and makes\n"
	    "and removes a user namespace and the sandbox with its guards,\n"
	    "veth link and capture rule (and runs true in it).  Give it the\n"
	    "options you give run, from where you run it.\n",
	.opts = doctor_opts,
	.help =
	    "The checks, one a line with its verdict (ok, warn, FAIL, skip),\n"
	    "what was found and, when something is wrong, a 'fix:' line:\n"
	    "  userns    unprivileged user namespaces (not needed as root)\n"
	    "  apparmor  AppArmor's restriction of them, the pinhole profile\n"
	    "  policy    the policy parses (FILE:LINE of an error)\n"
	    "  resolver  it answers a name of the policy, and how fast\n"
	    "  upstream  the upstream proxy, if any: reached, credentials\n"
	    "            accepted, a tunnel to a host of the policy opened\n"
	    "  log       the audit log can be written, and the room left\n"
	    "  control   the control directory: ours, mode 0700\n"
	    "  guard     the policy and log can be kept from the sandbox\n"
	    "  veth      the namespaces and the veth link, a command run there\n"
	    "  tproxy    nftables with tproxy, for capture of every port\n"
	    "tproxy is not needed (without it other ports are refused\n"
	    "unlogged), nor are userns and apparmor as root; a policy file\n"
	    "that does not exist yet is a warning.\n"
	    "\n"
	    "Exit status: 0 when pinhole run will work (every needed check\n"
	    "ok or warn), 1 when it will not, 2 bad usage.\n",
	.exec = cmd_doctor_exec,
};
