/*
 * pinhole request: from inside the sandbox, ask the person for a host,
 * through the gateway's agent endpoint (plain HTTP to $PINHOLE_AGENT).
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/time.h>

#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/ctl.h"
#include "cli/inside.h"
#include "cli/pinhole.h"
#include "lib/json.h"
#include "proxy/escalate/escalate.h"
#include "rules/rules.h"

#define REQUEST_EXIT_DENIED	1
#define REQUEST_EXIT_TIMEOUT	3
#define REQUEST_EXIT_ERROR	4
#define REQUEST_WAIT_DEFAULT	600
#define REQUEST_RESPONSE_MAX	65536

enum {
	OPT_STATUS = 256, OPT_ANY_PORT
};

/* What the command line asked for. */
struct request_args {
	const char	*target;
	const char	*reason;
	const char	*status;
	long		 wait;		/* s, -1: do not wait */
	int		 any_port;	/* every port of HOST */
};

/* A response from the endpoint. */
struct request_reply {
	int		status;
	struct json_obj	obj;
};

/* Find the endpoint: $PINHOLE_AGENT, else the proxy variables. */
static int
request_agent_find(struct inside_agent *a)
{
	static const char	*vars[] = { "PINHOLE_AGENT", "http_proxy",
	    "HTTP_PROXY" };
	const char		*v = NULL;
	size_t			 i;

	for (i = 0; i < 3 && (v == NULL || v[0] == '\0'); i++)
		v = getenv(vars[i]);
	return (inside_agent_parse(v, a));
}

/* Connect to the endpoint with a receive timeout. */
static int
request_connect(const struct inside_agent *a, long timeout)
{
	struct addrinfo	 hints, *res, *ai;
	struct timeval	 tv = { timeout, 0 };
	int		 fd = -1;

	memset(&hints, 0, sizeof hints);
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV;
	if (getaddrinfo(a->host, a->port, &hints, &res) != 0)
		return (-1);
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, 0);
		if (fd == -1)
			continue;
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
			break;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	return (fd);
}

