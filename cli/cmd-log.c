/*
 * pinhole log: read the audit log (filter, print, summarise) and check
 * its chain (pinhole log verify).  Log files are untrusted input: lines
 * go through the strict reader, and every value is escaped again before
 * it reaches a terminal.
 */
#include "config.h"

#include <sys/mman.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <fnmatch.h>
#include <search.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "cli/logverify.h"
#include "cli/pinhole.h"
#include "cli/propose.h"
#include "lib/json.h"
#include "proxy/audit/audit.h"
#include "proxy/audit/verify.h"

#define LOG_TOP		10
#define EXIT_LOST	3	/* verify: intact, but the record is not whole */
#define OPT_PROPOSE	256	/* --propose, long only */

extern const struct cmd_entry cmd_log_entry;
static const struct cmd_entry cmd_log_verify_entry;

struct log_filter {
	int		 blocked;
	const char	*host;
	const char	*session;
	const char	*sandbox;
	char		 since[32];
};

struct tally {
	char		*key;
	long long	 n;
	long long	 allow;
	long long	 deny;
	long long	 up;
	long long	 down;
};

struct tallies {
	void		*root;		/* tsearch tree by key */
	struct tally	**v;		/* the same, in order of arrival */
	size_t		 n;
	size_t		 cap;
};

struct log_summary {
	struct tallies	 blocked;	/* hosts denied */
	struct tallies	 allowed;	/* hosts allowed, bytes */
	struct tallies	 sessions;
	struct tallies	 outcomes;	/* event verdict reason */
	struct tallies	 methods;	/* host method, of read requests */
	struct tallies	 approvers;	/* who granted and denied requests */
};

struct log_opts {
	struct log_filter	 filter;
	int			 json;
	int			 summary;
	struct propose		*propose;	/* --propose */
	int			 colour;
	unsigned long long	 unparsed;
	unsigned long long	 lines;		/* audit lines read */
	unsigned long long	 matched;	/* shown or counted */
	struct log_summary	 sum;
};

/*
 * Write a value for a terminal: controls and bidi marks escaped.
 * Returns the number of characters written.
 */
static int
cmd_log_term(FILE *fp, const char *s)
{
	const unsigned char	*p = (const unsigned char *)s;
	unsigned int		 cp;
	size_t			 n;
	int			 width = 0;

	while (*p != '\0') {
		n = json_utf8(p, strlen((const char *)p), &cp);
		if (n == 0 || json_must_escape(cp) || cp == '\\') {
			fprintf(fp, "\\u%04x", n == 0 ? 0xfffd : cp);
			p += n == 0 ? 1 : n;
			width += 6;
			continue;
		}
		fwrite(p, 1, n, fp);
		p += n;
		width++;
	}
	return (width);
}

/* Parse --since: 30m, 2h, 7d, or an RFC 3339 UTC time (a prefix of it). */
static int
cmd_log_parse_since(const char *arg, char *out, size_t len)
{
	static const struct { char c; long mult; } units[] = {
		{ 's', 1 }, { 'm', 60 }, { 'h', 3600 }, { 'd', 86400 },
	};
	struct tm	tm;
	char		*end;
	time_t		t;
	long		v;
	size_t		i;

	v = strtol(arg, &end, 10);
	for (i = 0; i < sizeof units / sizeof units[0]; i++) {
		if (end != arg && v >= 0 && end[0] == units[i].c &&
		    end[1] == '\0') {
			t = time(NULL) - v * units[i].mult;
			gmtime_r(&t, &tm);
			strftime(out, len, "%Y-%m-%dT%H:%M:%S", &tm);
			return (0);
		}
	}
	memset(&tm, 0, sizeof tm);
	end = strptime(arg, "%Y-%m-%d", &tm);
	if (end != NULL && (*end == 'T' || *end == ' '))
		end = strptime(end + 1, "%H:%M", &tm);
	if (end != NULL && *end == ':')
		end = strptime(end + 1, "%S", &tm);
	if (end == NULL || (*end != '\0' && strcmp(end, "Z") != 0))
		return (-1);
	strftime(out, len, "%Y-%m-%dT%H:%M:%S", &tm);
	return (0);
}

