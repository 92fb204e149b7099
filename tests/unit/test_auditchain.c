/*
 * The audit chain: a table of tamperings, each found at the right line;
 * rotation across files and the links between them; resuming an existing
 * log; syslog and journald messages read back from a local socket.
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "proxy/audit/audit.h"
#include "proxy/audit/verify.h"

#define MAXLINES	64

struct fixture {
	char	dir[64];
	char	path[128];
	char	key[128];
	char	key2[128];
};

struct lines {
	char	*l[MAXLINES];
	int	 n;
};

/* Make a private directory and two keys. */
static int
setup(void **state)
{
	struct fixture	*f;
	FILE		*fp;

	f = calloc(1, sizeof *f);
	assert_non_null(f);
	snprintf(f->dir, sizeof f->dir, "/tmp/pinhole-chain.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->path, sizeof f->path, "%s/audit.log", f->dir);
	snprintf(f->key, sizeof f->key, "%s/key", f->dir);
	snprintf(f->key2, sizeof f->key2, "%s/key2", f->dir);
	assert_non_null(fp = fopen(f->key, "w"));
	fputs("0123456789abcdef0123456789abcdef\n", fp);
	fclose(fp);
	assert_non_null(fp = fopen(f->key2, "w"));
	fputs("fedcba9876543210fedcba9876543210\n", fp);
	fclose(fp);
	*state = f;
	return (0);
}

/* Remove the files of one test. */
static int
teardown(void **state)
{
	struct fixture	*f = *state;
	char		 cmd[160];

	snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->dir);
	assert_int_equal(system(cmd), 0);
	free(f);
	return (0);
}

/* Open a log, with a key and rotation if given. */
static struct audit *
open_log(const char *path, const char *key, long long max, int keep)
{
	struct audit_config	 cfg;
	struct audit		*a;
	char			 err[256];

	audit_config_init(&cfg);
	assert_int_equal(cfg.max_size, 100 << 20);
	assert_int_equal(cfg.keep, 5);
	cfg.log = path;
	cfg.keyfile = key;
	cfg.max_size = max;
	cfg.keep = keep;
	a = audit_open_config(&cfg, err, sizeof err);
	assert_non_null(a);
	return (a);
}

/* Write n events, numbered from first. */
static void
write_events(struct audit *a, int first, int n)
{
	struct audit_event	ev;
	char			host[32];
	int			i;

	for (i = first; i < first + n; i++) {
		audit_event_init(&ev);
		snprintf(host, sizeof host, "host%d.example.org", i);
		ev.event = "connect";
		ev.verdict = i % 2 ? "allow" : "deny";
		ev.session = "s1";
		ev.host = host;
		ev.port = 443;
		audit_write(a, &ev);
	}
}

/* Read a file into a string. */
static char *
slurp(const char *path, size_t *lenp)
{
	FILE	*fp;
	char	*buf;
	long	 len;

	assert_non_null(fp = fopen(path, "r"));
	fseek(fp, 0, SEEK_END);
	len = ftell(fp);
	rewind(fp);
	assert_non_null(buf = calloc(1, len + 1));
	assert_int_equal(fread(buf, 1, len, fp), (size_t)len);
	fclose(fp);
	if (lenp != NULL)
		*lenp = len;
	return (buf);
}

/* Split a file into its lines (newline included). */
static void
read_lines(const char *path, struct lines *ls)
{
	char	*buf = slurp(path, NULL), *p = buf, *nl;

	ls->n = 0;
	while (*p != '\0' && ls->n < MAXLINES) {
		nl = strchr(p, '\n');
		nl = nl != NULL ? nl + 1 : p + strlen(p);
		ls->l[ls->n++] = strndup(p, nl - p);
		p = nl;
	}
	free(buf);
}

/* Join lines into a file. */
static void
write_lines(const char *path, struct lines *ls)
{
	FILE	*fp;
	int	 i;

	assert_non_null(fp = fopen(path, "w"));
	for (i = 0; i < ls->n; i++) {
		fputs(ls->l[i], fp);
		free(ls->l[i]);
	}
	fclose(fp);
}

