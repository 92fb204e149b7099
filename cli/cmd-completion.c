/*
 * pinhole completion: the bash, zsh and fish completion scripts, printed
 * from the command table and the option tables that --help prints, so
 * that there is no second list to keep in step.  How a value completes
 * is read from its name in the table: FILE and PATH are files, DIR a
 * directory, SESSION a running session, COMMAND one of pinhole's, CMD a
 * command line, lower-case words (closed|open) themselves.
 */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "cli/pinhole.h"

#define COMPL_NAME_MAX	64	/* "log verify", an operand's name */
#define COMPL_DESC_MAX	256	/* a description, shortened */

/* How a value or an operand completes. */
enum compl_kind {
	COMPL_NONE,		/* free text: nothing to offer */
	COMPL_FILE,		/* FILE, PATH */
	COMPL_DIR,		/* DIR */
	COMPL_WORDS,		/* closed|open: these words */
	COMPL_SESSION,		/* SESSION: a running session's name */
	COMPL_COMMAND,		/* COMMAND: one of pinhole's */
	COMPL_EXEC		/* CMD: a command line of its own */
};

/* What a shell's printer needs to know of one command or verb. */
struct compl_cmd {
	const struct cmd_entry	*cmd;
	char			 key[COMPL_NAME_MAX];	/* "log verify" */
	char			 operand[COMPL_NAME_MAX];	/* "FILE" */
	enum compl_kind		 kind;			/* the operand's */
};

/* Tell how a value (or an operand) of this name completes. */
static enum compl_kind
compl_kind(const char *name)
{
	if (name == NULL || name[0] == '\0')
		return (COMPL_NONE);
	if (strstr(name, "FILE") != NULL || strstr(name, "PATH") != NULL)
		return (COMPL_FILE);
	if (strstr(name, "DIR") != NULL)
		return (COMPL_DIR);
	if (strcmp(name, "SESSION") == 0)
		return (COMPL_SESSION);
	if (strcmp(name, "COMMAND") == 0)
		return (COMPL_COMMAND);
	if (strcmp(name, "CMD") == 0)
		return (COMPL_EXEC);
	if (islower((unsigned char)name[0]))
		return (COMPL_WORDS);
	return (COMPL_NONE);
}

/* How an option's value completes; COMPL_NONE for an option without. */
static enum compl_kind
compl_value_kind(const struct cmd_opt *primary)
{
	if (primary->arg == CMD_ARG_NONE)
		return (COMPL_NONE);
	return (compl_kind(primary->value));
}

/* Is the word of len bytes one of the command's verbs? */
static int
compl_is_verb(const struct cmd_entry *cmd, const char *word, size_t len)
{
	const struct cmd_entry	*const *verb;

	for (verb = cmd->verbs; verb != NULL && *verb != NULL; verb++) {
		if (strlen((*verb)->name) == len &&
		    strncmp((*verb)->name, word, len) == 0)
			return (1);
	}
	return (0);
}

/*
 * Find the name of a command's first operand in its usage line: the
 * first word that is neither an option nor an option's value (FILE of
 * "[FILE...]", CMD of "-- CMD [ARG...]").  "" when there is none, or
 * when a verb comes first.
 */
static void
compl_operand(const struct cmd_entry *cmd, char *name, size_t len)
{
	const char	*s;
	size_t		 n;
	int		 value = 0;	/* the word is an option's value */

	name[0] = '\0';
	for (s = cmd->usage; *s != '\0'; s += n) {
		s += strspn(s, " [");
		if ((n = strcspn(s, " ")) == 0)
			break;
		if (*s == '-') {
			/* "[--policy" takes a value; "--", "[--json]" none. */
			value = memchr(s, ']', n) == NULL && n > 2;
			continue;
		}
		if ((value && isupper((unsigned char)*s)) || *s == '|') {
			value = 0;
			continue;
		}
		if (!compl_is_verb(cmd, s, n))
			snprintf(name, len, "%.*s", (int)strcspn(s, "[]. "), s);
		return;
	}
}

