/*
 * Unit tests for request-level rules: the canonical path against a
 * table of escape attempts, read-only (git's fetch, never its push),
 * methods and path constraints, several rules for one host, deny
 * winning, secrets and the hosts that are inspected, upgrades (only a
 * WebSocket, only where a rule says websocket) and method overrides.
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "rules/rules.h"

static char	errbuf[1024];

/* Load text into a new policy; fail the test if it is refused. */
static struct rules *
policy(const char *text)
{
	struct rules	*r = rules_create();

	assert_non_null(r);
	if (rules_load_text(r, "policy", text, strlen(text), errbuf,
	    sizeof errbuf) != 0)
		fail_msg("refused: %s", errbuf);
	return (r);
}

/* Load text that must be refused; return the message. */
static const char *
refused(const char *text)
{
	struct rules	*r = rules_create();

	errbuf[0] = '\0';
	if (rules_load_text(r, "policy", text, strlen(text), errbuf,
	    sizeof errbuf) == 0)
		fail_msg("accepted: %s", text);
	rules_free(r);
	return (errbuf);
}

/* Decide a request to host:443 as rq has it; v filled. */
static int
decide(const struct rules *r, const char *host, struct rules_request *rq,
    const char *method, const char *target, struct rules_verdict *v)
{
	struct host		h;
	const char		*errstr;

	assert_int_equal(host_parse(host, strlen(host), &h, &errstr), 0);
	rq->method = method;
	rq->method_len = strlen(method);
	rq->target = target;
	rq->target_len = strlen(target);
	return (rules_match_request(r, &h, 443, rq, v));
}

/* Decide "METHOD TARGET" to host:443; v filled. */
static int
request(const struct rules *r, const char *host, const char *method,
    const char *target, struct rules_verdict *v)
{
	struct rules_request	rq;

	memset(&rq, 0, sizeof rq);
	return (decide(r, host, &rq, method, target, v));
}

/* Decide "METHOD TARGET" asking to upgrade to proto. */
static int
upgrade(const struct rules *r, const char *host, const char *method,
    const char *target, const char *proto, struct rules_verdict *v)
{
	struct rules_request	rq;

	memset(&rq, 0, sizeof rq);
	rq.upgrade = proto;
	rq.upgrade_len = strlen(proto);
	return (decide(r, host, &rq, method, target, v));
}

/* Decide "METHOD TARGET" with a method override (NULL: a bad one). */
static int
override(const struct rules *r, const char *host, const char *method,
    const char *target, const char *other, struct rules_verdict *v)
{
	struct rules_request	rq;

	memset(&rq, 0, sizeof rq);
	rq.override_name = "X-HTTP-Method-Override";
	if (other == NULL)
		rq.override_bad = 1;
	else {
		rq.override = other;
		rq.override_len = strlen(other);
	}
	return (decide(r, host, &rq, method, target, v));
}

/* Paths as sent, and their canonical form (NULL: refused). */
static const struct {
	const char	*in;
	const char	*out;
} paths[] = {
	{ "/", "/" },
	{ "/myorg/repo", "/myorg/repo" },
	{ "/myorg/repo/", "/myorg/repo/" },
	{ "/myorg/repo?x=/../y", "/myorg/repo" },
	{ "/myorg/../other/", "/other/" },
	{ "/myorg/./../x", "/x" },
	{ "/myorg/%2e%2e/other", "/other" },
	{ "/myorg/%2E%2e/", "/" },
	{ "/myorg/.%2e/other", "/other" },
	{ "/../../../etc/passwd", "/etc/passwd" },
	{ "//myorg//x", "/myorg/x" },
	{ "/myorg/..", "/" },
	{ "/a/b/..", "/a/" },
	{ "/a/%41", "/a/A" },
	{ "/caf%c3%a9", "/caf\xc3\xa9" },
	{ "/myorg/..%2fother", NULL },		/* encoded '/' */
	{ "/myorg%2f..%2fother", NULL },
	{ "/myorg%5c..%5cother", NULL },	/* encoded '\' */
	{ "/myorg\\..\\other", NULL },
	{ "/myorg/%252e%252e/other", NULL },	/* '%' after decoding */
	{ "/myorg/..;/other", NULL },		/* ;params after .. */
	{ "/myorg/.;x/other", NULL },
	{ "/%c0%ae%c0%ae/other", NULL },	/* overlong '.' */
	{ "/%e0%80%ae", NULL },
	{ "/%ed%a0%80", NULL },			/* a surrogate */
	{ "/%ff", NULL },
	{ "/a/%00", NULL },
	{ "/p/./..%3fq", NULL },		/* '?' after decoding */
	{ "/p/%23x", NULL },
	{ "/admin//../v1/x", NULL },		/* RFC 3986: /admin/v1/x */
	{ "/admin//x/../../v1", NULL },
	{ "/a/..//b", NULL },
	{ "/admin/%2f/../v1", NULL },
	{ "/a/%0a", NULL },
	{ "/a/\x01", NULL },
	{ "/a/%", NULL },
	{ "/a/%4", NULL },
	{ "/a/%zz", NULL },
	{ "myorg/x", NULL },
	{ "", NULL },
	{ "*", NULL },
};

