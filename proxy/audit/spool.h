/*
 * The shipping spool: audit lines on disk until a collector is known to
 * have them.  One spool a destination, any transport (syslog over TCP or
 * TLS, and others): the transport never owns a line, it reads lines from
 * the spool and says, with spool_ack(), how far it got.
 *
 * A spool is two files in its directory: NAME.spool, the lines not yet
 * known delivered, each ending in '\n', in the order written; NAME.ack,
 * the offset in NAME.spool of the first of them.  Both survive a
 * restart, so what was not delivered is sent after it.
 *
 * Offsets are logical: they only grow, across compaction (the delivered
 * head of the file is dropped when the file would pass its limit, or
 * when everything is delivered), so a transport may keep one while it
 * waits for an acknowledgement.  Lines are read back whole: a reader asks
 * for bytes from an offset and cuts them at newlines.
 *
 * The spool holds at most max bytes of undelivered lines.  A line that
 * does not fit is not kept: spool_append() says so and counts it
 * (spool_stats()), and spool_take() says it where a person sees it.
 * No I/O but the spool's own files and stderr; no libevent.
 */
#ifndef SPOOL_H
#define SPOOL_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

#define SPOOL_MAX_DEFAULT	(64LL * 1024 * 1024)	/* --log-spool-max */
#define SPOOL_NAME_MAX		128

struct spool;

struct spool_stats {
	uint64_t	pending;	/* bytes not yet known delivered */
	uint64_t	lines;		/* lines appended since open */
	uint64_t	dropped;	/* lines not kept: the spool was full */
	uint64_t	dropped_bytes;
};

/*
 * Open (or make, mode 0700) DIR and the spool NAME in it (letters,
 * digits, '.', '-', '_'), picking up what an earlier run left; a line
 * cut short by a crash is dropped.  NULL with err set on error.
 */
struct spool	*spool_open(const char *, const char *, uint64_t, char *,
		    size_t);
void		 spool_close(struct spool *);

/*
 * Keep whole lines (len bytes, each ending in '\n'), with one write when
 * they all fit.  0, or -1 when some were not kept: the spool is full or
 * its file cannot be written (counted; err says why).  *kept, unless
 * NULL, is the number kept.
 */
int		 spool_append(struct spool *, const char *, size_t, uint64_t *,
		    char *, size_t);
/*
 * spool_append() for a transport: lines not kept are said on stderr
 * (log_warnx), naming the destination, the first time and at each
 * thousand.  Returns the lines kept.
 */
uint64_t	 spool_take(struct spool *, const char *, const char *, size_t);

/* The offset of the first line not known delivered, and of the end. */
uint64_t	 spool_head(const struct spool *);
uint64_t	 spool_tail(const struct spool *);

/*
 * Read up to len bytes from offset off (spool_head() <= off <=
 * spool_tail()): the count, 0 at the end, -1 on error.
 */
ssize_t		 spool_read(struct spool *, uint64_t, char *, size_t);

/*
 * Everything before off (the end of a line) is delivered: it is
 * forgotten, durably.  0, or -1 when the mark cannot be written (it
 * is then sent again after a restart).
 */
int		 spool_ack(struct spool *, uint64_t);

void		 spool_stats(const struct spool *, struct spool_stats *);

/* The path of the file that holds the lines, DIR/NAME.spool. */
const char	*spool_path(const struct spool *);

/*
 * Say on stderr what is left for dest, when lines wait: how many, the
 * seq of the first and the last, their bytes, why (the last failure, or
 * NULL) and the path they wait in.  Returns the lines left.
 */
uint64_t	 spool_say_left(struct spool *, const char *, const char *);

/* Make a spool name of a destination: "syslog+tls://h:1" "syslog+tls_h_1". */
void		 spool_name(const char *, char *, size_t);

#endif
