/*
 * Inside the policy parser: a load and a file being parsed, shared by
 * the directives (parse.c), the loads (load.c) and a rule's target
 * (target.c).  Nothing outside rules/ includes it.
 */
#ifndef RULES_PARSE_INT_H
#define RULES_PARSE_INT_H

#include <sys/stat.h>

#include <time.h>

#include "rules/rules-int.h"

#define GLOB_CHARS	"*?["		/* glob(3)'s pattern characters */
#define GLOB_FILES_MAX	1024		/* files one pattern may match */

/* One load: the rules parsed so far and where errors go. */
struct load {
	struct rules		*r;
	struct rule_spec	*specs;
	size_t			 nspecs;
	size_t			 cap;
	char			*err;
	size_t			 errlen;
	struct rules_file	*files;		/* read by this load */
	struct rules_file	*dirs;		/* whose new files it would read */
	enum rules_layer	 layer;		/* of the rules it adds */
	struct secret		*secrets;	/* parsed by this load */
	struct secret		**stail;
	struct rules_file	*sockets;	/* allow-socket, as written */
	int			 allow_vsock;
	time_t			 now;		/* rules that ended are left out */
	time_t			 next_end;	/* the first end still to come */
	struct upstream_load	 up;		/* upstream, no-upstream */
};

/* One file (or text) being parsed; parent is the file that included it. */
struct parse {
	struct load		*load;
	const struct parse	*parent;
	const char		*file;
	const char		*dir;		/* for relative includes */
	unsigned int		 line;		/* 0: a one-line rule */
	int			 numbered;
	dev_t			 dev;
	ino_t			 ino;
	int			 depth;
	const char		*kw;		/* the line's directive */
	time_t			 until;		/* the line's "until", or 0 */
	struct rule_req		*req;		/* the line's constraints */
	char			*rest;		/* words after the argument */
};

/* rules/target.c */
int	parse_error(const struct parse *, const char *, ...)
	    __attribute__((format(printf, 2, 3)));
const char *quote(char *, size_t, const char *, size_t);
struct rule_spec *spec_new(struct parse *, enum rule_action, const char *);
int	parse_cidr(struct parse *, const char *, size_t, struct rule_spec *);
int	parse_host(struct parse *, const char *, size_t, struct rule_spec *);
int	split_host(struct parse *, const char *, const char **, size_t *,
	    const char **);
struct rule_spec *parse_target(struct parse *, const char *, const char *,
	    enum rule_action);
int	parse_rule(struct parse *, const char *, const char *,
	    enum rule_action);

/* rules/parse.c */
int	parse_text(struct parse *, const char *, size_t);
int	parse_file(struct load *, const struct parse *, const char *,
	    const struct stat *, const char *, size_t);
int	load_file(struct load *, const struct parse *, const char *);
int	load_glob(struct load *, const struct parse *, const char *);
int	load_note(struct load *, struct rules_file **, const char *, size_t);

#endif /* RULES_PARSE_INT_H */
