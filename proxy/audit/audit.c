/*
 * The audit log: JSON Lines, one event a line, fields in a fixed order
 * (docs/audit-log.md).
 *
 * Each line is built whole in a buffer and handed to one write(), so
 * lines never interleave.  A line that cannot be written is counted
 * (lines, bytes, when, why); the next time a line can be written, a
 * "loss" line saying so goes first, in the chain.  Failing and writing
 * again are each said once on stderr.  A short write never leaves half
 * a line behind:
 * a regular file opened for appending is cut back to its length before
 * the write; anything else (a pipe, a terminal) is marked torn, and the
 * next line starts with a newline so that the fragment stands alone on
 * a line of its own, which readers skip as it does not parse.
 *
 * Opening the log, carrying on its chain and closing it are open.c's.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <openssl/crypto.h>

#include "lib/json.h"
#include "lib/log.h"
#include "lib/metrics.h"
#include "proxy/audit/audit.h"
#include "proxy/audit/audit-int.h"
#include "proxy/audit/sink.h"

enum audit_how {
	AUDIT_BUILD,		/* build the line only */
	AUDIT_HOLD,		/* write it at the end of the pass */
	AUDIT_NOW		/* write it at once */
};

enum audit_type {
	AUDIT_STR,
	AUDIT_INT,
	AUDIT_I64
};

/* The fields after "schema", "ts" and "event", in the order written. */
static const struct audit_field {
	const char	*name;
	size_t		 off;
	enum audit_type	 type;
} audit_fields[] = {
	{ "verdict", offsetof(struct audit_event, verdict), AUDIT_STR },
	{ "reason", offsetof(struct audit_event, reason), AUDIT_STR },
	{ "session", offsetof(struct audit_event, session), AUDIT_STR },
	{ "sandbox", offsetof(struct audit_event, sandbox), AUDIT_STR },
	{ "cmd", offsetof(struct audit_event, cmd), AUDIT_STR },
	{ "pid", offsetof(struct audit_event, pid), AUDIT_I64 },
	{ "conn", offsetof(struct audit_event, conn), AUDIT_I64 },
	{ "client", offsetof(struct audit_event, client), AUDIT_STR },
	{ "host", offsetof(struct audit_event, host), AUDIT_STR },
	{ "port", offsetof(struct audit_event, port), AUDIT_INT },
	{ "addr", offsetof(struct audit_event, addr), AUDIT_STR },
	{ "via", offsetof(struct audit_event, via), AUDIT_STR },
	{ "name_from", offsetof(struct audit_event, name_from), AUDIT_STR },
	{ "rule", offsetof(struct audit_event, rule), AUDIT_STR },
	{ "method", offsetof(struct audit_event, method), AUDIT_STR },
	{ "path", offsetof(struct audit_event, path), AUDIT_STR },
	{ "status", offsetof(struct audit_event, status), AUDIT_INT },
	{ "bytes_up", offsetof(struct audit_event, bytes_up), AUDIT_I64 },
	{ "bytes_down", offsetof(struct audit_event, bytes_down), AUDIT_I64 },
	{ "ms", offsetof(struct audit_event, ms), AUDIT_I64 },
	{ "qname", offsetof(struct audit_event, qname), AUDIT_STR },
	{ "qtype", offsetof(struct audit_event, qtype), AUDIT_STR },
	{ "answer", offsetof(struct audit_event, answer), AUDIT_STR },
	{ "detail", offsetof(struct audit_event, detail), AUDIT_STR },
	{ "request_id", offsetof(struct audit_event, request_id), AUDIT_STR },
	{ "scope", offsetof(struct audit_event, scope), AUDIT_STR },
	{ "ttl", offsetof(struct audit_event, ttl), AUDIT_I64 },
	{ "by", offsetof(struct audit_event, by), AUDIT_STR },
	{ "decider", offsetof(struct audit_event, decider), AUDIT_STR },
	{ "ask", offsetof(struct audit_event, ask), AUDIT_STR },
	{ "secret_scrubbed", offsetof(struct audit_event, secret_scrubbed),
	    AUDIT_STR },
	{ "lost", offsetof(struct audit_event, lost), AUDIT_I64 },
	{ "lost_bytes", offsetof(struct audit_event, lost_bytes), AUDIT_I64 },
	{ "lost_first", offsetof(struct audit_event, lost_first), AUDIT_STR },
	{ "lost_last", offsetof(struct audit_event, lost_last), AUDIT_STR },
	{ "gateway_pid", offsetof(struct audit_event, gateway_pid), AUDIT_I64 },
	{ "count", offsetof(struct audit_event, count), AUDIT_I64 },
	{ "first", offsetof(struct audit_event, first), AUDIT_STR },
	{ "last", offsetof(struct audit_event, last), AUDIT_STR },
	{ "seq_first", offsetof(struct audit_event, seq_first), AUDIT_I64 },
	{ "seq_last", offsetof(struct audit_event, seq_last), AUDIT_I64 },
	{ "end_chain", offsetof(struct audit_event, end_chain), AUDIT_STR },
	{ "denied", offsetof(struct audit_event, denied), AUDIT_I64 },
};