/*
 * Check files in order; return the first bad line (0: intact) and copy
 * the message.
 */
static unsigned long long
verify(const char *key, char *msg, size_t msglen, const char **files,
    int nfiles)
{
	struct audit_verify	 v;
	unsigned char		 k[AUDIT_KEY_MAX];
	size_t			 klen = 0, len;
	char			 err[256], *buf;
	unsigned long long	 bad;
	int			 i, rv = 0;

	if (key != NULL)
		assert_int_equal(audit_read_key(key, k, &klen, err,
		    sizeof err), 0);
	assert_int_equal(audit_verify_init(&v, k, klen), 0);
	for (i = 0; i < nfiles && rv == 0; i++) {
		buf = slurp(files[i], &len);
		rv = audit_verify_file(&v, files[i], buf, len);
		free(buf);
	}
	bad = v.bad_line;
	snprintf(msg, msglen, "%s", v.msg);
	audit_verify_free(&v);
	return (bad);
}

/* Edit the host of a line. */
static void
t_edit(struct lines *ls)
{
	char	*p = strstr(ls->l[3], "host4");

	p[4] = '9';
}

/* Change one hex digit of a line's chain value. */
static void
t_edit_chain(struct lines *ls)
{
	char	*p = strstr(ls->l[3], "\"chain\":\"") + 9;

	*p = *p == '0' ? '1' : '0';
}

/* Delete a line. */
static void
t_delete(struct lines *ls)
{
	free(ls->l[3]);
	memmove(&ls->l[3], &ls->l[4], (ls->n - 4) * sizeof ls->l[0]);
	ls->n--;
}

/* Delete the first line. */
static void
t_delete_first(struct lines *ls)
{
	free(ls->l[0]);
	memmove(&ls->l[0], &ls->l[1], (ls->n - 1) * sizeof ls->l[0]);
	ls->n--;
}

/* Delete two lines. */
static void
t_delete_two(struct lines *ls)
{
	t_delete(ls);
	t_delete(ls);
}

/* Insert a forged line after line 3. */
static void
t_insert(struct lines *ls)
{
	char	*p;

	memmove(&ls->l[4], &ls->l[3], (ls->n - 3) * sizeof ls->l[0]);
	ls->n++;
	ls->l[3] = strdup(ls->l[2]);
	p = strstr(ls->l[3], "host3");
	p[4] = '7';
}

/* Insert a copy of line 3 after it. */
static void
t_duplicate(struct lines *ls)
{
	memmove(&ls->l[4], &ls->l[3], (ls->n - 3) * sizeof ls->l[0]);
	ls->n++;
	ls->l[3] = strdup(ls->l[2]);
}

/* Swap lines 4 and 5. */
static void
t_swap(struct lines *ls)
{
	char	*t = ls->l[3];

	ls->l[3] = ls->l[4];
	ls->l[4] = t;
}

/* Cut the last line in the middle. */
static void
t_cut_end(struct lines *ls)
{
	ls->l[ls->n - 1][40] = '\0';
}

/* Cut a line in the middle, keeping its newline. */
static void
t_damage(struct lines *ls)
{
	strcpy(ls->l[4] + 40, "\n");
}

/* Delete the last line: not detectable from the file alone. */
static void
t_delete_last(struct lines *ls)
{
	free(ls->l[ls->n - 1]);
	ls->n--;
}

