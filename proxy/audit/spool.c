/*
 * The shipping spool (spool.h): NAME.spool holds the lines not yet known
 * delivered, NAME.ack the offset of the first of them.  The delivered
 * head is dropped by truncating the file when everything is delivered,
 * or by copying the rest to a new file when the file would grow past
 * its limit.
 */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/log.h"
#include "proxy/audit/chain.h"
#include "proxy/audit/spool.h"

#define SPOOL_COPY	(64 * 1024)
#define SPOOL_LINE_MAX	(256 * 1024)	/* longer than any audit line */
#define SPOOL_MARK_LEN	42	/* offset, inode: 20 digits each */

struct spool {
	char		*data;		/* DIR/NAME.spool */
	char		*mark;		/* DIR/NAME.ack */
	int		 fd;
	int		 markfd;
	uint64_t	 max;
	uint64_t	 base;		/* logical offset of the file's byte 0 */
	uint64_t	 acked;		/* file offset of the first line due */
	uint64_t	 size;		/* of the file */
	uint64_t	 ino;		/* of the file, kept in the mark */
	struct spool_stats st;
	uint64_t	 said;		/* drops said by spool_take() */
};

/* Make a spool name of a destination: anything but [A-Za-z0-9.-] is '_'. */
void
spool_name(const char *dest, char *buf, size_t len)
{
	size_t	i, n = 0;

	if (len == 0)
		return;
	for (i = 0; dest[i] != '\0' && n + 1 < len; i++) {
		if (dest[i] == ':' && dest[i + 1] == '/' && dest[i + 2] == '/')
			i += 2;
		if ((dest[i] >= 'a' && dest[i] <= 'z') ||
		    (dest[i] >= 'A' && dest[i] <= 'Z') ||
		    (dest[i] >= '0' && dest[i] <= '9') || dest[i] == '.' ||
		    dest[i] == '-' || dest[i] == '+')
			buf[n++] = dest[i];
		else
			buf[n++] = '_';
	}
	buf[n] = '\0';
}

/* Tell whether a spool name is safe as a file name. */
static int
spool_name_ok(const char *name)
{
	size_t	n = strlen(name);

	return (n > 0 && n < SPOOL_NAME_MAX && name[0] != '.' &&
	    strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "0123456789.-_+") == n);
}

/* Write the ack mark: the file offset of the first line due. */
static int
spool_mark(struct spool *sp)
{
	char	buf[SPOOL_MARK_LEN + 1];

	snprintf(buf, sizeof buf, "%020" PRIu64 " %020" PRIu64 "\n",
	    sp->acked, sp->ino);
	if (pwrite(sp->markfd, buf, SPOOL_MARK_LEN, 0) != SPOOL_MARK_LEN)
		return (-1);
	return (0);
}

/*
 * Read the ack mark; 0 when there is none, it does not parse, or it is
 * of another file (a crash between a compaction's rename and its mark).
 */
static uint64_t
spool_read_mark(struct spool *sp)
{
	char		 buf[SPOOL_MARK_LEN + 1], *end;
	ssize_t		 n;
	uint64_t	 v, ino;

	n = pread(sp->markfd, buf, SPOOL_MARK_LEN, 0);
	if (n != SPOOL_MARK_LEN || buf[SPOOL_MARK_LEN - 1] != '\n')
		return (0);
	buf[SPOOL_MARK_LEN - 1] = '\0';
	errno = 0;
	v = strtoull(buf, &end, 10);
	if (errno != 0 || *end != ' ')
		return (0);
	ino = strtoull(end + 1, &end, 10);
	if (errno != 0 || *end != '\0' || ino != sp->ino)
		return (0);
	return (v);
}

/* Drop a line cut short at the end of the file (a crash mid-write). */
static int
spool_trim(struct spool *sp)
{
	char		buf[4096];
	uint64_t	end = sp->size;
	size_t		n, i;

	while (end > 0) {
		n = end < sizeof buf ? end : sizeof buf;
		if (pread(sp->fd, buf, n, end - n) != (ssize_t)n)
			return (-1);
		for (i = n; i > 0; i--) {
			if (buf[i - 1] == '\n')
				goto found;
		}
		end -= n;
	}
	i = 0;
	n = 0;
found:
	end = end - n + i;
	if (end != sp->size && ftruncate(sp->fd, end) == -1)
		return (-1);
	sp->size = end;
	return (0);
}

/* Open the two files and take what an earlier run left. */
static int
spool_load(struct spool *sp, char *err, size_t errlen)
{
	struct stat	st;

	sp->fd = open(sp->data, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC |
	    O_NOCTTY, 0600);
	if (sp->fd == -1 || fstat(sp->fd, &st) == -1) {
		snprintf(err, errlen, "spool %s: %s", sp->data,
		    strerror(errno));
		return (-1);
	}
	sp->size = st.st_size;
	sp->ino = st.st_ino;
	sp->markfd = open(sp->mark, O_RDWR | O_CREAT | O_CLOEXEC | O_NOCTTY,
	    0600);
	if (sp->markfd == -1 || spool_trim(sp) == -1) {
		snprintf(err, errlen, "spool %s: %s", sp->markfd == -1 ?
		    sp->mark : sp->data, strerror(errno));
		return (-1);
	}
	sp->acked = spool_read_mark(sp);
	if (sp->acked > sp->size)
		sp->acked = 0;		/* a mark of another file: send all */
	return (0);
}