/* Clear an event: strings NULL, numbers -1. */
void
audit_event_init(struct audit_event *ev)
{
	memset(ev, 0, sizeof *ev);
	ev->port = -1;
	ev->status = -1;
	ev->bytes_up = -1;
	ev->bytes_down = -1;
	ev->ms = -1;
	ev->pid = -1;
	ev->conn = -1;
	ev->ttl = -1;
	ev->lost = -1;
	ev->lost_bytes = -1;
	ev->gateway_pid = -1;
	ev->count = -1;
	ev->seq_first = -1;
	ev->seq_last = -1;
	ev->denied = -1;
}

/* Name the sandbox (NULL: none) in an event. */
void
audit_event_sandbox(struct audit_event *ev, const struct audit_ident *sb)
{
	if (sb == NULL)
		return;
	ev->sandbox = sb->id;
	ev->cmd = sb->cmd;
	ev->pid = sb->pid;
}

/* Is this word read back by a shell as it is? */
static int
audit_plain_word(const char *w)
{
	return (w[0] != '\0' && strspn(w, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "abcdefghijklmnopqrstuvwxyz0123456789_@%+=:,./-") == strlen(w));
}

/*
 * argv as one line a shell would read back: plain words as they are,
 * others in single quotes (a quote in one as '\''); cut with "..." at a
 * character boundary when it does not fit.
 */
void
audit_cmdline(char *const argv[], char *buf, size_t len)
{
	char		 tmp[AUDIT_CMD_LEN * 4];
	const char	*p;
	size_t		 n = 0;
	int		 i, plain;

	if (len == 0)
		return;
	for (i = 0; argv != NULL && argv[i] != NULL && n < sizeof tmp; i++) {
		plain = audit_plain_word(argv[i]);
		if (i > 0)
			tmp[n++] = ' ';
		if (!plain && n < sizeof tmp)
			tmp[n++] = '\'';
		for (p = argv[i]; *p != '\0' && n + 4 < sizeof tmp; p++) {
			if (*p == '\'' && !plain) {
				memcpy(tmp + n, "'\\''", 4);
				n += 4;
			} else
				tmp[n++] = *p;
		}
		if (!plain && n < sizeof tmp)
			tmp[n++] = '\'';
	}
	if (n < len) {
		memcpy(buf, tmp, n);
		buf[n] = '\0';
		return;
	}
	n = len > 4 ? len - 4 : 0;
	/* Not in the middle of a UTF-8 sequence. */
	while (n > 0 && ((unsigned char)tmp[n] & 0xc0) == 0x80)
		n--;
	memcpy(buf, tmp, n);
	snprintf(buf + n, len - n, "%s", len > 4 ? "..." : "");
}

/* Append one field of an event, unless it is absent. */
static void
audit_put_field(struct json_writer *w, const struct audit_event *ev,
    const struct audit_field *f)
{
	const char	*p = (const char *)ev + f->off;
	const char	*s;
	int64_t		 v;

	if (f->type == AUDIT_STR) {
		memcpy(&s, p, sizeof s);
		json_put_str(w, f->name, s);
		return;
	}
	if (f->type == AUDIT_INT)
		v = *(const int *)(const void *)p;
	else
		v = *(const int64_t *)(const void *)p;
	if (v >= 0)
		json_put_int(w, f->name, v);
}

/*
 * Format the current time as RFC 3339 UTC with milliseconds (len at
 * least 25); the date and time of day are made once a second.
 */