/* Tamperings of a 10-line log and where they must be found. */
static const struct tamper {
	const char		*name;
	void			(*edit)(struct lines *);
	const char		*key;	/* verify with: 0 none, 1 same, 2 other */
	unsigned long long	 line;	/* 0: reported intact */
	const char		*word;
} tampers[] = {
	{ "intact", NULL, "1", 0, NULL },
	{ "edited", t_edit, "1", 4, "edited" },
	{ "edited chain value", t_edit_chain, "1", 4, "edited" },
	{ "deleted", t_delete, "1", 4, "deleted: 1 line(s) missing" },
	{ "deleted two", t_delete_two, "1", 4, "deleted: 2 line(s)" },
	{ "deleted first", t_delete_first, "1", 1, "deleted" },
	{ "inserted", t_insert, "1", 4, "inserted" },
	{ "duplicated", t_duplicate, "1", 4, "inserted" },
	{ "reordered", t_swap, "1", 4, "reordered" },
	{ "cut short at the end", t_cut_end, "1", 10, "cut short" },
	{ "damaged line", t_damage, "1", 5, "damaged" },
	{ "wrong key", NULL, "2", 1, "wrong key" },
	{ "no key", NULL, "0", 1, "wrong key" },
	{ "deleted last (undetectable alone)", t_delete_last, "1", 0, NULL },
};

/* Each tampering is found, at the line where it is. */
static void
test_tamper(void **state)
{
	struct fixture		*f = *state;
	const struct tamper	*t;
	struct audit		*a;
	struct lines		 ls;
	const char		*files[1] = { f->path }, *key;
	char			 msg[512];
	unsigned long long	 bad;
	size_t			 i;

	for (i = 0; i < sizeof tampers / sizeof tampers[0]; i++) {
		t = &tampers[i];
		unlink(f->path);
		a = open_log(f->path, f->key, 0, 1);
		write_events(a, 1, 10);
		audit_close(a);
		read_lines(f->path, &ls);
		assert_int_equal(ls.n, 10);
		if (t->edit != NULL)
			t->edit(&ls);
		write_lines(f->path, &ls);
		key = t->key[0] == '0' ? NULL : t->key[0] == '1' ? f->key :
		    f->key2;
		bad = verify(key, msg, sizeof msg, files, 1);
		if (bad != t->line || (t->word != NULL &&
		    strstr(msg, t->word) == NULL))
			fail_msg("%s: line %llu, '%s'", t->name, bad, msg);
	}
}

/* Rotation: files linked in order; a missing or cut file is a gap. */
static void
test_rotation(void **state)
{
	struct fixture	*f = *state;
	struct audit	*a;
	struct lines	 ls;
	char		 p1[160], p2[160], p3[160], p4[160], msg[512];
	const char	*all[4], *files[4];

	snprintf(p1, sizeof p1, "%s.1", f->path);
	snprintf(p2, sizeof p2, "%s.2", f->path);
	snprintf(p3, sizeof p3, "%s.3", f->path);
	snprintf(p4, sizeof p4, "%s.4", f->path);
	a = open_log(f->path, NULL, 1000, 3);
	write_events(a, 1, 20);
	audit_close(a);
	assert_int_equal(access(p3, F_OK), 0);
	assert_int_equal(access(p4, F_OK), -1);
	all[0] = p3, all[1] = p2, all[2] = p1, all[3] = f->path;
	assert_int_equal(verify(NULL, msg, sizeof msg, all, 4), 0);
	/* One file alone carries on from one not given: fine. */
	assert_int_equal(verify(NULL, msg, sizeof msg, &all[3], 1), 0);
	/* A file missing between two. */
	files[0] = p3, files[1] = p1, files[2] = f->path;
	assert_int_equal(verify(NULL, msg, sizeof msg, files, 3), 1);
	assert_non_null(strstr(msg, "audit.log.1:1: gap between files"));
	/* Files out of order. */
	files[0] = p2, files[1] = p3;
	assert_int_equal(verify(NULL, msg, sizeof msg, files, 2), 1);
	assert_non_null(strstr(msg, "gap"));
	/* A rotated file cut short by whole lines at its end. */
	read_lines(p2, &ls);
	t_delete_last(&ls);
	write_lines(p2, &ls);
	assert_int_equal(verify(NULL, msg, sizeof msg, all, 4), 1);
	assert_non_null(strstr(msg, "audit.log.1:1: gap between files"));
}

