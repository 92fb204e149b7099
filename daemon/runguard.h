/*
 * What a sandbox must not change or see: the directories of the policy
 * files, of the log and of its key, the key itself and the control
 * sockets, as the paths netns/ guards (struct netns_guard).
 *
 * A file is guarded through its directory, both as named and as found
 * through symlinks: a file replaced from outside (an editor, `pinhole
 * allow`) then shows up read-only too.  So a guarded directory must not
 * hold what the command needs to write: runguard_check() refuses one
 * that holds the working directory, HOME or the temporary directory.
 */
#ifndef RUNGUARD_H
#define RUNGUARD_H

#include <stddef.h>

#include "netns/netns.h"

#define RUNGUARD_MAX	160

#define RUNGUARD_ENV_MAX	64

struct runguard {
	struct netns_guard	 g[RUNGUARD_MAX];
	char			*why[RUNGUARD_MAX];	/* the file it is for */
	size_t			 n;
	/* "NAME=PLACEHOLDER": secrets the command sees masked. */
	char			*env[RUNGUARD_ENV_MAX];
	size_t			 nenv;
	/* Host unix sockets the command may reach (allow-socket). */
	char			*sockets[NETNS_OPEN_MAX];
	size_t			 nsockets;
	char			*log;		/* the log file, or NULL */
	char			*ca;		/* inspection's CA, or NULL */
	char			*trust;		/* and the bundle with it */
};

void	runguard_init(struct runguard *);
void	runguard_free(struct runguard *);

/* Keep a directory read-only (made first if missing: 0700). */
int	runguard_dir(struct runguard *, const char *);

/* Keep a file's directories read-only (it stays readable). */
int	runguard_file(struct runguard *, const char *);

/*
 * Keep one file or directory read-only (its way pinned; as named and
 * as found through symlinks), if it exists.
 */
int	runguard_ro(struct runguard *, const char *);

/* Hide a file or directory (its way pinned, its directory read-only). */
int	runguard_hide(struct runguard *, const char *);

/*
 * Refuse a guarded directory that holds the working directory, HOME or
 * the temporary directory.  Returns 0, or -1 with err saying which and
 * what to do.
 */
int	runguard_check(const struct runguard *, char *, size_t);

/*
 * Guard what a plan says (runguard_apply()), check it (runguard_check())
 * and give a sandbox's configuration the guards, the variables the
 * command sees and what it trusts.  0, or -1 with err saying why.
 */
int	runguard_sandbox(struct runguard *, const char *, struct netns_config *,
	    char *, size_t);

/*
 * Are a file's directories guarded, or below guarded ones (may a reload
 * read it)?
 */
int	runguard_covers(const struct runguard *, const char *);

/*
 * What a sandbox of a gateway must not change or see, as lines "K /PATH"
 * (proxy/wire/attachmsg.h): the user's policy directory (made if missing),
 * the policy's files and the log file ("l": their directories read-only;
 * runguard_check() names a log as the log), the
 * system policy's directory (made if missing and it can be) and those
 * of glob includes (read-only), the private keys the options name (the
 * log's, the decider's, the log shipping's TLS key), the control directory,
 * the secrets' files and the upstream's credentials (upstream-auth;
 * hidden), /etc/hosts (read-only); "s PATH" for
 * each host socket the command may reach, as the policy wrote it
 * (expanded where the sandbox is made); "e NAME" for each secret, which the command sees as its placeholder; "c CA" and
 * "t BUNDLE", what it trusts when the gateway inspects TLS (NULL: it
 * does not).  Paths are made absolute here.  runguard_apply() guards
 * what a plan says.  Both return 0, or -1 with errno set.
 */
struct rules;
int	runguard_plan(char *, size_t, const struct rules *, const char *,
	    const char *const *, const char *, const char *, const char *);
int	runguard_apply(struct runguard *, const char *);

/*
 * May a reloaded policy be put in force: are all its files guarded, its
 * secrets masked, their files and the upstream's credentials hidden?
 * 0, or -1 with err saying which is not (it is read by the next gateway).
 */
int	runguard_vet(const struct runguard *, const struct rules *, char *,
	    size_t);

#endif
