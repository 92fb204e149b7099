/*
 * Fuzz the OTLP collector's answer: the head reader, then the body
 * reader on what follows the head; and the encoder on the input taken as
 * an audit line, checking that what it writes is JSON.
 */
#include "config.h"

#include <sys/types.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"
#include "proxy/audit/otlp.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* Read the input as an answer, then encode it as a line. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct otlp_resource	 res = { "1", "h" };
	struct otlp_resp	 r;
	struct json_writer	 w;
	struct json_member	 m[4];
	struct json_reader	 jr = { .m = m, .max = 4, .nested = 1 };
	char			*buf, *store, msg[64];
	const char		*err;
	ssize_t			 head;
	size_t			 n;

	buf = malloc(len + 1);
	store = malloc(len + 1 > 2 * JSON_TEXT_MAX ? len + 1 :
	    2 * JSON_TEXT_MAX);
	if (buf == NULL || store == NULL)
		abort();
	memcpy(buf, data, len);	/* exact size: ASan sees overreads */
	head = otlp_resp_parse(buf, len, &r);
	if (head > 0 && (size_t)head > len)
		abort();
	if (head > 0 && r.length >= 0 && (size_t)r.length <= len - head)
		otlp_resp_rejected(buf + head, r.length, msg, sizeof msg);
	otlp_resp_rejected(buf, len, msg, sizeof msg);
	if (strlen(msg) >= sizeof msg)
		abort();
	json_writer_init(&w, 0);
	otlp_batch_begin(&w, &res);
	otlp_record(&w, buf, len, store, len + 1);
	otlp_batch_end(&w);
	jr.store = store;
	jr.size = 2 * JSON_TEXT_MAX;
	/* Our reader refuses U+0000, which the body may hold, escaped. */
	if (w.failed || (w.len <= JSON_TEXT_MAX && memchr(buf, 0, len) == NULL &&
	    json_read(&jr, w.buf, w.len, &n, &err) == -1))
		abort();
	json_writer_free(&w);
	free(store);
	free(buf);
	return (0);
}