/* Give the host of an event: host, or the name a DNS question asked. */
static const char *
cmd_log_host(const struct audit_rec *rec)
{
	const char	*h = audit_rec_str(rec, "host");

	return (h != NULL ? h : audit_rec_str(rec, "qname"));
}

/* Tell whether an event passes the filters. */
static int
cmd_log_match(const struct log_filter *f, const struct audit_rec *rec)
{
	const char	*v;

	if (f->blocked && ((v = audit_rec_str(rec, "verdict")) == NULL ||
	    strcmp(v, "deny") != 0))
		return (0);
	if (f->host != NULL && ((v = cmd_log_host(rec)) == NULL ||
	    fnmatch(f->host, v, FNM_CASEFOLD) != 0))
		return (0);
	if (f->session != NULL && ((v = audit_rec_str(rec, "session")) ==
	    NULL || strcmp(v, f->session) != 0))
		return (0);
	if (f->sandbox != NULL && ((v = audit_rec_str(rec, "sandbox")) ==
	    NULL || strcmp(v, f->sandbox) != 0))
		return (0);
	if (f->since[0] != '\0' && ((v = audit_rec_str(rec, "ts")) == NULL ||
	    strcmp(v, f->since) < 0))
		return (0);
	return (1);
}

/* Write a column padded to a width. */
static void
cmd_log_col(FILE *fp, const char *s, int width, const char *colour)
{
	int	n;

	if (colour != NULL)
		fputs(colour, fp);
	n = cmd_log_term(fp, s != NULL ? s : "-");
	if (colour != NULL)
		fputs("\033[0m", fp);
	fprintf(fp, "%*s", n < width ? width - n + 1 : 1, "");
}

/* Write "key=value" for the details column, if present. */
static void
cmd_log_detail(FILE *fp, const struct audit_rec *rec, const char *key)
{
	const struct json_member	*f = audit_rec_get(rec, key);

	if (f == NULL)
		return;
	fprintf(fp, " %s=", key);
	if (f->type == JSON_STRING)
		cmd_log_term(fp, f->str);
	else
		fprintf(fp, "%lld", f->num);
}

/* Print one event as a row of columns. */
static void
cmd_log_print_row(const struct log_opts *o, const struct audit_rec *rec)
{
	static const char	*details[] = {
		"sandbox", "via", "reason", "rule", "status", "addr", "qtype",
		"answer", "bytes_up", "bytes_down", "ms", "detail"
	};
	const char		*ts = audit_rec_str(rec, "ts");
	const char		*verdict = audit_rec_str(rec, "verdict");
	const char		*colour = NULL;
	char			 when[20], target[300];
	long long		 port = audit_rec_num(rec, "port");
	size_t			 i;

	snprintf(when, sizeof when, "%s", ts != NULL ? ts : "-");
	if (strlen(when) > 10)
		when[10] = ' ';
	if (o->colour && verdict != NULL)
		colour = strcmp(verdict, "deny") == 0 ? "\033[31m" : "\033[32m";
	if (port >= 0)
		snprintf(target, sizeof target, "%s:%lld",
		    cmd_log_host(rec) != NULL ? cmd_log_host(rec) : "-", port);
	else
		snprintf(target, sizeof target, "%s",
		    cmd_log_host(rec) != NULL ? cmd_log_host(rec) : "-");
	cmd_log_col(stdout, when, 19, NULL);
	cmd_log_col(stdout, audit_rec_str(rec, "event"), 7, NULL);
	cmd_log_col(stdout, verdict, 5, colour);
	cmd_log_col(stdout, audit_rec_str(rec, "session"), 8, NULL);
	cmd_log_col(stdout, target, 30, NULL);
	for (i = 0; i < sizeof details / sizeof details[0]; i++)
		cmd_log_detail(stdout, rec, details[i]);
	putchar('\n');
}

/* Compare tallies by key, for tsearch. */
static int
tally_cmp(const void *a, const void *b)
{
	return (strcmp(((const struct tally *)a)->key,
	    ((const struct tally *)b)->key));
}

