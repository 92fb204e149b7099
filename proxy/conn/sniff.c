/*
 * A captured connection: where it was going (a fake address stands for
 * a name), and on TLS and HTTP ports what its first bytes say, before it
 * is decided; a ClientHello or Host naming another host is fronting.
 */
#include "config.h"

#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <stdio.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "proxy/conn/conn-int.h"
#include "proxy/dns/fakeip.h"
#include "proxy/wire/sni.h"
#include "proxy/wire/transparent.h"
#include "rules/rules.h"

/*
 * Where a captured connection was going: a fake address stands for its
 * name; any other address is itself the host (only an IP rule allows
 * it).  Returns -1 when the connection was refused.
 */
static int
conn_transparent_dest(struct conn *c, const struct sockaddr_storage *ss)
{
	const struct sockaddr_in	*in = (const struct sockaddr_in *)ss;
	const uint8_t			*a = (const uint8_t *)&in->sin_addr;
	const char			*name, *errstr;

	if (ss->ss_family != AF_INET) {
		conn_close(c, "captured connection is not IPv4");
		return (-1);
	}
	c->port = ntohs(in->sin_port);
	inet_ntop(AF_INET, &in->sin_addr, c->dst, sizeof c->dst);
	if (host_parse(c->dst, strlen(c->dst), &c->host, &errstr) == -1) {
		conn_close(c, "bad destination address");
		return (-1);
	}
	c->have_host = 1;
	if (c->set->fakeip == NULL || !fakeip_contains(c->set->fakeip, a, 4))
		return (0);
	name = fakeip_lookup_name(c->set->fakeip, a, 4,
	    sandbox_id(c->sandbox));
	if (name == NULL ||
	    host_parse(name, strlen(name), &c->host, &errstr) == -1) {
		conn_transparent_refuse(c, 403, "unknown-fake-address",
		    "no name has this address now (an old DNS answer?)");
		return (-1);
	}
	c->name_from = "fake-ip";
	return (0);
}

/*
 * A connection captured on its way to any address and port: find the
 * name it is for, then wait for its first bytes on ports where TLS or
 * HTTP is expected, or decide at once.
 */
void
conn_transparent_start(struct conn *c, int fd)
{
	struct sockaddr_storage	ss;
	socklen_t		len = sizeof ss;

	c->state = S_SNIFF;
	c->via = "transparent";
	event_base_gettimeofday_cached(c->set->base, &c->start);
	c->last_active = conn_now(c);
	if (conn_audit_ready(c) == -1)
		return;
	bufferevent_setwatermark(c->client, EV_READ, 0, SNI_PEEK_MAX);
	if (getsockname(fd, (struct sockaddr *)&ss, &len) == -1) {
		conn_close(c, "getsockname failed");
		return;
	}
	if (conn_transparent_dest(c, &ss) == -1)
		return;
	if (c->name_from == NULL)
		c->sniffed = 1;		/* an address: no name to check */
	if (!c->sniffed && transparent_wait_port(c->port)) {
		conn_timer(c, TRANSPARENT_PEEK_SECONDS);
		return;
	}
	conn_transparent_go(c);
}

/*
 * Decide a captured connection by its name and port; read HTTP (and TLS
 * the policy checks requests of) request by request, dial the rest.
 */
void
conn_transparent_go(struct conn *c)
{
	if (conn_decide(c) != 0)
		return;		/* refused, or held for a person (ask mode) */
	if (c->sniff_proto == SNI_PROTO_HTTP ||
	    (c->inspect && c->set->tls != NULL)) {
		conn_bound_captured(c);
		return;
	}
	if (c->inspect) {
		conn_transparent_refuse(c, 403, "inspect-unavailable", "the "
		    "policy checks the requests to this host, and this "
		    "gateway cannot inspect TLS");
		return;
	}
	conn_resolve(c);
}

/* The first bytes name another host: refuse as fronting. */
static void
conn_fronting(struct conn *c, const struct transparent_sniff *t)
{
	const char	*what = t->proto == SNI_PROTO_TLS ? "TLS SNI" : "Host";
	char		 why[SNI_NAME_MAX + HOST_TEXT_LEN + 64];

	conn_note_set(c, "%s %s", what, t->name);
	snprintf(why, sizeof why, "%s names %s, not %s", what, t->name,
	    c->host.text);
	conn_transparent_refuse(c, 403, "fronting", why);
}

/* The first bytes have been judged: let them go up. */
static void
conn_sniffed(struct conn *c)
{
	c->sniffed = 1;
	if (c->state == S_TUNNEL) {
		bufferevent_setwatermark(c->client, EV_READ, 0, 0);
		conn_timer(c, c->set->idle_timeout);
	}
}

/*
 * Judge a captured connection's first bytes, kept in its input to go
 * upstream later.  Returns 1 once judged, 0 to wait for more, -1 when
 * the connection was refused.
 */
int
conn_sniff(struct conn *c)
{
	struct evbuffer			*in = bufferevent_get_input(c->client);
	struct transparent_sniff	 t;
	enum transparent_verdict	 v;
	unsigned char			*p;
	size_t				 len;

	if (c->sniffed)
		return (1);
	len = evbuffer_get_length(in);
	if (len == 0 || len < c->sniff_need)
		return (0);
	if (len > SNI_PEEK_MAX)
		len = SNI_PEEK_MAX;
	if ((p = evbuffer_pullup(in, len)) == NULL) {
		conn_close(c, "out of memory");
		return (-1);
	}
	v = transparent_check(p, len, &c->host, c->dst, &t);
	c->sniff_proto = t.proto;
	switch (v) {
	case TRANSPARENT_NEED_MORE:
		c->sniff_need = t.need;
		if (c->state == S_TUNNEL && !c->sniff_armed)
			conn_timer(c, TRANSPARENT_PEEK_SECONDS);
		c->sniff_armed = 1;
		return (0);
	case TRANSPARENT_FRONTING:
		conn_fronting(c, &t);
		return (-1);
	case TRANSPARENT_MALFORMED:
		conn_note_set(c, "%s", t.error);
		conn_transparent_refuse(c, 403, "malformed",
		    t.proto == SNI_PROTO_TLS ? "a malformed TLS ClientHello" :
		    "a malformed HTTP request head");
		return (-1);
	case TRANSPARENT_MATCH:
		c->name_from = transparent_name_from(&t);
		break;
	default:
		break;
	}
	conn_sniffed(c);
	return (1);
}
