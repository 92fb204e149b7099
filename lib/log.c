/*
 * Diagnostics, relayd style: log_warn() appends strerror(errno),
 * log_warnx() does not; fatal() and fatalx() are for start-up only.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/log.h"

static const char	*log_name = "pinhole";
static int		 log_verbose;

/* Set the program name shown before each message and the verbosity. */
void
log_init(const char *name, int verbose)
{
	log_name = name;
	log_verbose = verbose;
}

/* Change the verbosity. */
void
log_setverbose(int verbose)
{
	log_verbose = verbose;
}

/* Write one line: name, message, and an error text if given. */
static void
log_vwrite(const char *errstr, const char *fmt, va_list ap)
{
	char	buf[1024];

	vsnprintf(buf, sizeof buf, fmt, ap);
	if (errstr != NULL)
		fprintf(stderr, "%s: %s: %s\n", log_name, buf, errstr);
	else
		fprintf(stderr, "%s: %s\n", log_name, buf);
}

/* Warn, with the text of errno. */
void
log_warn(const char *fmt, ...)
{
	va_list	 ap;
	int	 saved = errno;

	va_start(ap, fmt);
	log_vwrite(strerror(saved), fmt, ap);
	va_end(ap);
	errno = saved;
}

/* Warn. */
void
log_warnx(const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	log_vwrite(NULL, fmt, ap);
	va_end(ap);
}

/* Say something worth knowing when verbose. */
void
log_info(const char *fmt, ...)
{
	va_list	ap;

	if (log_verbose < 1)
		return;
	va_start(ap, fmt);
	log_vwrite(NULL, fmt, ap);
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
	log_vwrite(NULL, fmt, ap);
	va_end(ap);
}

/* Give up, with the text of errno. */
void
fatal(const char *fmt, ...)
{
	va_list	 ap;
	int	 saved = errno;

	va_start(ap, fmt);
	log_vwrite(strerror(saved), fmt, ap);
	va_end(ap);
	exit(1);
}

/* Give up. */
void
fatalx(const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	log_vwrite(NULL, fmt, ap);
	va_end(ap);
	exit(1);
}