/* Write a line of session name: its event, and a pid on start lines. */
static void
write_session(struct audit *a, const char *name, const char *event)
{
	struct audit_event	ev;

	audit_event_init(&ev);
	ev.event = event;
	ev.session = name;
	if (strcmp(event, "start") == 0)
		ev.gateway_pid = 4242;
	if (strcmp(event, "connect") == 0) {
		ev.verdict = "deny";
		ev.host = "evil.example.org";
		ev.port = 443;
	}
	audit_write(a, &ev);
}

/* Find a session by its name in what verify followed. */
static const struct audit_vsession *
find_session(const struct audit_verify *v, const char *name, int nth)
{
	const struct audit_vsession	*s;
	size_t				 i, n;

	s = audit_verify_sessions(v, &n);
	for (i = 0; i < n; i++)
		if (strcmp(s[i].name, name) == 0 && nth-- == 0)
			return (&s[i]);
	return (NULL);
}

/*
 * Verify follows each session from its start to its stop: one whole,
 * one with no stop (killed, or still running: its start line names the
 * gateway's pid), one started again with no stop between, and, in a file
 * that begins after the log was rotated, one whose start is in the
 * earlier file.
 */
static void
test_sessions(void **state)
{
	struct fixture			*f = *state;
	const struct audit_vsession	*s;
	struct audit_verify		 v;
	struct audit			*a;
	char				 old[160], *buf;
	size_t				 len;

	snprintf(old, sizeof old, "%s.1", f->path);
	a = open_log(f->path, NULL, 0, 1);
	write_session(a, "run-a", "start");
	write_session(a, "run-b", "start");
	write_session(a, "run-a", "connect");
	write_session(a, "run-a", "stop");
	write_session(a, "run-c", "start");
	write_session(a, "run-c", "start");
	write_session(a, "run-c", "stop");
	write_session(a, "run-b", "connect");
	assert_int_equal(rename(f->path, old), 0);
	assert_int_equal(audit_reopen(a), 0);
	write_session(a, "run-b", "connect");
	write_session(a, "run-d", "start");
	audit_close(a);

	assert_int_equal(audit_verify_init(&v, NULL, 0), 0);
	buf = slurp(old, &len);
	assert_int_equal(audit_verify_file(&v, old, buf, len), 0);
	free(buf);
	buf = slurp(f->path, &len);
	assert_int_equal(audit_verify_file(&v, f->path, buf, len), 0);
	free(buf);
	assert_non_null(s = find_session(&v, "run-a", 0));
	assert_true(s->started && s->stopped);
	assert_int_equal(s->lines, 3);
	assert_non_null(s = find_session(&v, "run-b", 0));
	assert_true(s->started && !s->stopped && !s->superseded);
	assert_int_equal(s->gateway_pid, 4242);
	assert_int_equal(s->first_seq, 2);
	assert_int_equal(s->last_seq, 9);
	assert_non_null(s = find_session(&v, "run-c", 0));
	assert_true(s->started && !s->stopped && s->superseded);
	assert_non_null(s = find_session(&v, "run-c", 1));
	assert_true(s->started && s->stopped);
	assert_non_null(s = find_session(&v, "run-d", 0));
	assert_true(s->started && !s->stopped);
	audit_verify_free(&v);

	/* The newer file alone: run-b's start is not in it. */
	assert_int_equal(audit_verify_init(&v, NULL, 0), 0);
	buf = slurp(f->path, &len);
	assert_int_equal(audit_verify_file(&v, f->path, buf, len), 0);
	free(buf);
	assert_non_null(s = find_session(&v, "run-b", 0));
	assert_true(!s->started && !s->stopped);
	assert_int_equal(s->first_seq, 9);
	assert_int_equal(s->line, 1);
	assert_int_equal(s->gateway_pid, -1);
	assert_null(find_session(&v, "run-a", 0));
	audit_verify_free(&v);
}

/*
 * A rotation that deletes a file holding this gateway's lines starts the
 * new file with a "drop" line: how many lines, their seq, the chain they
 * end with, how many were refusals; verify counts it.
 */