/* Find or add the tally of a key. */
static struct tally *
tally_get(struct tallies *t, const char *key)
{
	struct tally	 find, *n, **found, **v;

	find.key = (char *)key;
	if ((found = tfind(&find, &t->root, tally_cmp)) != NULL)
		return (*found);
	if (t->n == t->cap) {
		t->cap = t->cap == 0 ? 64 : t->cap * 2;
		if ((v = reallocarray(t->v, t->cap, sizeof *v)) == NULL)
			return (NULL);
		t->v = v;
	}
	if ((n = calloc(1, sizeof *n)) == NULL ||
	    (n->key = strdup(key)) == NULL ||
	    tsearch(n, &t->root, tally_cmp) == NULL) {
		if (n != NULL)
			free(n->key);
		free(n);
		return (NULL);
	}
	t->v[t->n++] = n;
	return (n);
}

/* Free a set of tallies. */
static void
tallies_free(struct tallies *t)
{
	size_t	i;

	for (i = 0; i < t->n; i++) {
		tdelete(t->v[i], &t->root, tally_cmp);
		free(t->v[i]->key);
		free(t->v[i]);
	}
	free(t->v);
	memset(t, 0, sizeof *t);
}

/* Count a request the gateway read (method known) by host and method. */
static int
cmd_log_count_method(struct log_summary *s, const struct audit_rec *rec,
    const char *host, int deny, long long up, long long down)
{
	const char	*method = audit_rec_str(rec, "method");
	struct tally	*t;
	char		 key[512];

	if (method == NULL || host == NULL)
		return (0);
	snprintf(key, sizeof key, "%-8s %s", method, host);
	if ((t = tally_get(&s->methods, key)) == NULL)
		return (-1);
	t->n++;
	t->allow += !deny;
	t->deny += deny;
	t->up += up;
	t->down += down;
	return (0);
}

/* Count a decided request (a grant or deny event) by who decided it. */
static int
cmd_log_count_by(struct log_summary *s, const struct audit_rec *rec,
    const char *ev)
{
	const char	*by = audit_rec_str(rec, "by");
	struct tally	*t;
	int		 grant;

	if (ev == NULL || (!(grant = strcmp(ev, "grant") == 0) &&
	    strcmp(ev, "deny") != 0) || audit_rec_str(rec, "request_id") ==
	    NULL)
		return (0);
	if ((t = tally_get(&s->approvers, by != NULL ? by : "-")) == NULL)
		return (-1);
	t->n++;
	t->allow += grant;
	t->deny += !grant;
	return (0);
}

/* Count one event into the summary. */
static int
cmd_log_count(struct log_summary *s, const struct audit_rec *rec)
{
	const char	*verdict = audit_rec_str(rec, "verdict");
	const char	*host = cmd_log_host(rec);
	const char	*sess = audit_rec_str(rec, "session");
	const char	*ev = audit_rec_str(rec, "event"), *why;
	long long	 up = audit_rec_num(rec, "bytes_up");
	long long	 down = audit_rec_num(rec, "bytes_down");
	int		 deny = verdict != NULL && strcmp(verdict, "deny") == 0;
	struct tally	*t;
	char		 key[256];

	up = up < 0 ? 0 : up;
	down = down < 0 ? 0 : down;
	if (deny && host != NULL) {
		if ((t = tally_get(&s->blocked, host)) == NULL)
			return (-1);
		t->n++;
	}
	if (!deny && host != NULL && (verdict != NULL || up + down > 0)) {
		if ((t = tally_get(&s->allowed, host)) == NULL)
			return (-1);
		t->n += verdict != NULL;
		t->up += up;
		t->down += down;
	}
	if (sess != NULL) {
		if ((t = tally_get(&s->sessions, sess)) == NULL)
			return (-1);
		t->n += verdict != NULL;
		t->allow += verdict != NULL && !deny;
		t->deny += deny;
		t->up += up;
		t->down += down;
	}
	if (cmd_log_count_method(s, rec, host, deny, up, down) == -1 ||
	    cmd_log_count_by(s, rec, ev) == -1)
		return (-1);
	if (verdict == NULL)
		return (0);
	why = audit_rec_str(rec, "reason");
	snprintf(key, sizeof key, "%-8s %-6s %s", ev != NULL ? ev : "-",
	    verdict, why != NULL ? why : "-");
	if ((t = tally_get(&s->outcomes, key)) == NULL)
		return (-1);
	t->n++;
	return (0);
}

