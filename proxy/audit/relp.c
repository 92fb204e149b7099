/*
 * RELP frames (relp.h): written for the client's commands, read strictly
 * for the collector's answers.  Pure: no I/O, no libevent, no globals.
 */
#include "config.h"

#include <sys/types.h>

#include <stdint.h>
#include <string.h>

#include "lib/digits.h"
#include "proxy/audit/relp.h"

/*
 * Read 1 to 9 digits at buf[*off] and stop at the byte after them: 1 when
 * read, 0 when the buffer ends first, -1 when there is no such number.
 */
static int
relp_number(const char *buf, size_t len, size_t *off, uint32_t *v)
{
	size_t	n;

	*v = 0;
	for (n = 0; *off < len; (*off)++, n++) {
		if (buf[*off] < '0' || buf[*off] > '9')
			return (n == 0 ? -1 : 1);
		if (n == 9)
			return (-1);
		*v = *v * 10 + (buf[*off] - '0');
	}
	return (0);
}

/* Tell whether c is an ASCII letter, whatever the locale. */
static int
relp_alpha(char c)
{
	return ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'));
}

/*
 * Each part of the head is bounded (9 digits, 32 letters, 9 digits), so a
 * buffer that ends inside the head is waited on: it cannot grow without
 * end.
 */
ssize_t
relp_frame_parse(const char *buf, size_t len, struct relp_frame *f,
    const char **why)
{
	size_t		 off = 0, n;
	uint32_t	 dlen;
	int		 r;

	memset(f, 0, sizeof *f);
	if ((r = relp_number(buf, len, &off, &f->txnr)) == 0)
		return (0);
	if (r == -1 || buf[off] != ' ') {
		*why = "no transaction number";
		return (-1);
	}
	off++;
	for (n = 0; off < len && n < RELP_CMD_MAX && relp_alpha(buf[off]);
	    off++, n++)
		f->cmd[n] = buf[off];
	if (off == len)
		return (0);
	if (n == 0 || buf[off] != ' ') {
		*why = "no command";
		return (-1);
	}
	off++;
	if ((r = relp_number(buf, len, &off, &dlen)) == 0)
		return (0);
	if (r == -1) {
		*why = "no data length";
		return (-1);
	}
	if (dlen > RELP_DATA_MAX) {
		*why = "a frame larger than any answer";
		return (-1);
	}
	if (dlen > 0) {
		if (buf[off] != ' ') {
			*why = "no space before the data";
			return (-1);
		}
		off++;
	}
	if (len - off < (size_t)dlen + 1)
		return (0);
	if (buf[off + dlen] != '\n') {
		*why = "a frame that does not end in LF";
		return (-1);
	}
	f->data = buf + off;
	f->len = dlen;
	return ((ssize_t)(off + dlen + 1));
}

int
relp_rsp_parse(const char *data, size_t len, int *code, const char **text,
    size_t *tlen, const char **offers, size_t *olen)
{
	const char	*nl;
	size_t		 i, line;

	if (len < 3)
		return (-1);
	for (i = 0; i < 3; i++)
		if (data[i] < '0' || data[i] > '9')
			return (-1);
	*code = (data[0] - '0') * 100 + (data[1] - '0') * 10 + (data[2] - '0');
	if (*code < 100 || *code > 599)
		return (-1);
	nl = memchr(data, '\n', len);
	line = nl != NULL ? (size_t)(nl - data) : len;
	if (line > 3 && data[3] != ' ')
		return (-1);
	*text = line > 3 ? data + 4 : data + 3;
	*tlen = line > 3 ? line - 4 : 0;
	*offers = nl != NULL ? nl + 1 : data + len;
	*olen = nl != NULL ? len - line - 1 : 0;
	for (i = 0; i < *tlen; i++)
		if ((unsigned char)(*text)[i] < 0x20 ||
		    (*text)[i] == 0x7f)
			return (-1);
	return (0);
}

/* Tell whether a comma-separated list holds word. */
static int
relp_has(const char *list, size_t len, const char *word)
{
	size_t		 wl = strlen(word), i = 0, e;
	const char	*comma;

	while (i <= len) {
		comma = memchr(list + i, ',', len - i);
		e = comma != NULL ? (size_t)(comma - list) : len;
		if (e - i == wl && memcmp(list + i, word, wl) == 0)
			return (1);
		if (comma == NULL)
			break;
		i = e + 1;
	}
	return (0);
}

int
relp_offers_ok(const char *data, size_t len, const char **why)
{
	const char	*nl, *eq;
	size_t		 off = 0, line, name;
	int		 version = 0, syslog = 0;

	while (off < len) {
		nl = memchr(data + off, '\n', len - off);
		line = (nl != NULL ? (size_t)(nl - data) : len) - off;
		eq = memchr(data + off, '=', line);
		name = eq != NULL ? (size_t)(eq - (data + off)) : line;
		if (name == 12 && memcmp(data + off, "relp_version", 12) == 0)
			version = eq != NULL && line > name + 1;
		else if (name == 8 && memcmp(data + off, "commands", 8) == 0 &&
		    eq != NULL)
			syslog = relp_has(eq + 1, line - name - 1, "syslog");
		off += line + 1;
	}
	if (!version) {
		*why = "the collector's answer to open has no relp_version";
		return (-1);
	}
	if (!syslog) {
		*why = "the collector does not take the syslog command";
		return (-1);
	}
	return (0);
}

size_t
relp_frame(char *buf, uint32_t txnr, const char *cmd, size_t msglen)
{
	char	*p = buf + RELP_HEAD_MAX;
	size_t	 cl = strlen(cmd), n;

	/* "TXNR SP CMD SP LEN [SP]", written backwards before the data. */
	if (msglen > 0)
		*--p = ' ';
	p = digits(p, msglen);
	*--p = ' ';
	p -= cl;
	memcpy(p, cmd, cl);
	*--p = ' ';
	p = digits(p, txnr);
	n = buf + RELP_HEAD_MAX - p + msglen;
	memmove(buf, p, n);
	buf[n] = '\n';
	return (n + 1);
}

uint32_t
relp_txnr_next(uint32_t txnr)
{
	return (txnr >= RELP_TXNR_MAX ? 1 : txnr + 1);
}
