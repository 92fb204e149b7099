/*
 * Reading requests: the next head, from the client as it is or, on an
 * inspected connection, decrypted.  A bound connection carries requests
 * for one host and port only: a CONNECT whose rule checks requests, or
 * a captured HTTP or TLS connection.  Each request comes in origin-form,
 * its Host must name that host (another is fronting), and each one is
 * decided on its own; TLS is ended here with a certificate of the
 * gateway's CA and begun again upstream (dial.c), verified.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "proxy/audit/audit.h"
#include "proxy/conn/conn-int.h"
#include "proxy/tls/tls.h"
#include "proxy/wire/http.h"
#include "proxy/wire/sni.h"
#include "proxy/wire/socks5.h"
#include "rules/rules.h"

#define TLS_RECORD_HANDSHAKE	0x16	/* a ClientHello's first byte */

/*
 * A bound connection waits for its next request: OpenSSL's record
 * buffers, which SSL_MODE_RELEASE_BUFFERS does not always give back
 * after a read that found nothing, go now (16 KiB or more a side).
 */
static void
conn_tls_idle(struct conn *c)
{
	if (c->client_tls && evbuffer_get_length(
	    bufferevent_get_input(c->client)) == 0)
		SSL_free_buffers(bufferevent_openssl_get_ssl(c->client));
	if (c->server_tls && c->server != NULL && evbuffer_get_length(
	    bufferevent_get_input(c->server)) == 0)
		SSL_free_buffers(bufferevent_openssl_get_ssl(c->server));
}

/* Wait for the next request head. */
void
conn_head_start(struct conn *c)
{
	c->state = S_HEAD;
	http_scan_init(&c->scan);
	conn_secrets_free(c);
	/* The last exchange's heads, parsed: 10 KiB a waiting one keeps. */
	free(c->head);
	free(c->req);
	conn_resp_free(c);
	c->head = NULL;
	c->req = NULL;
	c->have_req = 0;
	if (!c->bound) {
		c->have_host = 0;
		c->via = NULL;
		c->addr[0] = '\0';
	}
	c->method[0] = '\0';
	if (c->path != NULL)
		c->path[0] = '\0';
	if (c->rule != NULL)
		c->rule[0] = '\0';
	conn_texts_free(c);
	c->status = 0;
	c->up = c->down = 0;
	c->close_after = 0;
	c->scrubbing = 0;
	bufferevent_setwatermark(c->client, EV_READ, 0, c->set->lim.max_head);
	if (c->nrequests == 0)
		conn_timer(c, c->set->handshake_timeout);
	else {
		conn_idle_timer(c);
		conn_tls_idle(c);
	}
}

/* Keep the request's path for the audit line: the query cut. */
void
conn_keep_path(struct conn *c, const struct http_str *target)
{
	size_t	len = target->len;
	const char *q;

	if ((q = memchr(target->p, '?', len)) != NULL)
		len = q - target->p;
	/* Kept for the connection's next request; lost without memory. */
	if (c->path == NULL && (c->path = malloc(CONN_PATH_LEN)) == NULL)
		return;
	if (len >= CONN_PATH_LEN)
		snprintf(c->path, CONN_PATH_LEN, "%.*s...",
		    (int)(CONN_PATH_LEN - 4), target->p);
	else
		snprintf(c->path, CONN_PATH_LEN, "%.*s", (int)len, target->p);
}

/*
 * Does a bound request's Host name the host the connection is bound to
 * (or, captured, the address it was sent to)?  An HTTP/1.0 request
 * without one is taken as for that host.
 */
static int
conn_host_is_bound(struct conn *c, const struct http_header *hd)
{
	struct host	 h;
	uint16_t	 port;
	const char	*errstr;
	char		 text[HOST_TEXT_LEN + 16];

	if (hd == NULL)
		return (1);
	if (hd->value.len >= sizeof text)
		return (0);
	memcpy(text, hd->value.p, hd->value.len);
	text[hd->value.len] = '\0';
	if (host_port_parse(text, &h, &port, c->port, &errstr) == -1 ||
	    port != c->port)
		return (0);
	return (strcmp(h.text, c->host.text) == 0 ||
	    (c->dst[0] != '\0' && strcmp(h.text, c->dst) == 0));
}