/* Order tallies by count, most first, then by key. */
static int
tally_by_count(const void *a, const void *b)
{
	const struct tally	*x = *(struct tally *const *)a;
	const struct tally	*y = *(struct tally *const *)b;

	if (x->n != y->n)
		return (x->n < y->n ? 1 : -1);
	return (strcmp(x->key, y->key));
}

/* Order tallies by bytes, most first, then by key. */
static int
tally_by_bytes(const void *a, const void *b)
{
	const struct tally	*x = *(struct tally *const *)a;
	const struct tally	*y = *(struct tally *const *)b;

	if (x->up + x->down != y->up + y->down)
		return (x->up + x->down < y->up + y->down ? 1 : -1);
	return (strcmp(x->key, y->key));
}

/* Order a set of tallies (an empty one has no array). */
static void
tallies_sort(struct tallies *t, int (*cmp)(const void *, const void *))
{
	if (t->n > 1)
		qsort(t->v, t->n, sizeof *t->v, cmp);
}

/* Print the summary's tables. */
static void
cmd_log_print_summary(struct log_summary *s)
{
	size_t	i;

	tallies_sort(&s->blocked, tally_by_count);
	printf("Top blocked hosts\n  %8s  %s\n", "DENIED", "HOST");
	for (i = 0; i < s->blocked.n && i < LOG_TOP; i++) {
		printf("  %8lld  ", s->blocked.v[i]->n);
		cmd_log_term(stdout, s->blocked.v[i]->key);
		putchar('\n');
	}
	tallies_sort(&s->allowed, tally_by_bytes);
	printf("\nTop allowed hosts by bytes\n  %12s %12s %8s  %s\n", "UP",
	    "DOWN", "ALLOWED", "HOST");
	for (i = 0; i < s->allowed.n && i < LOG_TOP; i++) {
		printf("  %12lld %12lld %8lld  ", s->allowed.v[i]->up,
		    s->allowed.v[i]->down, s->allowed.v[i]->n);
		cmd_log_term(stdout, s->allowed.v[i]->key);
		putchar('\n');
	}
	tallies_sort(&s->outcomes, tally_by_count);
	printf("\nRequests and their outcomes\n  %8s  %-8s %-6s %s\n", "COUNT",
	    "EVENT", "VERDICT", "REASON");
	for (i = 0; i < s->outcomes.n; i++) {
		printf("  %8lld  ", s->outcomes.v[i]->n);
		cmd_log_term(stdout, s->outcomes.v[i]->key);
		putchar('\n');
	}
	tallies_sort(&s->methods, tally_by_count);
	printf("\nRequests by host and method\n  %8s %8s %8s %12s %12s  "
	    "%-8s %s\n", "REQUESTS", "ALLOWED", "DENIED", "UP", "DOWN",
	    "METHOD", "HOST");
	for (i = 0; i < s->methods.n; i++) {
		printf("  %8lld %8lld %8lld %12lld %12lld  ",
		    s->methods.v[i]->n, s->methods.v[i]->allow,
		    s->methods.v[i]->deny, s->methods.v[i]->up,
		    s->methods.v[i]->down);
		cmd_log_term(stdout, s->methods.v[i]->key);
		putchar('\n');
	}
	tallies_sort(&s->approvers, tally_by_count);
	printf("\nRequests decided, by approver\n  %8s %8s  %s\n", "GRANTED",
	    "DENIED", "BY");
	for (i = 0; i < s->approvers.n; i++) {
		printf("  %8lld %8lld  ", s->approvers.v[i]->allow,
		    s->approvers.v[i]->deny);
		cmd_log_term(stdout, s->approvers.v[i]->key);
		putchar('\n');
	}
	tallies_sort(&s->sessions, tally_by_count);
	printf("\nSessions\n  %8s %8s %8s %12s %12s  %s\n", "REQUESTS",
	    "ALLOWED", "DENIED", "UP", "DOWN", "SESSION");
	for (i = 0; i < s->sessions.n; i++) {
		printf("  %8lld %8lld %8lld %12lld %12lld  ",
		    s->sessions.v[i]->n, s->sessions.v[i]->allow, s->sessions.v[i]->deny,
		    s->sessions.v[i]->up, s->sessions.v[i]->down);
		cmd_log_term(stdout, s->sessions.v[i]->key);
		putchar('\n');
	}
}