static void
audit_timestamp(struct audit *a, char *buf, size_t len)
{
	struct timespec	ts;
	struct tm	tm;
	size_t		n;
	long		ms;

	clock_gettime(CLOCK_REALTIME, &ts);
	if (ts.tv_sec != a->ts_sec || a->ts_head[0] == '\0') {
		gmtime_r(&ts.tv_sec, &tm);
		strftime(a->ts_head, sizeof a->ts_head, "%Y-%m-%dT%H:%M:%S",
		    &tm);
		a->ts_sec = ts.tv_sec;
	}
	n = strlen(a->ts_head);
	if (len < n + 6) {
		buf[0] = '\0';
		return;
	}
	ms = ts.tv_nsec / 1000000;
	memcpy(buf, a->ts_head, n);
	buf[n++] = '.';
	buf[n++] = '0' + ms / 100;
	buf[n++] = '0' + ms / 10 % 10;
	buf[n++] = '0' + ms % 10;
	buf[n++] = 'Z';
	buf[n] = '\0';
}

/*
 * Build the body of an event's line at ts: every field but the chain's.
 * String values are cut after AUDIT_FIELD_MAX bytes, and then the line
 * says it was truncated.
 */
static void
audit_format(struct json_writer *w, const struct audit_event *ev,
    const char *ts)
{
	size_t	i;

	json_open(w);
	json_put_int(w, "schema", AUDIT_SCHEMA);
	json_put_str(w, "ts", ts);
	json_put_str(w, "event", ev->event != NULL ? ev->event : "unknown");
	for (i = 0; i < sizeof audit_fields / sizeof audit_fields[0]; i++)
		audit_put_field(w, ev, &audit_fields[i]);
	if (w->cut)
		json_put_bool(w, "truncated", 1);
}

/*
 * End a line with the chain: prev_chain when it starts a file that
 * carries on another one, seq, then chain over everything before it.
 */
static int
audit_seal(struct audit *a, struct json_writer *w, unsigned char *next)
{
	char	hex[AUDIT_HEX_LEN + 1];

	if (a->link) {
		audit_hex(a->chain, hex);
		json_put_str(w, "prev_chain", hex);
	}
	json_put_uint(w, "seq", a->seq + 1);
	if (w->failed ||
	    audit_hash_step(a->hash, a->chain, w->buf, w->len, next) == -1)
		return (-1);
	audit_hex(next, hex);
	json_put_str(w, "chain", hex);
	json_close(w);
	json_put_raw(w, "\n", 1);
	return (w->failed ? -1 : 0);
}

/* Name the output in messages. */
const char *
audit_name(const struct audit *a)
{
	return (a->owned || a->kind != AUDIT_FILE ? a->path : "stdout");
}

/* Count a line that was not written, saying so the first time. */
static void
audit_lost(struct audit *a, size_t len, const char *ts)
{
	if (a->metrics != NULL)
		a->metrics->audit_lost++;
	if (a->lost++ == 0) {
		snprintf(a->lost_first, sizeof a->lost_first, "%s", ts);
		snprintf(a->why, sizeof a->why, "%s", a->err);
		log_warnx("audit log: %s: %s: lines are being lost%s",
		    audit_name(a), a->why, a->go_on ? "" :
		    "; new connections are refused until it can be written");
	}
	a->lost_bytes += len;
	snprintf(a->lost_last, sizeof a->lost_last, "%s", ts);
}

/*
 * Write a line with one write(); never leave a fragment mid-file.  After
 * a short write, the rest is written once more: it fits (the line is
 * whole), or errno says why not.  The length to cut back to is asked for
 * only then (what the file holds less what this line added), so a line
 * costs one system call.
 */
static int
audit_emit(struct audit *a, char *line, size_t len)
{
	struct stat	st;
	off_t		good = -1;
	ssize_t		n, m = 0;
	int		e = 0;

	if (a->torn) {
		*--line = '\n';
		len++;
	}
	if ((n = write(a->fd, line, len)) == -1)
		e = errno;
	else if ((size_t)n < len) {
		if ((m = write(a->fd, line + n, len - n)) == -1)
			e = errno;
		else
			n += m;
	}
	if (n == (ssize_t)len) {
		a->torn = 0;
		a->size += len;
		return (0);
	}
	snprintf(a->err, sizeof a->err, "%s%s", e != 0 ? strerror(e) :
	    "short write", n > 0 ? " (after a short write, cut back)" : "");
	if (n > 0 && a->cuttable && fstat(a->fd, &st) == 0 && st.st_size >= n)
		good = st.st_size - n;
	if (n > 0 && (good == -1 || ftruncate(a->fd, good) == -1))
		a->torn = 1;
	return (-1);
}

