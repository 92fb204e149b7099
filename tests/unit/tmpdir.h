/*
 * A cmocka fixture shared by unit tests: a fresh temporary directory for
 * each test, removed after it.
 */
#ifndef TMPDIR_FIXTURE_H
#define TMPDIR_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>

struct fixture {
	char	dir[64];
};

static int
setup(void **state)
{
	struct fixture	*f = calloc(1, sizeof *f);

	if (f == NULL)
		return (-1);
	snprintf(f->dir, sizeof f->dir, "/tmp/pinhole-unit.XXXXXX");
	if (mkdtemp(f->dir) == NULL)
		return (-1);
	*state = f;
	return (0);
}

static int
teardown(void **state)
{
	struct fixture	*f = *state;
	char		 cmd[128];

	snprintf(cmd, sizeof cmd, "rm -rf %s", f->dir);
	if (system(cmd) != 0)
		return (-1);
	free(f);
	return (0);
}

#endif