static void
test_path_table(void **state)
{
	char		 out[RULES_PATH_LEN];
	const char	*errstr;
	size_t		 i;
	int		 n;

	(void)state;
	for (i = 0; i < sizeof paths / sizeof paths[0]; i++) {
		n = rules_path_canon(paths[i].in, strlen(paths[i].in), out,
		    sizeof out, &errstr);
		if (paths[i].out == NULL && n != -1)
			fail_msg("%s: accepted as %s", paths[i].in, out);
		if (paths[i].out != NULL && n == -1)
			fail_msg("%s: refused: %s", paths[i].in, errstr);
		if (paths[i].out != NULL && strcmp(out, paths[i].out) != 0)
			fail_msg("%s: %s, want %s", paths[i].in, out,
			    paths[i].out);
	}
	assert_int_equal(rules_path_canon("/abcdef", 7, out, 4, &errstr), -1);
}

/* No escape from a prefix: every refused or outside one is denied. */
static void
test_prefix_escape(void **state)
{
	struct rules		*r;
	struct rules_verdict	 v;
	size_t			 i;

	(void)state;
	r = policy("allow github.com path /myorg/**\n");
	assert_int_equal(request(r, "github.com", "GET", "/myorg", &v), 1);
	assert_int_equal(request(r, "github.com", "GET", "/myorg/", &v), 1);
	assert_int_equal(request(r, "github.com", "GET", "/myorg/a/b.git",
	    &v), 1);
	assert_int_equal(request(r, "github.com", "GET", "/myorgx", &v), 0);
	assert_string_equal(v.constraint, "path");
	/* An origin by RFC 3986 alone reads /other/myorg/x. */
	assert_int_equal(request(r, "github.com", "GET", "/other//../myorg/x",
	    &v), -1);
	for (i = 0; i < sizeof paths / sizeof paths[0]; i++) {
		if (strncmp(paths[i].in, "/myorg", 6) != 0 ||
		    (paths[i].out != NULL &&
		    strncmp(paths[i].out, "/myorg", 6) == 0))
			continue;
		if (request(r, "github.com", "GET", paths[i].in, &v) == 1)
			fail_msg("%s escaped /myorg/**", paths[i].in);
	}
	rules_free(r);
}