/* Send a line to syslog or journald as one datagram. */
static int
audit_send(struct audit *a, const char *line, size_t len)
{
	struct audit_rec	rec;
	char			host[256], err[256];
	size_t			n;
	int			fd;

	if (audit_rec_parse(line, len, a->store, AUDIT_LINE_MAX, &rec) == -1) {
		snprintf(a->err, sizeof a->err, "cannot read the line back");
		return (-1);
	}
	if (a->kind == AUDIT_JOURNALD)
		n = audit_journal_format(a->msg, AUDIT_MSG_MAX, line, len, &rec);
	else {
		if (gethostname(host, sizeof host) == -1 || host[0] == '\0')
			snprintf(host, sizeof host, "-");
		host[sizeof host - 1] = '\0';
		n = audit_syslog_format(a->msg, AUDIT_MSG_MAX, line, len, &rec,
		    host, (long)getpid());
	}
	if (n == 0) {
		snprintf(a->err, sizeof a->err, "%s", strerror(EMSGSIZE));
		return (-1);
	}
	if (send(a->fd, a->msg, n, 0) == (ssize_t)n)
		return (0);
	if (errno == ECONNREFUSED || errno == ENOTCONN || errno == ENOENT) {
		/* The daemon restarted: connect again, once. */
		if ((fd = audit_dgram_open(a->sock, err, sizeof err)) != -1) {
			close(a->fd);
			a->fd = fd;
			if (send(a->fd, a->msg, n, 0) == (ssize_t)n)
				return (0);
		}
	}
	snprintf(a->err, sizeof a->err, "%s", strerror(errno));
	return (-1);
}

static void	audit_hand_on(struct audit *, const char *, size_t);

/* What a file that rotation deletes holds: its lines, told apart. */
struct audit_tally {
	unsigned long long	 count;
	unsigned long long	 denied;	/* refusals among them */
	unsigned long long	 seq_first;
	unsigned long long	 seq_last;
	char			 end_chain[AUDIT_HEX_LEN + 1];
	char			 first[32];	/* ts of the first line */
	char			 last[32];	/* and of the last */
};

/* Copy the string after key ("ts":" or ,"first":") in a line of ours. */
static void
audit_line_str(const char *line, size_t len, const char *key, char *buf,
    size_t size)
{
	const char	*p, *q;
	size_t		 klen = strlen(key);

	buf[0] = '\0';
	if ((p = memmem(line, len, key, klen)) == NULL)
		return;
	p += klen;
	if ((q = memchr(p, '"', len - (p - line))) != NULL &&
	    (size_t)(q - p) < size) {
		memcpy(buf, p, q - p);
		buf[q - p] = '\0';
	}
}

/* Count one whole line (no newline) of a file rotation deletes. */
static void
audit_tally_line(struct audit_tally *t, const char *line, size_t len)
{
	struct audit_link	lk;

	if (audit_link_parse(line, len, &lk) == -1)
		return;
	if (t->count++ == 0) {
		t->seq_first = lk.seq;
		audit_line_str(line, len, "\"ts\":\"", t->first,
		    sizeof t->first);
	}
	t->seq_last = lk.seq;
	audit_hex(lk.chain, t->end_chain);
	audit_line_str(line, len, "\"ts\":\"", t->last, sizeof t->last);
	if (memmem(line, len, "\"verdict\":\"deny\"", 16) != NULL)
		t->denied++;
}

/*
 * Tally the lines of a file, read through buf (size bytes, longer than
 * any line).  0, or -1 when it cannot be read.
 */
static int
audit_tally_file(const char *path, char *buf, size_t size,
    struct audit_tally *t)
{
	const char	*p, *nl;
	size_t		 have = 0;
	ssize_t		 n;
	int		 fd;

	memset(t, 0, sizeof *t);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY)) == -1)
		return (-1);
	while ((n = read(fd, buf + have, size - have)) > 0) {
		have += n;
		for (p = buf; (nl = memchr(p, '\n', have - (p - buf))) != NULL;
		    p = nl + 1)
			audit_tally_line(t, p, nl - p);
		if (p == buf)
			p = buf + have;		/* no line: not ours */
		have -= p - buf;
		memmove(buf, p, have);
	}
	close(fd);
	return (n == -1 ? -1 : 0);
}

