/*
 * What `pinhole log verify` says of the sessions in the files it checked
 * (proxy/audit/verify.c follows them): a session whose start is not in
 * the files (they begin in its middle), and one with no stop line, which
 * is either running (its gateway's pid, from its start line, is a live
 * pinhole process that started when the session did) or ended without
 * writing it: killed, or unable to write its log.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/logverify.h"
#include "proxy/audit/verify.h"

#define LOGVERIFY_SETUP_S	600	/* a gateway's start to its start line */

/* Read a whole small file (a /proc one) into buf; its length, or -1. */
static ssize_t
logverify_read(const char *path, char *buf, size_t len)
{
	FILE	*f;
	size_t	 n;

	if ((f = fopen(path, "re")) == NULL)
		return (-1);
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = '\0';
	return ((ssize_t)n);
}

/* When the machine booted (btime in /proc/stat); -1 unknown. */
static long long
logverify_boot(void)
{
	static char	 buf[16384];
	char		*p;

	if (logverify_read("/proc/stat", buf, sizeof buf) == -1 ||
	    (p = strstr(buf, "\nbtime ")) == NULL)
		return (-1);
	return (strtoll(p + 7, NULL, 10));
}

/*
 * When process pid started, in seconds since the epoch, and whether it
 * is named pinhole; -1 when it does not exist.
 */
static long long
logverify_proc(long long pid, int *pinhole)
{
	char		 path[64], buf[1024], *p;
	long long	 boot, ticks, hz = sysconf(_SC_CLK_TCK);
	int		 i;

	snprintf(path, sizeof path, "/proc/%lld/stat", pid);
	if (logverify_read(path, buf, sizeof buf) == -1 ||
	    (p = strrchr(buf, ')')) == NULL)
		return (-1);
	*pinhole = strncmp(strchr(buf, '(') != NULL ? strchr(buf, '(') + 1 :
	    "", "pinhole)", 8) == 0;
	/* Field 22, starttime: the 20th after the name's ")". */
	for (i = 0; i < 20 && p != NULL; i++)
		p = strchr(p + 1, ' ');
	if (p == NULL || (boot = logverify_boot()) == -1 || hz <= 0)
		return (-1);
	ticks = strtoll(p + 1, NULL, 10);
	return (boot + ticks / hz);
}

/* A line's ts as seconds since the epoch; -1 when it is not one. */
static long long
logverify_ts(const char *ts)
{
	struct tm	tm;
	const char	*end;

	memset(&tm, 0, sizeof tm);
	if ((end = strptime(ts, "%Y-%m-%dT%H:%M:%S", &tm)) == NULL)
		return (-1);
	return ((long long)timegm(&tm));
}

/*
 * Tell whether a session's gateway still runs: the pid of its start
 * line is a process named pinhole that started at most
 * LOGVERIFY_SETUP_S before that line (and not after it), so a pid used
 * again by another process does not count.
 */
int
logverify_running(const struct audit_vsession *s)
{
	long long	since, at;
	int		pinhole = 0;

	if (!s->started || s->gateway_pid <= 0 || s->gateway_pid > INT32_MAX ||
	    (kill((pid_t)s->gateway_pid, 0) == -1 && errno != EPERM))
		return (0);
	if ((at = logverify_ts(s->ts)) == -1 ||
	    (since = logverify_proc(s->gateway_pid, &pinhole)) == -1)
		return (0);
	return (pinhole && since <= at + 1 && since >= at - LOGVERIFY_SETUP_S);
}

/* Say one thing, its untrusted parts escaped by term. */
static void
logverify_say(FILE *fp, int (*term)(FILE *, const char *), const char *head,
    const char *text)
{
	fputs(head, fp);
	term(fp, text);
	fputc('\n', fp);
}

/* Describe a session that lacks its start, its stop, or both. */
static int
logverify_session(const struct audit_vsession *s, int partial, FILE *fp,
    int (*term)(FILE *, const char *))
{
	char	buf[1024], why[256];
	int	bad = 0;

	if (!s->started && !partial) {
		snprintf(buf, sizeof buf, "session %s (%s:%llu, seq %llu to "
		    "%llu): its start is not in the files given: they begin "
		    "in its middle (its lines before seq %llu are in an "
		    "earlier file, not given or deleted)", s->name, s->file,
		    s->line, s->first_seq, s->last_seq, s->first_seq);
		logverify_say(fp, term, "INCOMPLETE: ", buf);
		bad = 1;
	}
	if (s->stopped)
		return (bad);
	if (s->superseded)
		snprintf(why, sizeof why, "a later start of the same session "
		    "came: it was killed, or could not write its log");
	else if (logverify_running(s)) {
		snprintf(buf, sizeof buf, "session %s (gateway pid %lld) has "
		    "no stop line yet: it is running", s->name,
		    s->gateway_pid);
		logverify_say(fp, term, "note: ", buf);
		return (bad);
	} else if (!s->started)
		snprintf(why, sizeof why, "its start line, with its gateway's "
		    "pid, is not in the files given, and it did not stop");
	else if (s->gateway_pid <= 0)
		snprintf(why, sizeof why, "its start line names no gateway "
		    "pid: it was killed, could not write its log, or runs");
	else
		snprintf(why, sizeof why, "its gateway (pid %lld) is not "
		    "running: it was killed, or could not write its log (a "
		    "full disk)", s->gateway_pid);
	snprintf(buf, sizeof buf, "session %s (%s:%llu, %s, seq %llu to %llu): "
	    "no stop line: %s", s->name, s->file, s->line, s->ts, s->first_seq,
	    s->last_seq, why);
	logverify_say(fp, term, "INCOMPLETE: ", buf);
	return (1);
}

/*
 * Say which sessions the files do not hold whole; partial: files that
 * begin in a session's middle are expected.  Returns the number of
 * sessions reported as incomplete.
 */
size_t
logverify_report(const struct audit_verify *v, int partial, FILE *fp,
    int (*term)(FILE *, const char *))
{
	const struct audit_vsession	*s;
	size_t				 i, n, bad = 0;

	s = audit_verify_sessions(v, &n);
	for (i = 0; i < n; i++)
		bad += logverify_session(&s[i], partial, fp, term);
	if (v->untracked > 0) {
		fprintf(fp, "INCOMPLETE: %llu line(s) of sessions past the "
		    "first %d were not followed\n", v->untracked,
		    AUDIT_VERIFY_SESSIONS);
		bad++;
	}
	return (bad);
}
