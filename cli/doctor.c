/*
 * pinhole doctor's report: verdicts, whether pinhole run will work, and
 * the report as text or JSON (cli/doctor.h).
 */
#include "config.h"

#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "cli/ctl.h"
#include "cli/doctor.h"
#include "lib/json.h"

/* The word for a verdict: printed (FAIL stands out), or in JSON. */
const char *
doctor_verdict_name(enum doctor_verdict v, int json)
{
	static const char	*text[] = { "ok", "warn", "FAIL", "skip" };
	static const char	*lower[] = { "ok", "warn", "fail", "skip" };

	return (json ? lower[v] : text[v]);
}

/* Give a check its verdict and what was found. */
void
doctor_set(struct doctor_check *c, enum doctor_verdict v, const char *fmt,
    ...)
{
	va_list	ap;

	c->verdict = v;
	va_start(ap, fmt);
	vsnprintf(c->detail, sizeof c->detail, fmt, ap);
	va_end(ap);
}

/* Say what fixes a check. */
void
doctor_fix(struct doctor_check *c, const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	vsnprintf(c->fix, sizeof c->fix, fmt, ap);
	va_end(ap);
}

/* Add a line to a check's list. */
int
doctor_item(struct doctor_check *c, const char *fmt, ...)
{
	va_list	  ap;
	char	**n, *line;
	int	  r;

	va_start(ap, fmt);
	r = vasprintf(&line, fmt, ap);
	va_end(ap);
	if (r == -1)
		return (-1);
	if ((n = reallocarray(c->items, c->nitems + 1, sizeof *n)) == NULL) {
		free(line);
		return (-1);
	}
	c->items = n;
	c->items[c->nitems++] = line;
	return (0);
}

/* Free the checks' lists. */
void
doctor_free(struct doctor_check *c, size_t n)
{
	size_t	i, k;

	for (i = 0; i < n; i++) {
		for (k = 0; k < c[i].nitems; k++)
			free(c[i].items[k]);
		free(c[i].items);
		c[i].items = NULL;
		c[i].nitems = 0;
	}
}

/* Does this check keep pinhole run from working? */
static int
doctor_blocks(const struct doctor_check *c)
{
	return (c->required && c->verdict != DOCTOR_OK &&
	    c->verdict != DOCTOR_WARN);
}

/* Will pinhole run work: every required check ok or warn? */
int
doctor_ok(const struct doctor_check *c, size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++) {
		if (doctor_blocks(&c[i]))
			return (0);
	}
	return (1);
}

/* Print the checks, one a line, then what they mean for pinhole run. */
void
doctor_print(FILE *f, const struct doctor_check *c, size_t n)
{
	size_t	i, k, failed = 0;
	int	width = 0;

	for (i = 0; i < n; i++) {
		if ((int)strlen(c[i].name) > width)
			width = (int)strlen(c[i].name);
	}
	for (i = 0; i < n; i++) {
		fprintf(f, "%-*s  %-4s  ", width, c[i].name,
		    doctor_verdict_name(c[i].verdict, 0));
		ctl_print_safe(f, c[i].detail);
		if (!c[i].required && (c[i].verdict == DOCTOR_WARN ||
		    c[i].verdict == DOCTOR_FAIL))
			fputs(" (pinhole run works without it)", f);
		fputc('\n', f);
		for (k = 0; k < c[i].nitems; k++) {
			fprintf(f, "%-*s        ", width, "");
			ctl_print_safe(f, c[i].items[k]);
			fputc('\n', f);
		}
		if (c[i].fix[0] != '\0') {
			fprintf(f, "%-*s        fix: ", width, "");
			ctl_print_safe(f, c[i].fix);
			fputc('\n', f);
		}
		failed += doctor_blocks(&c[i]);
	}
	if (failed == 0)
		fprintf(f, "pinhole run will work\n");
	else
		fprintf(f, "pinhole run will not work: %zu check%s failed\n",
		    failed, failed == 1 ? "" : "s");
}

/* A check's list, if it has one. */
static void
doctor_json_items(struct json_writer *w, const struct doctor_check *c)
{
	size_t	k;

	if (c->nitems == 0)
		return;
	json_open_array(w, "items");
	for (k = 0; k < c->nitems; k++)
		json_put_elem_str(w, c->items[k]);
	json_close_array(w);
}

/* Write the report as one JSON object. */
void
doctor_json(struct json_writer *w, const struct doctor_check *c, size_t n)
{
	size_t	i;

	json_open(w);
	json_put_bool(w, "ok", doctor_ok(c, n));
	json_open_array(w, "checks");
	for (i = 0; i < n; i++) {
		json_open_elem(w);
		json_put_str(w, "name", c[i].name);
		json_put_str(w, "verdict",
		    doctor_verdict_name(c[i].verdict, 1));
		json_put_bool(w, "required", c[i].required);
		json_put_str(w, "detail", c[i].detail);
		if (c[i].fix[0] != '\0')
			json_put_str(w, "fix", c[i].fix);
		else
			json_put_null(w, "fix");
		doctor_json_items(w, &c[i]);
		json_close(w);
	}
	json_close_array(w);
	json_close(w);
}