static void
test_read_only(void **state)
{
	struct rules		*r;
	struct rules_verdict	 v;

	(void)state;
	r = policy("allow github.com read-only\n");
	assert_int_equal(request(r, "github.com", "GET", "/o/r", &v), 1);
	assert_int_equal(request(r, "github.com", "HEAD", "/o/r", &v), 1);
	assert_int_equal(request(r, "github.com", "OPTIONS", "/", &v), 1);
	assert_int_equal(request(r, "github.com", "GET",
	    "/o/r.git/info/refs?service=git-upload-pack", &v), 1);
	assert_int_equal(request(r, "github.com", "POST",
	    "/o/r.git/git-upload-pack", &v), 1);
	assert_int_equal(request(r, "github.com", "GET",
	    "/o/r.git/info/refs?service=git-receive-pack", &v), 0);
	assert_string_equal(v.constraint, "read-only");
	assert_non_null(strstr(v.why, "git push"));
	assert_int_equal(request(r, "github.com", "GET",
	    "/o/r.git/info/refs?service=git-upload-pack&service=git-receive-"
	    "pack", &v), 0);
	assert_int_equal(request(r, "github.com", "GET",
	    "/o/r.git/info/refs?SERVICE=git-receive-pack", &v), 0);
	assert_int_equal(request(r, "github.com", "GET",
	    "/o/r.git/info/refs?servic%65=git-receive-pack", &v), 0);
	assert_int_equal(request(r, "github.com", "GET",
	    "/o/r.git/info/refs?%53ERVICE=git-receive-pack", &v), 0);
	assert_int_equal(request(r, "github.com", "GET",
	    "/o/r.git/info/refs?x=1&service=git-upload-pack", &v), 1);
	assert_int_equal(request(r, "github.com", "POST",
	    "/o/r.git/git-receive-pack", &v), 0);
	assert_int_equal(request(r, "github.com", "GET",
	    "/o/r.git/git-receive-pack", &v), 0);
	assert_int_equal(request(r, "github.com", "POST", "/o/r/issues", &v),
	    0);
	assert_non_null(strstr(v.why, "POST /o/r/issues is not a read"));
	assert_string_equal(v.file, "policy");
	assert_int_equal(request(r, "github.com", "PUT", "/x", &v), 0);
	assert_int_equal(request(r, "github.com", "get", "/x", &v), 0);
	rules_free(r);
}

/* Several rules for one host: any one lets a request through. */
static void
test_methods_paths(void **state)
{
	struct rules		*r;
	struct rules_verdict	 v;

	(void)state;
	r = policy("allow api.example.com methods GET path /v1/**\n"
	    "allow api.example.com methods POST,PUT path /v1/upload,/v2/*/x\n");
	assert_int_equal(request(r, "api.example.com", "GET", "/v1/a", &v), 1);
	assert_int_equal(v.line, 1);
	assert_int_equal(request(r, "api.example.com", "POST", "/v1/upload",
	    &v), 1);
	assert_int_equal(v.line, 2);
	assert_int_equal(request(r, "api.example.com", "PUT", "/v2/k/x", &v),
	    1);
	assert_int_equal(request(r, "api.example.com", "PUT", "/v2/k/l/x",
	    &v), 0);
	assert_int_equal(request(r, "api.example.com", "DELETE", "/v1/a", &v),
	    0);
	assert_string_equal(v.constraint, "methods");
	assert_non_null(strstr(v.why, "DELETE is not one of GET"));
	assert_int_equal(request(r, "api.example.com", "GET", "/v2/a", &v), 0);
	assert_string_equal(v.constraint, "path");
	assert_int_equal(request(r, "api.example.com", "GET", "/v1/%2f", &v),
	    -1);
	rules_free(r);
}

/* Who is inspected: constrained rules' hosts and secrets' only. */
static void
test_inspect(void **state)
{
	struct rules		*r;
	struct rules_verdict	 v;
	struct host		 h;
	const char		*names[8], *errstr;

	(void)state;
	r = policy("allow a.example read-only\nallow b.example\n"
	    "allow c.example read-only\nallow c.example\n"
	    "allow d.example\nsecret TOKEN for d.example,*.e.example\n"
	    "deny x.a.example\nallow *.a.example methods GET\n");
	host_parse("a.example", 9, &h, &errstr);
	assert_int_equal(rules_match(r, &h, 443, &v), 1);
	assert_int_equal(v.inspect, 1);
	host_parse("b.example", 9, &h, &errstr);
	assert_int_equal(rules_match(r, &h, 443, &v), 1);
	assert_int_equal(v.inspect, 0);
	host_parse("c.example", 9, &h, &errstr);	/* one rule is open */
	assert_int_equal(rules_match(r, &h, 443, &v), 1);
	assert_int_equal(v.inspect, 0);
	host_parse("d.example", 9, &h, &errstr);
	assert_int_equal(rules_match(r, &h, 443, &v), 1);
	assert_int_equal(v.inspect, 1);
	assert_int_equal(request(r, "x.a.example", "GET", "/", &v), 0);
	assert_int_equal(v.by_deny, 1);
	assert_int_equal(rules_inspected(r, names, 8), 5);
	assert_string_equal(names[0], "a.example");
	assert_string_equal(names[2], "*.a.example");
	assert_string_equal(names[4], "*.e.example");
	rules_free(r);
}

