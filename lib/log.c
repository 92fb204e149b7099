/*
 * Diagnostics, relayd style: log_warn() appends strerror(errno),
 * log_warnx() does not; fatal() and fatalx() are for start-up only.
 *
 * When stderr is a stream to the journal (a systemd service's), each
 * line starts with its syslog priority, "<4>" (sd-daemon(3)), in place
 * of the program's name, which the journal records on its own.
 */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "lib/log.h"

static const char	*log_name = "pinhole";
static int		 log_verbose;
static int		 log_journal;	/* stderr is the journal's stream */

/* Is stderr the stream $JOURNAL_STREAM ("DEVICE:INODE") names? */
static int
log_stderr_is_journal(void)
{
	const char		*env = getenv("JOURNAL_STREAM");
	unsigned long long	 dev, ino;
	struct stat		 st;
	char			 end;

	if (env == NULL || sscanf(env, "%llu:%llu%c", &dev, &ino, &end) != 2)
		return (0);
	if (fstat(STDERR_FILENO, &st) == -1)
		return (0);
	return (st.st_dev == (dev_t)dev && st.st_ino == (ino_t)ino);
}

/* Set the program name shown before each message and the verbosity. */
void
log_init(const char *name, int verbose)
{
	log_name = name;
	log_verbose = verbose;
	log_journal = log_stderr_is_journal();
}

/* Change the verbosity. */
void
log_setverbose(int verbose)
{
	log_verbose = verbose;
}

/* Write one line: name or priority, message, and an error text if given. */
static void
log_vwrite(int prio, const char *errstr, const char *fmt, va_list ap)
{
	char	buf[1024], head[64];

	vsnprintf(buf, sizeof buf, fmt, ap);
	if (log_journal)
		snprintf(head, sizeof head, "<%d>", prio);
	else
		snprintf(head, sizeof head, "%s: ", log_name);
	if (errstr != NULL)
		fprintf(stderr, "%s%s: %s\n", head, buf, errstr);
	else
		fprintf(stderr, "%s%s\n", head, buf);
}

/* Warn, with the text of errno. */
void
log_warn(const char *fmt, ...)
{
	va_list	 ap;
	int	 saved = errno;

	va_start(ap, fmt);
	log_vwrite(LOG_WARNING, strerror(saved), fmt, ap);
	va_end(ap);
	errno = saved;
}

/* Warn. */
void
log_warnx(const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	log_vwrite(LOG_WARNING, NULL, fmt, ap);
	va_end(ap);
}

/* Say why pinhole cannot start, ending with LOG_DOCTOR_HINT. */
void
log_refuse(const char *fmt, ...)
{
	va_list	ap;
	char	buf[1024];

	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	log_warnx("%s; " LOG_DOCTOR_HINT, buf);
}

/* Say something worth knowing when verbose. */
void
log_info(const char *fmt, ...)
{
	va_list	ap;

	if (log_verbose < 1)
		return;
	va_start(ap, fmt);
	log_vwrite(LOG_INFO, NULL, fmt, ap);
	va_end(ap);
}

/* Say something only a developer needs. */
void
log_debug(const char *fmt, ...)
{
	va_list	ap;

	if (log_verbose < 2)
		return;
	va_start(ap, fmt);
	log_vwrite(LOG_DEBUG, NULL, fmt, ap);
	va_end(ap);
}

/* Give up, with the text of errno. */
void
fatal(const char *fmt, ...)
{
	va_list	 ap;
	int	 saved = errno;

	va_start(ap, fmt);
	log_vwrite(LOG_ERR, strerror(saved), fmt, ap);
	va_end(ap);
	exit(1);
}

/* Give up. */
void
fatalx(const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	log_vwrite(LOG_ERR, NULL, fmt, ap);
	va_end(ap);
	exit(1);
}
