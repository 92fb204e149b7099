/*
 * Benchmark: load 100,000 rules (exact names, wildcards, prefixes) and
 * time lookups one by one.  Targets: load < 0.5 s, median lookup < 1 us.
 * Built by `make check`, run by hand: tests/bench/bench_rules [NRULES]
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rules/rules.h"

#define NLOOKUPS	200000

/* Now, in nanoseconds. */
static uint64_t
now_ns(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec * 1000000000 + ts.tv_nsec);
}

/* Compare two durations for qsort. */
static int
cmp_u64(const void *a, const void *b)
{
	uint64_t	x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x < y ? -1 : x > y);
}

/* Write rule i of n: 60% names, 30% wildcards, 10% prefixes. */
static int
bench_rule(char *buf, size_t size, size_t i, size_t n)
{
	if (i % 10 < 6)
		return (snprintf(buf, size, "allow host%zu.site%zu.example:443\n",
		    i, i % 997));
	if (i % 10 < 9)
		return (snprintf(buf, size, "allow *.svc%zu.example.net\n", i));
	return (snprintf(buf, size, "deny %zu.%zu.%zu.0/24\n",
	    20 + i % 200, (i / 200) % 256, i % 256));
}

/* Write lookup i: a mix of hits and misses of each kind. */
static void
bench_host(char *buf, size_t size, size_t i, size_t n)
{
	size_t	k = (i * 7919) % n / 10 * 10;	/* a group of ten rules */

	switch (i % 4) {
	case 0:				/* an exact name: allowed */
		k += i % 6;
		snprintf(buf, size, "host%zu.site%zu.example:443", k, k % 997);
		break;
	case 1:				/* under a wildcard: allowed */
		k += 6 + i % 3;
		snprintf(buf, size, "a.b.svc%zu.example.net", k);
		break;
	case 2:				/* inside a denied prefix */
		k += 9;
		snprintf(buf, size, "%zu.%zu.%zu.9", 20 + k % 200,
		    (k / 200) % 256, k % 256);
		break;
	default:			/* no rule: denied */
		snprintf(buf, size, "miss%zu.pypi.org.evil.example", k);
		break;
	}
}

/* Load the rules, time the lookups, print the figures. */
int
main(int argc, char **argv)
{
	struct rules		*r;
	struct rules_verdict	 v;
	struct host		*hosts;
	uint16_t		*ports;
	uint64_t		*t, t0, load, batch, clock_cost;
	size_t			 n = argc > 1 ? strtoul(argv[1], NULL, 10) : 100000;
	size_t			 i, len = 0, allowed = 0;
	const char		*errstr;
	char			*text, one[128], err[256];

	if (n == 0 || (text = malloc(n * 64)) == NULL)
		return (1);
	for (i = 0; i < n; i++)
		len += bench_rule(text + len, n * 64 - len, i, n);
	r = rules_create();
	t0 = now_ns();
	if (rules_load_text(r, "bench", text, len, err, sizeof err) == -1) {
		fprintf(stderr, "%s\n", err);
		return (1);
	}
	load = now_ns() - t0;
	hosts = calloc(NLOOKUPS, sizeof *hosts);
	ports = calloc(NLOOKUPS, sizeof *ports);
	t = calloc(NLOOKUPS, sizeof *t);
	for (i = 0; i < NLOOKUPS; i++) {
		bench_host(one, sizeof one, i, n);
		if (host_port_parse(one, &hosts[i], &ports[i], 443, &errstr) == -1)
			return (1);
	}
	for (i = 0; i < NLOOKUPS; i++) {
		t0 = now_ns();
		allowed += rules_match(r, &hosts[i], ports[i], &v);
		t[i] = now_ns() - t0;
	}
	t0 = now_ns();
	for (i = 0; i < NLOOKUPS; i++)
		rules_match(r, &hosts[i], ports[i], &v);
	batch = now_ns() - t0;
	t0 = now_ns();
	for (i = 0; i < NLOOKUPS; i++)
		(void)now_ns();
	clock_cost = (now_ns() - t0) / NLOOKUPS;
	qsort(t, NLOOKUPS, sizeof *t, cmp_u64);
	printf("rules: %zu, load: %.6f s\n", n, load / 1e9);
	printf("lookups: %d (%zu allowed), median %llu ns, p99 %llu ns, "
	    "max %llu ns\n", NLOOKUPS, allowed,
	    (unsigned long long)t[NLOOKUPS / 2],
	    (unsigned long long)t[NLOOKUPS * 99 / 100],
	    (unsigned long long)t[NLOOKUPS - 1]);
	printf("mean over one loop: %.0f ns; timer cost %llu ns (in the "
	    "figures above)\n", (double)batch / NLOOKUPS,
	    (unsigned long long)clock_cost);
	if (allowed != NLOOKUPS / 2)
		fprintf(stderr, "unexpected verdicts: %zu allowed\n", allowed);
	rules_free(r);
	free(text);
	free(hosts);
	free(ports);
	free(t);
	return (0);
}
