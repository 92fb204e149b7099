/*
 * Fuzz the audit log's readers: the strict line reader, the chain fields
 * reader, the syslog and journald formatters on what was read, and the
 * chain check over the input taken as a whole file (its loss and drop
 * lines, and the sessions it follows from start to stop).
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/audit/audit.h"
#include "proxy/audit/sink.h"
#include "proxy/audit/verify.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* Read the input as one line, then as a log file. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	static struct audit_verify	 v;
	static int			 ready;
	struct audit_rec		 rec;
	struct audit_link		 lk;
	char				*line, *store, *msg;
	size_t				 msglen = 3 * len + 4096;

	if (!ready) {
		if (audit_verify_init(&v, NULL, 0) == -1)
			abort();
		ready = 1;
	}
	line = malloc(len + 1);
	store = malloc(len + 1);
	msg = malloc(msglen);
	if (line == NULL || store == NULL || msg == NULL)
		abort();
	memcpy(line, data, len);	/* exact size: ASan sees overreads */
	if (audit_rec_parse(line, len, store, len + 1, &rec) == 0) {
		audit_syslog_format(msg, msglen, line, len, &rec, "host", 1);
		audit_journal_format(msg, msglen, line, len, &rec);
	}
	audit_link_parse(line, len, &lk);
	v.known = 0;
	v.prevfile = NULL;
	v.losses = v.lost = 0;
	v.drops = v.dropped = v.dropped_denied = 0;
	v.drop_cur = v.drop_cur_denied = v.drop_base = v.drop_base_denied = 0;
	/* Sessions are followed anew for each input. */
	free(v.sess);
	v.sess = NULL;
	v.nsess = v.sesscap = v.cur = 0;
	v.untracked = 0;
	memset(v.bucket, 0, sizeof v.bucket);
	audit_verify_file(&v, "fuzz", line, len);
	free(line);
	free(store);
	free(msg);
	return (0);
}
