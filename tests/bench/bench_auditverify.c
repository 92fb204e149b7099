/*
 * Benchmark of `pinhole log verify`: write N audit lines (default
 * 1,000,000) with the real writer, then time the chain check over them,
 * without and with a key.  Built by `make check`, not run by it:
 *   tests/bench/bench_auditverify [LINES]
 */
#include "config.h"

#include <sys/mman.h>
#include <sys/stat.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "proxy/audit/audit.h"
#include "proxy/audit/verify.h"

/* Write n lines of typical events to path. */
static void
bench_write(const char *path, const char *keyfile, long n)
{
	struct audit		*a;
	struct audit_event	 ev;
	char			 err[256], sess[16];
	long			 i;

	if ((a = audit_open(path, err, sizeof err)) == NULL ||
	    (keyfile != NULL && audit_set_key(a, keyfile, err, sizeof err)))
		fprintf(stderr, "%s\n", err), exit(1);
	audit_set_rotation(a, 0, 1);
	for (i = 0; i < n; i++) {
		audit_event_init(&ev);
		snprintf(sess, sizeof sess, "s%ld", i % 17);
		ev.event = i % 3 == 2 ? "close" : "connect";
		ev.verdict = i % 5 == 0 ? "deny" : "allow";
		ev.reason = i % 5 == 0 ? "default-deny" : "rule";
		ev.session = sess;
		ev.client = "10.200.0.2:41234";
		ev.host = i % 5 == 0 ? "evil.example.net" : "files.pythonhosted.org";
		ev.port = 443;
		ev.via = "connect";
		ev.rule = "policy:3";
		ev.status = 200;
		if (i % 3 == 2) {
			ev.bytes_up = 1234;
			ev.bytes_down = 5678901;
			ev.ms = 321;
		}
		audit_write(a, &ev);
	}
	audit_close(a);
}

/* Time the check of a file; print lines per second. */
static void
bench_verify(const char *path, const char *what, const unsigned char *key,
    size_t keylen)
{
	struct audit_verify	 v;
	struct timespec		 t0, t1;
	struct stat		 st;
	char			*p;
	double			 secs;
	int			 fd;

	if ((fd = open(path, O_RDONLY)) == -1 || fstat(fd, &st) == -1 ||
	    (p = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0)) ==
	    MAP_FAILED || audit_verify_init(&v, key, keylen) == -1)
		perror(path), exit(1);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (audit_verify_file(&v, path, p, st.st_size) == -1)
		fprintf(stderr, "%s\n", v.msg), exit(1);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("verify %-8s %llu lines, %.1f MB in %.3f s: %.0f lines/s\n",
	    what, v.lines, st.st_size / 1e6, secs, v.lines / secs);
	audit_verify_free(&v);
	munmap(p, st.st_size);
	close(fd);
}

int
main(int argc, char **argv)
{
	char		 dir[] = "/tmp/pinhole-bench.XXXXXX", path[64], kpath[64];
	const char	*key = "0123456789abcdef0123456789abcdef\n";
	long		 n = argc > 1 ? atol(argv[1]) : 1000000;
	FILE		*fp;

	if (mkdtemp(dir) == NULL)
		perror("mkdtemp"), exit(1);
	snprintf(path, sizeof path, "%s/audit.log", dir);
	snprintf(kpath, sizeof kpath, "%s/key", dir);
	if ((fp = fopen(kpath, "w")) == NULL)
		perror(kpath), exit(1);
	fputs(key, fp);
	fclose(fp);
	bench_write(path, NULL, n);
	bench_verify(path, "sha256", NULL, 0);
	unlink(path);
	bench_write(path, kpath, n);
	bench_verify(path, "hmac", (const unsigned char *)key, strlen(key));
	unlink(path);
	unlink(kpath);
	rmdir(dir);
	return (0);
}
