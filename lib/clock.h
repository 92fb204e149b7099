/*
 * The one clock for timeouts, windows and grants: monotonic, so that a
 * change of the wall clock neither ends nor stretches them.
 */
#ifndef CLOCK_H
#define CLOCK_H

#include <stdint.h>

uint64_t	mono_ms(void);		/* milliseconds */
uint64_t	mono_sec(void);		/* whole seconds */
uint64_t	mono_us(void);		/* microseconds */

#endif