/* The seq of a file's last line; 0 when it has none. */
static unsigned long long
audit_last_seq(const char *path, char *buf, size_t size)
{
	struct audit_link	lk;
	struct stat		st;
	ssize_t			start;
	size_t			n;
	int			fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY)) == -1)
		return (0);
	lk.seq = 0;
	if (fstat(fd, &st) == 0 && st.st_size > 0) {
		n = (size_t)st.st_size < size ? (size_t)st.st_size : size;
		if (pread(fd, buf, n, st.st_size - n) == (ssize_t)n &&
		    (start = audit_last_line(buf, n, n == (size_t)st.st_size))
		    != -1 && audit_link_parse(buf + start, n - start - 1,
		    &lk) == -1)
			lk.seq = 0;
	}
	close(fd);
	return (lk.seq);
}

/*
 * Add what one rotation deleted to what the ones before it did: the
 * deleted files follow each other, so the seq range and times run from
 * the first one's first line to this one's last.
 */
static int
audit_add_dropped(struct audit *a, const struct audit_tally *t)
{
	struct audit_tally	*d = a->dropped;

	if (d == NULL) {
		if ((a->dropped = malloc(sizeof *d)) == NULL)
			return (-1);
		*a->dropped = *t;
		return (0);
	}
	d->count += t->count;
	d->denied += t->denied;
	d->seq_last = t->seq_last;
	memcpy(d->end_chain, t->end_chain, sizeof d->end_chain);
	memcpy(d->last, t->last, sizeof d->last);
	return (0);
}

/*
 * Write the "drop" line first in the new file: what rotation deleted of
 * this gateway's lines so far (this time and before: the last one says
 * it all).  Built in a buffer of its own, as the line that made the
 * rotation is in a->buf.
 */
static void
audit_put_drop(struct audit *a, const char *path, const struct audit_tally *t)
{
	struct audit_event	ev;
	struct json_writer	w;
	unsigned char		next[AUDIT_HASH_LEN];
	char			buf[8192], ts[48], detail[PATH_MAX + 96];

	audit_event_init(&ev);
	ev.event = "drop";
	snprintf(detail, sizeof detail, "rotation deleted %s, which held "
	    "lines of a running session; all it deleted of them so far",
	    path);
	ev.detail = detail;
	ev.count = t->count;
	ev.first = t->first;
	ev.last = t->last;
	ev.seq_first = t->seq_first;
	ev.seq_last = t->seq_last;
	ev.end_chain = t->end_chain;
	ev.denied = t->denied;
	audit_timestamp(a, ts, sizeof ts);
	json_writer_buf(&w, buf + 1, sizeof buf - 1);
	w.str_max = AUDIT_FIELD_MAX;
	audit_format(&w, &ev, ts);
	if (audit_seal(a, &w, next) == -1 ||
	    audit_emit(a, w.buf, w.len) == -1) {
		log_warnx("audit log: %s: the record of what rotation deleted "
		    "cannot be written: %s", a->path, a->err);
		return;
	}
	a->seq++;
	memcpy(a->chain, next, sizeof a->chain);
	a->link = 0;
	audit_hand_on(a, w.buf, w.len);
	log_warnx("audit log: rotation deleted %s, which held lines of this "
	    "session: %llu line(s) deleted so far, seq %llu to %llu, %llu of "
	    "them refusals: recorded in %s (seq %llu); ship the log off this "
	    "host to keep every line", path, t->count, t->seq_first,
	    t->seq_last, t->denied, a->path, a->seq);
}

/*
 * Rename FILE.N-1 to FILE.N ... FILE to FILE.1, and start a new FILE.
 * When that deletes FILE.keep and it holds lines of this gateway's (a
 * session still running), the new file starts with a "drop" line that
 * says what it held.
 */