/* Fill in what the printers need to know of a command or verb. */
static void
compl_cmd_init(struct compl_cmd *c, const struct cmd_entry *cmd,
    const char *sep)
{
	memset(c, 0, sizeof *c);
	c->cmd = cmd;
	if (cmd->parent != NULL)
		snprintf(c->key, sizeof c->key, "%s%s%s", cmd->parent->name,
		    sep, cmd->name);
	else
		snprintf(c->key, sizeof c->key, "%s", cmd->name);
	compl_operand(cmd, c->operand, sizeof c->operand);
	c->kind = compl_kind(c->operand);
}

/* Shorten a help text to what comes before its first aside. */
static void
compl_desc(const char *help, char *buf, size_t len)
{
	static const char	*asides[] = { " (", "; ", ": " };
	const char		*p;
	size_t			 i, n = strlen(help);

	for (i = 0; i < sizeof asides / sizeof asides[0]; i++) {
		if ((p = strstr(help, asides[i])) != NULL &&
		    (size_t)(p - help) < n)
			n = p - help;
	}
	snprintf(buf, len, "%.*s", (int)n, help);
}

/* Print a value's words (closed|open) apart: "closed open". */
static void
compl_words(const char *value)
{
	for (; *value != '\0'; value++)
		putchar(*value == '|' ? ' ' : *value);
}

/* What completes a kind of value in a shell: before and after its words. */
struct compl_action {
	const char	*pre;
	const char	*post;		/* after the words, if any */
};

/* Print what completes a kind of value, from a shell's table. */
static void
compl_action(const struct compl_action *actions, enum compl_kind kind,
    const char *value)
{
	printf("%s", actions[kind].pre);
	if (actions[kind].post != NULL) {
		compl_words(value);
		printf("%s", actions[kind].post);
	}
}

/* Print an option's names, " -x --name" (arg: only if a value follows). */
static void
compl_names_cb(const struct cmd_opt *o, const struct cmd_opt *primary,
    void *arg)
{
	const int	*valued = arg;

	if (*valued && primary->arg != CMD_ARG_REQUIRED)
		return;
	if (o == primary && o->letter != 0)
		printf(" -%c", o->letter);
	printf(" --%s", o->name);
}

/* Print the names of a command's options (all, or those with a value). */
static void
compl_names(const struct cmd_entry *cmd, int valued)
{
	cmd_opts_walk(cmd->opts, compl_names_cb, &valued);
}

/*
 * Print a line for each command (or verb) of a list: pre, its name, mid,
 * its summary as quote prints it, post.
 */
static void
compl_list(const struct cmd_entry *const *list, const char *pre,
    const char *mid, void (*quote)(const char *), const char *post)
{
	for (; *list != NULL; list++) {
		printf("%s%s%s", pre, (*list)->name, mid);
		quote((*list)->summary);
		printf("%s", post);
	}
}

/*
 * bash: _pinhole_spec sets, for each command and verb, its options, those
 * taking the next word, its verbs, and whether options end at the first
 * operand; _pinhole_value and _pinhole_operand complete a value or an
 * operand; _pinhole reads the words and calls them.
 */


/* What completes each kind of value in bash, adding to COMPREPLY. */
static const struct compl_action bash_actions[] = {
	[COMPL_NONE] = { ":", NULL },
	[COMPL_FILE] = { "_filedir", NULL },
	[COMPL_DIR] = { "_filedir -d", NULL },
	[COMPL_WORDS] = { "COMPREPLY+=($(compgen -W '", "' -- \"$cur\"))" },
	[COMPL_SESSION] = { "COMPREPLY+=($(compgen -W \"$(_pinhole_sessions)\" "
	    "-- \"$cur\"))", NULL },
	[COMPL_COMMAND] = { "COMPREPLY+=($(compgen -W \"$_pinhole_commands\" "
	    "-- \"$cur\"))", NULL },
	[COMPL_EXEC] = { "_command_offset $cword", NULL },
};

