/*
 * The fake-address map: each allowed name gets one address of a private
 * prefix (198.18.0.0/15), stable while the gateway lives, so a connection
 * to that address can be decided as that name.  Bounded: when every
 * address is given out, the least recently answered name whose answer
 * expired long ago (grace seconds) gives its address up.
 *
 * Names hash with SipHash-2-4 under a random key, so names chosen by the
 * sandbox cannot pile up in one bucket; addresses index an array.
 *
 * The map is one for every sandbox of a gateway, but each sandbox reads
 * back only the names it was given: a view per sandbox (hashed by its id
 * under the same key) holds the addresses it was answered, each with the
 * generation of its entry, which a recycled address moves on.
 */
#include "config.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "proxy/dns/fakeip.h"

#define FAKEIP_VIEW_BUCKETS	256	/* sandboxes' views, hashed */
#define FAKEIP_VIEW_MIN		16	/* slots of a new view */

struct fakeip_entry {
	char			*name;
	uint32_t		 off;		/* address: base + off */
	uint32_t		 gen;		/* times the address was recycled */
	uint64_t		 expire;	/* when its last answer expires */
	struct fakeip_entry	*hnext;		/* name hash chain */
	struct fakeip_entry	*prev;		/* least recently answered first */
	struct fakeip_entry	*next;
};

/* The addresses one sandbox was given: open addressing by offset. */
struct fakeip_view {
	char			 *sandbox;
	struct fakeip_view	 *hnext;
	uint32_t		 *offs;		/* 0: an empty slot */
	uint32_t		 *gens;
	size_t			  cap;		/* a power of two */
	size_t			  n;
};

struct fakeip {
	uint32_t		  base;		/* host order */
	uint32_t		  mask;
	size_t			  max;
	uint32_t		  grace;
	uint64_t		  key[2];
	struct fakeip_entry	**by_addr;	/* [off - 1] */
	struct fakeip_entry	**by_name;	/* [hash & (nbuckets - 1)] */
	size_t			  nbuckets;
	size_t			  count;
	struct fakeip_entry	 *head;
	struct fakeip_entry	 *tail;
	struct fakeip_view	 *views[FAKEIP_VIEW_BUCKETS];
};

#define ROTL(x, b)	(((x) << (b)) | ((x) >> (64 - (b))))

/* One SipHash round. */
static void
fakeip_sipround(uint64_t *v)
{
	v[0] += v[1]; v[1] = ROTL(v[1], 13); v[1] ^= v[0];
	v[0] = ROTL(v[0], 32);
	v[2] += v[3]; v[3] = ROTL(v[3], 16); v[3] ^= v[2];
	v[0] += v[3]; v[3] = ROTL(v[3], 21); v[3] ^= v[0];
	v[2] += v[1]; v[1] = ROTL(v[1], 17); v[1] ^= v[2];
	v[2] = ROTL(v[2], 32);
}

/* Mix one 64-bit word into the state. */
static void
fakeip_sipword(uint64_t *v, uint64_t m)
{
	v[3] ^= m;
	fakeip_sipround(v);
	fakeip_sipround(v);
	v[0] ^= m;
}

/* SipHash-2-4 of a string. */
static uint64_t
fakeip_hash(const uint64_t *key, const char *s)
{
	uint64_t	v[4], m;
	size_t		len = strlen(s), i, j;

	v[0] = key[0] ^ 0x736f6d6570736575ULL;
	v[1] = key[1] ^ 0x646f72616e646f6dULL;
	v[2] = key[0] ^ 0x6c7967656e657261ULL;
	v[3] = key[1] ^ 0x7465646279746573ULL;
	for (i = 0; i + 8 <= len; i += 8) {
		for (m = 0, j = 0; j < 8; j++)
			m |= (uint64_t)(uint8_t)s[i + j] << (8 * j);
		fakeip_sipword(v, m);
	}
	for (m = (uint64_t)len << 56, j = 0; i + j < len; j++)
		m |= (uint64_t)(uint8_t)s[i + j] << (8 * j);
	fakeip_sipword(v, m);
	v[2] ^= 0xff;
	for (j = 0; j < 4; j++)
		fakeip_sipround(v);
	return (v[0] ^ v[1] ^ v[2] ^ v[3]);
}