static void
audit_rotate(struct audit *a)
{
	struct audit_tally	t;
	char			from[PATH_MAX], to[PATH_MAX];
	int			i, dropped = 0;

	snprintf(to, sizeof to, "%s.%d", a->path, a->keep);
	if (a->own_first != 0 && audit_last_seq(to, a->store,
	    AUDIT_LINE_MAX + 1) >= a->own_first && audit_tally_file(to,
	    a->store, AUDIT_LINE_MAX + 1, &t) == 0 && t.count > 0)
		dropped = 1;

	for (i = a->keep - 1; i >= 1; i--) {
		snprintf(from, sizeof from, "%s.%d", a->path, i);
		snprintf(to, sizeof to, "%s.%d", a->path, i + 1);
		if (rename(from, to) == -1 && errno != ENOENT)
			log_warn("audit log: rotate %s", from);
	}
	snprintf(to, sizeof to, "%s.1", a->path);
	if (rename(a->path, to) == -1) {
		log_warn("audit log: rotate %s (rotation stops)", a->path);
		a->max_size = 0;
		return;
	}
	if (audit_reopen(a) == 0 && dropped && audit_add_dropped(a, &t) == 0) {
		snprintf(to, sizeof to, "%s.%d", a->path, a->keep);
		audit_put_drop(a, to, a->dropped);
	}
}

/* Tell whether a line of len bytes, after those held, must go to a new file. */
static int
audit_full(const struct audit *a, size_t len)
{
	long long	size = a->size + (long long)a->outlen;

	return (a->kind == AUDIT_FILE && a->owned && a->max_size > 0 &&
	    size > 0 && size + (long long)len + AUDIT_SEAL_MAX > a->max_size);
}

/* Make written lines durable as --log-fsync says; failures said once. */
static void
audit_sync(struct audit *a)
{
	if (a->fsync == AUDIT_FSYNC_NEVER || !a->owned)
		return;
	if (fdatasync(a->fd) == 0) {
		if (a->sync_failed)
			log_warnx("audit log: %s: fdatasync works again",
			    audit_name(a));
		a->sync_failed = 0;
	} else if (!a->sync_failed++)
		log_warn("audit log: %s: fdatasync", audit_name(a));
}

/*
 * Hold a sealed line for the write at the end of this pass; the first
 * one keeps the chain as it was and asks for that write.
 */
static void
audit_hold(struct audit *a, const char *line, size_t len, const char *ts)
{
	size_t	n;

	if (a->outlen == 0) {
		a->out_seq = a->seq;
		memcpy(a->out_chain, a->chain, sizeof a->out_chain);
		a->out_link = a->link;
		snprintf(a->out_first, sizeof a->out_first, "%s", ts);
		event_active(a->flush, EV_TIMEOUT, 1);
	}
	memcpy(a->out + 1 + a->outlen, line, len);
	a->outlen += len;
	a->nout++;
	/* Each line's, so not through printf. */
	n = strnlen(ts, sizeof a->out_last - 1);
	memcpy(a->out_last, ts, n);
	a->out_last[n] = '\0';
}

/*
 * Hand the lines just written (each ending in a newline) to the hook,
 * all at once: a line is shipped only once the log has it.
 */
static void
audit_hand_on(struct audit *a, const char *lines, size_t len)
{
	if (a->hook != NULL && len > 0)
		a->hook(a->hook_arg, lines, len);
}

/*
 * Write the lines held, with one write().  When they cannot be written
 * they are counted as lost, and the chain goes back to the last line
 * the file has, so that the "loss" line carries it on.
 */
int
audit_flush(struct audit *a)
{
	int	rv;

	if (a == NULL || a->outlen == 0)
		return (0);
	if ((rv = audit_emit(a, a->out + 1, a->outlen)) == 0) {
		audit_sync(a);
		audit_hand_on(a, a->out + 1, a->outlen);
	} else {
		if (a->metrics != NULL)
			a->metrics->audit_errors++;
		a->seq = a->out_seq;
		memcpy(a->chain, a->out_chain, sizeof a->chain);
		a->link = a->out_link;
		audit_lost(a, a->outlen, a->out_first);
		a->lost += a->nout - 1;
		if (a->metrics != NULL)
			a->metrics->audit_lost += a->nout - 1;
		snprintf(a->lost_last, sizeof a->lost_last, "%s", a->out_last);
	}
	a->outlen = 0;
	a->nout = 0;
	return (rv);
}

/* The end of the pass of the event loop that made lines: write them. */
static void
audit_flush_cb(evutil_socket_t fd, short what, void *arg)
{
	audit_flush(arg);
}

/*
 * Build an event's line and, unless how is AUDIT_BUILD, write it: held
 * for the end of the pass (AUDIT_HOLD, when the log is a file on an
 * event loop), or at once (AUDIT_NOW, or --log-fsync=always, or a line
 * too long to hold), after the lines held.  The chain moves on when
 * the line is written or held.  len is the line's length.
 */