/* Print the _pinhole_spec arm of a command or verb. */
static void
bash_spec_cb(const struct cmd_entry *cmd, void *arg)
{
	const struct cmd_entry	*const *verb;
	struct compl_cmd	 c;

	compl_cmd_init(&c, cmd, " ");
	printf("\t'%s')\n", c.key);
	if (cmd->opts != NULL) {
		printf("\t\topts+='");
		compl_names(cmd, 0);
		printf("'\n\t\tvals='");
		compl_names(cmd, 1);
		printf("'\n");
	}
	if (cmd->verbs != NULL) {
		printf("\t\tverbs='");
		for (verb = cmd->verbs; *verb != NULL; verb++)
			printf(" %s", (*verb)->name);
		printf("'\n");
	}
	printf("\t\t%s;;\n", cmd->stop ? "stop=1 " : "");
}

/* Print the _pinhole_value arm of an option whose value completes. */
static void
bash_value_cb(const struct cmd_opt *o, const struct cmd_opt *primary,
    void *arg)
{
	const struct compl_cmd	*c = arg;
	enum compl_kind		 kind = compl_value_kind(primary);

	if (kind == COMPL_NONE)
		return;
	printf("\t'%s --%s'", c->key, o->name);
	if (o == primary && o->letter != 0)
		printf("|'%s -%c'", c->key, o->letter);
	printf(")\n\t\t");
	compl_action(bash_actions, kind, primary->value);
	printf(" ;;\n");
}

/* Print the _pinhole_value arms of a command's options. */
static void
bash_values_cb(const struct cmd_entry *cmd, void *arg)
{
	struct compl_cmd	c;

	compl_cmd_init(&c, cmd, " ");
	cmd_opts_walk(cmd->opts, bash_value_cb, &c);
}

/* Print the _pinhole_operand arm of a command whose operands complete. */
static void
bash_operand_cb(const struct cmd_entry *cmd, void *arg)
{
	struct compl_cmd	c;

	compl_cmd_init(&c, cmd, " ");
	if (c.kind == COMPL_NONE)
		return;
	printf("\t'%s')\n\t\t", c.key);
	compl_action(bash_actions, c.kind, c.operand);
	printf(" ;;\n");
}

/* Print the part of the bash script that does not depend on the table. */
static void
bash_main(void)
{
	printf("%s",
	    "# Complete the words of a pinhole command line.\n"
	    "_pinhole()\n"
	    "{\n"
	    "\tlocal cur prev words cword split\n"
	    "\t_init_completion -s || return\n"
	    "\n"
	    "\tlocal cmd opts vals verbs stop i=2\n"
	    "\tif ((cword == 1)); then\n"
	    "\t\tif [[ $cur == -* ]]; then\n"
	    "\t\t\tCOMPREPLY=($(compgen -W '-h --help -V --version' "
	    "-- \"$cur\"))\n"
	    "\t\telse\n"
	    "\t\t\tCOMPREPLY=($(compgen -W \"$_pinhole_commands\" "
	    "-- \"$cur\"))\n"
	    "\t\tfi\n"
	    "\t\treturn\n"
	    "\tfi\n"
	    "\tcmd=${words[1]}\n"
	    "\t_pinhole_spec \"$cmd\" || return\n"
	    "\tif ((cword > 2)) && [[ \" $verbs \" == *\" ${words[2]} \"* ]]; "
	    "then\n"
	    "\t\tcmd=\"$cmd ${words[2]}\" i=3\n"
	    "\t\t_pinhole_spec \"$cmd\"\n"
	    "\tfi\n"
	    "\t# Options end at the command a command such as run runs.\n"
	    "\tfor ((; stop && i < cword; i++)); do\n"
	    "\t\tcase ${words[i]} in\n"
	    "\t\t--) _command_offset $((i + 1)); return ;;\n"
	    "\t\t-*) [[ \" $vals \" == *\" ${words[i]} \"* ]] && ((i++)) ;;\n"
	    "\t\t*) _command_offset $i; return ;;\n"
	    "\t\tesac\n"
	    "\tdone\n"
	    "\tif [[ $split == true || \" $vals \" == *\" $prev \"* ]]; then\n"
	    "\t\t_pinhole_value \"$cmd\" \"$prev\"\n"
	    "\telif [[ $cur == -* ]]; then\n"
	    "\t\tCOMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
	    "\telse\n"
	    "\t\t((cword == 2)) &&\n"
	    "\t\t    COMPREPLY=($(compgen -W \"$verbs\" -- \"$cur\"))\n"
	    "\t\t_pinhole_operand \"$cmd\"\n"
	    "\tfi\n"
	    "} &&\n"
	    "complete -F _pinhole pinhole\n");
}

