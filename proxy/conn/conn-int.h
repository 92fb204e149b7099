/*
 * Inside one client connection: shared by the files of proxy/conn/,
 * nothing else includes this.  Each file is one step of the state
 * machine and calls only the files listed above it here (lower ones);
 * events.c, at the top, is where every event enters, runs the step
 * the state allows, and loops while the state changes (conn_pump).
 */
#ifndef CONN_INT_H
#define CONN_INT_H

#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <netinet/in.h>

#include <stdint.h>
#include <time.h>

#include <event2/bufferevent.h>
#include <event2/event.h>

#include "proxy/conn/conn.h"
#include "proxy/conn/pipebuf.h"
#include "proxy/escalate/escalate.h"
#include "proxy/resolver/resolver.h"
#include "proxy/sandbox/sandbox.h"
#include "proxy/wire/http.h"
#include "proxy/wire/placeholder.h"
#include "proxy/wire/sni.h"
#include "rules/policy.h"
#include "rules/rules.h"

struct agent_response;
struct agent_wait;
struct scrub;


#define CONN_HIGH	(256 * 1024)	/* stop reading the other side */
#define CONN_LOW	(64 * 1024)	/* and start again */
/*
 * What a TLS filter reads at once.  libevent reserves room for it in
 * the input before each SSL_read and keeps the room while no bytes
 * come, so it is one chain of 4 KiB with libevent's header: not the
 * head's limit (32 KiB), nor its default (4 KiB, 8 with the header).
 */
#define CONN_TLS_READ	4000
#define CONN_HEAD_STACK	4096	/* a head built on the stack, or the heap */
#define CONN_RESP_HEAD_MAX	(64 * 1024)
#define CONN_TUNNEL_IO	(256 * 1024)	/* per read/write syscall */
#define CONN_READ	(16 * 1024)	/* per recv of a socket read here */
#define CONN_SPLICE_AFTER	(64 * 1024)	/* tunnel bytes before splicing */
#define CONN_PIPE		(256 * 1024)	/* kernel buffer per direction */
#define CONN_SPLICE_ROUNDS	4		/* per callback, then yield */
#define CONN_ESTABLISHED	"HTTP/1.1 200 Connection established\r\n\r\n"
#define CONN_PATH_LEN		256	/* path logged, escaped, query cut */
#define CONN_SWAP_MAX		16	/* header values a secret went in */
#define CONN_NOTE_LEN		(SNI_NAME_MAX + 64)	/* a refusal's detail */

enum conn_state {
	S_HEAD,			/* reading a request head */
	S_SNIFF,		/* captured: waiting for the first bytes */
	S_RESOLVE,		/* waiting for the resolver */
	S_DIAL,			/* connecting to one vetted address */
	S_FORWARD,		/* relaying one request and its response */
	S_TUNNEL,		/* CONNECT: bytes both ways */
	S_REPLY,		/* sending our own answer */
	S_AGENT,		/* agent endpoint: body, or a long poll */
	S_ASK,			/* ask mode: held for a person's decision */
	S_SOCKS,		/* SOCKS5: greeting, credentials, request */
	S_UPSTREAM		/* the upstream's answer to CONNECT */
};

/* Where a SOCKS5 handshake is: what the client sends next. */
enum conn_socks_phase {
	SOCKS_HELLO,		/* the greeting */
	SOCKS_AUTH,		/* RFC 1929 credentials */
	SOCKS_REQUEST		/* the request, then its reply */
};

enum conn_pending {
	P_NONE,
	P_TUNNEL,		/* a "close" line is owed */
	P_REQUEST		/* a "request" line is owed */
};

/*
 * The header values secrets went in, kept on the heap once a request
 * carries a placeholder: few do, and an idle tunnel should not carry
 * their room.
 */
struct conn_swaps {
	struct {
		char		*p;
		size_t		 len;
	}			 v[CONN_SWAP_MAX];
	size_t			 n;
	char			 name[SECRET_NAME_MAX + 1];
};

