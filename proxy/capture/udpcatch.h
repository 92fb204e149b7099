/*
 * UDP other than DNS, caught in the sandbox (by the capture rule) so that
 * it is logged: each datagram is answered at once with ICMP port
 * unreachable from the address it was sent to, as a closed port would
 * be, so that clients (QUIC) fall back to TCP.  Log lines are rate
 * limited.
 */
#ifndef UDPCATCH_H
#define UDPCATCH_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>

struct audit;
struct sandbox;
struct event_base;
struct fakeip;
struct udpcatch;

#define UDPCATCH_LOG_PER_SEC	10	/* log lines a second, at most */
#define UDPCATCH_ICMP_MAX	(8 + 20 + 8)

/*
 * Take over a sandbox's catch-all UDP socket (IP_RECVORIGDSTADDR set)
 * and raw ICMP socket (closed on failure too).  audit and fakeip stay
 * the caller's, the sandbox is referenced; any may be NULL.
 */
struct udpcatch	*udpcatch_create(struct event_base *, int, int,
		    struct audit *, const char *, struct sandbox *,
		    const struct fakeip *);
void		 udpcatch_free(struct udpcatch *);

/*
 * Build the ICMP port unreachable for a UDP datagram of len payload bytes
 * from src to dst: the ICMP header, then the datagram's IP header and
 * UDP header as they were.  Pure.  Returns its length.
 */
size_t		 udpcatch_icmp(uint8_t *, const struct sockaddr_in *,
		    const struct sockaddr_in *, size_t);

#endif
