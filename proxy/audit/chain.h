/*
 * The audit chain (chain.c): its hash, its key, and the chain fields at
 * the end of a line.  Below the log (audit.h), which includes it.
 */
#ifndef AUDIT_CHAIN_H
#define AUDIT_CHAIN_H

#include <stddef.h>

/*
 * The chain (docs/audit-log.md): chain_N = H(chain_N-1 || line N up to
 * ",\"chain\""), H SHA-256 or HMAC-SHA-256, chain_0 = H("pinhole-audit-v1").
 */
#define AUDIT_HASH_LEN	32
#define AUDIT_HEX_LEN	64
#define AUDIT_SEED	"pinhole-audit-v1"
#define AUDIT_KEY_MAX	4096

struct audit_hash;
struct audit_hash *audit_hash_create(const unsigned char *, size_t);
void		 audit_hash_free(struct audit_hash *);
int		 audit_hash_seed(struct audit_hash *, unsigned char *);
int		 audit_hash_step(struct audit_hash *, const unsigned char *,
		    const char *, size_t, unsigned char *);
void		 audit_hex(const unsigned char *, char *);
int		 audit_unhex(const char *, size_t, unsigned char *);
int		 audit_read_key(const char *, unsigned char *, size_t *,
		    char *, size_t);

/* The chain fields at the end of a line, found without parsing it all. */
struct audit_link {
	unsigned long long	 seq;
	unsigned char		 chain[AUDIT_HASH_LEN];
	int			 has_prev;
	unsigned char		 prev[AUDIT_HASH_LEN];
	size_t			 hashed;	/* bytes before ,"chain" */
};
int		 audit_link_parse(const char *, size_t, struct audit_link *);

#endif
