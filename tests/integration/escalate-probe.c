/*
 * A test-only host for the escalation plumbing, without the gateway: an
 * escalation queue, its control socket, and the agent endpoint served
 * over libevent's evhttp on 127.0.0.1.  GET /probe/block?host=H&port=P
 * reports a blocked attempt as the gateway would.  An agent request with
 * "X-Probe-Sandbox: ID" comes from the sandbox ID, whose command is
 * `agent --task 'fix ESC[2J bug'` and whose pid is the probe's.  The
 * queue decides by a policy that allows allowed.test; approvals become
 * its grants.
 *
 * usage: escalate-probe PORT SESSION AUDITFILE
 * Prints "ready SOCKETPATH" once listening; stops on SIGTERM.
 */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "lib/clock.h"
#include "proxy/audit/audit.h"
#include "proxy/escalate/agent.h"
#include "proxy/escalate/control.h"
#include "proxy/escalate/escalate.h"
#include "rules/policy.h"

struct probe {
	struct event_base	*base;
	struct escalate		*e;
};

/* A request in flight, held for a long poll. */
struct probe_wait {
	struct evhttp_request	*req;
	struct agent_wait	*aw;
};

/* The probe's policy: allowed.test, and what is approved. */
static struct policy *
probe_policy(void)
{
	struct policy	*pol;
	struct rules	*r;
	char		 err[256];

	if ((pol = policy_create(mono_ms)) == NULL ||
	    (r = rules_create()) == NULL ||
	    rules_load_text(r, "probe", "allow allowed.test", 18, err,
	    sizeof err) == -1) {
		fprintf(stderr, "escalate-probe: no policy\n");
		exit(1);
	}
	policy_set_rules(pol, r);
	return (pol);
}

/* Send an agent response. */
static void
probe_send(struct evhttp_request *req, struct agent_response *resp)
{
	struct evbuffer	*b = evbuffer_new();

	evhttp_add_header(evhttp_request_get_output_headers(req),
	    "Content-Type", resp->ctype);
	if (resp->body.len > 0)
		evbuffer_add(b, resp->body.buf, resp->body.len);
	evhttp_send_reply(req, resp->status, "pinhole", b);
	evbuffer_free(b);
}

/* The client went away during a long poll. */
static void
probe_close_cb(struct evhttp_connection *conn, void *arg)
{
	struct probe_wait	*pw = arg;

	agent_wait_cancel(pw->aw);
	free(pw);
}

/* The long poll is over. */
static void
probe_wait_done(struct agent_response *final, void *arg)
{
	struct probe_wait	*pw = arg;

	evhttp_connection_set_closecb(evhttp_request_get_connection(pw->req),
	    NULL, NULL);
	probe_send(pw->req, final);
	agent_response_free(final);
	free(pw);
}

/* Serve one agent endpoint request. */
static void
probe_agent(struct probe *p, struct evhttp_request *req)
{
	struct agent_request	 ar;
	struct agent_response	 resp;
	struct evbuffer		*in = evhttp_request_get_input_buffer(req);
	struct evkeyvalq	*h = evhttp_request_get_input_headers(req);
	struct probe_wait	*pw;
	struct sandbox	*sb = NULL;
	const char		*v;
	static const char	*methods[] = { "GET", "POST", "HEAD", "PUT" };
	static char *const	 cmd[] = { "agent", "--task",
				    "fix \033[2J bug", NULL };
	char			 line[AUDIT_CMD_LEN];
	int			 m = evhttp_request_get_command(req);

	memset(&ar, 0, sizeof ar);
	ar.method.p = m == EVHTTP_REQ_GET ? methods[0] : m == EVHTTP_REQ_POST ?
	    methods[1] : m == EVHTTP_REQ_HEAD ? methods[2] : methods[3];
	ar.method.len = strlen(ar.method.p);
	ar.target.p = evhttp_request_get_uri(req);
	ar.target.len = strlen(ar.target.p);
	if ((v = evhttp_find_header(h, "Content-Type")) != NULL) {
		ar.content_type.p = v;
		ar.content_type.len = strlen(v);
	}
	if ((v = evhttp_find_header(h, "Accept")) != NULL) {
		ar.accept.p = v;
		ar.accept.len = strlen(v);
	}
	ar.body.len = evbuffer_get_length(in);
	ar.body.p = (const char *)evbuffer_pullup(in, -1);
	if ((v = evhttp_find_header(h, "X-Probe-Sandbox")) != NULL) {
		audit_cmdline(cmd, line, sizeof line);
		sb = sandbox_new(v, line, getpid(), NULL);
	}
	ar.sandbox = sb;
	agent_handle(p->e, &ar, &resp);
	sandbox_unref(sb);
	if (resp.wait > 0 && (pw = calloc(1, sizeof *pw)) != NULL) {
		pw->req = req;
		if ((pw->aw = agent_wait_start(p->e, &resp, probe_wait_done,
		    pw)) != NULL) {
			evhttp_connection_set_closecb(
			    evhttp_request_get_connection(req), probe_close_cb,
			    pw);
			agent_response_free(&resp);
			return;
		}
		free(pw);
	}
	probe_send(req, &resp);
	agent_response_free(&resp);
}

