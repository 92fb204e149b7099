/*
 * A command line's rules as policy lines: the one place where what a
 * person types after `pinhole allow`, `pinhole disallow` or `--allow`
 * becomes lines of a policy.  The shell splits a rule typed without
 * quotes into words ("github.com read-only path /src"), so words are
 * put back together by what each directive takes, and a word that could
 * only be a misspelt directive or constraint is refused rather than
 * taken for a host of a rule of its own.  Pure.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rules/rules-int.h"

#define ARGS_BLANKS	" \t\r\n\f\v"

/* The words that follow a directive's argument, and what they take. */
static const struct args_option {
	const char	*name;
	int		 dir;		/* RULES_DIR_* of the directives */
	int		 value;		/* the next word is its value */
	const char	*usage;
} args_options[] = {
	{ "read-only", RULES_DIR_CONSTRAINTS, 0, "HOST read-only" },
	{ "websocket", RULES_DIR_CONSTRAINTS, 0, "HOST read-only websocket" },
	{ "methods", RULES_DIR_CONSTRAINTS, 1, "HOST methods GET,HEAD" },
	{ "path", RULES_DIR_CONSTRAINTS, 1, "HOST path /PREFIX/**" },
	{ "until", RULES_DIR_END, 1, "HOST until TIME" },
	{ "for", RULES_DIR_REST, 1, "secret NAME for HOSTS" },
	{ "from", RULES_DIR_REST, 1, "secret NAME for HOSTS from FILE" },
};
#define ARGS_NOPTIONS	(sizeof args_options / sizeof args_options[0])

/* The words of the command line, in order. */
struct args_words {
	const char *const	*args;
	size_t			 nargs;
	size_t			 arg;		/* the argument read */
	const char		*s;		/* and where in it */
	int			 done;		/* a '#' word ended them */
};

/* Look at the next word without taking it; its length, 0 at the end. */
static size_t
args_peek(struct args_words *w, const char **word)
{
	size_t	n;

	while (!w->done && w->arg < w->nargs) {
		if (w->s == NULL)
			w->s = w->args[w->arg];
		w->s += strspn(w->s, ARGS_BLANKS);
		if (*w->s == '#') {
			w->done = 1;
			break;
		}
		if ((n = strcspn(w->s, ARGS_BLANKS)) > 0) {
			*word = w->s;
			return (n);
		}
		w->arg++;
		w->s = NULL;
	}
	return (0);
}

/* Take the word args_peek() showed. */
static void
args_take(struct args_words *w, size_t n)
{
	w->s += n;
}

/* The option a word is (among those of directives dir), or NULL. */
static const struct args_option *
args_option(const char *word, size_t n, int dir)
{
	size_t	i;

	for (i = 0; i < ARGS_NOPTIONS; i++) {
		if ((args_options[i].dir & dir) != 0 &&
		    strlen(args_options[i].name) == n &&
		    strncmp(word, args_options[i].name, n) == 0)
			return (&args_options[i]);
	}
	return (NULL);
}

/* Append a word to a line. */
static int
args_append(char *line, size_t *len, const char *word, size_t n)
{
	if (*len + (*len > 0) + n > RULES_LINE_MAX)
		return (-1);
	if (*len > 0)
		line[(*len)++] = ' ';
	memcpy(line + *len, word, n);
	*len += n;
	line[*len] = '\0';
	return (0);
}

/* Does the word (n bytes) hold one of chars? */
static int
args_has(const char *word, size_t n, const char *chars)
{
	size_t	i;

	for (i = 0; i < n; i++) {
		if (strchr(chars, word[i]) != NULL)
			return (1);
	}
	return (0);
}

/*
 * Refuse a word that would start an allow rule of its own but is no
 * host: a constraint out of place, or a misspelt directive or
 * constraint ("readonly", "alow-private").  A name with a dot, an
 * address or a port is a host whatever it looks like.
 */
static int
args_not_host(const char *word, size_t n, char *err, size_t errlen)
{
	const struct args_option	*o;
	const char			*names[ARGS_NOPTIONS + 1], *near;
	char				 w[64];
	size_t				 i;

	if ((o = args_option(word, n, ~0)) != NULL) {
		snprintf(err, errlen, "'%s' is not a host: it goes after one "
		    "(%s)", o->name, o->usage);
		return (-1);
	}
	if (n >= sizeof w || args_has(word, n, ".:/[*"))
		return (0);
	memcpy(w, word, n);
	w[n] = '\0';
	if (rules_directive(w, n, &near) == -1 && near == NULL) {
		for (i = 0; i < ARGS_NOPTIONS; i++)
			names[i] = args_options[i].name;
		names[i] = NULL;
		near = rules_nearest(w, names);
	}
	if (near == NULL)
		return (0);
	snprintf(err, errlen, "'%s' is neither a directive nor a constraint "
	    "(did you mean '%s'?), and not a host a rule names", w, near);
	return (-1);
}

/*
 * Read one line: a directive (or "allow" for a word that is none), its
 * argument, and the words it takes after that.
 */
static int
args_line(struct args_words *w, char *line, char *err, size_t errlen)
{
	const struct args_option	*o;
	const char			*word, *near;
	size_t				 n, len = 0;
	int				 dir;

	n = args_peek(w, &word);
	if ((dir = rules_directive(word, n, &near)) == -1) {
		if (args_not_host(word, n, err, errlen) == -1)
			return (-1);
		dir = RULES_DIR_CONSTRAINTS | RULES_DIR_END;
		(void)args_append(line, &len, "allow", 5);
	} else {
		(void)args_append(line, &len, word, n);
		args_take(w, n);
	}
	if (!(dir & RULES_DIR_NOARG) && (n = args_peek(w, &word)) > 0) {
		if (args_append(line, &len, word, n) == -1)
			goto toolong;
		args_take(w, n);
	}
	while ((n = args_peek(w, &word)) > 0 &&
	    (o = args_option(word, n, dir)) != NULL) {
		if (args_append(line, &len, word, n) == -1)
			goto toolong;
		args_take(w, n);
		if (o->value && (n = args_peek(w, &word)) > 0) {
			if (args_append(line, &len, word, n) == -1)
				goto toolong;
			args_take(w, n);
		}
	}
	return (0);
toolong:
	snprintf(err, errlen, "rule longer than %d bytes", RULES_LINE_MAX);
	return (-1);
}

/* Free what rules_args_lines() made. */
void
rules_lines_free(struct rules_lines *l)
{
	size_t	i;

	for (i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

/* Keep one more line. */
static int
args_keep(struct rules_lines *l, const char *line)
{
	char	**v;

	if ((v = reallocarray(l->v, l->n + 1, sizeof *v)) == NULL)
		return (-1);
	l->v = v;
	if ((l->v[l->n] = strdup(line)) == NULL)
		return (-1);
	l->n++;
	return (0);
}

/* Turn a command line's rules into policy lines. */
int
rules_args_lines(const char *const *args, size_t nargs,
    struct rules_lines *out, char *err, size_t errlen)
{
	struct args_words	 w = { .args = args, .nargs = nargs };
	char			 line[RULES_LINE_MAX + 1];
	const char		*word;

	out->v = NULL;
	out->n = 0;
	while (args_peek(&w, &word) > 0) {
		line[0] = '\0';
		if (args_line(&w, line, err, errlen) == -1)
			goto fail;
		if (args_keep(out, line) == -1) {
			snprintf(err, errlen, "out of memory");
			goto fail;
		}
	}
	if (out->n > 0)
		return (0);
	snprintf(err, errlen, "no rule given");
fail:
	rules_lines_free(out);
	return (-1);
}