static int
audit_put_event(struct audit *a, const struct audit_event *ev, int how,
    const char *ts, size_t *len)
{
	struct json_writer	w;
	unsigned char		next[AUDIT_HASH_LEN];
	int			rv, now;

	json_writer_buf(&w, a->buf + 1, AUDIT_LINE_MAX - 1);
	w.str_max = AUDIT_FIELD_MAX;
	audit_format(&w, ev, ts);
	*len = w.len;
	now = how == AUDIT_NOW || a->flush == NULL ||
	    a->fsync == AUDIT_FSYNC_ALWAYS ||
	    w.len + AUDIT_SEAL_MAX > AUDIT_BATCH_MAX / 2;
	if (how != AUDIT_BUILD && (now || audit_full(a, w.len) ||
	    a->outlen + w.len + AUDIT_SEAL_MAX > AUDIT_BATCH_MAX) &&
	    audit_flush(a) == -1)
		return (-1);
	if (how != AUDIT_BUILD && audit_full(a, w.len))
		audit_rotate(a);
	rv = audit_seal(a, &w, next);
	*len = w.len;
	if (rv == -1) {
		snprintf(a->err, sizeof a->err, "%s", w.failed ?
		    "line too long" : "cannot hash a line");
		return (-1);
	}
	if (how == AUDIT_BUILD)
		return (0);
	if (a->kind != AUDIT_FILE)
		rv = audit_send(a, w.buf, w.len - 1);
	else if (now && (rv = audit_emit(a, w.buf, w.len)) == 0)
		audit_sync(a);
	else if (!now)
		audit_hold(a, w.buf, w.len, ts);
	if (rv == 0) {
		a->seq++;
		if (a->own_first == 0)
			a->own_first = a->seq;
		memcpy(a->chain, next, sizeof a->chain);
		a->link = 0;
		if (now || a->kind != AUDIT_FILE)
			audit_hand_on(a, w.buf, w.len);
	} else if (a->metrics != NULL)
		a->metrics->audit_errors++;
	return (rv);
}

/*
 * After lines were lost, write the "loss" line that records it, and
 * say on stderr that the log is written again.  Returns 0 when nothing
 * is owed any more.
 */
static int
audit_catch_up(struct audit *a)
{
	struct audit_event	ev;
	char			ts[48];
	size_t			len;

	if (a->lost == 0)
		return (0);
	audit_event_init(&ev);
	ev.event = "loss";
	ev.reason = a->why;
	ev.lost = a->lost;
	ev.lost_bytes = a->lost_bytes;
	ev.lost_first = a->lost_first;
	ev.lost_last = a->lost_last;
	ev.detail = a->go_on ? "the log could not be written; traffic went "
	    "on (--log-fail=open)" : "the log could not be written; new "
	    "connections were refused meanwhile";
	audit_timestamp(a, ts, sizeof ts);
	if (audit_put_event(a, &ev, AUDIT_NOW, ts, &len) == -1)
		return (-1);
	log_warnx("audit log: %s: writing again; %llu line(s), %llu bytes, "
	    "were lost from %s to %s (recorded in the log, seq %llu)",
	    audit_name(a), (unsigned long long)a->lost,
	    (unsigned long long)a->lost_bytes, a->lost_first, a->lost_last,
	    a->seq);
	a->lost = a->lost_bytes = 0;
	return (0);
}

/* Write the pending "resume" line, which says why the chain restarted. */
static void
audit_write_note(struct audit *a)
{
	struct audit_event	ev;

	audit_event_init(&ev);
	ev.event = "resume";
	ev.detail = a->note;
	a->note = NULL;
	audit_write(a, &ev);
}

/*
 * Write one line, after the "loss" line owed if lines were lost; a line
 * that cannot be written is counted.
 */
size_t
audit_write(struct audit *a, const struct audit_event *ev)
{
	char	ts[48];
	size_t	len = 0;
	int	saved = errno, stuck;

	if (a == NULL || a->fd == -1)
		return (0);
	if (a->note != NULL)
		audit_write_note(a);
	stuck = audit_catch_up(a) == -1;
	audit_timestamp(a, ts, sizeof ts);
	if (audit_put_event(a, ev, stuck ? AUDIT_BUILD : AUDIT_HOLD, ts,
	    &len) == -1 || stuck)
		audit_lost(a, len, ts);
	errno = saved;
	return (len);
}