/* Handle one line of a log. */
static int
cmd_log_line(struct log_opts *o, const char *line, size_t len, char *store)
{
	struct audit_rec	rec;

	if (audit_rec_parse(line, len, store, len + 1, &rec) == -1) {
		o->unparsed++;
		return (0);
	}
	o->lines++;
	if (!cmd_log_match(&o->filter, &rec))
		return (0);
	o->matched++;
	if (o->summary)
		return (cmd_log_count(&o->sum, &rec));
	if (o->propose != NULL)
		return (propose_add(o->propose, &rec));
	if (o->json) {
		fwrite(line, 1, len, stdout);
		if (len == 0 || line[len - 1] != '\n')
			putchar('\n');
	} else
		cmd_log_print_row(o, &rec);
	return (0);
}

/* Read one log file ("-": standard input). */
static int
cmd_log_read(struct log_opts *o, const char *path)
{
	FILE	*fp;
	char	*line = NULL, *store = NULL, *s;
	size_t	 cap = 0, storecap = 0;
	ssize_t	 n;
	int	 rv = -1;

	fp = strcmp(path, "-") == 0 ? stdin : fopen(path, "r");
	if (fp == NULL) {
		fprintf(stderr, "pinhole log: %s: %s\n", path, strerror(errno));
		return (-1);
	}
	while ((n = getline(&line, &cap, fp)) != -1) {
		if ((size_t)n + 1 > storecap) {
			if ((s = realloc(store, n + 1)) == NULL)
				goto out;
			store = s;
			storecap = n + 1;
		}
		if (cmd_log_line(o, line, n, store) == -1)
			goto out;
	}
	rv = ferror(fp) ? -1 : 0;
out:
	if (rv == -1)
		fprintf(stderr, "pinhole log: %s: read failed\n", path);
	free(line);
	free(store);
	if (fp != stdin)
		fclose(fp);
	return (rv);
}

/* Parse the options of `pinhole log`. */
static int
cmd_log_options(const struct cmd_entry *self, struct log_opts *o, int argc,
    char **argv)
{
	int	ch;

	while ((ch = cmd_getopt(self, argc, argv)) != -1) {
		switch (ch) {
		case 'b': o->filter.blocked = 1; break;
		case 'H': o->filter.host = optarg; break;
		case 's': o->filter.session = optarg; break;
		case 'x': o->filter.sandbox = optarg; break;
		case 'j': o->json = 1; break;
		case 'u': o->summary = 1; break;
		case OPT_PROPOSE:
			if (o->propose == NULL &&
			    (o->propose = propose_create()) == NULL) {
				fprintf(stderr, "pinhole log: out of memory\n");
				return (EXIT_USAGE);
			}
			break;
		case 'S':
			if (cmd_log_parse_since(optarg, o->filter.since,
			    sizeof o->filter.since) == -1)
				return (cmd_usage_error(self, "--since: "
				    "'%s' is not 30m, 2h, 7d or "
				    "2026-12-02T12:00:00Z", optarg));
			break;
		default:
			return (EXIT_USAGE);
		}
	}
	if (o->json + o->summary + (o->propose != NULL) > 1)
		return (cmd_usage_error(self, "--json, --summary and --propose "
		    "do not go together"));
	return (0);
}

/* Name the default log (audit_default_path()) for reading. */
static const char *
cmd_log_default(const struct cmd_entry *self, char *path, size_t len)
{
	if (audit_default_path(path, len) == -1) {
		cmd_usage_error(self, "no log file given, and no HOME or "
		    "XDG_STATE_HOME to find the default one");
		return (NULL);
	}
	return (path);
}

/*
 * Nothing to show: say so, and what to do (run a command through
 * pinhole, name another log, or loosen the filters).
 */
