/*
 * Live policy reload: watch the policy files with inotify in the
 * libevent loop, and after a short quiet spell call the caller's reload
 * callback.  Directories are watched, not only files, because editors
 * and `pinhole allow` replace a file by rename; a symlinked file is
 * watched at both ends; a missing directory is waited for.  A path
 * ending in '/' is a directory where any new, changed or removed entry
 * counts (policy.d, a glob include's).
 *
 * The callback does the reload: build a whole new policy (rules_create,
 * rules_load_file for each file, the --allow rules), swap it in only if
 * it parsed (else log the error and keep the old one), then pass the
 * new policy's files (rules_files: includes and presets too) to
 * policywatch_set_files so edits of includes are seen as well.
 */
#ifndef POLICYWATCH_H
#define POLICYWATCH_H

#include <stddef.h>

struct event_base;
struct policywatch;

#define POLICYWATCH_DEBOUNCE_MS	100

/*
 * Watch files (a NULL-terminated list; copied) and call cb(arg) once
 * changes have settled.  Returns NULL (errno set) when inotify cannot be
 * used.
 */
struct policywatch	*policywatch_start(struct event_base *,
			    const char *const *, void (*)(void *), void *);

/* Watch these files instead (NULL-terminated; copied).  Returns 0 or -1. */
int			 policywatch_set_files(struct policywatch *,
			    const char *const *);

/* Stop watching and free. */
void			 policywatch_stop(struct policywatch *);

#endif
