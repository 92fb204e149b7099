/*
 * OTLP JSON: audit lines as log records, batches as requests, and the
 * reader of the collector's answer.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "lib/json.h"
#include "proxy/audit/otlp.h"

#define RESOURCE "{\"resourceLogs\":[{\"resource\":{\"attributes\":[" \
	"{\"key\":\"service.name\",\"value\":{\"stringValue\":\"pinhole\"}}," \
	"{\"key\":\"service.version\",\"value\":{\"stringValue\":\"1.2\"}}," \
	"{\"key\":\"host.name\",\"value\":{\"stringValue\":\"h\"}}]}," \
	"\"scopeLogs\":[{\"scope\":{\"name\":\"pinhole\",\"version\":\"1.2\"}," \
	"\"logRecords\":["
#define END "]}]}]}"

/* Encode lines as one batch; compare with what is expected. */
static void
batch(const char *const *lines, size_t n, const char *want)
{
	struct otlp_resource	 res = { "1.2", "h" };
	struct json_writer	 w;
	char			 store[1024];
	size_t			 i;

	json_writer_init(&w, 0);
	otlp_batch_begin(&w, &res);
	for (i = 0; i < n; i++)
		otlp_record(&w, lines[i], strlen(lines[i]), store,
		    sizeof store);
	otlp_batch_end(&w);
	assert_false(w.failed);
	assert_string_equal(w.buf, want);
	json_writer_free(&w);
}

/* An empty batch is a valid request with no records. */
static void
test_empty(void **state)
{
	batch(NULL, 0, RESOURCE END);
}

/* A denial: WARN, its fields by their semantic-convention names. */
static void
test_record(void **state)
{
	const char	*lines[] = {
		("{\"schema\":2,\"ts\":\"2026-12-02T12:00:00.123Z\","
		"\"event\":\"request\",\"verdict\":\"deny\","
		"\"client\":\"[::1]:5000\",\"host\":\"a.test\",\"port\":443,"
		"\"addr\":\"127.0.0.1\",\"method\":\"GET\",\"path\":\"/x\\\"y\","
		"\"status\":403,\"pid\":12,\"cmd\":\"curl x\",\"qname\":\"q.test\","
		"\"t\":true,\"z\":null,\"seq\":7}\n"),
		"not an audit line\n",
		("{\"ts\":\"1970-01-01T00:00:00Z\",\"event\":\"start\","
		"\"client\":\"1.2.3.4\"}"),
	};

	batch(lines, 3, RESOURCE
	    "{\"timeUnixNano\":\"1796212800123000000\",\"severityNumber\":13,"
	    "\"severityText\":\"WARN\",\"body\":{\"stringValue\":"
	    "\"{\\\"schema\\\":2,\\\"ts\\\":\\\"2026-12-02T12:00:00.123Z\\\","
	    "\\\"event\\\":\\\"request\\\",\\\"verdict\\\":\\\"deny\\\","
	    "\\\"client\\\":\\\"[::1]:5000\\\",\\\"host\\\":\\\"a.test\\\","
	    "\\\"port\\\":443,\\\"addr\\\":\\\"127.0.0.1\\\","
	    "\\\"method\\\":\\\"GET\\\",\\\"path\\\":\\\"/x\\\\\\\"y\\\","
	    "\\\"status\\\":403,\\\"pid\\\":12,\\\"cmd\\\":\\\"curl x\\\","
	    "\\\"qname\\\":\\\"q.test\\\",\\\"t\\\":true,\\\"z\\\":null,"
	    "\\\"seq\\\":7}\"},\"attributes\":["
	    "{\"key\":\"pinhole.schema\",\"value\":{\"intValue\":\"2\"}},"
	    "{\"key\":\"pinhole.event\",\"value\":{\"stringValue\":\"request\"}},"
	    "{\"key\":\"pinhole.verdict\",\"value\":{\"stringValue\":\"deny\"}},"
	    "{\"key\":\"client.address\",\"value\":{\"stringValue\":\"::1\"}},"
	    "{\"key\":\"client.port\",\"value\":{\"intValue\":\"5000\"}},"
	    "{\"key\":\"server.address\",\"value\":{\"stringValue\":\"a.test\"}},"
	    "{\"key\":\"server.port\",\"value\":{\"intValue\":\"443\"}},"
	    "{\"key\":\"network.peer.address\",\"value\":"
	    "{\"stringValue\":\"127.0.0.1\"}},"
	    "{\"key\":\"http.request.method\",\"value\":"
	    "{\"stringValue\":\"GET\"}},"
	    "{\"key\":\"url.path\",\"value\":{\"stringValue\":\"/x\\\"y\"}},"
	    "{\"key\":\"http.response.status_code\",\"value\":"
	    "{\"intValue\":\"403\"}},"
	    "{\"key\":\"process.pid\",\"value\":{\"intValue\":\"12\"}},"
	    "{\"key\":\"process.command_line\",\"value\":"
	    "{\"stringValue\":\"curl x\"}},"
	    "{\"key\":\"dns.question.name\",\"value\":"
	    "{\"stringValue\":\"q.test\"}},"
	    "{\"key\":\"pinhole.t\",\"value\":{\"boolValue\":true}},"
	    "{\"key\":\"pinhole.seq\",\"value\":{\"intValue\":\"7\"}}]},"
	    "{\"severityNumber\":9,\"severityText\":\"INFO\",\"body\":"
	    "{\"stringValue\":\"not an audit line\"}},"
	    "{\"timeUnixNano\":\"0\",\"severityNumber\":9,"
	    "\"severityText\":\"INFO\",\"body\":{\"stringValue\":"
	    "\"{\\\"ts\\\":\\\"1970-01-01T00:00:00Z\\\",\\\"event\\\":"
	    "\\\"start\\\",\\\"client\\\":\\\"1.2.3.4\\\"}\"},\"attributes\":["
	    "{\"key\":\"pinhole.event\",\"value\":{\"stringValue\":\"start\"}},"
	    "{\"key\":\"pinhole.client\",\"value\":{\"stringValue\":\"1.2.3.4\"}}"
	    "]}" END);
}