/*
 * An exchange's framing, the response's head and what parsing it made,
 * kept on the heap from the first request sent upstream (or CONNECT to
 * an upstream proxy) until a tunnel opens: a tunnel has no use for
 * them, and an idle one should not carry their room.
 */
struct conn_fwd {
	struct http_chunked	 req_ch;
	struct http_scan	 rscan;
	char			*rhead;
	struct http_response	*resp;
	uint64_t		 resp_remain;
	struct http_chunked	 resp_ch;
};

struct conn {
	struct conn_set		*set;
	TAILQ_ENTRY(conn)	 entry;
	unsigned long long	 id;
	struct sandbox	*sandbox;	/* where it came from, or NULL */
	int			 refs;
	int			 dead;
	enum conn_state	 state;
	struct bufferevent	*client;
	struct bufferevent	*server;
	int			 crd;		/* its socket read here */
	int			 srd;		/* the server's */
	struct evbuffer_cb_entry *out_cb;	/* the client's output, ours */
	TAILQ_ENTRY(conn)	 flush_entry;	/* in set->flushq */
	int			 flushing;
	struct event		*timer;
	int			 timer_idle;	/* armed by conn_idle_timer() */
	struct timeval		 idle_since;	/* and since when */
	struct resolver_query	*query;
	char			 client_addr[INET6_ADDRSTRLEN + 8];
	struct timeval		 start;
	time_t			 last_active;
	int			 nrequests;
	int			 counted_tunnel;	/* in the tunnels gauge */
	int			 counted_held;	/* in the held gauge */

	/* The request being handled. */
	struct http_scan	 scan;
	char			*head;
	struct http_request	*req;
	int			 have_req;
	char			 method[32];
	struct host		 host;
	uint16_t		 port;
	int			 have_host;
	int			 loopback;	/* host.pinhole.internal, opened
						   by its own rule or a grant */
	const char		*via;
	char			*rule;		/* what decided (conn_rule_set) */
	size_t			 rule_size;	/* its room */
	struct resolver_addr	*addrs;		/* vetted, to dial in turn */
	size_t			 naddrs;
	size_t			 next_addr;
	char			 addr[INET6_ADDRSTRLEN];
	int			 dial_err;
	int			 dial_timeouts;
	struct conn_upstream	*upstream;	/* the way to the server */
	int			 upstream_open;	/* its CONNECT answered */
	int			 client_ka;
	int			 close_after;
	int			 status;
	int64_t			 up;
	int64_t			 down;
	enum conn_pending	 pending;

	/* Escalation. */
	struct agent_wait	*await;		/* a long poll */
	struct escalate_waiter	*ask;		/* a held connection */
	char			 grant_id[GRANT_ID_LEN];
	char			*fix;		/* no grant can help (conn_fix) */

	/* Forwarding. */
	int			 reused;
	int			 req_done;
	uint64_t		 req_remain;
	struct conn_fwd		*fwd;		/* framing, or NULL */
	int			 resp_head_done;
	int			 resp_done;
	int			 resp_got;
	char			*srv_name;	/* what an idle server is for */
	uint16_t		 srv_port;
	int			 srv_idle;

	/* Tunnel. */
	int			 client_eof;
	int			 server_eof;
	int			 client_shut;
	int			 server_shut;

	/* Transparent capture. */
	int			 transparent;	/* from a capture listener */
	int			 sniffed;	/* first bytes judged, or moot */
	int			 sniff_armed;	/* their deadline is set */
	size_t			 sniff_need;
	enum sni_proto		 sniff_proto;
	const char		*name_from;	/* fake-ip, sni or host */
	char			 dst[INET6_ADDRSTRLEN];	/* connected to */
	char			*note;		/* detail (conn_note) */
	int			 reset;		/* close with a RST */
	int			 splice_tried;
	int			 spliced;	/* bytes move by splice(2) */
	struct pipebuf		 up_pipe;	/* client to server */
	struct pipebuf		 down_pipe;	/* server to client */
	struct event		*cev;		/* edge-triggered, both ways */
	struct event		*sev;