/* Print the list of commands and the session lister for bash. */
static void
bash_commands(void)
{
	const struct cmd_entry	**cmd;

	printf("_pinhole_commands='");
	for (cmd = cmd_table; *cmd != NULL; cmd++)
		printf("%s%s", cmd == cmd_table ? "" : " ", (*cmd)->name);
	printf("'\n\n"
	    "# Print the names of the running sessions.\n"
	    "_pinhole_sessions()\n"
	    "{\n"
	    "\tpinhole session list 2>/dev/null | cut -d' ' -f1\n"
	    "}\n\n");
}

/* Print the bash completion script. */
static void
compl_bash(void)
{
	printf("# bash completion for pinhole(1): printed by `pinhole "
	    "completion bash`\n# from the tables --help prints.\n\n");
	bash_commands();
	printf("# Set what a command takes: opts, its options; vals, those "
	    "whose value is\n# the next word; verbs; stop, 1 when options "
	    "end at the first operand.\n"
	    "_pinhole_spec()\n{\n\topts='-h --help' vals= verbs= stop=0\n"
	    "\tcase $1 in\n");
	cmd_walk(bash_spec_cb, NULL);
	printf("\t*)\n\t\treturn 1 ;;\n\tesac\n}\n\n"
	    "# Complete the value of the option $2 of the command $1.\n"
	    "_pinhole_value()\n{\n\tcase \"$1 $2\" in\n");
	cmd_walk(bash_values_cb, NULL);
	printf("\tesac\n}\n\n"
	    "# Complete an operand of the command $1.\n"
	    "_pinhole_operand()\n{\n\tcase $1 in\n");
	cmd_walk(bash_operand_cb, NULL);
	printf("\tesac\n}\n\n");
	bash_main();
}

/*
 * zsh: a function per command and verb, _pinhole_cmd_NAME, calls
 * _arguments with its options and operands; a command with verbs hands
 * the words after a verb to the verb's function.
 */

/* Print s inside single quotes, with the characters in esc escaped. */
static void
zsh_puts(const char *s, const char *esc)
{
	for (; *s != '\0'; s++) {
		if (*s == '\'')
			printf("'\\''");
		else if (strchr(esc, *s) != NULL)
			printf("\\%c", *s);
		else
			putchar(*s);
	}
}

/* Print a summary inside single quotes. */
static void
zsh_quote(const char *s)
{
	zsh_puts(s, "");
}

/* The _arguments action that completes each kind of value in zsh. */
static const struct compl_action zsh_actions[] = {
	[COMPL_NONE] = { " ", NULL },
	[COMPL_FILE] = { "_files", NULL },
	[COMPL_DIR] = { "_files -/", NULL },
	[COMPL_WORDS] = { "(", ")" },
	[COMPL_SESSION] = { "_pinhole_sessions", NULL },
	[COMPL_COMMAND] = { "_pinhole_commands", NULL },
	[COMPL_EXEC] = { "_normal", NULL },
};