/* Lost lines are a warning too; a bounded writer fails, not overflows. */
static void
test_loss_bound(void **state)
{
	struct json_writer	 w;
	char			 store[256], buf[64];
	const char		*line = "{\"event\":\"loss\",\"lost\":3}";

	json_writer_init(&w, 0);
	otlp_record(&w, line, strlen(line), store, sizeof store);
	assert_non_null(strstr(w.buf, "\"severityNumber\":13"));
	assert_non_null(strstr(w.buf, "{\"key\":\"pinhole.lost\",\"value\":"
	    "{\"intValue\":\"3\"}}"));
	json_writer_free(&w);
	json_writer_buf(&w, buf, sizeof buf);
	otlp_record(&w, line, strlen(line), store, sizeof store);
	assert_true(w.failed);
	assert_true(w.len < sizeof buf);
}

/* Timestamps to nanoseconds; anything but our form is refused. */
static void
test_time(void **state)
{
	char	out[32];

	assert_int_equal(otlp_time("2024-02-29T23:59:59.999Z", out,
	    sizeof out), 0);
	assert_string_equal(out, "1709251199999000000");
	assert_int_equal(otlp_time("2000-03-01T00:00:00.000Z", out,
	    sizeof out), 0);
	assert_string_equal(out, "951868800000000000");
	assert_int_equal(otlp_time("1970-01-01T00:00:00.001Z", out,
	    sizeof out), 0);
	assert_string_equal(out, "1000000");
	assert_int_equal(otlp_time("2026-13-01T00:00:00Z", out, sizeof out),
	    -1);
	assert_int_equal(otlp_time("2026-12-02 12:00:00Z", out, sizeof out),
	    -1);
	assert_int_equal(otlp_time("2026-12-02T12:00:00.12Z", out,
	    sizeof out), -1);
	assert_int_equal(otlp_time("1969-12-31T23:59:59Z", out, sizeof out),
	    -1);
	assert_int_equal(otlp_time("2262-01-01T00:00:00Z", out, sizeof out),
	    -1);
	assert_int_equal(otlp_time("2026-12-02T12:00:00.123Z", out, 5), -1);
}

/* Parse a head given as a C string. */
static ssize_t
head(const char *s, struct otlp_resp *r)
{
	return (otlp_resp_parse(s, strlen(s), r));
}

