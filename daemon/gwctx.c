/*
 * A running gateway's context: the event loop, the policy, the audit
 * log, the resolver, the gateway, the DNS server and escalation, set up
 * from the options and torn down in one place; its lifecycle lines.
 */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "daemon/gwctx-int.h"
#include "daemon/gwopts.h"
#include "daemon/policywatch.h"
#include "lib/log.h"
#include "proxy/audit/audit.h"
#include "proxy/audit/budget.h"
#include "proxy/dns/dns.h"
#include "proxy/dns/fakeip.h"
#include "proxy/escalate/control.h"
#include "proxy/escalate/decider.h"
#include "proxy/escalate/escalate.h"
#include "proxy/gateway.h"
#include "proxy/resolver/resolver.h"
#include "proxy/scrape.h"
#include "proxy/tls/tls.h"
#include "rules/policy.h"
#include "rules/rules.h"

/* Set up the event base, policy, log, resolver and gateway. */
int
gwctx_setup(struct gwctx *c, struct gwopts *o)
{
	struct rules		*r;
	struct conn_upstream	*u;
	char			 err[1024];

	memset(c, 0, sizeof *c);
	c->o = o;
	metrics_init(&c->metrics, time(NULL));
	if ((c->base = event_base_new()) == NULL)
		fatalx("cannot create the event loop");
	if ((r = gwopts_load_rules(o, err, sizeof err)) == NULL) {
		log_refuse("%s", err);
		return (-1);
	}
	gwopts_warn_dead(r);
	if ((c->audit = gwopts_open_log(o, err, sizeof err)) == NULL ||
	    audit_check_room(c->audit, err, sizeof err) == -1) {
		log_refuse("%s", err);
		rules_free(r);
		return (-1);
	}
	if (gwctx_ships(c, err, sizeof err) == -1) {
		log_refuse("%s", err);
		rules_free(r);
		return (-1);
	}
	if (audit_set_base(c->audit, c->base) == -1)
		fatalx("audit log: out of memory");
	if ((c->resolver = resolver_create(c->base, o->nresolver ?
	    o->resolver : NULL, err, sizeof err)) == NULL) {
		log_refuse("resolver: %s", err);
		rules_free(r);
		return (-1);
	}
	audit_set_metrics(c->audit, &c->metrics);
	resolver_set_metrics(c->resolver, &c->metrics);
	if (o->metrics != NULL && (c->scrape = scrape_start(c->base,
	    o->metrics, &c->metrics, err, sizeof err)) == NULL) {
		log_refuse("--metrics: %s", err);
		rules_free(r);
		return (-1);
	}
	if (c->scrape != NULL)
		scrape_set_ships(c->scrape, gwctx_ship_stats, c);
	gwopts_about(o);
	if (o->cfg.session == NULL && escalate_random_hex(o->session, 4) == 0)
		o->cfg.session = o->session;
	if ((c->gw = gateway_create(c->base, &o->cfg, c->resolver,
	    c->audit)) == NULL)
		fatalx("cannot create the gateway");
	gateway_set_metrics(c->gw, &c->metrics);
	if (o->budget_lines > 0 && (c->budget = audit_budget_create(c->base,
	    c->audit, o->budget_lines, o->budget_bytes)) == NULL)
		fatalx("audit log: out of memory");
	gateway_set_budget(c->gw, c->budget);
	if (gwctx_upstream_make(r, &u, err, sizeof err) == -1) {
		log_refuse("%s", err);
		rules_free(r);
		return (-1);
	}
	gwctx_upstream_set(c, u, r);
	gwctx_set_rules(c, r);
	gwctx_tls(c);
	signal(SIGPIPE, SIG_IGN);
	if (o->decider != NULL && o->ask == 0)
		o->ask = DECIDER_WAIT_DEFAULT;
	return (gwctx_escalate(c, o->ask));
}