/* Print one _arguments spec of an option name: "-x" or "--name". */
static void
zsh_spec(const char *name, int lng, const struct cmd_opt *primary)
{
	static const char	*argsep[][2] = { { "", "" }, { "+", "=" },
	    { "-", "=-" } };
	char			 desc[COMPL_DESC_MAX];

	compl_desc(primary->help, desc, sizeof desc);
	printf("\t\t'*%s%s[", name, argsep[primary->arg][lng]);
	zsh_puts(desc, "[]\\");
	printf("]");
	if (primary->arg != CMD_ARG_NONE) {
		printf(primary->arg == CMD_ARG_OPTIONAL ? "::" : ":");
		zsh_puts(primary->value != NULL ? primary->value : "VALUE",
		    ":\\");
		printf(":");
		compl_action(zsh_actions, compl_value_kind(primary),
		    primary->value);
	}
	printf("' \\\n");
}

/* Print the _arguments specs of an option's names. */
static void
zsh_opt_cb(const struct cmd_opt *o, const struct cmd_opt *primary,
    void *arg)
{
	char	name[COMPL_NAME_MAX];

	if (o == primary && o->letter != 0) {
		snprintf(name, sizeof name, "-%c", o->letter);
		zsh_spec(name, 0, primary);
	}
	snprintf(name, sizeof name, "--%s", o->name);
	zsh_spec(name, 1, primary);
}

/* Print the _arguments spec of a command's operands (CMD: the rest). */
static void
zsh_operands(const struct compl_cmd *c)
{
	if (c->operand[0] == '\0')
		return;
	printf("\t\t'*%s", c->kind == COMPL_EXEC ? ":::" : ":");
	zsh_puts(c->operand, ":\\");
	printf(":");
	compl_action(zsh_actions, c->kind, c->operand);
	printf("' \\\n");
}

/* Print the part of a command's function that hands a verb on. */
static void
zsh_verbs(const struct compl_cmd *c)
{
	printf("\tif ((CURRENT > 2)) && "
	    "(($+functions[_pinhole_cmd_%s_$words[2]])); then\n"
	    "\t\tshift words\n\t\t((CURRENT--))\n"
	    "\t\tcurcontext=${curcontext%%:*}-$words[1]:\n"
	    "\t\t_pinhole_cmd_%s_$words[1]\n\t\treturn\n\tfi\n"
	    "\tif ((CURRENT == 2)); then\n\t\tlocal -a verbs=(\n",
	    c->key, c->key);
	compl_list(c->cmd->verbs, "\t\t\t'", ":", zsh_quote, "'\n");
	printf("\t\t)\n\t\t_describe -t verbs '%s verb' verbs && ret=0\n"
	    "\tfi\n", c->key);
}

/* Print the completion function of a command or verb. */
static void
zsh_cmd_cb(const struct cmd_entry *cmd, void *arg)
{
	struct compl_cmd	c;

	compl_cmd_init(&c, cmd, "_");
	printf("# Complete the words of pinhole %s%s%s.\n"
	    "_pinhole_cmd_%s()\n{\n\tlocal ret=1\n",
	    cmd->parent != NULL ? cmd->parent->name : "",
	    cmd->parent != NULL ? " " : "", cmd->name, c.key);
	if (cmd->verbs != NULL)
		zsh_verbs(&c);
	printf("\t_arguments -s -S%s \\\n"
	    "\t\t'(- *)'{-h,--help}'[show the help]' \\\n",
	    cmd->stop ? " -A '-*'" : "");
	cmd_opts_walk(cmd->opts, zsh_opt_cb, NULL);
	zsh_operands(&c);
	printf("\t\t&& ret=0\n\treturn ret\n}\n\n");
}

/* Print the functions that list pinhole's commands and sessions. */
static void
zsh_commands(void)
{
	printf("# Offer pinhole's commands.\n"
	    "_pinhole_commands()\n{\n\tlocal -a commands=(\n");
	compl_list(cmd_table, "\t\t'", ":", zsh_quote, "'\n");
	printf("\t)\n\t_describe -t commands 'pinhole command' commands\n"
	    "}\n\n"
	    "# Offer the names of the running sessions.\n"
	    "_pinhole_sessions()\n{\n"
	    "\tlocal -a sessions=(${${(f)\"$(_call_program sessions "
	    "pinhole session list 2>/dev/null)\"}%%%% *})\n"
	    "\t_wanted sessions expl session compadd -a sessions\n}\n\n");
}