/* Parse "A.B.C.D/N" into a base and a mask (host order). */
static int
fakeip_cidr(const char *cidr, uint32_t *base, uint32_t *mask)
{
	char		 addr[INET_ADDRSTRLEN];
	const char	*slash;
	struct in_addr	 in;
	char		*end;
	long		 n;

	if ((slash = strchr(cidr, '/')) == NULL ||
	    (size_t)(slash - cidr) >= sizeof addr)
		return (-1);
	memcpy(addr, cidr, slash - cidr);
	addr[slash - cidr] = '\0';
	if (inet_pton(AF_INET, addr, &in) != 1)
		return (-1);
	n = strtol(slash + 1, &end, 10);
	if (*end != '\0' || end == slash + 1 || n < 8 || n > 30)
		return (-1);
	*mask = 0xffffffffU << (32 - n);
	*base = ntohl(in.s_addr) & *mask;
	return (0);
}

/* Create a map over cidr (NULL for FAKEIP_DEFAULT). */
struct fakeip *
fakeip_create(const char *cidr, size_t max, uint32_t grace, char *err,
    size_t errlen)
{
	struct fakeip	*f;
	size_t		 usable;

	if ((f = calloc(1, sizeof *f)) == NULL) {
		snprintf(err, errlen, "out of memory");
		return (NULL);
	}
	if (cidr == NULL)
		cidr = FAKEIP_DEFAULT;
	if (fakeip_cidr(cidr, &f->base, &f->mask) == -1) {
		snprintf(err, errlen, "%s: not an IPv4 prefix from /8 to /30",
		    cidr);
		goto fail;
	}
	usable = (size_t)(~f->mask) - 1;	/* not the first nor the last */
	f->max = max == 0 || max > usable ? usable : max;
	f->grace = grace;
	for (f->nbuckets = 1; f->nbuckets < f->max; f->nbuckets <<= 1)
		;
	f->by_addr = calloc(f->max, sizeof *f->by_addr);
	f->by_name = calloc(f->nbuckets, sizeof *f->by_name);
	if (f->by_addr == NULL || f->by_name == NULL ||
	    getrandom(f->key, sizeof f->key, 0) != sizeof f->key) {
		snprintf(err, errlen, "cannot set up the address map");
		goto fail;
	}
	return (f);
fail:
	fakeip_free(f);
	return (NULL);
}

/* Free a view. */
static void
fakeip_view_free(struct fakeip_view *v)
{
	free(v->sandbox);
	free(v->offs);
	free(v->gens);
	free(v);
}

/* Free the map, every name and every view. */
void
fakeip_free(struct fakeip *f)
{
	struct fakeip_entry	*e, *next;
	struct fakeip_view	*v;
	size_t			 i;

	if (f == NULL)
		return;
	for (e = f->head; e != NULL; e = next) {
		next = e->next;
		free(e->name);
		free(e);
	}
	for (i = 0; i < FAKEIP_VIEW_BUCKETS; i++) {
		while ((v = f->views[i]) != NULL) {
			f->views[i] = v->hnext;
			fakeip_view_free(v);
		}
	}
	free(f->by_addr);
	free(f->by_name);
	free(f);
}

/* The bucket a name belongs in. */
static struct fakeip_entry **
fakeip_bucket(const struct fakeip *f, const char *name)
{
	return (&f->by_name[fakeip_hash(f->key, name) & (f->nbuckets - 1)]);
}

/* Find a name's entry. */
static struct fakeip_entry *
fakeip_find(const struct fakeip *f, const char *name)
{
	struct fakeip_entry	*e;

	for (e = *fakeip_bucket(f, name); e != NULL; e = e->hnext) {
		if (strcmp(e->name, name) == 0)
			return (e);
	}
	return (NULL);
}

/* Take an entry off the recency list. */
static void
fakeip_unlink(struct fakeip *f, struct fakeip_entry *e)
{
	if (e->prev != NULL)
		e->prev->next = e->next;
	else
		f->head = e->next;
	if (e->next != NULL)
		e->next->prev = e->prev;
	else
		f->tail = e->prev;
	e->prev = e->next = NULL;
}

