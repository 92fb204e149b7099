/*
 * The subcommand table, and the one option parser and help printer that
 * read every subcommand's option table.
 */
#include "config.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli/pinhole.h"
#include "lib/log.h"
#include "rules/rules.h"

extern const struct cmd_entry cmd_check_entry;
extern const struct cmd_entry cmd_doctor_entry;
extern const struct cmd_entry cmd_help_entry;
extern const struct cmd_entry cmd_proxy_entry;
extern const struct cmd_entry cmd_run_entry;
extern const struct cmd_entry cmd_version_entry;
extern const struct cmd_entry cmd_allow_entry;
extern const struct cmd_entry cmd_disallow_entry;
extern const struct cmd_entry cmd_log_entry;
extern const struct cmd_entry cmd_request_entry;
extern const struct cmd_entry cmd_pending_entry;
extern const struct cmd_entry cmd_approve_entry;
extern const struct cmd_entry cmd_deny_entry;
extern const struct cmd_entry cmd_watch_entry;
extern const struct cmd_entry cmd_session_entry;
extern const struct cmd_entry cmd_hook_entry;
extern const struct cmd_entry cmd_completion_entry;

/* Every subcommand, in the order `pinhole help` lists them. */
const struct cmd_entry *cmd_table[] = {
	&cmd_help_entry,
	&cmd_version_entry,
	&cmd_check_entry,
	&cmd_run_entry,
	&cmd_doctor_entry,
	&cmd_proxy_entry,
	&cmd_allow_entry,
	&cmd_disallow_entry,
	&cmd_log_entry,
	&cmd_request_entry,
	&cmd_pending_entry,
	&cmd_approve_entry,
	&cmd_deny_entry,
	&cmd_watch_entry,
	&cmd_session_entry,
	&cmd_hook_entry,
	&cmd_completion_entry,
	NULL
};

/*
 * Is this one of the person's commands, which cannot work inside the
 * sandbox (the agent asks with `pinhole request` there)?
 */
int
cmd_person(const struct cmd_entry *cmd)
{
	static const char *const	 names[] = { "run", "proxy", "doctor",
	    "allow", "disallow", "log", "pending", "approve", "deny", "watch",
	    "session", NULL };
	const char *const		*n;

	for (n = names; *n != NULL; n++) {
		if (strcmp(cmd->name, *n) == 0)
			return (1);
	}
	return (0);
}

/* Find a subcommand by its name. */
const struct cmd_entry *
cmd_find(const char *name)
{
	const struct cmd_entry	**cmd;

	for (cmd = cmd_table; *cmd != NULL; cmd++) {
		if (strcmp((*cmd)->name, name) == 0)
			return (*cmd);
	}
	return (NULL);
}

#define CMD_OPTS_MAX	64	/* options of one command, names and all */
#define CMD_MAX		32	/* commands */

/* The command nearest a name that is none, or NULL ("did you mean"). */
const char *
cmd_nearest(const char *name)
{
	const char	*names[CMD_MAX + 1];
	size_t		 n;

	for (n = 0; cmd_table[n] != NULL && n < CMD_MAX; n++)
		names[n] = cmd_table[n]->name;
	names[n] = NULL;
	return (rules_nearest(name, names));
}
#define CMD_HELP_WIDTH	79	/* columns of --help */
#define CMD_HELP_LABEL	26	/* widest "-x, --name VALUE" beside its help */

/* Walk the commands, each followed by its verbs (log, log verify). */
void
cmd_walk(void (*fn)(const struct cmd_entry *, void *), void *arg)
{
	const struct cmd_entry	**cmd, *const *verb;

	for (cmd = cmd_table; *cmd != NULL; cmd++) {
		fn(*cmd, arg);
		for (verb = (*cmd)->verbs; verb != NULL && *verb != NULL;
		    verb++)
			fn(*verb, arg);
	}
}

/*
 * Walk an option table (or none: NULL) and the tables it includes: fn
 * gets each row and the row it is another name for (itself, but for a
 * second name).
 */
void
cmd_opts_walk(const struct cmd_opt *o, void (*fn)(const struct cmd_opt *,
    const struct cmd_opt *, void *), void *arg)
{
	const struct cmd_opt	*primary = NULL;

	for (; o != NULL && (o->name != NULL || o->include != NULL); o++) {
		if (o->include != NULL) {
			cmd_opts_walk(o->include, fn, arg);
			primary = NULL;
			continue;
		}
		if (o->help != NULL)
			primary = o;
		else if (primary == NULL)
			fatalx("%s: --%s names no option", __func__, o->name);
		fn(o, primary, arg);
	}
}

/* What the parser returns for an option: its letter, or its key. */
static int
cmd_opt_key(const struct cmd_opt *o)
{
	if (o->letter != 0)
		return (o->letter);
	if (o->key <= UCHAR_MAX)
		fatalx("--%s: a long-only option's key must be above %d",
		    o->name, UCHAR_MAX);
	return (o->key);
}

/* Looking for the option a parser's answer stands for. */
struct cmd_opt_find {
	int			 key;
	const struct cmd_opt	*found;
};

