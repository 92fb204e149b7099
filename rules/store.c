/*
 * Storage for the policy: a chunked arena for everything that lives as
 * long as the policy, and an open-addressing hash map over byte keys.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "rules/rules-int.h"

#define ARENA_CHUNK	(64 * 1024)

struct arena_chunk {
	struct arena_chunk	*next;
	max_align_t		 data[];
};

struct hmap_entry {
	const void	*key;		/* NULL: empty slot */
	size_t		 klen;
	uint64_t	 hash;
	void		*val;
};

/* Allocate size bytes, aligned for any type, freed with the arena. */
void *
arena_alloc(struct arena *a, size_t size)
{
	struct arena_chunk	*c;
	size_t			 csize, align = sizeof(max_align_t);
	void			*p;

	size = (size + align - 1) / align * align;
	if (a->head == NULL || a->used + size > a->size) {
		csize = size > ARENA_CHUNK ? size : ARENA_CHUNK;
		if ((c = malloc(sizeof *c + csize)) == NULL)
			return (NULL);
		c->next = a->head;
		a->head = c;
		a->used = 0;
		a->size = csize;
	}
	p = (char *)a->head->data + a->used;
	a->used += size;
	return (p);
}

/* Copy len bytes of s into the arena as a string. */
char *
arena_strndup(struct arena *a, const char *s, size_t len)
{
	char	*p;

	if ((p = arena_alloc(a, len + 1)) == NULL)
		return (NULL);
	memcpy(p, s, len);
	p[len] = '\0';
	return (p);
}

/* Free every chunk. */
void
arena_free(struct arena *a)
{
	struct arena_chunk	*c;

	while ((c = a->head) != NULL) {
		a->head = c->next;
		free(c);
	}
	a->used = a->size = 0;
}

/* Hash a key (FNV-1a, then a final mix for the low bits). */
static uint64_t
hmap_hash(const void *key, size_t len)
{
	const unsigned char	*p = key;
	uint64_t		 h = 0xcbf29ce484222325ULL;
	size_t			 i;

	for (i = 0; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	return (h ^ (h >> 33));
}

/* Find the slot holding key, or the empty slot where it would go. */
static struct hmap_entry *
hmap_find(const struct hmap *m, const void *key, size_t len, uint64_t hash)
{
	struct hmap_entry	*e;
	size_t			 i;

	for (i = hash & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		e = &m->tab[i];
		if (e->key == NULL)
			return (e);
		if (e->hash == hash && e->klen == len &&
		    memcmp(e->key, key, len) == 0)
			return (e);
	}
}

/* Look a key up; NULL when absent. */
void *
hmap_get(const struct hmap *m, const void *key, size_t len)
{
	if (m->count == 0)
		return (NULL);
	return (hmap_find(m, key, len, hmap_hash(key, len))->val);
}

/* Double the table (or make the first one). */
static int
hmap_grow(struct hmap *m)
{
	struct hmap_entry	*old = m->tab, *e;
	size_t			 oldcap = m->cap, i;

	m->cap = oldcap ? oldcap * 2 : 16;
	if ((m->tab = calloc(m->cap, sizeof *m->tab)) == NULL) {
		m->tab = old;
		m->cap = oldcap;
		return (-1);
	}
	for (i = 0; i < oldcap; i++) {
		if (old[i].key == NULL)
			continue;
		e = hmap_find(m, old[i].key, old[i].klen, old[i].hash);
		*e = old[i];
	}
	free(old);
	return (0);
}

/*
 * The value slot for key, made (holding NULL, the key copied into the
 * arena) when absent.  NULL when out of memory.
 */
void **
hmap_slot(struct hmap *m, const void *key, size_t len, struct arena *a)
{
	struct hmap_entry	*e;
	uint64_t		 hash = hmap_hash(key, len);
	void			*copy;

	if ((m->count + 1) * 2 > m->cap && hmap_grow(m) == -1)
		return (NULL);
	e = hmap_find(m, key, len, hash);
	if (e->key != NULL)
		return (&e->val);
	if ((copy = arena_alloc(a, len ? len : 1)) == NULL)
		return (NULL);
	memcpy(copy, key, len);
	e->key = copy;
	e->klen = len;
	e->hash = hash;
	e->val = NULL;
	m->count++;
	return (&e->val);
}

/* Call fn on each value until it returns nonzero; return that. */
int
hmap_walk(const struct hmap *m, int (*fn)(void *, void *), void *arg)
{
	size_t	i;
	int	rv;

	for (i = 0; i < m->cap; i++) {
		if (m->tab[i].key != NULL && (rv = fn(m->tab[i].val, arg)) != 0)
			return (rv);
	}
	return (0);
}

/* Free the table (keys and values live elsewhere). */
void
hmap_clear(struct hmap *m)
{
	free(m->tab);
	m->tab = NULL;
	m->cap = m->count = 0;
}