static void
cmd_log_nothing(const struct log_opts *o, const char *def, int missing)
{
	if (missing)
		fprintf(stderr, "pinhole log: nothing logged yet: no audit log "
		    "at %s.  pinhole run, proxy and session start write it "
		    "there (unless given --log FILE): run a command with "
		    "`pinhole run -- COMMAND`, or read another log with "
		    "`pinhole log FILE`\n", def);
	else if (o->lines == 0)
		fprintf(stderr, "pinhole log: nothing logged yet%s%s: run a "
		    "command with `pinhole run -- COMMAND`\n",
		    def != NULL ? " in " : "", def != NULL ? def : "");
	else
		fprintf(stderr, "pinhole log: none of the %llu line%s matches: "
		    "loosen --since, --host, --session, --sandbox or "
		    "--blocked\n", o->lines, o->lines == 1 ? "" : "s");
}

/* Print, filter or summarise the audit log. */
static int
cmd_log_show(const struct cmd_entry *self, int argc, char **argv)
{
	struct log_opts	 o;
	char		 path[PATH_MAX];
	const char	*def = NULL;
	int		 rv = 0, i;

	memset(&o, 0, sizeof o);
	if ((rv = cmd_log_options(self, &o, argc, argv)) != 0) {
		propose_free(o.propose);
		return (rv);
	}
	argc -= optind;
	argv += optind;
	if (argc == 0 && (def = cmd_log_default(self, path, sizeof path)) ==
	    NULL) {
		propose_free(o.propose);
		return (EXIT_USAGE);
	}
	if (def != NULL && access(def, F_OK) == -1 && errno == ENOENT) {
		cmd_log_nothing(&o, def, 1);
		propose_free(o.propose);
		return (0);
	}
	o.colour = isatty(STDOUT_FILENO) && getenv("NO_COLOR") == NULL;
	if (!o.json && !o.summary && o.propose == NULL)
		printf("%-19s %-7s %-5s %-8s %-30s %s\n", "TIME (UTC)", "EVENT",
		    "VERDICT", "SESSION", "TARGET", "DETAILS");
	for (i = 0; i < argc || (argc == 0 && i == 0); i++) {
		if (cmd_log_read(&o, argc == 0 ? def : argv[i]) == -1)
			rv = 1;
	}
	if (rv == 0 && o.matched == 0 && !o.json)
		cmd_log_nothing(&o, argc == 1 ? argv[0] : def, 0);
	else if (o.summary)
		cmd_log_print_summary(&o.sum);
	if (o.propose != NULL)
		propose_print(o.propose, stdout);
	propose_free(o.propose);
	if (o.unparsed > 0)
		fprintf(stderr, "pinhole log: %llu line(s) were not audit "
		    "lines and were skipped\n", o.unparsed);
	tallies_free(&o.sum.blocked);
	tallies_free(&o.sum.allowed);
	tallies_free(&o.sum.sessions);
	tallies_free(&o.sum.outcomes);
	tallies_free(&o.sum.methods);
	tallies_free(&o.sum.approvers);
	return (rv);
}

/* Check one file's chain, mapped into memory. */
static int
cmd_log_verify_path(struct audit_verify *v, const char *path)
{
	struct stat	 st;
	void		*p = NULL;
	int		 fd, rv;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1 ||
	    fstat(fd, &st) == -1) {
		fprintf(stderr, "pinhole log verify: %s: %s\n", path,
		    strerror(errno));
		if (fd != -1)
			close(fd);
		return (-2);
	}
	if (st.st_size > 0 && (p = mmap(NULL, st.st_size, PROT_READ,
	    MAP_PRIVATE, fd, 0)) == MAP_FAILED) {
		fprintf(stderr, "pinhole log verify: %s: %s\n", path,
		    strerror(errno));
		close(fd);
		return (-2);
	}
	close(fd);
	rv = audit_verify_file(v, path, p, st.st_size);
	if (p != NULL)
		munmap(p, st.st_size);
	return (rv);
}

/* Say which lines the writer recorded as lost. */
static void
cmd_log_verify_losses(const struct audit_verify *v)
{
	unsigned long long	i;

	printf("LINES LOST: %llu loss record(s) in the log: %llu line(s) "
	    "could not be written\n", v->losses, v->lost);
	for (i = 0; i < v->losses && i < AUDIT_VERIFY_LOSSES; i++) {
		printf("  ");
		cmd_log_term(stdout, v->loss[i]);
		putchar('\n');
	}
	if (v->losses > AUDIT_VERIFY_LOSSES)
		printf("  and %llu more\n", v->losses - AUDIT_VERIFY_LOSSES);
}