static void
test_secrets(void **state)
{
	struct rules			*r;
	const struct rules_secret	*s[4];
	struct host			 h;
	const char			*errstr;

	(void)state;
	r = policy("secret GITHUB_TOKEN for api.github.com,github.com\n"
	    "secret NPM for registry.npmjs.org from /etc/pinhole/npm\n"
	    "secret K for 10.0.0.0/8 from rel/k\n");
	assert_int_equal(rules_secrets(r, s, 4), 3);
	assert_string_equal(s[0]->name, "GITHUB_TOKEN");
	assert_null(s[0]->file);
	assert_string_equal(s[1]->file, "/etc/pinhole/npm");
	assert_non_null(strstr(s[2]->file, "/rel/k"));
	host_parse("github.com", 10, &h, &errstr);
	assert_true(rules_secret_for(s[0], &h));
	assert_false(rules_secret_for(s[1], &h));
	host_parse("gist.github.com", 15, &h, &errstr);
	assert_false(rules_secret_for(s[0], &h));
	host_parse("10.1.2.3", 8, &h, &errstr);
	assert_true(rules_secret_for(s[2], &h));
	rules_free(r);
	assert_non_null(strstr(refused("secret A for x.example\n"
	    "secret A for y.example\n"), "policy:2: secret A is given twice"));
	assert_non_null(strstr(refused("secret 1A for x.example\n"),
	    "bad name"));
	assert_non_null(strstr(refused("secret A x.example\n"), "'for"));
	assert_non_null(strstr(refused("secret A for x.example:443\n"),
	    "names a port"));
	assert_non_null(strstr(refused("secret A for *\n"), "'*' alone"));
	assert_non_null(strstr(refused("secret A for x.example from\n"),
	    "missing file"));
}

/*
 * An upgrade on a host whose rules check requests: refused unless a rule
 * says websocket and lets the request through as a GET; anything but a
 * WebSocket never.  A host inspected only for a secret lets a WebSocket
 * through, nothing else.
 */
static void
test_websocket(void **state)
{
	struct rules		*r;
	struct rules_verdict	 v;

	(void)state;
	r = policy("allow chat.example read-only path /api/**\n"
	    "allow chat.example read-only websocket path /live/**\n"
	    "allow ws.example methods GET,POST websocket\n"
	    "allow ro.example read-only\n"
	    "allow open.example\nsecret T for open.example\n");
	assert_int_equal(upgrade(r, "chat.example", "GET", "/live/feed",
	    "websocket", &v), 1);
	assert_int_equal(v.line, 2);
	assert_int_equal(upgrade(r, "chat.example", "GET", "/live/feed?x=1",
	    "WebSocket", &v), 1);
	assert_int_equal(request(r, "chat.example", "GET", "/live/feed", &v),
	    1);
	assert_int_equal(upgrade(r, "chat.example", "GET", "/api/x",
	    "websocket", &v), 0);
	assert_int_equal(v.line, 1);
	assert_string_equal(v.constraint, "upgrade");
	assert_non_null(strstr(v.why, "needs a rule that says websocket"));
	assert_int_equal(upgrade(r, "chat.example", "GET", "/other",
	    "websocket", &v), 0);
	assert_string_equal(v.constraint, "path");
	assert_int_equal(upgrade(r, "ro.example", "GET", "/", "websocket",
	    &v), 0);
	assert_string_equal(v.constraint, "upgrade");
	assert_int_equal(request(r, "ro.example", "GET", "/", &v), 1);
	assert_int_equal(upgrade(r, "ws.example", "GET", "/", "websocket",
	    &v), 1);
	assert_int_equal(upgrade(r, "ws.example", "POST", "/", "websocket",
	    &v), 0);
	assert_non_null(strstr(v.why, "opens with GET, not POST"));
	assert_int_equal(upgrade(r, "ws.example", "GET", "/", "h2c", &v), 0);
	assert_string_equal(v.constraint, "upgrade");
	assert_non_null(strstr(v.why, "Upgrade: h2c"));
	assert_int_equal(upgrade(r, "ws.example", "GET", "/",
	    "websocket, h2c", &v), 0);
	assert_int_equal(upgrade(r, "ws.example", "GET", "/", "", &v), 0);
	assert_int_equal(upgrade(r, "open.example", "GET", "/", "websocket",
	    &v), 1);
	assert_int_equal(upgrade(r, "open.example", "GET", "/", "h2c", &v), 0);
	assert_string_equal(v.constraint, "upgrade");
	assert_int_equal(request(r, "open.example", "DELETE", "/", &v), 1);
	rules_free(r);
	assert_non_null(strstr(refused("allow a.example websocket\n"),
	    "policy:1: websocket: goes with read-only, methods or path"));
	assert_non_null(strstr(refused("allow a.example methods POST "
	    "websocket\n"), "methods POST has no GET"));
	assert_non_null(strstr(refused("allow a.example read-only websocket "
	    "websocket\n"), "websocket given twice"));
	assert_non_null(strstr(refused("deny a.example websocket\n"),
	    "deny: unexpected 'websocket'"));
}