/* Send everything. */
static int
request_send(int fd, const char *p, size_t len)
{
	ssize_t	n;

	while (len > 0) {
		if ((n = write(fd, p, len)) == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			return (-1);
		p += n;
		len -= n;
	}
	return (0);
}

/* Read the whole response (the endpoint closes after it). */
static ssize_t
request_recv(int fd, char *buf, size_t max)
{
	size_t	len = 0;
	ssize_t	n;

	while (len < max - 1) {
		if ((n = read(fd, buf + len, max - 1 - len)) == -1 &&
		    errno == EINTR)
			continue;
		if (n < 0)
			return (-1);
		if (n == 0)
			break;
		len += n;
	}
	buf[len] = '\0';
	return (len);
}

/* Parse the status line and the JSON body. */
static int
request_parse(char *resp, size_t len, struct request_reply *r)
{
	char		*body;
	const char	*err;
	size_t		 blen;

	if (sscanf(resp, "HTTP/1.%*d %d", &r->status) != 1 ||
	    (body = strstr(resp, "\r\n\r\n")) == NULL)
		return (-1);
	body += 4;
	blen = len - (body - resp);
	while (blen > 0 && (body[blen - 1] == '\n' || body[blen - 1] == '\r'))
		blen--;
	return (json_parse(body, blen, &r->obj, &err));
}

/*
 * One HTTP exchange with the endpoint: the whole response, NUL-ended, in
 * buf of size bytes.  Returns its length, or -1.
 */
static ssize_t
request_exchange(const struct inside_agent *a, const char *method,
    const char *path, const char *body, long timeout, char *buf, size_t size)
{
	ssize_t	 len = -1;
	int	 fd, n;

	if ((fd = request_connect(a, timeout)) == -1)
		return (-1);
	n = snprintf(buf, size, "%s %s HTTP/1.1\r\n"
	    "Host: %s:%s\r\nAccept: application/json\r\n"
	    "Connection: close\r\n"
	    "Content-Type: application/x-www-form-urlencoded\r\n"
	    "Content-Length: %zu\r\n\r\n%s", method, path, a->host, a->port,
	    strlen(body), body);
	if (n >= 0 && (size_t)n < size && request_send(fd, buf, n) == 0)
		len = request_recv(fd, buf, size);
	close(fd);
	return (len);
}

/* One HTTP exchange with the endpoint, its JSON answer read. */
static int
request_http(const struct inside_agent *a, const char *method,
    const char *path, const char *body, long timeout, struct request_reply *r)
{
	char	*buf;
	ssize_t	 len;
	int	 rv = -1;

	if ((buf = malloc(REQUEST_RESPONSE_MAX)) == NULL)
		return (-1);
	len = request_exchange(a, method, path, body, timeout, buf,
	    REQUEST_RESPONSE_MAX);
	if (len > 0)
		rv = request_parse(buf, len, r);
	free(buf);
	return (rv);
}

/*
 * No host: list the sandbox's recent refusals, why, and how to ask, as
 * the endpoint says them (escaped for the terminal).
 */
static int
request_refused(const struct inside_agent *a)
{
	char	*buf, *body, *line, *save = NULL;
	ssize_t	 len;
	int	 status = 0, rv = REQUEST_EXIT_ERROR;

	if ((buf = malloc(REQUEST_RESPONSE_MAX)) == NULL)
		return (REQUEST_EXIT_ERROR);
	len = request_exchange(a, "GET", "/pinhole/refused?format=text", "",
	    30, buf, REQUEST_RESPONSE_MAX);
	if (len <= 0 || sscanf(buf, "HTTP/1.%*d %d", &status) != 1 ||
	    (body = strstr(buf, "\r\n\r\n")) == NULL) {
		fprintf(stderr, "pinhole request: no answer from the agent "
		    "endpoint at %s:%s\n", a->host, a->port);
		goto out;
	}
	if (status != 200)
		fprintf(stderr, "pinhole request: %d: ", status);
	for (line = strtok_r(body + 4, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		ctl_print_safe(status == 200 ? stdout : stderr, line);
		fputc('\n', status == 200 ? stdout : stderr);
	}
	if (status == 200)
		rv = 0;
out:
	free(buf);
	return (rv);
}

/* Write the target an answer names: HOST:PORT, or HOST (any port). */
static void
request_print_target(FILE *f, const struct request_reply *r)
{
	const char	*host = json_get_str(&r->obj, "host");
	int64_t		 port = 0;

	json_get_int(&r->obj, "port", &port);
	ctl_print_request_target(f, host != NULL ? host : "?", port);
}

/*
 * Say what filing came to, on stderr, for the agent reading it: asked
 * (or joined), the refusal it answers, what approving it lifts, and how
 * to wait for the answer.
 */
static void
request_filed_note(const struct request_args *args,
    const struct request_reply *r, const char *id)
{
	const char		*why = json_get_str(&r->obj, "refused");
	const char		*when = json_get_str(&r->obj, "refused_at");
	const char		*lifts = json_get_str(&r->obj, "lifts");
	const struct json_member *co = json_get(&r->obj, "coalesced");

	fprintf(stderr, "pinhole request: %s the person for ",
	    co != NULL && co->type == JSON_BOOL && co->num ?
	    "joined the open request: asked" : "asked");
	request_print_target(stderr, r);
	fputc('\n', stderr);
	if (why != NULL) {
		fprintf(stderr, "pinhole request: it answers the refusal at ");
		ctl_print_safe(stderr, when != NULL ? when : "?");
		fprintf(stderr, ": ");
		ctl_print_safe(stderr, why);
		fputc('\n', stderr);
	}
	if (lifts != NULL) {
		fprintf(stderr, "pinhole request: approving it lifts ");
		ctl_print_safe(stderr, lifts);
		fputc('\n', stderr);
	}
	if (args->wait < 0)
		fprintf(stderr, "pinhole request: wait for the answer with: "
		    "pinhole request --status %s --wait\n", id);
}

/* Append a percent-encoded form value. */
static void
request_encode(struct json_writer *w, const char *s)
{
	char	esc[4];

	for (; *s != '\0'; s++) {
		if ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		    (*s >= '0' && *s <= '9') || strchr("-._~:[]", *s) != NULL)
			json_put_raw(w, s, 1);
		else {
			snprintf(esc, sizeof esc, "%%%02X", (unsigned char)*s);
			json_put_raw(w, esc, 3);
		}
	}
}

/* Print a request's outcome; return the exit status it means. */
static int
request_outcome(const struct request_reply *r)
{
	const char	*state = json_get_str(&r->obj, "state");
	const char	*answer = json_get_str(&r->obj, "answer");
	const char	*scope = json_get_str(&r->obj, "scope");

	if (state == NULL)
		return (REQUEST_EXIT_ERROR);
	printf("%s", state);
	if (strcmp(state, "approved") == 0 && scope != NULL)
		printf(" (%s)", scope);
	if (answer != NULL) {
		printf(": ");
		ctl_print_safe(stdout, answer);
	}
	printf("\n");
	if (strcmp(state, "approved") == 0 || strcmp(state, "allowed") == 0)
		return (0);
	if (strcmp(state, "denied") == 0)
		return (REQUEST_EXIT_DENIED);
	return (REQUEST_EXIT_TIMEOUT);
}

/* Report an endpoint's error reply, or that it could not be reached. */
static int
request_failed(const struct inside_agent *a, int got,
    const struct request_reply *r)
{
	const char	*err = got == 0 ? json_get_str(&r->obj, "error") : NULL;

	if (got == -1)
		fprintf(stderr, "pinhole request: no answer from the agent "
		    "endpoint at %s:%s\n", a->host, a->port);
	else {
		fprintf(stderr, "pinhole request: %d: ", r->status);
		ctl_print_safe(stderr, err != NULL ? err : "unexpected answer");
		fputc('\n', stderr);
	}
	return (REQUEST_EXIT_ERROR);
}

/*
 * Wait for the decision of id, for at most secs in all.  id may point
 * into r, which each answer overwrites: it is copied first.
 */
static int
request_wait(const struct inside_agent *a, const char *rid, long secs,
    struct request_reply *r)
{
	char		path[128], id[ESCALATE_ID_LEN];
	const char	*state, *now;
	time_t		end = time(NULL) + secs;
	long		left;
	int		got;

	snprintf(id, sizeof id, "%s", rid);
	do {
		left = end - time(NULL);
		if (left > ESCALATE_WAIT_MAX)
			left = ESCALATE_WAIT_MAX;
		snprintf(path, sizeof path, "/pinhole/request/%s?format=json"
		    "&wait=%ld", id, left > 0 ? left : 0);
		got = request_http(a, "GET", path, "", left + 15, r);
		if (got == -1 || r->status != 200)
			return (request_failed(a, got, r));
		state = json_get_str(&r->obj, "state");
		if (state == NULL || strcmp(state, "pending") != 0)
			return (request_outcome(r));
		/* A once approval for another sandbox: ours goes on. */
		if ((now = json_get_str(&r->obj, "request")) != NULL &&
		    strlen(now) < sizeof id)
			memcpy(id, now, strlen(now) + 1);
	} while (time(NULL) < end);
	printf("timed out: no answer yet (pinhole request --status %s)\n", id);
	return (REQUEST_EXIT_TIMEOUT);
}

/* File a request and print its id. */
static int
request_file(const struct inside_agent *a, const struct request_args *args,
    struct request_reply *r)
{
	struct json_writer	 w;
	const char		*id, *state;
	int			 got;

	json_writer_init(&w, 4096);
	json_put_raw(&w, "host=", 5);
	request_encode(&w, args->target);
	if (args->any_port)
		json_put_raw(&w, "&port=*", 7);
	if (args->reason != NULL) {
		json_put_raw(&w, "&reason=", 8);
		request_encode(&w, args->reason);
	}
	if (w.failed) {
		json_writer_free(&w);
		fprintf(stderr, "pinhole request: request too long\n");
		return (EXIT_USAGE);
	}
	got = request_http(a, "POST", "/pinhole/request?format=json", w.buf,
	    30, r);
	json_writer_free(&w);
	if (got == -1 || (r->status != 200 && r->status != 201))
		return (request_failed(a, got, r));
	state = json_get_str(&r->obj, "state");
	if ((id = json_get_str(&r->obj, "request")) == NULL) {
		request_print_target(stdout, r);
		printf(" is allowed already, every request to it: nothing to "
		    "ask for\n");
		return (0);
	}
	printf("%s\n", id);
	if (state != NULL && strcmp(state, "pending") == 0)
		request_filed_note(args, r, id);
	if (state != NULL && strcmp(state, "pending") != 0)
		return (request_outcome(r));
	if (args->wait < 0)
		return (0);
	fflush(stdout);
	return (request_wait(a, id, args->wait, r));
}

/* Print a request's state, or wait for it. */
static int
request_status(const struct inside_agent *a, const struct request_args *args,
    struct request_reply *r)
{
	char	path[128];
	int	got;

	if (strlen(args->status) >= ESCALATE_ID_LEN ||
	    strspn(args->status, "0123456789abcdefr") != strlen(args->status)) {
		fprintf(stderr, "pinhole request: bad request id\n");
		return (EXIT_USAGE);
	}
	if (args->wait >= 0)
		return (request_wait(a, args->status, args->wait, r));
	snprintf(path, sizeof path, "/pinhole/request/%s?format=json",
	    args->status);
	got = request_http(a, "GET", path, "", 30, r);
	if (got == -1 || r->status != 200)
		return (request_failed(a, got, r));
	return (request_outcome(r));
}

/* Check HOST[:PORT]; "HOST:*" is HOST --any-port. */
static int
request_target_parse(const struct cmd_entry *self, struct request_args *a)
{
	static char	 host[HOST_TEXT_LEN + 16];
	struct host	 h;
	const char	*errstr;
	size_t		 n = strlen(a->target);
	uint16_t	 port;

	if (n > 2 && n < sizeof host && strcmp(a->target + n - 2, ":*") == 0) {
		memcpy(host, a->target, n - 2);
		host[n - 2] = '\0';
		a->target = host;
		a->any_port = 1;
	}
	if (host_port_parse(a->target, &h, &port, 443, &errstr) == -1) {
		cmd_usage_error(self, "bad host '%s': %s", a->target, errstr);
		return (-1);
	}
	if (a->any_port && (strchr(a->target, ']') != NULL ||
	    (h.kind == HOST_NAME && strchr(a->target, ':') != NULL))) {
		cmd_usage_error(self, "--any-port asks for every port of HOST: "
		    "name no port");
		return (-1);
	}
	return (0);
}

/* Parse the options. */
static int
request_parse_args(const struct cmd_entry *self, int argc, char **argv,
    struct request_args *a)
{
	int	ch;

	while ((ch = cmd_getopt(self, argc, argv)) != -1) {
		if (ch == '?')
			return (-1);
		if (ch == 'R')
			a->reason = optarg;
		else if (ch == OPT_STATUS)
			a->status = optarg;
		else if (ch == OPT_ANY_PORT)
			a->any_port = 1;
		else if (ch == 'w' && optarg == NULL)
			a->wait = REQUEST_WAIT_DEFAULT;
		else if (ch == 'w' &&
		    (a->wait = escalate_duration_parse(optarg)) < 0) {
			cmd_usage_error(self, "bad --wait '%s'", optarg);
			return (-1);
		}
	}
	if (a->status == NULL && optind == argc - 1)
		a->target = argv[optind];
	else if (optind != argc) {
		cmd_usage_error(self, a->status != NULL ? "--status takes no "
		    "HOST" : "one HOST[:PORT] expected");
		return (-1);
	} else if (a->status == NULL && (a->reason != NULL || a->wait >= 0 ||
	    a->any_port)) {
		cmd_usage_error(self, "no HOST[:PORT] to ask for");
		return (-1);
	}
	return (a->target != NULL ? request_target_parse(self, a) : 0);
}

/* Ask for a host, or look at a request. */
static int
cmd_request_exec(const struct cmd_entry *self, int argc, char **argv)
{
	struct request_args	 args = { NULL, NULL, NULL, -1, 0 };
	struct inside_agent	 a;
	struct request_reply	*r;
	int			 rv;

	if (request_parse_args(self, argc, argv, &args) == -1)
		return (EXIT_USAGE);
	if (request_agent_find(&a) == -1) {
		fprintf(stderr, "pinhole request: no agent endpoint to ask: "
		    "PINHOLE_AGENT is not set, so this is not a command run by "
		    "pinhole run, which sets it.\n"
		    "pinhole request: run the command that needs the host with "
		    "`pinhole run -- COMMAND`, and ask from inside it; out "
		    "here, allow a host yourself with `pinhole allow "
		    "HOST[:PORT]`, or answer requests with `pinhole pending`\n");
		return (REQUEST_EXIT_ERROR);
	}
	if ((r = calloc(1, sizeof *r)) == NULL)
		return (REQUEST_EXIT_ERROR);
	if (args.status != NULL)
		rv = request_status(&a, &args, r);
	else if (args.target == NULL)
		rv = request_refused(&a);
	else
		rv = request_file(&a, &args, r);
	free(r);
	return (rv);
}

/* The options of request. */
static const struct cmd_opt request_opts[] = {
	{ "reason", 'R', CMD_ARG_REQUIRED, "TEXT",
	    .help = "why, shown to the person (200 bytes kept)" },
	{ "wait", 'w', CMD_ARG_OPTIONAL, "SECONDS",
	    .help = "wait for the answer (default 600 s)" },
	{ "any-port", 0, CMD_ARG_NONE, NULL, .key = OPT_ANY_PORT,
	    .help = "every port of HOST (as HOST:*), for a name the DNS "
	    "refused before any port was tried" },
	{ "status", 0, CMD_ARG_REQUIRED, "ID", .key = OPT_STATUS,
	    .help = "the state of a request filed before" },
	{ .name = NULL }
};

const struct cmd_entry cmd_request_entry = {
	.name = "request",
	.usage = "[HOST[:PORT] [--any-port] [--reason TEXT] "
	    "[--wait[=SECONDS]]] | --status ID [--wait[=SECONDS]]",
	.summary = "From inside the sandbox, ask for access to a host",
	.opts = request_opts,
	.help =
	    "Files a request with the gateway's agent endpoint and prints its\n"
	    "id; PORT defaults to 443.  A name the DNS refused was refused\n"
	    "before any port was tried: ask for it with --any-port (or\n"
	    "HOST:*): the person sees it as every port of HOST, and approved\n"
	    "once it opens the next connection, whatever its port.  On\n"
	    "stderr it says what was asked, the refusal it answers, what\n"
	    "approving it lifts (the request checks of a rule that allows the\n"
	    "host only so), and how to wait.  With no HOST, lists what this\n"
	    "sandbox was refused lately: when, why, and the command that asks\n"
	    "for it or what the policy would have to change.  The endpoint is\n"
	    "$PINHOLE_AGENT (http://ADDRESS:PORT, set by pinhole run), else\n"
	    "$http_proxy.  The same with curl:\n"
	    "  curl -d host=pypi.org -d reason=... $PINHOLE_AGENT/pinhole/request\n"
	    "  curl $PINHOLE_AGENT/pinhole/request/ID?wait=60\n"
	    "  curl $PINHOLE_AGENT/pinhole/refused    (or /allowed, /blocked)\n"
	    "\n"
	    "Exit status: 0 filed (or, waiting, approved), 1 denied (the\n"
	    "person's reason is printed), 2 bad usage, 3 no answer in time or\n"
	    "expired, 4 the endpoint refused or could not be reached.\n",
	.exec = cmd_request_exec,
};