/* Open (or make) DIR and the spool NAME in it. */
struct spool *
spool_open(const char *dir, const char *name, uint64_t max, char *err,
    size_t errlen)
{
	struct spool	*sp;

	if (!spool_name_ok(name)) {
		snprintf(err, errlen, "spool: bad name '%s'", name);
		return (NULL);
	}
	if (mkdir(dir, 0700) == -1 && errno != EEXIST) {
		snprintf(err, errlen, "spool %s: %s", dir, strerror(errno));
		return (NULL);
	}
	if ((sp = calloc(1, sizeof *sp)) == NULL)
		goto nomem;
	sp->fd = sp->markfd = -1;
	sp->max = max;
	if (asprintf(&sp->data, "%s/%s.spool", dir, name) == -1) {
		sp->data = NULL;
		goto nomem;
	}
	if (asprintf(&sp->mark, "%s/%s.ack", dir, name) == -1) {
		sp->mark = NULL;
		goto nomem;
	}
	if (spool_load(sp, err, errlen) == -1)
		goto fail;
	return (sp);
nomem:
	snprintf(err, errlen, "spool: out of memory");
fail:
	spool_close(sp);
	return (NULL);
}

void
spool_close(struct spool *sp)
{
	if (sp == NULL)
		return;
	if (sp->fd != -1)
		close(sp->fd);
	if (sp->markfd != -1)
		close(sp->markfd);
	free(sp->data);
	free(sp->mark);
	free(sp);
}

/*
 * Drop the delivered head of the file: copy the lines due to a new file
 * and put it in place.  The mark names the file's inode: a crash
 * between the rename and the new mark leaves a mark of the old file,
 * which reads as "send everything" (spool_read_mark()).
 */
static int
spool_compact(struct spool *sp)
{
	struct stat	 st;
	char		 tmp[PATH_MAX], *buf;
	uint64_t	 off;
	ssize_t		 n;
	int		 fd, rv = -1;

	if (snprintf(tmp, sizeof tmp, "%s.new", sp->data) >= (int)sizeof tmp)
		return (-1);
	if ((buf = malloc(SPOOL_COPY)) == NULL)
		return (-1);
	fd = open(tmp, O_RDWR | O_APPEND | O_CREAT | O_TRUNC | O_CLOEXEC |
	    O_NOCTTY, 0600);
	if (fd == -1)
		goto out;
	for (off = sp->acked; off < sp->size; off += n) {
		n = pread(sp->fd, buf, SPOOL_COPY, off);
		if (n <= 0 || write(fd, buf, n) != n)
			goto out;
	}
	if (rename(tmp, sp->data) == -1)
		goto out;
	close(sp->fd);
	sp->fd = fd;
	fd = -1;
	if (fstat(sp->fd, &st) == 0)
		sp->ino = st.st_ino;
	sp->base += sp->acked;
	sp->size -= sp->acked;
	sp->acked = 0;
	rv = spool_mark(sp);
out:
	if (fd != -1) {
		close(fd);
		unlink(tmp);
	}
	free(buf);
	return (rv);
}

/* Count lines not kept. */
static int
spool_drop(struct spool *sp, uint64_t lines, size_t len)
{
	sp->st.dropped += lines;
	sp->st.dropped_bytes += len;
	return (-1);
}

/* Keep len bytes holding nlines whole lines, all or none. */
static int
spool_put(struct spool *sp, const char *buf, size_t len, uint64_t nlines,
    char *err, size_t errlen)
{
	ssize_t	n;

	if (sp->size - sp->acked + len > sp->max) {
		snprintf(err, errlen, "spool %s is full (%" PRIu64 " bytes)",
		    sp->data, sp->max);
		return (spool_drop(sp, nlines, len));
	}
	if (sp->size + len > sp->max && spool_compact(sp) == -1) {
		snprintf(err, errlen, "spool %s: cannot compact: %s",
		    sp->data, strerror(errno));
		return (spool_drop(sp, nlines, len));
	}
	if ((n = write(sp->fd, buf, len)) != (ssize_t)len) {
		snprintf(err, errlen, "spool %s: %s", sp->data,
		    n == -1 ? strerror(errno) : "short write");
		if (n > 0 && ftruncate(sp->fd, sp->size) == -1)
			spool_trim(sp);
		return (spool_drop(sp, nlines, len));
	}
	sp->size += len;
	sp->st.lines += nlines;
	return (0);
}

/*
 * Keep lines: with one write when they all fit, else one by one, so
 * what fits is kept.
 */