/* Put an entry at the most recently answered end. */
static void
fakeip_append(struct fakeip *f, struct fakeip_entry *e)
{
	e->prev = f->tail;
	e->next = NULL;
	if (f->tail != NULL)
		f->tail->next = e;
	else
		f->head = e;
	f->tail = e;
}

/* Take an entry out of the name hash. */
static void
fakeip_unhash(struct fakeip *f, struct fakeip_entry *e)
{
	struct fakeip_entry	**pp;

	for (pp = fakeip_bucket(f, e->name); *pp != NULL; pp = &(*pp)->hnext) {
		if (*pp == e) {
			*pp = e->hnext;
			break;
		}
	}
	e->hnext = NULL;
}

/* Find an entry for a new name: a fresh address, or a long-expired one. */
static struct fakeip_entry *
fakeip_take(struct fakeip *f, uint64_t now)
{
	struct fakeip_entry	*e = f->head;

	if (f->count < f->max) {
		if ((e = calloc(1, sizeof *e)) == NULL)
			return (NULL);
		e->off = (uint32_t)++f->count;
		return (e);
	}
	if (e == NULL || e->expire + f->grace > now)
		return (NULL);
	fakeip_unlink(f, e);
	fakeip_unhash(f, e);
	free(e->name);
	e->name = NULL;
	e->gen++;		/* no view holds the new name yet */
	f->by_addr[e->off - 1] = NULL;
	return (e);
}

/* The bucket of a sandbox's view ("" for none). */
static size_t
fakeip_view_bucket(const struct fakeip *f, const char *sandbox)
{
	return (fakeip_hash(f->key, sandbox) % FAKEIP_VIEW_BUCKETS);
}

/* A sandbox's view, or NULL. */
static struct fakeip_view *
fakeip_view_find(const struct fakeip *f, const char *sandbox)
{
	struct fakeip_view	*v;

	for (v = f->views[fakeip_view_bucket(f, sandbox)]; v != NULL;
	    v = v->hnext) {
		if (strcmp(v->sandbox, sandbox) == 0)
			return (v);
	}
	return (NULL);
}

/* The slot of an offset in a view: its own, or the empty one for it. */
static size_t
fakeip_view_slot(const struct fakeip_view *v, uint32_t off)
{
	size_t	i = (off * 2654435761U) & (v->cap - 1);

	while (v->offs[i] != 0 && v->offs[i] != off)
		i = (i + 1) & (v->cap - 1);
	return (i);
}

/* Give a view twice the slots.  Returns 0 or -1. */
static int
fakeip_view_grow(struct fakeip_view *v)
{
	struct fakeip_view	 old = *v;
	size_t			 i, j;

	v->cap = old.cap == 0 ? FAKEIP_VIEW_MIN : old.cap * 2;
	v->offs = calloc(v->cap, sizeof *v->offs);
	v->gens = calloc(v->cap, sizeof *v->gens);
	if (v->offs == NULL || v->gens == NULL) {
		free(v->offs);
		free(v->gens);
		*v = old;
		return (-1);
	}
	for (i = 0; i < old.cap; i++) {
		if (old.offs[i] == 0)
			continue;
		j = fakeip_view_slot(v, old.offs[i]);
		v->offs[j] = old.offs[i];
		v->gens[j] = old.gens[i];
	}
	free(old.offs);
	free(old.gens);
	return (0);
}

/* Note in a sandbox's view that it was given an entry's address. */
static int
fakeip_view_add(struct fakeip *f, const char *sandbox,
    const struct fakeip_entry *e)
{
	struct fakeip_view	**bucket, *v;
	size_t			  i;

	if ((v = fakeip_view_find(f, sandbox)) == NULL) {
		if ((v = calloc(1, sizeof *v)) == NULL ||
		    (v->sandbox = strdup(sandbox)) == NULL) {
			free(v);
			return (-1);
		}
		bucket = &f->views[fakeip_view_bucket(f, sandbox)];
		v->hnext = *bucket;
		*bucket = v;
	}
	if (2 * (v->n + 1) > v->cap && fakeip_view_grow(v) == -1)
		return (-1);
	i = fakeip_view_slot(v, e->off);
	if (v->offs[i] == 0)
		v->n++;
	v->offs[i] = e->off;
	v->gens[i] = e->gen;
	return (0);
}

