/*
 * Decimal numbers written without printf (digits.h).
 */
#include "config.h"

#include "lib/digits.h"

char *
digits(char *end, unsigned long long v)
{
	do
		*--end = '0' + v % 10;
	while ((v /= 10) != 0);
	return (end);
}