int
spool_append(struct spool *sp, const char *lines, size_t len,
    uint64_t *kept, char *err, size_t errlen)
{
	const char	*p, *nl, *end = lines + len;
	uint64_t	 nlines = 0, dropped = sp->st.dropped;
	size_t		 n;

	for (p = lines; (p = memchr(p, '\n', end - p)) != NULL; p++)
		nlines++;
	if (sp->size - sp->acked + len <= sp->max)
		spool_put(sp, lines, len, nlines, err, errlen);
	else {
		for (p = lines; p < end; p += n) {
			nl = memchr(p, '\n', end - p);
			n = nl != NULL ? (size_t)(nl + 1 - p) : (size_t)(end - p);
			spool_put(sp, p, n, 1, err, errlen);
		}
	}
	dropped = sp->st.dropped - dropped;
	if (kept != NULL)
		*kept = nlines - dropped;
	return (dropped == 0 ? 0 : -1);
}

/*
 * Keep lines for dest, saying on stderr when some are not kept: the
 * first time, then at each thousand.  Returns the lines kept.
 */
uint64_t
spool_take(struct spool *sp, const char *dest, const char *lines,
    size_t len)
{
	char		err[512];
	uint64_t	kept;

	if (spool_append(sp, lines, len, &kept, err, sizeof err) == 0)
		return (kept);
	if (sp->said == 0 || sp->st.dropped / 1000 != sp->said / 1000)
		log_warnx("audit shipping: %s: %s: %llu line(s) not shipped "
		    "so far (they are in the local log)", dest, err,
		    (unsigned long long)sp->st.dropped);
	sp->said = sp->st.dropped;
	return (kept);
}

uint64_t
spool_head(const struct spool *sp)
{
	return (sp->base + sp->acked);
}

uint64_t
spool_tail(const struct spool *sp)
{
	return (sp->base + sp->size);
}

/* Read up to len bytes from a logical offset. */
ssize_t
spool_read(struct spool *sp, uint64_t off, char *buf, size_t len)
{
	if (off < spool_head(sp) || off > spool_tail(sp)) {
		errno = EINVAL;
		return (-1);
	}
	off -= sp->base;
	if (len > sp->size - off)
		len = sp->size - off;
	if (len == 0)
		return (0);
	return (pread(sp->fd, buf, len, off));
}

/* Forget everything before off; an empty spool starts its file again. */
int
spool_ack(struct spool *sp, uint64_t off)
{
	if (off <= spool_head(sp) || off > spool_tail(sp))
		return (0);
	sp->acked = off - sp->base;
	if (sp->acked == sp->size && ftruncate(sp->fd, 0) == 0) {
		sp->base += sp->size;
		sp->acked = sp->size = 0;
	}
	return (spool_mark(sp));
}

void
spool_stats(const struct spool *sp, struct spool_stats *st)
{
	*st = sp->st;
	st->pending = sp->size - sp->acked;
}

/* The path of the file that holds the lines. */
const char *
spool_path(const struct spool *sp)
{
	return (sp->data);
}

/*
 * Count the whole lines waiting, and read the seq of the first and the
 * last (0 when a line has none).
 */
static uint64_t
spool_count(struct spool *sp, char *buf, unsigned long long *first,
    unsigned long long *last)
{
	struct audit_link	 lk;
	uint64_t		 off = spool_head(sp), lines = 0;
	const char		*p, *nl, *end;
	ssize_t			 n;

	*first = *last = 0;
	while ((n = spool_read(sp, off, buf, SPOOL_LINE_MAX)) > 0) {
		end = buf + n;
		for (p = buf; (nl = memchr(p, '\n', end - p)) != NULL;
		    p = nl + 1) {
			if (audit_link_parse(p, nl - p, &lk) == -1)
				lk.seq = 0;
			if (lines++ == 0)
				*first = lk.seq;
			*last = lk.seq;
		}
		if (p == buf)
			break;	/* no whole line: longer than any */
		off += p - buf;
	}
	return (lines);
}

/* Say on stderr what is left for dest, and where it waits. */
uint64_t
spool_say_left(struct spool *sp, const char *dest, const char *why)
{
	unsigned long long	 first, last;
	uint64_t		 lines;
	char			*buf;

	if (spool_head(sp) == spool_tail(sp))
		return (0);
	if ((buf = malloc(SPOOL_LINE_MAX)) == NULL)
		lines = first = last = 0;
	else
		lines = spool_count(sp, buf, &first, &last);
	free(buf);
	log_warnx("audit shipping: %s: not delivered: %llu line(s), seq %llu "
	    "to %llu, %llu bytes%s%s; they wait in %s for the next gateway "
	    "with this spool", dest, (unsigned long long)lines, first, last,
	    (unsigned long long)(spool_tail(sp) - spool_head(sp)),
	    why != NULL ? ": " : "", why != NULL ? why : "", sp->data);
	return (lines);
}