	/* SOCKS5. */
	int			 socks;		/* from a SOCKS listener */
	enum conn_socks_phase	 socks_phase;

	/* Bound: requests for one host only, each decided (inspect.c). */
	int			 inspect;	/* the policy checks requests */
	int			 bound;		/* origin-form, for host:port */
	int			 tls_wait;	/* bound: TLS or not, unknown */
	int			 client_tls;	/* c->client decrypts */
	int			 server_tls;	/* c->server encrypts */
	int			 tls_up;	/* the client's handshake done */
	struct evbuffer_cb_entry *tls_drained;	/* the socket's below */
	char			*path;		/* for the audit, or NULL */
	struct conn_swaps	*swaps;		/* secret-request.c, or NULL */

	/* Responses from a secret's hosts, values replaced (scrub-response.c). */
	struct scrub		*scrub;		/* kept for the next request */
	uint64_t		 scrub_mask;	/* the set's secrets it has */
	unsigned int		 scrub_gen;	/* of the set's secrets */
	struct evbuffer		*scrub_out;	/* what it made */
	int			 scrubbing;	/* this exchange's response */
	int			 scrub_body;	/* its body through it */
	int			 scrub_chunked;	/* sent chunked */
};

/*
 * The entry points of events.c, for the files below it that register
 * them with libevent, the resolver or the escalation queue: they are
 * reached through the set (conn_set_init), so no file calls upward.
 */
struct conn_events {
	bufferevent_data_cb	 client_read;
	bufferevent_data_cb	 client_write;
	bufferevent_event_cb	 client_event;
	bufferevent_data_cb	 server_read;
	bufferevent_data_cb	 server_write;
	bufferevent_event_cb	 server_event;
	event_callback_fn	 splice;
	resolver_cb		 resolved;
	escalate_wait_cb	*asked;
	void			(*agent_waited)(struct agent_response *,
				    void *);
};

/* core.c: the struct's life: clock, timer, audit line, the one close, byte moving. */
/* The policy that decides: its sandbox's, or the gateway's. */
struct policy *conn_policy_in_force(const struct conn *);
time_t	conn_now(struct conn *);
void	conn_timer(struct conn *, int);
void	conn_idle_timer(struct conn *);
int	conn_idle_rest(struct conn *, struct timeval *);
/*
 * conn_audit()'s flags: the line has the bytes moved and the time taken;
 * the line is a refusal of pinhole's own (a 5xx in place of the origin's
 * answer too), written one by one whatever the log budget.
 */
#define CONN_AUDIT_BYTES	0x01
#define CONN_AUDIT_REFUSAL	0x02
void	conn_audit(struct conn *, const char *, const char *, const char *,
	    int);
void	conn_audit_pending(struct conn *, const char *);
void	conn_count_tunnel(struct conn *, int);
void	conn_count_held(struct conn *, int);
int	conn_grantable(const struct conn *, const char *, char *, size_t);
const char *conn_fix(const struct conn *);
void	conn_fix_set(struct conn *, const char *, ...)
	    __attribute__((format(printf, 2, 3)));
const char *conn_note(const struct conn *);
void	conn_texts_free(struct conn *);
const char *conn_rule(const struct conn *);
void	conn_rule_set(struct conn *, const char *);
const char *conn_path(const struct conn *);
void	conn_note_set(struct conn *, const char *, ...)
	    __attribute__((format(printf, 2, 3)));
void	conn_server_free(struct conn *);
void	conn_splice_free(struct conn *);
void	conn_close(struct conn *, const char *);
void	conn_http_free(struct conn *);
int	conn_fwd_start(struct conn *);
void	conn_resp_free(struct conn *);
void	conn_free(struct conn *);
size_t	conn_outlen(struct bufferevent *);
void	conn_update_io(struct conn *);
size_t	conn_move(struct evbuffer *, struct evbuffer *, size_t, int64_t *);
int	conn_client_between(const struct conn *);
int	conn_tunnel_next(const struct conn *);
void	conn_send(struct bufferevent *, const void *, size_t);
void	conn_send_client(struct conn *, const void *, size_t);
void	conn_audit_barrier(struct conn *);
void	conn_relay(struct evbuffer *, struct bufferevent *, int64_t *);
void	conn_read_release(struct bufferevent *, int *);
void	conn_read_client(struct conn *);
void	conn_out_own(struct conn *);
void	conn_out_release(struct conn *);
int	conn_flush(struct conn *);
void	conn_out_drained(struct conn *);
void	conn_scrub_free(struct conn *);

