/*
 * Fuzz the agent endpoint's request handling.  The input is
 * METHOD\nTARGET\nCONTENT-TYPE\nACCEPT\nBODY, handled twice from one
 * sandbox against one queue (so the second filing coalesces), then from
 * another.  Checks:
 *  - the status is one the endpoint sends, and 2xx bodies are not empty;
 *  - no byte of a response body is a raw control character but '\n':
 *    nothing the agent sends reaches a terminal unescaped;
 *  - a long poll is asked only for a pending request, for at most
 *    ESCALATE_WAIT_MAX seconds;
 *  - the other sandbox's answer names no request it did not ask for.
 * Corpus: tests/fuzz/agent/.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/escalate/agent.h"
#include "proxy/escalate/escalate.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* Stop loudly when an invariant breaks. */
static void
check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz_agent: invariant broken: %s\n", what);
		abort();
	}
}

/* Take the next line of the input as a piece. */
static void
take(const char **p, const char *end, struct agent_str *s)
{
	const char	*nl = memchr(*p, '\n', end - *p);

	s->p = *p;
	s->len = (nl != NULL ? nl : end) - *p;
	*p = nl != NULL ? nl + 1 : end;
}

/* Check that a response names no request the sandbox did not ask for. */
static void
check_own(struct escalate *e, const struct agent_response *resp,
    const char *sandbox)
{
	const struct escalate_request	*r = NULL;

	if (resp->body.buf == NULL)
		return;
	while ((r = escalate_next(e, r)) != NULL)
		check(escalate_asked(r, sandbox) ||
		    strstr(resp->body.buf, r->id) == NULL,
		    "another sandbox's request shown");
}

/* Check one response. */
static void
check_response(struct escalate *e, const struct agent_response *resp)
{
	const struct escalate_request	*r;
	size_t				 i;

	check(resp->status == 200 || resp->status == 201 ||
	    resp->status == 400 || resp->status == 404 ||
	    resp->status == 405 || resp->status == 413 ||
	    resp->status == 429 || resp->status == 503, "status");
	check(!resp->body.failed, "body written");
	if (resp->status < 300)
		check(resp->body.len > 0, "a body");
	for (i = 0; i < resp->body.len; i++)
		check((unsigned char)resp->body.buf[i] >= 0x20 ||
		    resp->body.buf[i] == '\n', "raw control character");
	if (resp->wait > 0) {
		check(resp->wait <= ESCALATE_WAIT_MAX, "wait bound");
		r = escalate_find(e, resp->wait_id);
		check(r != NULL && r->state == ESCALATE_PENDING,
		    "wait for a pending request");
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct sandbox	*sb[2];
	struct agent_request	 req;
	struct agent_response	 resp;
	struct escalate		*e;
	const char		*p = (const char *)data, *end = p + size;
	int			 round;

	if (size > 2 * AGENT_BODY_MAX)
		return (0);
	if (sb[0] == NULL && ((sb[0] = sandbox_new("1", "one", 1,
	    NULL)) == NULL || (sb[1] = sandbox_new("2", "two", 2,
	    NULL)) == NULL))
		abort();
	memset(&req, 0, sizeof req);
	take(&p, end, &req.method);
	take(&p, end, &req.target);
	take(&p, end, &req.content_type);
	take(&p, end, &req.accept);
	req.body.p = p;
	req.body.len = end - p;
	if ((e = escalate_create(NULL, "f0000001", NULL)) == NULL)
		return (0);
	for (round = 0; round < 3; round++) {
		req.sandbox = sb[round / 2];
		agent_handle(e, &req, &resp);
		check_response(e, &resp);
		if (round == 2)
			check_own(e, &resp, sandbox_id(sb[1]));
		agent_response_free(&resp);
	}
	escalate_free(e);
	return (0);
}