/* Say which lines rotation deleted, as its "drop" lines record. */
static void
cmd_log_verify_drops(const struct audit_verify *v)
{
	unsigned long long	i;

	printf("LINES DROPPED: %llu drop record(s) in the log: rotation "
	    "deleted %llu line(s) of a running session, %llu of them "
	    "refusals (a gateway's last record counts its ones before)\n",
	    v->drops, v->dropped, v->dropped_denied);
	for (i = 0; i < v->drops && i < AUDIT_VERIFY_LOSSES; i++) {
		printf("  ");
		cmd_log_term(stdout, v->drop[i]);
		putchar('\n');
	}
	if (v->drops > AUDIT_VERIFY_LOSSES)
		printf("  and %llu more\n", v->drops - AUDIT_VERIFY_LOSSES);
}

/*
 * Say that the chain is intact, and how far it goes, after what the
 * record lacks if anything: lines recorded as lost or dropped, sessions
 * whose start (unless partial) or stop is missing.  Returns the exit
 * status: 0, or 3 when the record is not whole.
 */
static int
cmd_log_verify_ok(const struct audit_verify *v, int nfiles, int partial)
{
	const char	*what = "intact";
	char		 hex[AUDIT_HEX_LEN + 1];
	size_t		 gaps;

	if (v->lines == 0) {
		printf("intact: no lines\n");
		return (0);
	}
	if (v->losses > 0)
		cmd_log_verify_losses(v);
	if (v->drops > 0)
		cmd_log_verify_drops(v);
	gaps = logverify_report(v, partial, stdout, cmd_log_term);
	if (v->losses > 0 || v->drops > 0 || gaps > 0)
		what = "chain intact otherwise";
	audit_hex(v->chain, hex);
	printf("%s: %llu lines in %d file(s), seq %llu to %llu\n"
	    "last chain: %s\n", what, v->lines, nfiles, v->first_seq, v->seq,
	    hex);
	if (v->midchain)
		printf("note: the first file carries on from seq %llu of an "
		    "earlier file not given here\n", v->first_seq - 1);
	return (v->losses > 0 || v->drops > 0 || gaps > 0 ? EXIT_LOST : 0);
}

/* Read the key of `pinhole log verify --key FILE`, and start checking. */
static int
cmd_log_verify_start(struct audit_verify *v, const char *keyfile)
{
	unsigned char	key[AUDIT_KEY_MAX];
	size_t		keylen = 0;
	char		err[512];
	int		rv;

	if (keyfile != NULL &&
	    audit_read_key(keyfile, key, &keylen, err, sizeof err) == -1) {
		fprintf(stderr, "pinhole log verify: %s\n", err);
		return (-1);
	}
	rv = audit_verify_init(v, key, keylen);
	OPENSSL_cleanse(key, sizeof key);
	if (rv == -1)
		fprintf(stderr, "pinhole log verify: cannot set up hashing\n");
	return (rv);
}

/* Check the chain of the files given, oldest first. */
static int
cmd_log_verify(const struct cmd_entry *self, int argc, char **argv)
{
	struct audit_verify	 v;
	const char		*keyfile = NULL;
	char			 path[PATH_MAX], *def;
	int			 ch, i, rv = 0, partial = 0;

	optind = 1;
	while ((ch = cmd_getopt(self, argc, argv)) != -1) {
		if (ch == 'P')
			partial = 1;
		else if (ch != 'k')
			return (EXIT_USAGE);
		else
			keyfile = optarg;
	}
	argc -= optind;
	argv += optind;
	if (argc == 0) {
		if (cmd_log_default(self, path, sizeof path) == NULL)
			return (EXIT_USAGE);
		def = path;
		argv = &def;
		argc = 1;
	}
	if (cmd_log_verify_start(&v, keyfile) == -1)
		return (EXIT_USAGE);
	for (i = 0; i < argc && rv == 0; i++)
		rv = cmd_log_verify_path(&v, argv[i]);
	if (rv == 0)
		rv = cmd_log_verify_ok(&v, argc, partial);
	else if (rv == -1) {
		printf("NOT INTACT: %s\n", v.msg);
		rv = 1;
	} else
		rv = EXIT_USAGE;
	audit_verify_free(&v);
	return (rv);
}

