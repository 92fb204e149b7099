/*
 * The audit log opened and closed: where it goes (a file, stdout,
 * syslog, journald), the chain of an existing file carried on, the
 * gateway's options (--log-key, --log-max-size, --log-fsync,
 * --log-fail), the room a new gateway must find, and the close that
 * says what was lost.  The writing is audit.c's.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <openssl/crypto.h>

#include "lib/log.h"
#include "proxy/audit/audit.h"
#include "proxy/audit/audit-int.h"
#include "proxy/audit/sink.h"

/* Parse --log-fsync: never, batch or always; -1 for anything else. */
int
audit_parse_fsync(const char *s)
{
	if (strcmp(s, "never") == 0)
		return (AUDIT_FSYNC_NEVER);
	if (strcmp(s, "batch") == 0)
		return (AUDIT_FSYNC_BATCH);
	if (strcmp(s, "always") == 0)
		return (AUDIT_FSYNC_ALWAYS);
	return (-1);
}

/*
 * Carry the chain on from the last line of a file: this one (then a cut
 * short last line is closed with a newline and a "resume" line written
 * first), or the rotated FILE.1 when this one is new (then the first line
 * links to it).  Returns 0 when the file had nothing to resume from.
 */
static int
audit_resume_from(struct audit *a, const char *path, int other)
{
	struct audit_link	lk;
	struct stat		st;
	size_t			n, end;
	ssize_t			start;
	int			fd, torn, rv = 0;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY)) == -1)
		return (0);
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) || st.st_size == 0)
		goto out;
	rv = 1;
	n = st.st_size < AUDIT_LINE_MAX + 1 ? st.st_size : AUDIT_LINE_MAX + 1;
	if (pread(fd, a->store, n, st.st_size - n) != (ssize_t)n)
		goto out;
	torn = a->store[n - 1] != '\n';
	for (end = n; end > 0 && a->store[end - 1] != '\n'; end--)
		;
	if (torn && !other && write(a->fd, "\n", 1) == 1)
		a->size++;
	start = audit_last_line(a->store, end, n == (size_t)st.st_size);
	if (start == -1 || audit_link_parse(a->store + start,
	    end - start - 1, &lk) == -1) {
		if (!other)
			a->note = "the last line of the log has no chain "
			    "value: a new chain starts";
		goto out;
	}
	a->seq = lk.seq;
	memcpy(a->chain, lk.chain, sizeof a->chain);
	a->link = other;
	if (torn && !other)
		a->note = "the last line of the log was cut short: "
		    "the chain goes on from the line before it";
out:
	close(fd);
	return (rv);
}

/* Carry on the chain of an existing log, or of the file rotated last. */
static void
audit_resume(struct audit *a)
{
	char	old[PATH_MAX];

	if (audit_resume_from(a, a->path, 0))
		return;
	snprintf(old, sizeof old, "%s.1", a->path);
	audit_resume_from(a, old, 1);
}

/*
 * Choose the socket for "syslog[:PATH]" or "journald[:PATH]"; journald
 * without its socket falls back to syslog.
 */
static int
audit_open_sink(struct audit *a, const char *path, char *err, size_t errlen)
{
	const char	*sock = NULL;

	if (strncmp(path, "journald", 8) == 0) {
		a->kind = AUDIT_JOURNALD;
		sock = path[8] == ':' ? path + 9 : AUDIT_JOURNAL_SOCKET;
		if (path[8] != ':' && access(sock, F_OK) == -1) {
			a->kind = AUDIT_SYSLOG;
			sock = AUDIT_SYSLOG_SOCKET;
		}
	} else {
		a->kind = AUDIT_SYSLOG;
		sock = path[6] == ':' ? path + 7 : AUDIT_SYSLOG_SOCKET;
	}
	if ((a->sock = strdup(sock)) == NULL ||
	    (a->msg = malloc(AUDIT_MSG_MAX)) == NULL) {
		snprintf(err, errlen, "audit log: out of memory");
		return (-1);
	}
	a->fd = audit_dgram_open(sock, err, errlen);
	return (a->fd == -1 ? -1 : 0);
}

