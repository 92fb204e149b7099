/*
 * Inside the policy engine: the string arena, the hash map, the rule
 * records and the structures they are matched through.
 */
#ifndef RULES_INT_H
#define RULES_INT_H

#include <stddef.h>
#include <stdint.h>

#include "rules/rules.h"

#define RULES_LINE_MAX	1024		/* longest policy line */
#define RULES_FILE_MAX	(64 << 20)	/* largest policy file */
#define RULES_DEPTH_MAX	16		/* deepest include nesting */
#define LABEL_LEN	63		/* longest DNS label */

/* Memory for things that live as long as the policy. */
struct arena_chunk;
struct arena {
	struct arena_chunk	*head;
	size_t			 used;
	size_t			 size;
};

void	*arena_alloc(struct arena *, size_t);
char	*arena_strndup(struct arena *, const char *, size_t);
void	 arena_free(struct arena *);

/* An open-addressing hash map; keys are copied into an arena. */
struct hmap_entry;
struct hmap {
	struct hmap_entry	*tab;
	size_t			 cap;
	size_t			 count;
};

void	*hmap_get(const struct hmap *, const void *, size_t);
void   **hmap_slot(struct hmap *, const void *, size_t, struct arena *);
void	 hmap_clear(struct hmap *);
int	 hmap_walk(const struct hmap *, int (*)(void *, void *), void *);

/* Ports a rule covers: a list of closed ranges. */
struct port_range {
	uint16_t	lo;
	uint16_t	hi;
};

enum rule_action {
	RULE_ALLOW,
	RULE_DENY,
	RULE_PRIVATE
};

/* What an allow rule checks of each request (rules/request.c). */
struct rule_req {
	int		 read_only;
	const char	**methods;
	size_t		 nmethods;
	const char	*methods_text;	/* "GET,HEAD", for messages */
	const char	**paths;	/* canonical patterns */
	size_t		 npaths;
	const char	*paths_text;
	int		 websocket;	/* an Upgrade: websocket may pass */
	const char	*host;		/* the host as a pattern: "*.name" */
};

enum target_kind {
	TARGET_NAME,			/* exact name */
	TARGET_WILD,			/* any subdomain of name */
	TARGET_ADDR			/* address prefix */
};

/* One rule as loaded: what it does, on which ports, and where it came from. */
struct rule {
	struct rule		*next;		/* same target */
	struct rule		*order;		/* the next rule loaded */
	enum rule_action	 action;
	unsigned int		 seq;		/* load order */
	const char		*file;
	unsigned int		 line;
	enum rules_layer	 layer;
	const char		*text;
	const struct port_range	*ports;
	size_t			 nports;
	time_t			 until;		/* allow ... until: its end, or 0 */
	const struct rule_req	*req;		/* constraints, or NULL */
	/*
	 * What it applies to (rules/dead.c), its spec's target: the name
	 * (NAME, WILD) or the address's alen bytes (ADDR).
	 */
	const void		*target;
	uint8_t			 kind;		/* enum target_kind */
	uint8_t			 alen;
	uint8_t			 plen;
};

/* A parsed rule waiting to be added, with the target it applies to. */
struct rule_spec {
	struct rule	*rule;
	enum target_kind kind;
	const char	*name;		/* canonical, in the arena */
	uint8_t		 addr[16];
	size_t		 alen;		/* 4 or 16 */
	unsigned int	 plen;		/* prefix length in bits */
	int		 listed;	/* ports named (for rules_ports) */
};

/* Address prefixes: one hash entry per prefix, probed by length. */
struct prefixset {
	struct hmap	map;
	uint8_t		have4[33];
	uint8_t		have6[129];
};

/* A node of the reversed-label tree of wildcard rules. */
struct wnode {
	struct hmap	 kids;		/* label -> struct wnode */
	struct rule	*rules;		/* *.this-node's-name */
};