/* Report a blocked attempt: /probe/block?host=H&port=P&via=V. */
static void
probe_block(struct probe *p, struct evhttp_request *req)
{
	const char	*uri = evhttp_request_get_uri(req), *q, *err;
	char		 host[256], port[8], via[16];
	struct host	 h;
	uint16_t	 pn;

	q = strchr(uri, '?');
	if (q == NULL || agent_form_get(q + 1, strlen(q + 1), "host", host,
	    sizeof host) < 0 || host_port_parse(host, &h, &pn, 443, &err) == -1) {
		evhttp_send_error(req, 400, "bad host");
		return;
	}
	if (agent_form_get(q + 1, strlen(q + 1), "port", port,
	    sizeof port) > 0)
		pn = atoi(port);
	if (agent_form_get(q + 1, strlen(q + 1), "via", via, sizeof via) < 0)
		snprintf(via, sizeof via, "connect");
	escalate_blocked(p->e, NULL, &h, pn, via, NULL);
	evhttp_send_reply(req, 204, "noted", NULL);
}

/* Route a request. */
static void
probe_http_cb(struct evhttp_request *req, void *arg)
{
	const char	*uri = evhttp_request_get_uri(req);

	if (strncmp(uri, "/probe/block", 12) == 0)
		probe_block(arg, req);
	else
		probe_agent(arg, req);
}

/* Stop on a signal. */
static void
probe_signal_cb(evutil_socket_t sig, short what, void *arg)
{
	event_base_loopbreak(arg);
}

int
main(int argc, char **argv)
{
	struct probe		 p;
	struct evhttp		*http;
	struct control		*ctl;
	struct audit		*audit;
	struct event		*sig;
	struct policy		*pol = probe_policy();
	char			 err[512], agent[64];

	if (argc != 4) {
		fprintf(stderr, "usage: escalate-probe PORT SESSION AUDIT\n");
		return (2);
	}
	signal(SIGPIPE, SIG_IGN);
	p.base = event_base_new();
	if ((audit = audit_open(argv[3], err, sizeof err)) == NULL ||
	    (p.e = escalate_create(p.base, argv[2], audit)) == NULL) {
		fprintf(stderr, "escalate-probe: %s\n", err);
		return (1);
	}
	escalate_set_policy(p.e, pol);
	if ((ctl = control_open(p.base, p.e, err, sizeof err)) == NULL) {
		fprintf(stderr, "escalate-probe: %s\n", err);
		return (1);
	}
	snprintf(agent, sizeof agent, "http://127.0.0.1:%s", argv[1]);
	control_set_agent(ctl, agent);
	http = evhttp_new(p.base);
	evhttp_set_allowed_methods(http, EVHTTP_REQ_GET | EVHTTP_REQ_POST |
	    EVHTTP_REQ_HEAD | EVHTTP_REQ_PUT);
	evhttp_set_gencb(http, probe_http_cb, &p);
	if (evhttp_bind_socket(http, "127.0.0.1", atoi(argv[1])) == -1) {
		fprintf(stderr, "escalate-probe: cannot listen on %s\n",
		    argv[1]);
		return (1);
	}
	sig = evsignal_new(p.base, SIGTERM, probe_signal_cb, p.base);
	evsignal_add(sig, NULL);
	printf("ready %s\n", control_path(ctl));
	fflush(stdout);
	event_base_dispatch(p.base);
	evhttp_free(http);
	control_close(ctl);
	escalate_free(p.e);
	policy_free(pol);
	audit_close(audit);
	event_free(sig);
	event_base_free(p.base);
	return (0);
}