/* Was a sandbox given an entry's address (and not since recycled)? */
static int
fakeip_view_has(const struct fakeip *f, const char *sandbox,
    const struct fakeip_entry *e)
{
	const struct fakeip_view	*v;
	size_t				 i;

	if ((v = fakeip_view_find(f, sandbox)) == NULL)
		return (0);
	i = fakeip_view_slot(v, e->off);
	return (v->offs[i] == e->off && v->gens[i] == e->gen);
}

/* A sandbox has gone: forget its view. */
void
fakeip_drop_sandbox(struct fakeip *f, const char *sandbox)
{
	struct fakeip_view	**pp, *v;

	if (f == NULL)
		return;
	for (pp = &f->views[fakeip_view_bucket(f, sandbox)]; (v = *pp) != NULL;
	    pp = &v->hnext) {
		if (strcmp(v->sandbox, sandbox) == 0) {
			*pp = v->hnext;
			fakeip_view_free(v);
			return;
		}
	}
}

/* Write the address of an entry. */
static void
fakeip_addr(const struct fakeip *f, const struct fakeip_entry *e,
    uint8_t *addr)
{
	uint32_t	a = f->base + e->off;

	addr[0] = a >> 24;
	addr[1] = (a >> 16) & 0xff;
	addr[2] = (a >> 8) & 0xff;
	addr[3] = a & 0xff;
}

/* Give a name its address, to a sandbox, for ttl seconds from now. */
int
fakeip_assign(struct fakeip *f, const char *name, const char *sandbox,
    uint64_t now, uint32_t ttl, uint8_t *addr)
{
	struct fakeip_entry	**bucket, *e;
	char			 *dup;

	if ((e = fakeip_find(f, name)) != NULL)
		fakeip_unlink(f, e);
	else {
		if ((dup = strdup(name)) == NULL)
			return (-1);
		if ((e = fakeip_take(f, now)) == NULL) {
			free(dup);
			return (-1);
		}
		e->name = dup;
		e->expire = 0;
		bucket = fakeip_bucket(f, name);
		e->hnext = *bucket;
		*bucket = e;
		f->by_addr[e->off - 1] = e;
	}
	if (now + ttl > e->expire)
		e->expire = now + ttl;
	fakeip_append(f, e);
	if (fakeip_view_add(f, sandbox, e) == -1)
		return (-1);
	fakeip_addr(f, e, addr);
	return (0);
}

/* An IPv4 address (4 bytes, or 16 v4-mapped) as a number. */
static int
fakeip_v4(const uint8_t *addr, size_t len, uint32_t *a)
{
	static const uint8_t	mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
				    0xff, 0xff };

	if (len == 16 && memcmp(addr, mapped, sizeof mapped) == 0) {
		addr += 12;
		len = 4;
	}
	if (len != 4)
		return (-1);
	*a = (uint32_t)addr[0] << 24 | (uint32_t)addr[1] << 16 |
	    (uint32_t)addr[2] << 8 | addr[3];
	return (0);
}

/* The name behind a fake address, if the sandbox was given it. */
const char *
fakeip_lookup_name(const struct fakeip *f, const uint8_t *addr, size_t len,
    const char *sandbox)
{
	struct fakeip_entry	*e;
	uint32_t		 a, off;

	if (f == NULL || fakeip_v4(addr, len, &a) == -1 ||
	    (a & f->mask) != f->base)
		return (NULL);
	off = a - f->base;
	if (off == 0 || off > f->max || (e = f->by_addr[off - 1]) == NULL ||
	    !fakeip_view_has(f, sandbox, e))
		return (NULL);
	return (e->name);
}

/* The address a name was given. */
int
fakeip_lookup_addr(const struct fakeip *f, const char *name, uint8_t *addr)
{
	struct fakeip_entry	*e;

	if ((e = fakeip_find(f, name)) == NULL)
		return (-1);
	fakeip_addr(f, e, addr);
	return (0);
}

/* Is the address inside the prefix? */
int
fakeip_contains(const struct fakeip *f, const uint8_t *addr, size_t len)
{
	uint32_t	a;

	return (fakeip_v4(addr, len, &a) == 0 && (a & f->mask) == f->base);
}

/* How many names have an address. */
size_t
fakeip_count(const struct fakeip *f)
{
	return (f->count);
}