static void
test_rotation_drop(void **state)
{
	struct fixture		*f = *state;
	struct audit_verify	 v;
	struct audit		*a;
	char			 old[160], *buf;
	size_t			 len;

	snprintf(old, sizeof old, "%s.1", f->path);
	a = open_log(f->path, NULL, 1000, 1);
	write_events(a, 1, 30);
	audit_close(a);
	buf = slurp(f->path, &len);
	assert_non_null(strstr(buf, "\"event\":\"drop\",\"detail\":"
	    "\"rotation deleted "));
	assert_non_null(strstr(buf, "\"count\":"));
	assert_non_null(strstr(buf, "\"end_chain\":\""));
	free(buf);
	assert_int_equal(audit_verify_init(&v, NULL, 0), 0);
	buf = slurp(old, &len);
	assert_int_equal(audit_verify_file(&v, old, buf, len), 0);
	free(buf);
	buf = slurp(f->path, &len);
	assert_int_equal(audit_verify_file(&v, f->path, buf, len), 0);
	free(buf);
	assert_true(v.drops >= 1);
	assert_int_equal(v.dropped, v.first_seq - 1);
	assert_true(v.dropped_denied >= 10);
	assert_non_null(strstr(v.drop[0], "of them refusals, ending in chain "));
	/* The newest drop line ends right before the oldest line kept. */
	snprintf(old, sizeof old, "\"seq_last\":%llu,", v.first_seq - 1);
	audit_verify_free(&v);
	buf = slurp(f->path, &len);
	assert_non_null(strstr(buf, old));
	/* and carries on the ones before: every line deleted, from seq 1. */
	assert_non_null(strstr(buf, "\"seq_first\":1,"));
	free(buf);
}

/* Write a "drop" line: count lines from seq_first, denied refusals. */
static void
write_drop(struct audit *a, long long seq_first, long long count,
    long long denied)
{
	struct audit_event	ev;

	audit_event_init(&ev);
	ev.event = "drop";
	ev.seq_first = seq_first;
	ev.seq_last = seq_first + count - 1;
	ev.count = count;
	ev.denied = denied;
	ev.end_chain = "00";
	audit_write(a, &ev);
}

/*
 * A gateway's drop lines each count its ones before: verify takes its
 * last; another gateway's (another seq_first) are added to them.
 */
static void
test_drops_summed(void **state)
{
	struct fixture		*f = *state;
	struct audit_verify	 v;
	struct audit		*a;
	char			*buf;
	size_t			 len;

	a = open_log(f->path, NULL, 0, 1);
	write_drop(a, 1, 10, 2);
	write_drop(a, 1, 20, 3);
	write_drop(a, 50, 7, 1);
	write_drop(a, 50, 9, 4);
	write_drop(a, 90, 5, 0);
	audit_close(a);
	assert_int_equal(audit_verify_init(&v, NULL, 0), 0);
	buf = slurp(f->path, &len);
	assert_int_equal(audit_verify_file(&v, f->path, buf, len), 0);
	free(buf);
	assert_int_equal(v.drops, 5);
	assert_int_equal(v.dropped, 20 + 9 + 5);
	assert_int_equal(v.dropped_denied, 3 + 4 + 0);
	audit_verify_free(&v);
}

/* A reopen after a rename (logrotate, SIGHUP) links the new file. */
static void
test_reopen(void **state)
{
	struct fixture	*f = *state;
	struct audit	*a;
	char		 old[160], msg[512], *buf;
	const char	*files[2] = { old, f->path };

	snprintf(old, sizeof old, "%s.1", f->path);
	a = open_log(f->path, f->key, 0, 1);
	write_events(a, 1, 3);
	assert_int_equal(rename(f->path, old), 0);
	assert_int_equal(audit_reopen(a), 0);
	write_events(a, 4, 2);
	assert_int_equal(audit_reopen(a), 0);	/* same file: no new link */
	write_events(a, 6, 1);
	audit_close(a);
	buf = slurp(f->path, NULL);
	assert_non_null(strstr(buf, "\"prev_chain\":\""));
	assert_non_null(strstr(buf, "\"seq\":4,"));
	assert_null(strstr(strchr(buf, '\n'), "prev_chain"));
	free(buf);
	assert_int_equal(verify(f->key, msg, sizeof msg, files, 2), 0);
}