/* reply.c: answers of our own, refusals, the wait for them to drain. */
void	conn_drain(struct conn *, int);
void	conn_reply(struct conn *, int, const char *, int, const char *, ...);
void	conn_refuse(struct conn *, int, const char *, const char *);
int	conn_audit_ready(struct conn *);
void	conn_transparent_refuse(struct conn *, int, const char *, const char *);
void	conn_socks_send(struct conn *, uint8_t);
void	conn_socks_refuse(struct conn *, int, const char *, uint8_t);

/* scrub-response.c: secrets' values taken out of responses from their hosts. */
int	conn_scrub_start(struct conn *);
int	conn_scrub_head(struct conn *, size_t *);
int	conn_scrub_check(struct conn *);
int	conn_scrub_body(struct conn *, int);
/* upstream-connect.c: through an upstream proxy: the way, CONNECT, its answer. */
struct upstream_verdict;
int	conn_upstream_route(struct conn *);
int	conn_upstream_forward(const struct conn *);
int	conn_upstream_addrs_take(struct conn *);
void	conn_upstream_connect(struct conn *);
int	conn_upstream_read(struct conn *);
void	conn_upstream_failed(struct conn *, const char *, const char *, ...)
	    __attribute__((format(printf, 3, 4)));
void	conn_upstream_refuse(struct conn *, const struct upstream_verdict *);

/* tunnel.c: bytes both ways, by bufferevents or splice(2). */
void	conn_tunnel_io(struct conn *);
void	conn_splice_move(struct conn *);
void	conn_tunnel(struct conn *);

/* forward.c: one request upstream and its response back. */
void	conn_send_request(struct conn *);
void	conn_forward_request(struct conn *);
void	conn_forward_response(struct conn *);
int	conn_server_gone(struct conn *);

/* dial.c: resolve, vet the addresses, dial them in turn. */
void	conn_resolved(struct conn *, int, const char *,
	    const struct resolver_result *);
void	conn_resolve(struct conn *);
void	conn_dial_next(struct conn *);
void	conn_dialed(struct conn *);
int	conn_retry(struct conn *);

/* decide.c: fake addresses, policy, grants, hold-and-ask. */
int	conn_unfake(struct conn *);
void	conn_asked(struct conn *, const struct escalate_request *, int);
int	conn_decide(struct conn *);
void	conn_go(struct conn *);

/* inspect.c: reading requests, in clear or decrypted; bound connections. */
void	conn_head_start(struct conn *);
void	conn_keep_path(struct conn *, const struct http_str *);
int	conn_bound_request(struct conn *);
void	conn_bound_connect(struct conn *);
void	conn_bound_captured(struct conn *);
int	conn_bound_tls(struct conn *);
void	conn_tls_failed(struct conn *, int);

/* secret-request.c: secrets put back in requests, or refused. */
int	conn_secrets(struct conn *);
void	conn_secrets_free(struct conn *);

/* endpoint.c: the agent endpoint (/pinhole/...). */
void	conn_agent_send(struct conn *, const struct agent_response *);
void	conn_agent_body(struct conn *);
void	conn_agent_start(struct conn *);

/* head.c: the request head and what it asks for. */
void	conn_read_head(struct conn *);

/* sniff.c: a captured connection's destination and first bytes. */
void	conn_transparent_start(struct conn *, int);
void	conn_transparent_go(struct conn *);
int	conn_sniff(struct conn *);

/* socks-handshake.c: a SOCKS5 client's greeting, credentials and request. */
void	conn_socks_start(struct conn *);
void	conn_socks_read(struct conn *);

#endif