/* A secret (`secret NAME for HOSTS [from FILE]`) and the hosts it is for. */
struct secret {
	struct rules_secret	 pub;		/* what rules.h shows */
	struct secret		*next;
	struct rule_spec	*hosts;		/* kind, name or prefix only */
	const char		**patterns;	/* the hosts as written */
	size_t			 nhosts;
};

/* A list of host patterns (no-upstream), in the policy's arena. */
struct hostlist {
	struct hostlist		*next;
	struct rule_spec	*hosts;		/* kind, name or prefix only */
	const char		**patterns;	/* as written back */
	size_t			 n;
};

/* What one load says of the upstream proxy (rules/upstream.c). */
struct upstream_load {
	int			 set;		/* an upstream line */
	struct rules_upstream	 up;		/* .url NULL: upstream none */
	const char		*auth;		/* upstream-auth FILE */
	const char		*auth_origin;
	struct hostlist		*direct;	/* no-upstream */
};

struct psl_ctx_st;

/*
 * A file a policy was read from (the top file, an include, a preset), or
 * a directory whose new files it would read (policy.d, a glob's).
 */
struct rules_file {
	struct rules_file	*next;
	const char		*path;
};

struct rules {
	struct arena		 arena;
	struct hmap		 names;		/* name -> struct rule list */
	struct wnode		 wild;
	struct prefixset	 addrs;		/* allow and deny */
	struct prefixset	 privs;		/* allow-private */
	unsigned int		 seq;
	const struct psl_ctx_st	*psl;
	struct psl_ctx_st	*psl_owned;
	uint8_t			 ports[65536 / 8];
	struct rules_file	*files;
	struct rules_file	*dirs;
	struct rules_file	*sockets;	/* allow-socket */
	struct rule		*first;		/* rules in load order */
	struct rule		**last;
	time_t			 next_end;	/* rules_next_end() */
	int			 allow_vsock;	/* allow-vsock */
	struct secret		*secrets;	/* in load order */
	int			 no_files;	/* includes are not read */
	struct rules_upstream	 upstream;	/* .url NULL: none */
	struct hostlist		*direct;	/* no-upstream */
};

/* rules/host.c */
int	host_is_v6_text(const char *, size_t);

/* rules/addr.c */
void	addr_mask(uint8_t *, const uint8_t *, size_t, unsigned int);
int	addr_in(const uint8_t *, const uint8_t *, size_t, unsigned int);

/* rules/load.c */
int	rules_parse_target(struct rules *, const char *, unsigned int,
	    enum rule_action, const char *, int, struct rule_spec *, char *,
	    size_t);

/* rules/parse.c: what a directive takes, rules_directive()'s flags. */
#define RULES_DIR_NOARG		0x01	/* no argument (allow-vsock) */
#define RULES_DIR_CONSTRAINTS	0x02	/* read-only, methods, ... (allow) */
#define RULES_DIR_END		0x04	/* until TIME (allow) */
#define RULES_DIR_REST		0x08	/* reads its own words (secret) */
int	rules_directive(const char *, size_t, const char **);

/* rules/preset.c */
int	rules_preset_name_ok(const char *);

/* rules/upstream.c */
void	rules_upstream_merge(struct rules *, const struct upstream_load *);

/* rules/request.c */
int	rules_pattern_ok(const char *, size_t, const char **);
int	rules_req_check(const struct rule *, const struct rules_request *,
	    const char *, const char **, char *, size_t);
int	rules_req_open(const struct rules_request *, const char *, char *,
	    size_t);
int	rules_spec_covers(const struct rule_spec *, const struct host *);
int	rules_spec_pattern(struct arena *, const struct rule_spec *,
	    const char **);

/* rules/match.c */
int	rules_add(struct rules *, const struct rule_spec *, size_t);
void	rules_covering(const struct rules *, const struct rule *,
	    void (*)(const struct rule *, void *), void *);
int	rules_public_suffix(struct rules *, const char *);

#endif