/*
 * A method override names the method a framework acts on: read-only
 * and methods check it as they check the method (in any case), and
 * refuse one given twice or naming no one method; a rule without
 * method checks lets it be.
 */
static void
test_override(void **state)
{
	struct rules		*r;
	struct rules_verdict	 v;

	(void)state;
	r = policy("allow ro.example read-only\n"
	    "allow api.example methods GET,DELETE\n"
	    "allow p.example path /v1/**\n");
	assert_int_equal(override(r, "ro.example", "GET", "/x", "DELETE", &v),
	    0);
	assert_string_equal(v.constraint, "read-only");
	assert_non_null(strstr(v.why,
	    "GET /x with X-HTTP-Method-Override: DELETE is not a read"));
	assert_int_equal(override(r, "ro.example", "GET", "/x", "post", &v),
	    0);
	assert_int_equal(override(r, "ro.example", "GET", "/x", "head", &v),
	    1);
	assert_int_equal(override(r, "ro.example", "HEAD", "/x", "GET", &v),
	    1);
	assert_int_equal(override(r, "ro.example", "POST", "/x", "GET", &v),
	    0);
	assert_int_equal(override(r, "ro.example", "GET", "/x", NULL, &v), 0);
	assert_string_equal(v.constraint, "read-only");
	assert_non_null(strstr(v.why, "X-HTTP-Method-Override is given "
	    "twice"));
	assert_int_equal(override(r, "api.example", "GET", "/", "delete", &v),
	    1);
	assert_int_equal(override(r, "api.example", "GET", "/", "PUT", &v),
	    0);
	assert_string_equal(v.constraint, "methods");
	assert_non_null(strstr(v.why,
	    "X-HTTP-Method-Override: PUT is not one of GET,DELETE"));
	assert_int_equal(override(r, "api.example", "GET", "/", NULL, &v), 0);
	assert_string_equal(v.constraint, "methods");
	assert_int_equal(override(r, "p.example", "GET", "/v1/a", "DELETE",
	    &v), 1);
	assert_int_equal(override(r, "p.example", "GET", "/v1/a", NULL, &v),
	    1);
	rules_free(r);
}

/*
 * A GET, HEAD, OPTIONS or TRACE with a body is refused by any rule with
 * constraints: a server that reads no body would read it as the next
 * request, which no rule looked at.
 */
static void
test_bodiless(void **state)
{
	struct rules		*r;
	struct rules_verdict	 v;
	struct rules_request	 rq;
	const char		*m[] = { "GET", "HEAD", "OPTIONS", "trace" };
	size_t			 i;

	(void)state;
	r = policy("allow ro.example read-only\n"
	    "allow api.example methods GET,POST\n"
	    "allow p.example path /v1/**\n"
	    "allow open.example\n");
	for (i = 0; i < 4; i++) {
		memset(&rq, 0, sizeof rq);
		rq.body = 1;
		assert_int_equal(decide(r, "p.example", &rq, m[i], "/v1/a", &v),
		    0);
		assert_string_equal(v.constraint, "body");
		assert_non_null(strstr(v.why, "carries a body, which a server"));
	}
	memset(&rq, 0, sizeof rq);
	rq.body = 1;
	assert_int_equal(decide(r, "ro.example", &rq, "GET", "/x", &v), 0);
	assert_int_equal(decide(r, "api.example", &rq, "GET", "/x", &v), 0);
	assert_int_equal(decide(r, "api.example", &rq, "POST", "/x", &v), 1);
	assert_int_equal(decide(r, "ro.example", &rq, "POST",
	    "/o/r.git/git-upload-pack", &v), 1);
	rq.body = 0;
	assert_int_equal(decide(r, "ro.example", &rq, "GET", "/x", &v), 1);
	rules_free(r);
}