/*
 * A request on a bound connection: it must be in origin-form and for
 * the bound host.  Its upstream head names the host the client's Host
 * gave (or the bound one).  Returns 0 to decide it, -1 when refused.
 */
int
conn_bound_request(struct conn *c)
{
	struct http_request	*r = c->req;
	const struct http_header *hd;
	char			 why[HOST_TEXT_LEN * 2 + 64];

	if (r->form != HTTP_FORM_ORIGIN) {
		conn_refuse(c, 400, NULL, r->is_connect ?
		    "CONNECT inside a tunnel" :
		    "a request here must be in origin-form (\"GET /path\")");
		return (-1);
	}
	conn_keep_path(c, &r->target);
	hd = http_header_find(&r->h, "host");
	if (!conn_host_is_bound(c, hd)) {
		conn_note_set(c, "Host %.*s",
		    (int)(hd->value.len < 200 ? hd->value.len : 200),
		    hd->value.p);
		snprintf(why, sizeof why, "Host names %.*s, not %s",
		    (int)(hd->value.len < HOST_TEXT_LEN ? hd->value.len :
		    HOST_TEXT_LEN), hd->value.p, c->host.text);
		c->close_after = 1;
		conn_refuse(c, 403, "fronting", why);
		return (-1);
	}
	if (hd != NULL)
		r->authority = hd->value;
	else {
		r->authority.p = c->host.text;
		r->authority.len = strlen(c->host.text);
	}
	return (0);
}

/* Bind a connection to its host: its requests come one by one now. */
static void
conn_bind(struct conn *c)
{
	c->bound = 1;
	c->splice_tried = 1;		/* requests are read, never spliced */
	c->pending = P_NONE;
	conn_http_free(c);
	bufferevent_setwatermark(c->client, EV_READ, 0, 0);
	conn_head_start(c);
	/* Bytes read already (sniffed, or sent with the CONNECT) wait. */
	if (evbuffer_get_length(bufferevent_get_input(c->client)) > 0)
		bufferevent_trigger(c->client, EV_READ,
		    BEV_TRIG_IGNORE_WATERMARKS | BEV_TRIG_DEFER_CALLBACKS);
}

/*
 * A CONNECT whose rule checks requests: say it is established, then
 * read what comes through it as requests (decrypted when it is TLS).
 */
void
conn_bound_connect(struct conn *c)
{
	if (c->set->tls == NULL) {
		conn_refuse(c, 502, "inspect-unavailable", "the policy checks "
		    "requests to this host, and this gateway cannot inspect "
		    "TLS");
		return;
	}
	c->status = c->socks ? 0 : 200;
	conn_audit(c, "connect", "allow", "inspect", 0);
	if (c->socks)
		conn_socks_send(c, SOCKS_REP_OK);
	else
		conn_send_client(c, CONN_ESTABLISHED,
		    sizeof CONN_ESTABLISHED - 1);
	c->tls_wait = 1;
	conn_bind(c);
}

/*
 * The socket below the client's TLS wrote what it held: tell the client
 * side's write callback, which waits for all of it before a close.
 */
static void
conn_tls_drained_cb(struct evbuffer *buf, const struct evbuffer_cb_info *info,
    void *arg)
{
	struct conn	*c = arg;

	if (info->n_deleted > 0 && evbuffer_get_length(buf) == 0 &&
	    !c->dead && c->client != NULL)
		bufferevent_trigger(c->client, EV_WRITE,
		    BEV_TRIG_IGNORE_WATERMARKS | BEV_TRIG_DEFER_CALLBACKS);
}