/* Opening an existing log carries its chain on. */
static void
test_resume(void **state)
{
	struct fixture	*f = *state;
	struct audit	*a;
	char		 old[160], msg[512];
	const char	*files[2] = { old, f->path };

	a = open_log(f->path, f->key, 0, 1);
	write_events(a, 1, 3);
	audit_close(a);
	a = open_log(f->path, f->key, 0, 1);
	write_events(a, 4, 2);
	audit_close(a);
	assert_int_equal(verify(f->key, msg, sizeof msg, &files[1], 1), 0);
	/* Renamed away while stopped: the new file links to FILE.1. */
	snprintf(old, sizeof old, "%s.1", f->path);
	assert_int_equal(rename(f->path, old), 0);
	a = open_log(f->path, f->key, 0, 1);
	write_events(a, 6, 1);
	audit_close(a);
	assert_int_equal(verify(f->key, msg, sizeof msg, files, 2), 0);
}

/* A log cut short mid-line: closed, noted, and the chain goes on. */
static void
test_resume_torn(void **state)
{
	struct fixture	*f = *state;
	struct audit	*a;
	struct lines	 ls;
	FILE		*fp;
	char		 msg[512];
	const char	*files[1] = { f->path };

	a = open_log(f->path, NULL, 0, 1);
	write_events(a, 1, 3);
	audit_close(a);
	assert_non_null(fp = fopen(f->path, "a"));
	fputs("{\"schema\":1,\"ts\":\"2026-", fp);
	fclose(fp);
	assert_int_equal(verify(NULL, msg, sizeof msg, files, 1), 4);
	assert_non_null(strstr(msg, "cut short"));
	a = open_log(f->path, NULL, 0, 1);
	write_events(a, 4, 1);
	audit_close(a);
	read_lines(f->path, &ls);
	assert_int_equal(ls.n, 6);
	assert_non_null(strstr(ls.l[4], "\"event\":\"resume\""));
	assert_non_null(strstr(ls.l[4], "cut short"));
	assert_non_null(strstr(ls.l[4], "\"seq\":4,"));
	assert_non_null(strstr(ls.l[5], "\"seq\":5,"));
	assert_int_equal(verify(NULL, msg, sizeof msg, files, 1), 4);
	assert_non_null(strstr(msg, "damaged"));
	/* Without the fragment, the rest is one chain. */
	free(ls.l[3]);
	memmove(&ls.l[3], &ls.l[4], 2 * sizeof ls.l[0]);
	ls.n--;
	write_lines(f->path, &ls);
	assert_int_equal(verify(NULL, msg, sizeof msg, files, 1), 0);
}

/* Bind a datagram socket to read messages back. */
static int
bind_dgram(const char *path)
{
	struct sockaddr_un	sun;
	struct timeval		tv = { 5, 0 };
	int			fd;

	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof sun.sun_path, "%s", path);
	assert_true((fd = socket(AF_UNIX, SOCK_DGRAM, 0)) >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sun, sizeof sun), 0);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	return (fd);
}

/* One event with characters each format must escape. */
static void
write_tricky(struct audit *a)
{
	struct audit_event	ev;

	audit_event_init(&ev);
	ev.event = "connect";
	ev.verdict = "deny";
	ev.host = "a\"b]c\\";
	ev.port = 443;
	ev.detail = "two\nlines";
	audit_write(a, &ev);
}