/* Print the zsh completion script. */
static void
compl_zsh(void)
{
	printf("#compdef pinhole\n"
	    "# zsh completion for pinhole(1): printed by `pinhole "
	    "completion zsh`\n# from the tables --help prints.\n\n");
	zsh_commands();
	cmd_walk(zsh_cmd_cb, NULL);
	printf("# Complete the words of a pinhole command line.\n"
	    "_pinhole()\n{\n"
	    "\tlocal curcontext=$curcontext state line ret=1\n"
	    "\t_arguments -C \\\n"
	    "\t\t'(- *)'{-h,--help}'[list the commands]' \\\n"
	    "\t\t'(- *)'{-V,--version}'[print the version]' \\\n"
	    "\t\t'1: :_pinhole_commands' \\\n"
	    "\t\t'*:: :->args' && ret=0\n"
	    "\tif [[ $state == args ]] && "
	    "(($+functions[_pinhole_cmd_$words[1]])); then\n"
	    "\t\tcurcontext=${curcontext%%:*:*}:pinhole-$words[1]:\n"
	    "\t\t_pinhole_cmd_$words[1] && ret=0\n"
	    "\tfi\n\treturn ret\n}\n\n"
	    "if [[ $funcstack[1] == _pinhole ]]; then\n"
	    "\t_pinhole \"$@\"\nelse\n\tcompdef _pinhole pinhole\nfi\n");
}

/*
 * fish: __pinhole_where reads the command line (with the verbs, the
 * options that take the next word and the commands whose options end at
 * the first operand, from the table); each `complete` line holds under
 * the command or verb it belongs to.
 */

/* Print s inside fish's single quotes. */
static void
fish_puts(const char *s)
{
	for (; *s != '\0'; s++) {
		if (*s == '\'' || *s == '\\')
			putchar('\\');
		putchar(*s);
	}
}

/* The arguments of complete that complete each kind of value in fish. */
static const struct compl_action fish_actions[] = {
	[COMPL_NONE] = { " -x", NULL },
	[COMPL_FILE] = { " -rF", NULL },
	[COMPL_DIR] = { " -xa '(__fish_complete_directories)'", NULL },
	[COMPL_WORDS] = { " -xa '", "'" },
	[COMPL_SESSION] = { " -xa '(__pinhole_sessions)'", NULL },
	[COMPL_COMMAND] = { " -xa '(__pinhole_commands)'", NULL },
	[COMPL_EXEC] = { " -x", NULL },
};

/* Print the complete line of one option of a command. */
static void
fish_opt_cb(const struct cmd_opt *o, const struct cmd_opt *primary,
    void *arg)
{
	const struct compl_cmd	*c = arg;
	char			 desc[COMPL_DESC_MAX];

	printf("complete -c pinhole -n \"__pinhole_is '%s'\"", c->key);
	if (o == primary && o->letter != 0)
		printf(" -s %c", o->letter);
	printf(" -l %s", o->name);
	if (primary->arg == CMD_ARG_REQUIRED)
		compl_action(fish_actions, compl_value_kind(primary),
		    primary->value);
	compl_desc(primary->help, desc, sizeof desc);
	printf(" -d '");
	fish_puts(desc);
	printf("'\n");
}

