/*
 * Replay driver: runs a libFuzzer target's entry point over files given
 * on the command line, so every build checks the corpora without clang.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* Read one file whole and feed it to the target. */
static int
replay_file(const char *path)
{
	FILE		*f;
	uint8_t		*buf = NULL;
	size_t		 len = 0, cap = 0, n;
	int		 rv = -1;

	if ((f = fopen(path, "rb")) == NULL) {
		perror(path);
		return (-1);
	}
	for (;;) {
		if (len == cap) {
			uint8_t	*nbuf;

			cap = cap ? cap * 2 : 4096;
			if ((nbuf = realloc(buf, cap)) == NULL)
				goto out;
			buf = nbuf;
		}
		if ((n = fread(buf + len, 1, cap - len, f)) == 0)
			break;
		len += n;
	}
	if (ferror(f)) {
		perror(path);
		goto out;
	}
	LLVMFuzzerTestOneInput(buf, len);
	rv = 0;
out:
	free(buf);
	fclose(f);
	return (rv);
}

int
main(int argc, char **argv)
{
	int	i, failed = 0;

	for (i = 1; i < argc; i++) {
		if (replay_file(argv[i]) == -1)
			failed = 1;
	}
	printf("replayed %d inputs\n", argc - 1);
	return (failed);
}
