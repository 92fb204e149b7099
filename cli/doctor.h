/*
 * pinhole doctor's report: checks with a verdict, what was found and,
 * when something is wrong, what fixes it; whether `pinhole run` will
 * work; the report as aligned text or as one JSON object.  No checking
 * here (cli/cmd-doctor.c does that): the part the unit test drives.
 */
#ifndef DOCTOR_H
#define DOCTOR_H

#include <stddef.h>
#include <stdio.h>

struct json_writer;

#define DOCTOR_TEXT_LEN	768

enum doctor_verdict {
	DOCTOR_OK,
	DOCTOR_WARN,	/* works, with less (no full capture, no file yet) */
	DOCTOR_FAIL,
	DOCTOR_SKIP	/* could not be tried: what it needs failed */
};

struct doctor_check {
	const char		*name;
	int			 required;	/* does pinhole run need it? */
	enum doctor_verdict	 verdict;
	char			 detail[DOCTOR_TEXT_LEN];
	char			 fix[DOCTOR_TEXT_LEN];	/* "" when none */
	char			**items;	/* a list under the check */
	size_t			 nitems;
};

/* Give a check its verdict and what was found (printf-like). */
void	doctor_set(struct doctor_check *, enum doctor_verdict, const char *,
	    ...) __attribute__((format(printf, 3, 4)));
/* Add a line to the check's list (printf-like); 0, or -1: no memory. */
int	doctor_item(struct doctor_check *, const char *, ...)
	    __attribute__((format(printf, 2, 3)));
/* Free the checks' lists. */
void	doctor_free(struct doctor_check *, size_t);
/* Say what fixes it (printf-like). */
void	doctor_fix(struct doctor_check *, const char *, ...)
	    __attribute__((format(printf, 2, 3)));

/*
 * Will pinhole run work: has every required check passed (ok or warn;
 * a required check failed or not tried does not)?  1 or 0.
 */
int	doctor_ok(const struct doctor_check *, size_t);

/* One line a check, aligned, each fix under its check; then the verdict. */
void	doctor_print(FILE *, const struct doctor_check *, size_t);

/*
 * {"ok":B,"checks":[{"name","verdict","required","detail","fix"}...]},
 * and "items":[...] for a check with a list.
 */
void	doctor_json(struct json_writer *, const struct doctor_check *,
	    size_t);

/* ok, warn, FAIL, skip; in JSON lower case: fail. */
const char *doctor_verdict_name(enum doctor_verdict, int);

#endif