/* Print the complete lines of a command or verb. */
static void
fish_cmd_cb(const struct cmd_entry *cmd, void *arg)
{
	struct compl_cmd	c;
	char			pre[COMPL_NAME_MAX + 80];

	compl_cmd_init(&c, cmd, " ");
	printf("\n# pinhole %s\n", c.key);
	snprintf(pre, sizeof pre, "complete -c pinhole -n \"__pinhole_is '%s'; "
	    "and __pinhole_first\" -a ", c.key);
	if (cmd->verbs != NULL)
		compl_list(cmd->verbs, pre, " -d '", fish_puts, "'\n");
	cmd_opts_walk(cmd->opts, fish_opt_cb, &c);
	if (c.kind != COMPL_NONE && c.kind != COMPL_EXEC) {
		printf("complete -c pinhole -n \"__pinhole_is '%s'\"", c.key);
		compl_action(fish_actions, c.kind, c.operand);
		printf("\n");
	}
}

/* Print a switch arm of __pinhole_verbs: a command's verbs. */
static void
fish_verbs_cb(const struct cmd_entry *cmd, void *arg)
{
	const struct cmd_entry	*const *verb;

	if (cmd->verbs == NULL)
		return;
	printf("\tcase '%s'\n\t\tprintf '%%s\\n'", cmd->name);
	for (verb = cmd->verbs; *verb != NULL; verb++)
		printf(" %s", (*verb)->name);
	printf("\n");
}

/* Print a switch arm of __pinhole_stops: options end at an operand. */
static void
fish_stops_cb(const struct cmd_entry *cmd, void *arg)
{
	struct compl_cmd	c;

	if (!cmd->stop)
		return;
	compl_cmd_init(&c, cmd, " ");
	printf("\tcase '%s'\n\t\tprintf '%%s\\n'", c.key);
	compl_names(cmd, 1);
	printf("\n\t\treturn 0\n");
}

/* Print the functions that read the table's side of the command line. */
static void
fish_tables(void)
{
	printf("# Print pinhole's commands, each with its summary.\n"
	    "function __pinhole_commands\n");
	compl_list(cmd_table, "\techo ", "\\t'", fish_puts, "'\n");
	printf("end\n\n# Print the verbs of the command $argv.\n"
	    "function __pinhole_verbs\n\tswitch $argv[1]\n");
	cmd_walk(fish_verbs_cb, NULL);
	printf("\tend\nend\n\n"
	    "# Print the options of $argv whose value is the next word, if "
	    "its options\n# end at the first operand (run: a command line "
	    "follows).\n"
	    "function __pinhole_stops\n\tswitch $argv[1]\n");
	cmd_walk(fish_stops_cb, NULL);
	printf("\tend\n\treturn 1\nend\n\n");
}

/* Print __pinhole_where, which reads the command line. */
static void
fish_where(void)
{
	printf("%s",
	    "# Print the command (and verb) being completed; past the "
	    "options of a\n# command such as run, @exec and the words of the "
	    "command line it runs.\n"
	    "function __pinhole_where\n"
	    "\tset -l t (commandline -opc)\n"
	    "\tset -l cur (commandline -ct)\n"
	    "\tset -e t[1]\n"
	    "\tset -q t[1]; or return 0\n"
	    "\tset -l key $t[1]\n"
	    "\tset -e t[1]\n"
	    "\tif set -q t[1]; and contains -- $t[1] (__pinhole_verbs $key)\n"
	    "\t\tset key \"$key $t[1]\"\n"
	    "\t\tset -e t[1]\n"
	    "\tend\n"
	    "\techo $key\n"
	    "\tset -l vals (__pinhole_stops $key); or return 0\n"
	    "\twhile set -q t[1]\n"
	    "\t\tswitch $t[1]\n"
	    "\t\tcase --\n"
	    "\t\t\tset -e t[1]\n"
	    "\t\t\tbreak\n"
	    "\t\tcase '-*'\n"
	    "\t\t\tif contains -- $t[1] $vals\n"
	    "\t\t\t\tset -q t[2]; or return 0\n"
	    "\t\t\t\tset -e t[1]\n"
	    "\t\t\tend\n"
	    "\t\t\tset -e t[1]\n"
	    "\t\tcase '*'\n"
	    "\t\t\tbreak\n"
	    "\t\tend\n"
	    "\tend\n"
	    "\tif set -q t[1]; or not string match -q -- '-*' \"$cur\"\n"
	    "\t\tprintf '%s\\n' @exec $t\n"
	    "\tend\n"
	    "end\n\n");
}

