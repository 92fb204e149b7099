/*
 * Decimal numbers written without printf, for the hot paths.
 */
#ifndef DIGITS_H
#define DIGITS_H

#define DIGITS_MAX	20	/* of an unsigned long long */

/*
 * Write v in decimal so that it ends just before end; returns where it
 * starts (at most DIGITS_MAX bytes before end).
 */
char	*digits(char *, unsigned long long);

#endif