/* syslog: RFC 5424 with the fields as structured data, the line as text. */
static void
test_syslog(void **state)
{
	struct fixture		*f = *state;
	struct audit		*a;
	struct audit_link	 lk;
	char			 sock[160], name[200], buf[8192], *line;
	ssize_t			 n;
	int			 fd;

	snprintf(sock, sizeof sock, "%s/log", f->dir);
	fd = bind_dgram(sock);
	snprintf(name, sizeof name, "syslog:%s", sock);
	a = open_log(name, NULL, 0, 1);
	write_tricky(a);
	assert_true((n = recv(fd, buf, sizeof buf - 1, 0)) > 0);
	buf[n] = '\0';
	audit_close(a);
	close(fd);
	/* authpriv (10) * 8 + notice (5) for a denial. */
	assert_int_equal(strncmp(buf, "<85>1 20", 8), 0);
	assert_non_null(strstr(buf, " pinhole "));
	assert_non_null(strstr(buf, " connect [pinhole@32473 schema=\"2\" ts=\""));
	assert_non_null(strstr(buf, " event=\"connect\" verdict=\"deny\" "
	    "host=\"a\\\\\\\"b\\]c\\\\\\\\\" port=\"443\" "
	    "detail=\"two\\\\u000alines\" seq=\"1\" chain=\""));
	assert_non_null(line = strstr(buf, "] {\"schema\":2,"));
	line += 2;
	assert_null(strchr(line, '\n'));
	assert_int_equal(audit_link_parse(line, strlen(line), &lk), 0);
	assert_int_equal(lk.seq, 1);
}

/* Tell whether a message holds some bytes. */
static int
has(const char *buf, size_t n, const char *s)
{
	return (memmem(buf, n, s, strlen(s)) != NULL);
}

/* journald: native fields, the binary-safe form for a newline. */
static void
test_journald(void **state)
{
	struct fixture	*f = *state;
	struct audit	*a;
	char		 sock[160], name[200], buf[8192], *p;
	ssize_t		 n;
	int		 fd;

	snprintf(sock, sizeof sock, "%s/journal", f->dir);
	fd = bind_dgram(sock);
	snprintf(name, sizeof name, "journald:%s", sock);
	a = open_log(name, NULL, 0, 1);
	write_tricky(a);
	assert_true((n = recv(fd, buf, sizeof buf - 1, 0)) > 0);
	buf[n] = '\0';
	audit_close(a);
	close(fd);
	assert_int_equal(strncmp(buf, "MESSAGE={\"schema\":2,", 20), 0);
	assert_true(has(buf, n, "\nPRIORITY=5\nSYSLOG_IDENTIFIER=pinhole\n"));
	assert_true(has(buf, n, "\nPINHOLE_EVENT=connect\n"));
	assert_true(has(buf, n, "\nPINHOLE_HOST=a\"b]c\\\n"));
	assert_true(has(buf, n, "\nPINHOLE_PORT=443\n"));
	assert_true(has(buf, n, "\nPINHOLE_SEQ=1\n"));
	assert_non_null(p = memmem(buf, n, "\nPINHOLE_DETAIL\n", 16));
	assert_memory_equal(p + 16, "\x09\0\0\0\0\0\0\0two\nlines\n", 18);
	assert_int_equal(buf[n - 1], '\n');
}

/* Sinks that cannot be reached, and bad keys, are errors at open. */
static void
test_sink_missing(void **state)
{
	struct fixture		*f = *state;
	struct audit_config	 cfg;
	char			 name[200], err[256];

	snprintf(name, sizeof name, "syslog:%s/nothing", f->dir);
	assert_null(audit_open(name, err, sizeof err));
	assert_non_null(strstr(err, "No such file"));
	/* A key that is missing or too short is refused. */
	audit_config_init(&cfg);
	cfg.log = f->path;
	cfg.keyfile = name;
	assert_null(audit_open_config(&cfg, err, sizeof err));
	assert_non_null(strstr(err, "No such file"));
	cfg.keyfile = "/dev/null";
	assert_null(audit_open_config(&cfg, err, sizeof err));
	assert_non_null(strstr(err, "key too short"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_tamper, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rotation, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reopen, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sessions, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_rotation_drop, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_drops_summed, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_resume, setup, teardown),
		cmocka_unit_test_setup_teardown(test_resume_torn, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_syslog, setup, teardown),
		cmocka_unit_test_setup_teardown(test_journald, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sink_missing, setup,
		    teardown),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