/* Print the part of the fish script that does not depend on the table. */
static void
fish_main(void)
{
	fish_where();
	printf("%s",
	    "# Print the names of the running sessions.\n"
	    "function __pinhole_sessions\n"
	    "\tpinhole session list 2>/dev/null | string replace -r ' .*' ''\n"
	    "end\n\n"
	    "# Is the command line at the command (and verb) $argv, among its\n"
	    "# options and operands?\n"
	    "function __pinhole_is\n"
	    "\tset -l w (__pinhole_where)\n"
	    "\ttest \"$w[1]\" = \"$argv[1]\"; and not set -q w[2]\n"
	    "end\n\n"
	    "# Is the word right after the command being completed?\n"
	    "function __pinhole_first\n"
	    "\ttest (count (commandline -opc)) -eq 2\n"
	    "end\n\n"
	    "# Is the command line past the options of a command such as run?\n"
	    "function __pinhole_running\n"
	    "\tset -l w (__pinhole_where)\n"
	    "\ttest \"$w[2]\" = @exec\n"
	    "end\n\n"
	    "# Complete the command line that a command such as run runs.\n"
	    "function __pinhole_run\n"
	    "\tset -l w (__pinhole_where)\n"
	    "\tset -e w[1..2]\n"
	    "\t__fish_complete_subcommand --commandline $w (commandline -ct)\n"
	    "end\n\n"
	    "complete -c pinhole -f\n"
	    "complete -c pinhole -n \"__pinhole_is ''\" -xa "
	    "'(__pinhole_commands)'\n"
	    "complete -c pinhole -n \"__pinhole_is ''\" -s V -l version "
	    "-d 'print the version'\n"
	    "complete -c pinhole -n 'not __pinhole_running' -s h -l help "
	    "-d 'show the help'\n"
	    "complete -c pinhole -n __pinhole_running -xa '(__pinhole_run)'\n");
}

/* Print the fish completion script. */
static void
compl_fish(void)
{
	printf("# fish completion for pinhole(1): printed by `pinhole "
	    "completion fish`\n# from the tables --help prints.\n\n");
	fish_tables();
	fish_main();
	cmd_walk(fish_cmd_cb, NULL);
}

/* The shells, and the printers of their scripts. */
static const struct {
	const char	*name;
	void		(*print)(void);
} compl_shells[] = {
	{ "bash", compl_bash },
	{ "zsh", compl_zsh },
	{ "fish", compl_fish },
};

/* Print the completion script of the shell named. */
static int
cmd_completion_exec(const struct cmd_entry *self, int argc, char **argv)
{
	size_t	i;
	int	ch;

	while ((ch = cmd_getopt(self, argc, argv)) != -1) {
		if (ch == '?')
			return (EXIT_USAGE);
	}
	if (argc - optind != 1)
		return (cmd_usage_error(self, "takes one shell: bash, zsh or "
		    "fish"));
	for (i = 0; i < sizeof compl_shells / sizeof compl_shells[0]; i++) {
		if (strcmp(compl_shells[i].name, argv[optind]) == 0) {
			compl_shells[i].print();
			return (fflush(stdout) == 0 && !ferror(stdout) ? 0 : 1);
		}
	}
	return (cmd_usage_error(self, "unknown shell '%s'", argv[optind]));
}

const struct cmd_entry cmd_completion_entry = {
	.name = "completion",
	.usage = "bash|zsh|fish",
	.summary = "Print the completion script for bash, zsh or fish",
	.intro =
	    "The script completes commands, verbs, options and their values\n"
	    "(files, sessions, the words an option takes) from the same\n"
	    "tables as --help, and the command line that run runs.\n",
	.help =
	    "make install puts the three where the shells look; to try one\n"
	    "without: source <(pinhole completion bash).\n",
	.exec = cmd_completion_exec,
};