/* Note the option if it is the one looked for. */
static void
cmd_opt_find_one(const struct cmd_opt *o, const struct cmd_opt *primary,
    void *arg)
{
	struct cmd_opt_find	*f = arg;

	if (f->found == NULL && o == primary && cmd_opt_key(o) == f->key)
		f->found = o;
}

/* The option of a table that cmd_getopt() returns key for, or NULL. */
const struct cmd_opt *
cmd_opt_find(const struct cmd_opt *opts, int key)
{
	struct cmd_opt_find	f = { .key = key, .found = NULL };

	cmd_opts_walk(opts, cmd_opt_find_one, &f);
	return (f.found);
}

/* getopt_long()'s arrays for an option table. */
struct cmd_getopt_args {
	char		shortopts[3 * CMD_OPTS_MAX + 3];
	size_t		len;
	struct option	longopts[CMD_OPTS_MAX + 1];
	size_t		n;
};

/* Add one option to getopt_long()'s arrays. */
static void
cmd_getopt_add(const struct cmd_opt *o, const struct cmd_opt *primary,
    void *arg)
{
	static const int	 has_arg[] = { no_argument, required_argument,
	    optional_argument };
	static const char	*colons[] = { "", ":", "::" };
	struct cmd_getopt_args	*g = arg;
	size_t			 i;

	if (g->n == CMD_OPTS_MAX)
		fatalx("%s: more than %d options", __func__, CMD_OPTS_MAX);
	for (i = 0; i < g->n; i++) {
		if (strcmp(g->longopts[i].name, o->name) == 0)
			fatalx("%s: --%s twice", __func__, o->name);
	}
	if (o == primary && o->letter != 0 &&
	    strchr(g->shortopts, o->letter) != NULL)
		fatalx("%s: -%c twice", __func__, o->letter);
	g->longopts[g->n].name = o->name;
	g->longopts[g->n].has_arg = has_arg[primary->arg];
	g->longopts[g->n].flag = NULL;
	g->longopts[g->n++].val = cmd_opt_key(primary);
	if (o == primary && o->letter != 0)
		g->len += snprintf(g->shortopts + g->len, sizeof g->shortopts -
		    g->len, "%c%s", o->letter, colons[o->arg]);
}

/* The long names of a command's options, for "did you mean". */
struct cmd_names {
	const char	*v[CMD_OPTS_MAX + 1];
	size_t		 n;
};

/* Note one long name. */
static void
cmd_names_add(const struct cmd_opt *o, const struct cmd_opt *primary,
    void *arg)
{
	struct cmd_names	*names = arg;

	(void)primary;
	if (names->n < CMD_OPTS_MAX)
		names->v[names->n++] = o->name;
	names->v[names->n] = NULL;
}

/* Say an unknown long option (n bytes of arg), and the one meant if any. */
static void
cmd_unknown_long(const struct cmd_entry *cmd, const char *arg, int n)
{
	struct cmd_names	 names = { .n = 0 };
	const char		*near = NULL;
	char			 word[64];

	names.v[0] = NULL;
	cmd_opts_walk(cmd->opts, cmd_names_add, &names);
	if (n > 2 && (size_t)n - 2 < sizeof word) {
		snprintf(word, sizeof word, "%.*s", n - 2, arg + 2);
		near = rules_nearest(word, names.v);
	}
	cmd_usage_error(cmd, "unknown option '%.*s'%s%s%s", n, arg,
	    near != NULL ? " (did you mean '--" : "", near != NULL ? near : "",
	    near != NULL ? "'?)" : "");
}

/* Report what getopt_long() found wrong: ch is ':' or '?'. */
static void
cmd_getopt_error(const struct cmd_entry *cmd, char **argv,
    const char *shortopts, int ch)
{
	const char	*arg = argv[optind - 1];
	int		 lng, n = (int)strcspn(arg, "=");	/* as typed */

	/*
	 * A long option always ends its element; a short one is in the
	 * element only if it is not itself unknown (optopt is then
	 * neither 0 nor an option letter).
	 */
	if (ch == ':')
		lng = strncmp(arg, "--", 2) == 0;
	else
		lng = optopt == 0 || optopt > UCHAR_MAX || (optopt != ':' &&
		    strchr(shortopts, optopt) != NULL);
	if (ch == ':' && lng)
		cmd_usage_error(cmd, "option '%.*s' needs a value", n, arg);
	else if (ch == ':')
		cmd_usage_error(cmd, "option '-%c' needs a value", optopt);
	else if (lng && optopt != 0)
		cmd_usage_error(cmd, "option '%.*s' takes no value", n, arg);
	else if (lng)
		cmd_unknown_long(cmd, arg, n);
	else
		cmd_usage_error(cmd, "unknown option '-%c'", optopt);
}

/*
 * Parse the next option of the command's table with getopt_long(),
 * reporting unknown options and missing values our way, naming the
 * option as it was typed.  Returns the option's letter or key, -1 at
 * the end, or '?' after reporting.
 */
