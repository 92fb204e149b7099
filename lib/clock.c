/*
 * The monotonic clock.
 */
#include "config.h"

#include <time.h>

#include "lib/clock.h"

/* Milliseconds of the monotonic clock. */
uint64_t
mono_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000);
}

/* Seconds of the monotonic clock. */
uint64_t
mono_sec(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec);
}

/* Microseconds of the monotonic clock. */
uint64_t
mono_us(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000);
}
