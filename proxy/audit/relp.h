/*
 * RELP, the Reliable Event Logging Protocol of rsyslog's imrelp: a third
 * transport of the shipping module (ship.h).  Every message is a command
 * the collector answers once it has taken it, so delivery is known from
 * the collector itself rather than from TCP.
 *
 * A frame is "TXNR SP COMMAND SP DATALEN [SP DATA] LF".  This half is
 * pure: it writes the client's frames and reads the collector's within
 * fixed bounds; no I/O, no libevent.  The connection is in ship.c.
 */
#ifndef RELP_H
#define RELP_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

#define RELP_TXNR_MAX	999999999	/* then 1 again */
#define RELP_CMD_MAX	32
#define RELP_HEAD_MAX	32		/* "TXNR syslog DATALEN " fits */
#define RELP_DATA_MAX	4096		/* of a frame the collector sends */
#define RELP_FRAME_MAX	(RELP_DATA_MAX + 64)	/* and the whole frame */

/* A frame read: its data points into the buffer read. */
struct relp_frame {
	uint32_t	 txnr;
	char		 cmd[RELP_CMD_MAX + 1];
	const char	*data;
	size_t		 len;
};

/*
 * Read one frame at the start of buf: its whole length, LF included; 0
 * when more bytes are needed; -1 when it is not a frame or its data is
 * over RELP_DATA_MAX, with why set.
 */
ssize_t		 relp_frame_parse(const char *, size_t, struct relp_frame *,
		    const char **);

/*
 * Read an answer's data, "CODE [SP TEXT] [LF OFFERS]": the code (100 to
 * 599), its text (up to the first LF) and the offers after it.  -1 when
 * it is not an answer.
 */
int		 relp_rsp_parse(const char *, size_t, int *, const char **,
		    size_t *, const char **, size_t *);

/*
 * Tell whether the offers of an answer to "open" make a session that
 * carries syslog: a relp_version, and "syslog" among the commands.  -1
 * with why set when they do not.
 */
int		 relp_offers_ok(const char *, size_t, const char **);

/* The data of our "open": the offers we make. */
#define RELP_OPEN_OFFERS \
	"relp_version=0\nrelp_software=pinhole\ncommands=syslog"

/*
 * Make a frame of command cmd (at most 11 letters) whose msglen bytes of
 * data were built at buf + RELP_HEAD_MAX: the head is written before
 * them, the whole moved to buf and the LF appended (one byte past the
 * data must be free).  Returns the frame's length.
 */
size_t		 relp_frame(char *, uint32_t, const char *, size_t);

/* The transaction number after txnr. */
uint32_t	 relp_txnr_next(uint32_t);

#endif