int
cmd_getopt(const struct cmd_entry *cmd, int argc, char **argv)
{
	struct cmd_getopt_args	g;
	char			opts[sizeof g.shortopts + 2];
	int			ch;

	memset(&g, 0, sizeof g);
	cmd_opts_walk(cmd->opts, cmd_getopt_add, &g);
	/* ':' first (after '+') tells a missing value from an unknown one. */
	snprintf(opts, sizeof opts, "%s:%s", cmd->stop ? "+" : "",
	    g.shortopts);
	opterr = 0;
	ch = getopt_long(argc, argv, opts, g.longopts, NULL);
	if (ch == '?' || ch == ':') {
		cmd_getopt_error(cmd, argv, g.shortopts, ch);
		return ('?');
	}
	return (ch);
}

/* How an option is written in --help: "-x, --name VALUE". */
static int
cmd_opt_label(const struct cmd_opt *o, const struct cmd_opt *primary,
    char *buf, size_t len)
{
	const char	*value = primary->value != NULL ? primary->value :
			    "VALUE";
	char		 letter[8] = "    ";

	if (o == primary && o->letter != 0)
		snprintf(letter, sizeof letter, "-%c, ", o->letter);
	if (primary->arg == CMD_ARG_NONE)
		return (snprintf(buf, len, "%s--%s", letter, o->name));
	return (snprintf(buf, len, "%s--%s%s%s%s", letter, o->name,
	    primary->arg == CMD_ARG_OPTIONAL ? "[=" : " ", value,
	    primary->arg == CMD_ARG_OPTIONAL ? "]" : ""));
}

/* Note the widest label that fits beside its help. */
static void
cmd_help_measure(const struct cmd_opt *o, const struct cmd_opt *primary,
    void *arg)
{
	char	label[128];
	int	*width = arg, n;

	n = cmd_opt_label(o, primary, label, sizeof label);
	if (n > *width && n <= CMD_HELP_LABEL)
		*width = n;
}

/* Print words in lines of at most width columns, after indent spaces. */
static void
cmd_help_wrap(const char *s, int indent, int width)
{
	int	col = 0, n;

	for (;; s += n) {
		s += strspn(s, " ");
		if ((n = (int)strcspn(s, " ")) == 0)
			break;
		if (col > 0 && col + 1 + n > width) {
			printf("\n%*s", indent, "");
			col = 0;
		} else if (col > 0) {
			putchar(' ');
			col++;
		}
		printf("%.*s", n, s);
		col += n;
	}
	putchar('\n');
}

/* Print one option's lines of --help. */
static void
cmd_help_opt(const struct cmd_opt *o, const struct cmd_opt *primary,
    void *arg)
{
	char	label[128], same[128];
	int	width = *(int *)arg, indent = 2 + width + 2;

	if (cmd_opt_label(o, primary, label, sizeof label) > width)
		printf("  %s\n%*s", label, indent, "");
	else
		printf("  %-*s  ", width, label);
	snprintf(same, sizeof same, "the same as --%s", primary->name);
	cmd_help_wrap(o == primary ? o->help : same, indent,
	    CMD_HELP_WIDTH - indent);
}

/* Print a command's help after its summary: text, options, text. */
static void
cmd_print_body(const struct cmd_entry *cmd)
{
	int	width = 0;

	if (cmd->intro != NULL)
		printf("\n%s", cmd->intro);
	if (cmd->opts != NULL) {
		cmd_opts_walk(cmd->opts, cmd_help_measure, &width);
		printf("\nOptions:\n");
		cmd_opts_walk(cmd->opts, cmd_help_opt, &width);
	}
	if (cmd->help != NULL)
		printf("\n%s", cmd->help);
}

/* Print `pinhole CMD --help`, its verbs' too. */
void
cmd_print_help(const struct cmd_entry *cmd)
{
	const struct cmd_entry	*const *verb;

	printf("usage: pinhole %s%s%s\n", cmd->name,
	    cmd->usage[0] != '\0' ? " " : "", cmd->usage);
	printf("\n%s.\n", cmd->summary);
	cmd_print_body(cmd);
	for (verb = cmd->verbs; verb != NULL && *verb != NULL; verb++) {
		printf("\nusage: pinhole %s %s %s\n\n%s.\n", cmd->name,
		    (*verb)->name, (*verb)->usage, (*verb)->summary);
		cmd_print_body(*verb);
	}
}

/* Print untrusted text: printable ASCII as it is, the rest as \xNN. */
void
cmd_print_escaped(FILE *f, const char *s)
{
	for (; *s != '\0'; s++) {
		if (*s >= 0x20 && *s < 0x7f)
			fputc(*s, f);
		else
			fprintf(f, "\\x%02x", (unsigned char)*s);
	}
}

/* Report a usage error in one line with a hint; return the exit status. */
int
cmd_usage_error(const struct cmd_entry *cmd, const char *fmt, ...)
{
	va_list		 ap;
	const char	*name = cmd->parent != NULL ? cmd->parent->name :
			    cmd->name;

	fprintf(stderr, "pinhole %s: ", name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (try 'pinhole %s --help')\n", name);
	return (EXIT_USAGE);
}