/* Tell whether a log name means syslog or journald rather than a file. */
static int
audit_is_sink(const char *path)
{
	return (strcmp(path, "syslog") == 0 || strncmp(path, "syslog:", 7) == 0 ||
	    strcmp(path, "journald") == 0 || strncmp(path, "journald:", 9) == 0);
}

/* Open the audit log: a file, "-", syslog, journald, or NULL for none. */
struct audit *
audit_open(const char *path, char *err, size_t errlen)
{
	struct audit	*a;
	int		 fd;

	if ((a = calloc(1, sizeof *a)) == NULL)
		goto nomem;
	a->fd = -1;
	a->keep = AUDIT_KEEP;
	if (path == NULL)
		return (a);
	if ((a->path = strdup(path)) == NULL ||
	    (a->buf = malloc(AUDIT_LINE_MAX)) == NULL ||
	    (a->store = malloc(AUDIT_LINE_MAX + 1)) == NULL ||
	    (a->hash = audit_hash_create(NULL, 0)) == NULL ||
	    audit_hash_seed(a->hash, a->chain) == -1)
		goto nomem;
	if (audit_is_sink(path)) {
		if (audit_open_sink(a, path, err, errlen) == -1)
			goto fail;
	} else if (strcmp(path, "-") == 0)
		audit_take_fd(a, STDOUT_FILENO);
	else {
		if ((fd = audit_open_fd(path, err, errlen)) == -1)
			goto fail;
		a->owned = 1;
		audit_take_fd(a, fd);
		audit_resume(a);
	}
	return (a);

nomem:
	snprintf(err, errlen, "audit log: out of memory");
fail:
	audit_close(a);
	return (NULL);
}

/* Make the chain an HMAC with the key in a file. */
int
audit_set_key(struct audit *a, const char *path, char *err, size_t errlen)
{
	struct audit_hash	*h;
	unsigned char		*key;
	size_t			 keylen = 0;
	int			 rv = -1;

	if ((key = malloc(AUDIT_KEY_MAX)) == NULL) {
		snprintf(err, errlen, "audit log: out of memory");
		return (-1);
	}
	if (audit_read_key(path, key, &keylen, err, errlen) == -1)
		goto out;
	if ((h = audit_hash_create(key, keylen)) == NULL) {
		snprintf(err, errlen, "audit log: cannot use the key");
		goto out;
	}
	audit_hash_free(a->hash);
	a->hash = h;
	if (a->seq == 0 && !a->link)
		audit_hash_seed(a->hash, a->chain);
	rv = 0;
out:
	OPENSSL_cleanse(key, AUDIT_KEY_MAX);
	free(key);
	return (rv);
}

/* Rotate past max_size bytes (0: never), keeping FILE.1 ... FILE.keep. */
void
audit_set_rotation(struct audit *a, long long max_size, int keep)
{
	a->max_size = max_size > 0 ? max_size : 0;
	a->keep = keep > 0 ? keep : 1;
}

/* Parse a size: digits with an optional K, M or G (powers of 1024). */
int
audit_parse_size(const char *s, long long *size)
{
	char		*end;
	long long	 v, mult = 1;

	if (*s < '0' || *s > '9')
		return (-1);
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno != 0)
		return (-1);
	if (*end == 'K' || *end == 'k')
		mult = 1024;
	else if (*end == 'M' || *end == 'm')
		mult = 1024 * 1024;
	else if (*end == 'G' || *end == 'g')
		mult = 1024 * 1024 * 1024;
	if (mult != 1)
		end++;
	if (*end != '\0' || v > LLONG_MAX / mult)
		return (-1);
	*size = v * mult;
	return (0);
}

