/*
 * pinhole: the command table and what every subcommand shares.
 */
#ifndef PINHOLE_H
#define PINHOLE_H

#include <getopt.h>

/* Exit statuses shared by the subcommands. */
#define EXIT_USAGE	2

struct cmd_entry {
	const char	*name;
	const char	*usage;		/* arguments, one line */
	const char	*summary;	/* one line for `pinhole help` */
	const char	*help;		/* the rest of `pinhole CMD --help` */
	int		(*exec)(const struct cmd_entry *, int, char **);
};

extern const struct cmd_entry *cmd_table[];

const struct cmd_entry	*cmd_find(const char *);
void			 cmd_print_help(const struct cmd_entry *);
int			 cmd_usage_error(const struct cmd_entry *, const char *, ...)
			    __attribute__((format(printf, 2, 3)));
int			 cmd_getopt(const struct cmd_entry *, int, char **,
			    const char *, const struct option *);

#endif
