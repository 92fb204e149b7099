/*
 * Fuzz the reading of a RELP collector's frames: frame after frame as a
 * connection would read them, each answer and its offers; and the
 * writer, whose frame of the input must read back as the input.
 */
#include "config.h"

#include <sys/types.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/audit/relp.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct relp_frame	 f;
	const char		*why, *text, *offers;
	char			*buf;
	size_t			 off = 0, tlen, olen;
	ssize_t			 n;
	int			 code;

	if ((buf = malloc(len + RELP_HEAD_MAX + 1)) == NULL)
		abort();
	memcpy(buf, data, len);	/* exact size: ASan sees overreads */
	while (off < len && (n = relp_frame_parse(buf + off, len - off, &f,
	    &why)) > 0) {
		if ((size_t)n > len - off || f.len > RELP_DATA_MAX ||
		    f.data + f.len + 1 != buf + off + n ||
		    strlen(f.cmd) == 0 || strlen(f.cmd) > RELP_CMD_MAX)
			abort();
		if (relp_rsp_parse(f.data, f.len, &code, &text, &tlen,
		    &offers, &olen) == 0) {
			if (code < 100 || code > 599 || text + tlen >
			    f.data + f.len || offers + olen != f.data + f.len)
				abort();
			(void)relp_offers_ok(offers, olen, &why);
		}
		off += n;
	}
	(void)relp_offers_ok(buf, len, &why);

	if (len <= RELP_DATA_MAX) {
		memmove(buf + RELP_HEAD_MAX, buf, len);
		n = relp_frame(buf, 7, "rsp", len);
		if (relp_frame_parse(buf, n, &f, &why) != n || f.txnr != 7 ||
		    f.len != len || memcmp(f.data, data, len) != 0)
			abort();
	}
	free(buf);
	return (0);
}
