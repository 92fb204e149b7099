/*
 * Presets: policy files shipped with pinhole (python, github, ...),
 * read by `include preset:NAME` from one directory, and listed for the
 * person who would include one.
 */
#include "config.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rules/rules-int.h"

#ifndef PRESETDIR
#define PRESETDIR "/usr/local/share/pinhole/presets"
#endif

/* Where presets are: $PINHOLE_PRESETDIR, or PRESETDIR. */
const char *
rules_preset_dir(void)
{
	const char	*dir = getenv("PINHOLE_PRESETDIR");

	return (dir != NULL && dir[0] != '\0' ? dir : PRESETDIR);
}

/* Is this a valid preset name (letters, digits, '-', '_'; at most 64)? */
int
rules_preset_name_ok(const char *s)
{
	size_t	i;

	for (i = 0; s[i] != '\0'; i++) {
		if (!(s[i] >= 'a' && s[i] <= 'z') && !(s[i] >= '0' &&
		    s[i] <= '9') && s[i] != '-' && s[i] != '_')
			return (0);
	}
	return (i > 0 && i < RULES_PRESET_LEN);
}

/* Order names by their bytes. */
static int
preset_cmp(const void *a, const void *b)
{
	return (strcmp(a, b));
}

/* List the presets, in byte order. */
int
rules_presets(char (*names)[RULES_PRESET_LEN], size_t max)
{
	struct dirent	*de;
	DIR		*d;
	size_t		 n = 0;

	if ((d = opendir(rules_preset_dir())) == NULL)
		return (-1);
	while ((de = readdir(d)) != NULL) {
		if (!rules_preset_name_ok(de->d_name) ||
		    (de->d_type != DT_REG && de->d_type != DT_LNK &&
		    de->d_type != DT_UNKNOWN))
			continue;
		if (n < max)
			memcpy(names[n], de->d_name, strlen(de->d_name) + 1);
		n++;
	}
	closedir(d);
	qsort(names, n < max ? n : max, RULES_PRESET_LEN, preset_cmp);
	return (n > (size_t)INT_MAX ? INT_MAX : (int)n);
}

/*
 * What a preset is for: its first comment line, without "# " (empty
 * when it has none, or cannot be read).
 */
void
rules_preset_about(const char *name, char *buf, size_t len)
{
	char	 path[4096], line[256];
	FILE	*f;
	size_t	 n;

	buf[0] = '\0';
	if (!rules_preset_name_ok(name) || (size_t)snprintf(path, sizeof path,
	    "%s/%s", rules_preset_dir(), name) >= sizeof path ||
	    (f = fopen(path, "re")) == NULL)
		return;
	if (fgets(line, sizeof line, f) != NULL && line[0] == '#') {
		n = strcspn(line, "\r\n");
		line[n] = '\0';
		snprintf(buf, len, "%s", line + 1 + strspn(line + 1, " \t"));
	}
	fclose(f);
}

/*
 * The preset nearest a name that is none, into buf ("" when none is
 * near enough).
 */
void
rules_preset_near(const char *name, char *buf, size_t len)
{
	char		 names[64][RULES_PRESET_LEN];
	const char	*list[65], *near;
	int		 n, i;

	buf[0] = '\0';
	if ((n = rules_presets(names, 64)) <= 0)
		return;
	for (i = 0; i < n && i < 64; i++)
		list[i] = names[i];
	list[i] = NULL;
	if ((near = rules_nearest(name, list)) != NULL)
		snprintf(buf, len, "%s", near);
}
