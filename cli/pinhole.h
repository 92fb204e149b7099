/*
 * pinhole: the command table and what every subcommand shares.
 */
#ifndef PINHOLE_H
#define PINHOLE_H

#include <getopt.h>	/* optarg, optind: where cmd_getopt() is */
#include <stdio.h>

/* Exit statuses shared by the subcommands. */
#define EXIT_USAGE	2

/* Whether an option takes a value. */
enum cmd_arg {
	CMD_ARG_NONE,
	CMD_ARG_REQUIRED,	/* --name VALUE, --name=VALUE, -x VALUE */
	CMD_ARG_OPTIONAL	/* --name[=VALUE], -x[VALUE] */
};

/*
 * One option of a subcommand: what the parser accepts and what --help
 * says of it.  A row without help is another name for the row above;
 * a row with include stands for the rows of that (shared) table.  A
 * row with neither name nor include ends the table.
 */
struct cmd_opt {
	const char		*name;		/* long name, without "--" */
	int			 letter;	/* short letter, or 0 */
	enum cmd_arg		 arg;
	const char		*value;		/* the value's name in help */
	const char		*help;
	int			 key;		/* what the parser returns; 0:
						   the letter */
	const struct cmd_opt	*include;
};

struct cmd_entry {
	const char		*name;
	const char		*usage;		/* arguments, one line */
	const char		*summary;	/* one line, `pinhole help` */
	const char		*intro;		/* --help before the options */
	const struct cmd_opt	*opts;		/* NULL: none */
	const char		*help;		/* --help after the options */
	int			 stop;		/* options end at an argument */
	const struct cmd_entry	*parent;	/* of a verb (log verify) */
	const struct cmd_entry	*const *verbs;	/* NULL-terminated, or NULL */
	int			(*exec)(const struct cmd_entry *, int, char **);
};

extern const struct cmd_entry *cmd_table[];

const struct cmd_entry	*cmd_find(const char *);
int			 cmd_person(const struct cmd_entry *);
const char		*cmd_nearest(const char *);
void			 cmd_walk(void (*)(const struct cmd_entry *, void *),
			    void *);
void			 cmd_opts_walk(const struct cmd_opt *,
			    void (*)(const struct cmd_opt *,
			    const struct cmd_opt *, void *), void *);
void			 cmd_print_help(const struct cmd_entry *);
int			 cmd_usage_error(const struct cmd_entry *, const char *, ...)
			    __attribute__((format(printf, 2, 3)));
int			 cmd_getopt(const struct cmd_entry *, int, char **);
const struct cmd_opt	*cmd_opt_find(const struct cmd_opt *, int);

/*
 * Print text from the command line or a log: what is not printable
 * ASCII as \xNN.
 */
void			 cmd_print_escaped(FILE *, const char *);

#endif