/* End the client's TLS here: from now on c->client reads clear text. */
static int
conn_tls_accept(struct conn *c)
{
	struct bufferevent	*under = c->client, *bev;
	SSL			*ssl;
	char			 err[256];

	if ((ssl = tls_accept_new(c->set->tls, &c->host, err,
	    sizeof err)) == NULL) {
		conn_close(c, err);
		return (-1);
	}
	bufferevent_setwatermark(under, EV_READ, 0, 0);
	conn_out_release(c);
	conn_read_release(c->client, &c->crd);
	bev = bufferevent_openssl_filter_new(c->set->base, under, ssl,
	    BUFFEREVENT_SSL_ACCEPTING, BEV_OPT_CLOSE_ON_FREE);
	if (bev == NULL) {
		conn_close(c, "out of memory");
		return (-1);
	}
	c->client = bev;
	c->client_tls = 1;
	c->tls_drained = evbuffer_add_cb(bufferevent_get_output(under),
	    conn_tls_drained_cb, c);
	bufferevent_setcb(bev, c->set->ev->client_read,
	    c->set->ev->client_write, c->set->ev->client_event, c);
	bufferevent_setwatermark(bev, EV_WRITE, CONN_LOW, 0);
	bufferevent_setwatermark(bev, EV_READ, 0, c->set->lim.max_head);
	bufferevent_set_max_single_read(bev, CONN_TLS_READ);
	bufferevent_enable(bev, EV_READ | EV_WRITE);
	/* A ClientHello read already waits in the socket's buffer. */
	if (evbuffer_get_length(bufferevent_get_input(under)) > 0)
		bufferevent_trigger(under, EV_READ,
		    BEV_TRIG_IGNORE_WATERMARKS | BEV_TRIG_DEFER_CALLBACKS);
	return (0);
}

/*
 * A bound connection's first bytes: TLS is ended here, anything else is
 * read as HTTP.  Returns 1 to read heads, 0 to wait, -1 when closed.
 */
int
conn_bound_tls(struct conn *c)
{
	struct evbuffer	*in = bufferevent_get_input(c->client);
	unsigned char	 b;

	if (!c->tls_wait)
		return (1);
	if (evbuffer_copyout(in, &b, 1) != 1)
		return (0);
	c->tls_wait = 0;
	if (b != TLS_RECORD_HANDSHAKE)
		return (1);
	if (conn_tls_accept(c) == -1)
		return (-1);
	return (0);
}

/*
 * A captured connection the policy allows, which spoke HTTP, or any to
 * a host whose rules check requests: read it request by request (each
 * is decided, not only the first), TLS ended here when its first byte
 * begins a TLS record.
 */
void
conn_bound_captured(struct conn *c)
{
	c->tls_wait = c->sniff_proto != SNI_PROTO_HTTP;
	conn_audit(c, "connect", "allow", c->tls_wait ? "inspect" : NULL, 0);
	conn_bind(c);
}

/*
 * A TLS handshake failed: upstream, the client hears why (502); on the
 * client's side it is only logged, with the reason it gave (a client
 * that pins certificates rejects ours), and the connection closed.
 */
void
conn_tls_failed(struct conn *c, int upstream)
{
	struct bufferevent	*bev = upstream ? c->server : c->client;
	SSL			*ssl = bufferevent_openssl_get_ssl(bev);
	unsigned long		 e = bufferevent_get_openssl_error(bev);
	const char		*reason;
	char			 why[512];
	size_t			 n;

	tls_error_text(ssl, upstream, why, sizeof why);
	n = strlen(why);
	if (e != 0 && n + 3 < sizeof why && strstr(why, "certificate") == NULL)
		ERR_error_string_n(e, why + n, sizeof why - n);
	if (upstream) {
		conn_refuse(c, 502, "upstream-tls", why);
		return;
	}
	if (tls_fronting(ssl) != NULL) {
		conn_note_set(c, "TLS SNI %s",
		    tls_fronting(ssl));
		reason = "fronting";
	} else if (tls_client_rejected(ssl)) {
		conn_note_set(c, "%s", why);
		reason = "tls-client-rejected";
	} else {
		conn_note_set(c, "%s", why);
		reason = "tls-handshake-failed";
	}
	conn_audit(c, "connect", "deny", reason, 0);
	conn_close(c, reason);
}
