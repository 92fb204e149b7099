#ifndef DNS_FAKEIP_H
#define DNS_FAKEIP_H

#include <stddef.h>
#include <stdint.h>

/*
 * The fake-address map (fakeip.c): one stable address per name inside a
 * prefix (FAKEIP_DEFAULT), at most max names; an address is recycled only
 * grace seconds after its last answer expired, least recently answered
 * first.  An address reads back as its name only for a sandbox (its id,
 * "" for none) that was given it.  Lookups both ways are O(1).  Times
 * are seconds of a monotonic clock, given by the caller.
 */
#define FAKEIP_DEFAULT		"198.18.0.0/15"
#define FAKEIP_MAX		65536
#define FAKEIP_GRACE		3600

struct fakeip;

struct fakeip	*fakeip_create(const char *, size_t, uint32_t, char *, size_t);
void		 fakeip_free(struct fakeip *);

/*
 * The address for a canonical name, given out now to a sandbox for ttl
 * seconds.  Returns 0, or -1 when every address is in use (or out of
 * memory).
 */
int		 fakeip_assign(struct fakeip *, const char *, const char *,
		    uint64_t, uint32_t, uint8_t *);

/*
 * The name behind a fake address (4 bytes, or 16 v4-mapped), or NULL:
 * none, or one the sandbox was not given.
 */
const char	*fakeip_lookup_name(const struct fakeip *, const uint8_t *,
		    size_t, const char *);
/* A sandbox has gone: forget which addresses it was given. */
void		 fakeip_drop_sandbox(struct fakeip *, const char *);

/* The address a name was given, if any.  Returns 0 or -1. */
int		 fakeip_lookup_addr(const struct fakeip *, const char *,
		    uint8_t *);

/* Is the address (4 or 16 bytes) inside the map's prefix? */
int		 fakeip_contains(const struct fakeip *, const uint8_t *,
		    size_t);
size_t		 fakeip_count(const struct fakeip *);

#endif
