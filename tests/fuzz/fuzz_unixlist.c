/*
 * Fuzz the reader of the host's /proc/net/unix (netns/hostsock.c), whose
 * socket names any local user chooses, newlines included:
 *  - a line is an entry or not; an entry's name lies within the line,
 *    is not empty and holds no newline;
 *  - the names read are sorted, each once, none empty or longer than a
 *    socket's name can be.
 * Corpus: tests/fuzz/unixlist/ (listings as the kernel writes them).
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "netns/netns.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* Stop loudly when an invariant breaks. */
static void
check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz_unixlist: invariant broken: %s\n", what);
		abort();
	}
}

/* Every line on its own. */
static void
lines(const char *text, size_t len)
{
	struct netns_unix_ent	 e;
	const char		*line, *nl, *end = text + len;
	size_t			 n;

	for (line = text; line < end; line = nl + 1) {
		if ((nl = memchr(line, '\n', (size_t)(end - line))) == NULL)
			nl = end;
		n = (size_t)(nl - line);
		if (netns_unix_line(line, n, &e) == -1 || e.path == NULL)
			continue;
		check(e.path > line && e.path + e.pathlen == line + n,
		    "name within the line");
		check(e.pathlen > 0, "empty name");
		check(memchr(e.path, '\n', e.pathlen) == NULL, "newline");
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char	*text = (const char *)data;
	char		**names;
	size_t		  n, i;

	if (size > 1 << 16)
		return (0);
	lines(text, size);
	if (netns_unix_names(text, size, &names, &n) == -1)
		return (0);
	for (i = 0; i < n; i++) {
		check(names[i][0] != '\0', "empty name");
		check(strlen(names[i]) <= NETNS_UNIX_NAME_MAX, "long name");
		check(i == 0 || strcmp(names[i - 1], names[i]) < 0, "order");
	}
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return (0);
}