/* Create the DNS server on the gateway's policy, resolver and log. */
int
gwctx_dns(struct gwctx *c, char *err, size_t errlen)
{
	struct dns_server_params	p;

	if ((c->fakeip = fakeip_create(c->o->fake_range, FAKEIP_MAX,
	    FAKEIP_GRACE, err, errlen)) == NULL)
		return (-1);
	memset(&p, 0, sizeof p);
	p.base = c->base;
	p.policy = gateway_policy(c->gw);
	p.resolver = c->resolver;
	p.audit = c->audit;
	p.metrics = &c->metrics;
	p.fakeip = c->fakeip;
	p.session = c->o->cfg.session;
	p.real = c->o->dns_real;
	p.refuse = c->o->dns_refuse;
	p.esc = c->esc;
	p.ask = c->ask > 0;
	if ((c->dns = dns_server_create(&p, err, errlen)) == NULL)
		return (-1);
	/* A connection to a fake address is decided as its name. */
	gateway_set_fakeip(c->gw, c->fakeip);
	return (0);
}

/* The gateway has let its connections go: leave the loop. */
static void
gwctx_stopped(void *arg)
{
	struct gwctx	*c = arg;

	event_base_loopexit(c->base, NULL);
}

/* Stop accepting; leave the loop once connections end or grace is over. */
void
gwctx_stop(struct gwctx *c)
{
	gateway_stop(c->gw, c->o->grace, gwctx_stopped, c);
}

/*
 * Write what the log budget summed up, and write each line from now on:
 * before the stop line.
 */
void
gwctx_budget_end(struct gwctx *c)
{
	gateway_set_budget(c->gw, NULL);
	audit_budget_free(c->budget);
	c->budget = NULL;
}

/* Free whatever was set up. */
void
gwctx_teardown(struct gwctx *c)
{
	scrape_stop(c->scrape);
	if (c->sighup != NULL)
		event_free(c->sighup);
	if (c->ending != NULL)
		event_free(c->ending);
	if (c->watch != NULL)
		policywatch_stop(c->watch);
	dns_server_free(c->dns);
	if (c->fakeip != NULL)
		fakeip_free(c->fakeip);
	gateway_free(c->gw);
	audit_budget_free(c->budget);
	gwctx_secrets_free(c);
	if (c->tls != NULL) {
		unlink(tls_ca_path(c->tls));
		unlink(tls_trust_path(c->tls));
		tls_free(c->tls);
	}
	control_close(c->ctl);
	decider_free(c->decider);
	escalate_free(c->esc);
	if (c->resolver != NULL)
		resolver_free(c->resolver);
	gwctx_ships_flush(c);
	if (c->audit != NULL)
		audit_close(c->audit);
	if (c->base != NULL)
		event_base_free(c->base);
	memset(c, 0, sizeof *c);
}

/* Escalation: the queue, grants, the control socket. */
int
gwctx_escalate(struct gwctx *c, int ask)
{
	struct decider_config	dc;
	char			err[1024], always[4096];

	memset(&dc, 0, sizeof dc);
	c->ask = ask;
	if ((c->esc = escalate_create(c->base, c->o->cfg.session,
	    c->audit)) == NULL) {
		log_warnx("escalation: out of memory");
		return (-1);
	}
	escalate_set_metrics(c->esc, &c->metrics);
	if ((c->ctl = control_open(c->base, c->esc, err, sizeof err)) == NULL)
		log_warnx("no control socket, requests cannot be answered: "
		    "%s", err);
	else
		log_info("control socket %s", control_path(c->ctl));
	if (c->o->decider != NULL) {
		dc.url = c->o->decider;
		dc.secs = ask;
		dc.max = c->o->decider_max;
		dc.ca = c->o->decider_ca;
		dc.cert = c->o->decider_cert;
		dc.key = c->o->decider_key;
		if ((c->decider = decider_create(c->base, c->esc, &dc, err,
		    sizeof err)) == NULL) {
			log_warnx("%s", err);
			return (-1);
		}
		log_info("decider %s, %d s an answer", c->o->decider, ask);
	}
	if (c->o->npolicy > 0)
		snprintf(always, sizeof always, "%s", c->o->policy[0]);
	else if (!gwopts_user_path(c->o, always, sizeof always))
		always[0] = '\0';
	if (gateway_set_escalate(c->gw, c->esc, always[0] != '\0' ? always :
	    NULL, ask) == -1) {
		log_warnx("escalation: out of memory");
		return (-1);
	}
	return (0);
}

/* Tell control clients where the agent endpoint is. */
void
gwctx_agent_url(struct gwctx *c, const char *url)
{
	if (c->ctl != NULL)
		control_set_agent(c->ctl, url);
}