/* Tell whether new traffic may go (the log can be written, or go_on). */
int
audit_ready(struct audit *a)
{
	if (a == NULL || a->fd == -1 || a->go_on)
		return (1);
	return (audit_catch_up(a) == 0);
}

/* Count failed writes and lost lines in m (NULL: not). */
void
audit_set_metrics(struct audit *a, struct metrics *m)
{
	if (a != NULL)
		a->metrics = m;
}

/* Hand each line written, whole and in the chain, on to a shipper. */
void
audit_set_hook(struct audit *a, audit_hook_cb cb, void *arg)
{
	a->hook = cb;
	a->hook_arg = arg;
}

/*
 * Write a file's lines once per pass of base's event loop, at its end,
 * instead of one write() each.
 */
int
audit_set_base(struct audit *a, struct event_base *base)
{
	if (a == NULL || a->fd == -1 || a->kind != AUDIT_FILE ||
	    a->flush != NULL)
		return (0);
	if ((a->out = malloc(AUDIT_BATCH_MAX + 1)) == NULL ||
	    (a->flush = event_new(base, -1, 0, audit_flush_cb, a)) == NULL) {
		free(a->out);
		a->out = NULL;
		return (-1);
	}
	return (0);
}

/* Let traffic go on while the log cannot be written (--log-fail=open). */
void
audit_set_fail_open(struct audit *a, int on)
{
	a->go_on = on;
}

/*
 * Tell whether a failed write's fragment can be cut off: only in a
 * regular file written with O_APPEND (otherwise the file offset would
 * stay past the new end).
 */
static int
audit_cuttable(int fd)
{
	struct stat	st;
	int		fl;

	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode))
		return (0);
	if ((fl = fcntl(fd, F_GETFL)) == -1)
		return (0);
	return ((fl & O_APPEND) != 0);
}

/* Open the log file for appending. */
int
audit_open_fd(const char *path, char *err, size_t errlen)
{
	int	fd;

	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY,
	    0600);
	if (fd == -1)
		snprintf(err, errlen, "audit log: %s: %s", path,
		    strerror(errno));
	return (fd);
}

/* Take the file now open: its identity and size. */
void
audit_take_fd(struct audit *a, int fd)
{
	struct stat	st;

	a->fd = fd;
	a->cuttable = audit_cuttable(fd);
	if (fstat(fd, &st) == 0) {
		a->dev = st.st_dev;
		a->ino = st.st_ino;
		a->size = st.st_size;
	}
}

/* Find the last complete line in buf[0..end): its start, or -1. */
ssize_t
audit_last_line(const char *buf, size_t end, int whole)
{
	ssize_t	i;

	if (end == 0 || buf[end - 1] != '\n')
		return (-1);
	for (i = (ssize_t)end - 2; i >= 0; i--) {
		if (buf[i] == '\n')
			return (i + 1);
	}
	return (whole ? 0 : -1);
}

/* Connect a datagram socket to syslog's or journald's socket. */
int
audit_dgram_open(const char *path, char *err, size_t errlen)
{
	struct sockaddr_un	sun;
	int			fd;

	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof sun.sun_path) {
		snprintf(err, errlen, "audit log: %s: path too long", path);
		return (-1);
	}
	memcpy(sun.sun_path, path, strlen(path) + 1);
	if ((fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)) == -1 ||
	    connect(fd, (struct sockaddr *)&sun, sizeof sun) == -1) {
		snprintf(err, errlen, "audit log: %s: %s", path,
		    strerror(errno));
		if (fd != -1)
			close(fd);
		return (-1);
	}
	return (fd);
}

/*
 * Open the file again under its name (after log rotation): a new file
 * carries the chain on with prev_chain in its first line.
 */
int
audit_reopen(struct audit *a)
{
	char	err[1024];
	int	fd;
	dev_t	dev;
	ino_t	ino;

	if (a == NULL || !a->owned)
		return (0);
	audit_flush(a);
	if ((fd = audit_open_fd(a->path, err, sizeof err)) == -1) {
		log_warnx("%s", err);
		return (-1);
	}
	close(a->fd);
	dev = a->dev;
	ino = a->ino;
	audit_take_fd(a, fd);
	if ((a->dev != dev || a->ino != ino) && a->seq > 0)
		a->link = 1;
	a->torn = 0;
	return (0);
}