/* Name the log file used when no --log is given. */
int
audit_default_path(char *buf, size_t size)
{
	const char	*xdg = getenv("XDG_STATE_HOME"), *home;
	int		 n;

	if (xdg != NULL && xdg[0] == '/')
		n = snprintf(buf, size, "%s/pinhole/audit.log", xdg);
	else if ((home = getenv("HOME")) != NULL && home[0] == '/')
		n = snprintf(buf, size, "%s/.local/state/pinhole/audit.log",
		    home);
	else
		return (-1);
	if (n < 0 || (size_t)n >= size)
		return (-1);
	return (0);
}

/* Set the defaults of the gateway's audit options. */
void
audit_config_init(struct audit_config *cfg)
{
	memset(cfg, 0, sizeof *cfg);
	cfg->max_size = AUDIT_MAX_SIZE;
	cfg->keep = AUDIT_KEEP;
}

/* Open the audit log with the gateway's options. */
struct audit *
audit_open_config(const struct audit_config *cfg, char *err, size_t errlen)
{
	struct audit	*a;

	if ((a = audit_open(cfg->log, err, errlen)) == NULL)
		return (NULL);
	if (cfg->keyfile != NULL &&
	    audit_set_key(a, cfg->keyfile, err, errlen) == -1) {
		audit_close(a);
		return (NULL);
	}
	audit_set_rotation(a, cfg->max_size, cfg->keep);
	audit_set_fail_open(a, cfg->fail_open);
	a->fsync = cfg->fsync;
	return (a);
}

/*
 * Tell whether a log file has room for the next lines: AUDIT_ROOM bytes
 * past its end are allocated (fallocate(2), keeping its size, so the
 * lines to come are written into them), which a full disk, a quota or a
 * file size limit refuses; where the file system cannot allocate ahead,
 * its free space is asked.  Anything but a file we opened is taken as
 * writable.  0, or -1 with err saying why.
 */
int
audit_check_room(struct audit *a, char *err, size_t errlen)
{
	struct statvfs	sv;
	unsigned long long avail;
	int		e;

	if (a == NULL || a->fd == -1 || a->kind != AUDIT_FILE || !a->owned)
		return (0);
	if (fallocate(a->fd, FALLOC_FL_KEEP_SIZE, a->size, AUDIT_ROOM) == 0)
		return (0);
	e = errno;
	/* No allocation ahead here, or an append-only (chattr +a) file. */
	if (e == EOPNOTSUPP || e == ENOSYS || e == EINVAL || e == EPERM) {
		if (fstatvfs(a->fd, &sv) == -1)
			return (0);
		avail = (unsigned long long)(geteuid() == 0 ? sv.f_bfree :
		    sv.f_bavail) * sv.f_frsize;
		if (avail >= AUDIT_ROOM)
			return (0);
		e = ENOSPC;
	}
	snprintf(err, errlen, "audit log: %s: %s: it cannot be written, and "
	    "nothing would be logged", a->path, strerror(e));
	return (-1);
}

/* Close the audit log, saying on stderr what was lost and not recorded. */
void
audit_close(struct audit *a)
{
	if (a == NULL)
		return;
	audit_flush(a);
	if (a->flush != NULL)
		event_free(a->flush);
	if (a->lost > 0)
		log_warnx("audit log: %s: closed while it cannot be written: "
		    "%llu line(s), %llu bytes, were lost from %s to %s, the "
		    "last ones (the stop line) included, and the log has no "
		    "record of it (%s)", audit_name(a),
		    (unsigned long long)a->lost,
		    (unsigned long long)a->lost_bytes, a->lost_first,
		    a->lost_last, a->why);
	if ((a->owned || a->kind != AUDIT_FILE) && a->fd != -1)
		close(a->fd);
	audit_hash_free(a->hash);
	free(a->dropped);
	free(a->out);
	free(a->msg);
	free(a->store);
	free(a->sock);
	free(a->buf);
	free(a->path);
	free(a);
}