/* Heads we take, and what they say. */
static void
test_resp(void **state)
{
	struct otlp_resp	 r;
	const char		*s;

	s = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
	    "content-length:  2 \r\n\r\n{}";
	assert_int_equal(head(s, &r), strlen(s) - 2);
	assert_int_equal(r.status, 200);
	assert_int_equal(r.length, 2);
	assert_int_equal(r.close, 0);
	assert_int_equal(r.retry_after, -1);
	assert_int_equal(head("HTTP/1.1 503 Busy\r\nRetry-After: 7\r\n", &r),
	    0);
	assert_int_equal(head("HTTP/1.1 503 Busy\r\nRetry-After: 7\r\n\r\n",
	    &r), 37);
	assert_int_equal(r.status, 503);
	assert_int_equal(r.retry_after, 7);
	assert_int_equal(r.length, -1);
	assert_true(head("HTTP/1.1 429\r\nRetry-After: 99999\r\n"
	    "Connection: Close\r\n\r\n", &r) > 0);
	assert_int_equal(r.retry_after, OTLP_RETRY_AFTER_MAX);
	assert_int_equal(r.close, 1);
	assert_true(head("HTTP/1.1 429 x\r\nRetry-After: Wed, 21 Oct 2015 "
	    "07:28:00 GMT\r\n\r\n", &r) > 0);
	assert_int_equal(r.retry_after, -1);
	assert_true(head("HTTP/1.0 200 OK\r\n\r\n", &r) > 0);
	assert_int_equal(r.close, 1);
	assert_true(head("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n"
	    "\r\n", &r) > 0);
	assert_int_equal(r.chunked, 1);
}

/* Heads we refuse. */
static void
test_resp_bad(void **state)
{
	struct otlp_resp	 r;
	char			 big[OTLP_HEAD_MAX + 16];
	const char		*bad[] = {
		"HTTP/2 200\r\n\r\n",
		"HTTP/1.1 20 OK\r\n\r\n",
		"HTTP/1.1 2000 OK\r\n\r\n",
		"HTTP/1.1 100 Continue\r\n\r\n",
		"HTTP/1.1 200 OK\nContent-Length: 0\r\n\r\n",
		"\n\r>\r\n\r\n",
		"HTTP/1.1 200 OK\r\n\nX: y\r\n\r\n",
		"HTTP/1.1 200 OK\r\nNo colon\r\n\r\n",
		"HTTP/1.1 200 OK\r\n: empty\r\n\r\n",
		"HTTP/1.1 200 OK\r\n folded: x\r\n\r\n",
		"HTTP/1.1 200 OK\r\nA\001: x\r\n\r\n",
		"HTTP/1.1 200 OK\r\nA: x\001\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3"
		    "\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 99999999\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nTransfer-Encoding: "
		    "chunked\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n",
	};
	size_t			 i;

	for (i = 0; i < sizeof bad / sizeof bad[0]; i++)
		assert_int_equal(head(bad[i], &r), -1);
	memset(big, 'a', sizeof big);
	memcpy(big, "HTTP/1.1 200 OK\r\nX: ", 20);
	assert_int_equal(otlp_resp_parse(big, sizeof big, &r), -1);
	assert_int_equal(otlp_resp_parse(big, OTLP_HEAD_MAX - 1, &r), 0);
}

/* Read a body given as a C string. */
static long long
rejected(const char *s, char *msg, size_t len)
{
	return (otlp_resp_rejected(s, strlen(s), msg, len));
}

/* partialSuccess: the count, as a string or a number, and the message. */
static void
test_partial(void **state)
{
	char	msg[16];

	assert_int_equal(rejected("", msg, sizeof msg), 0);
	assert_int_equal(rejected("{}", msg, sizeof msg), 0);
	assert_int_equal(rejected("{\"partialSuccess\":{}}", msg, sizeof msg),
	    0);
	assert_int_equal(rejected("{\"partialSuccess\":{\"rejectedLogRecords\""
	    ":\"3\",\"errorMessage\":\"too \\\"old\\\" by far\"}}", msg,
	    sizeof msg), 3);
	assert_string_equal(msg, "too \\\"old\\\" by ");
	assert_int_equal(rejected("{\"partialSuccess\":{\"rejectedLogRecords\""
	    ":4},\"x\":[1,{\"y\":2}]}", msg, sizeof msg), 4);
	assert_string_equal(msg, "");
	assert_int_equal(rejected("{\"partialSuccess\":{\"errorMessage\":"
	    "\"\xc3\xa9t\xc3\xa9\"}}", msg, sizeof msg), 0);
	assert_string_equal(msg, "??t??");
	assert_int_equal(rejected("[1]", msg, sizeof msg), -1);
	assert_int_equal(rejected("{\"partialSuccess\":5}", msg, sizeof msg),
	    -1);
	assert_int_equal(rejected("{\"partialSuccess\":{\"rejectedLogRecords\""
	    ":\"x\"}}", msg, sizeof msg), -1);
	assert_int_equal(rejected("{\"partialSuccess\":{\"rejectedLogRecords\""
	    ":-2}}", msg, sizeof msg), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_record),
		cmocka_unit_test(test_loss_bound),
		cmocka_unit_test(test_time),
		cmocka_unit_test(test_resp),
		cmocka_unit_test(test_resp_bad),
		cmocka_unit_test(test_partial),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