/* Run `pinhole log` or `pinhole log verify`. */
static int
cmd_log_exec(const struct cmd_entry *self, int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "verify") == 0)
		return (cmd_log_verify(&cmd_log_verify_entry, argc - 1,
		    argv + 1));
	return (cmd_log_show(self, argc, argv));
}

/* The options of log. */
static const struct cmd_opt log_opts[] = {
	{ "blocked", 'b', CMD_ARG_NONE, NULL, .help = "only denied attempts" },
	{ "host", 'H', CMD_ARG_REQUIRED, "GLOB",
	    .help = "only hosts (or DNS names) matching GLOB (*.example.org)" },
	{ "session", 's', CMD_ARG_REQUIRED, "ID", .help = "only one session" },
	{ .name = "session-id" },
	{ "sandbox", 'x', CMD_ARG_REQUIRED, "ID",
	    .help = "only one sandbox (a command run through the session)" },
	{ "since", 'S', CMD_ARG_REQUIRED, "TIME",
	    .help = "only events since 30m, 2h, 7d ago, or since a UTC "
	    "time: 2026-12-02, 2026-12-02T12:00[:00][Z]" },
	{ "json", 'j', CMD_ARG_NONE, NULL,
	    .help = "print the matching lines as they are (JSON Lines)" },
	{ "summary", 'u', CMD_ARG_NONE, NULL,
	    .help = "top blocked hosts, top allowed hosts by bytes, "
	    "outcomes, and requests per session" },
	{ "propose", 0, CMD_ARG_NONE, NULL, .key = OPT_PROPOSE,
	    .help = "the policy lines that would have allowed what was "
	    "refused, each ready for `pinhole allow` (with --session or "
	    "--sandbox: of one run)" },
	{ .name = NULL }
};

/* The options of log verify. */
static const struct cmd_opt log_verify_opts[] = {
	{ "key", 'k', CMD_ARG_REQUIRED, "FILE",
	    .help = "the --log-key of the gateway" },
	{ "partial", 'P', CMD_ARG_NONE, NULL,
	    .help = "the files may begin in the middle of a session (its "
	    "start in an earlier file): not an error" },
	{ .name = NULL }
};

static const struct cmd_entry cmd_log_verify_entry = {
	.name = "verify",
	.usage = "[--key FILE] [--partial] [FILE...]",
	.summary = "Check the chain of the audit log",
	.intro =
	    "Checks the chain of the files given oldest first (audit.log.2\n"
	    "audit.log.1 audit.log; default: the default log) and names the\n"
	    "first bad line, the lines recorded as lost or dropped, and the\n"
	    "sessions whose start or stop line the files lack.\n",
	.opts = log_verify_opts,
	.help =
	    "Exit status: 0 intact; 1 not intact; 2 usage error or unreadable\n"
	    "file; 3 the chain is intact but the record is not whole: lines\n"
	    "could not be written or rotation deleted them, the files begin in\n"
	    "the middle of a session, or a session that does not run has no\n"
	    "stop line.\n",
	.parent = &cmd_log_entry,
};

static const struct cmd_entry *const cmd_log_verbs[] = {
	&cmd_log_verify_entry,
	NULL
};

const struct cmd_entry cmd_log_entry = {
	.name = "log",
	.usage = "[FILE...] [--blocked] [--host GLOB] [--session ID] "
	    "[--sandbox ID] [--since TIME] [--json | --summary | --propose] | "
	    "verify [--key FILE] [--partial] [FILE...]",
	.summary = "Show, filter, summarise or verify the audit log",
	.intro =
	    "Without FILE, the default log is read: $XDG_STATE_HOME/pinhole/\n"
	    "audit.log, or ~/.local/state/pinhole/audit.log ('-': standard\n"
	    "input).\n",
	.opts = log_opts,
	.help = "Schema and chain: docs/audit-log.md.\n",
	.verbs = cmd_log_verbs,
	.exec = cmd_log_exec,
};