static void
test_secret_headers(void **state)
{
	struct rules			*r;
	const struct rules_secret	*s[4];
	const char *const		*h;

	(void)state;
	r = policy("secret A for x.example\n"
	    "secret B for x.example header X-Api-Key from /etc/b\n"
	    "secret C for x.example from c header X-One,x-two "
	    "header Authorization\n");
	assert_int_equal(rules_secrets(r, s, 4), 3);
	/* None named: Authorization and Proxy-Authorization. */
	assert_int_equal(rules_secret_headers(s[0], &h), 2);
	assert_string_equal(h[0], "Authorization");
	assert_string_equal(h[1], "Proxy-Authorization");
	/* Named: those alone, as written, in order; from before or after. */
	assert_int_equal(rules_secret_headers(s[1], &h), 1);
	assert_string_equal(h[0], "X-Api-Key");
	assert_string_equal(s[1]->file, "/etc/b");
	assert_int_equal(rules_secret_headers(s[2], &h), 3);
	assert_string_equal(h[0], "X-One");
	assert_string_equal(h[1], "x-two");
	assert_string_equal(h[2], "Authorization");
	assert_non_null(strstr(s[2]->file, "/c"));
	rules_free(r);
	assert_non_null(strstr(refused("secret A for x.example header\n"),
	    "missing header"));
	assert_non_null(strstr(refused("secret A for x.example header a,,b\n"),
	    "'' is not a header"));
	assert_non_null(strstr(refused("secret A for x.example header "
	    "X:Y\n"), "'X:Y' is not a header"));
	assert_non_null(strstr(refused("secret A for x.example header Host\n"),
	    "'Host' is not a header a secret can go in"));
	assert_non_null(strstr(refused("secret A for x.example header "
	    "content-length\n"), "is not a header"));
	assert_non_null(strstr(refused("secret A for x.example header X-A "
	    "header x-a\n"), "header 'x-a' is given twice"));
	assert_non_null(strstr(refused("secret A for x.example from a from b"
	    "\n"), "unexpected 'from'"));
	assert_non_null(strstr(refused("secret A for x.example headers X\n"),
	    "unexpected 'headers'"));
	assert_non_null(strstr(refused("secret A for x.example header "
	    "H1,H2,H3,H4,H5,H6,H7,H8,H9,H10,H11,H12,H13,H14,H15,H16,H17\n"),
	    "more than 16 headers"));
}

static void
test_refusals(void **state)
{
	(void)state;
	assert_non_null(strstr(refused("allow a.example read-only read-only\n"),
	    "policy:1: read-only given twice"));
	assert_non_null(strstr(refused("allow a.example methods\n"),
	    "methods: missing list"));
	assert_non_null(strstr(refused("allow a.example methods GET,,HEAD\n"),
	    "an empty item"));
	assert_non_null(strstr(refused("allow a.example path v1\n"),
	    "starts with '/'"));
	assert_non_null(strstr(refused("allow a.example path /a/../b\n"),
	    "'.' or '..'"));
	assert_non_null(strstr(refused("allow a.example path /a//b\n"),
	    "'//'"));
	assert_non_null(strstr(refused("allow a.example path /a%2f\n"),
	    "no escapes"));
	assert_non_null(strstr(refused("allow a.example path /**/x\n"),
	    "'**' goes only at the end"));
	assert_non_null(strstr(refused("deny a.example read-only\n"),
	    "deny: unexpected 'read-only'"));
	/* The order of constraints and until is free. */
	rules_free(policy("allow a.example until 2099-01-01T00:00:00Z "
	    "read-only path /x/**\n"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_path_table),
		cmocka_unit_test(test_prefix_escape),
		cmocka_unit_test(test_read_only),
		cmocka_unit_test(test_methods_paths),
		cmocka_unit_test(test_inspect),
		cmocka_unit_test(test_secrets),
		cmocka_unit_test(test_websocket),
		cmocka_unit_test(test_override),
		cmocka_unit_test(test_bodiless),
		cmocka_unit_test(test_secret_headers),
		cmocka_unit_test(test_refusals),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
