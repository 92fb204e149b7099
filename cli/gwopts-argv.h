/*
 * The options of the commands that run a gateway, as the command line
 * gives them: the table cmd_getopt() reads and --help prints, and each
 * value checked and put in struct gwopts (daemon/gwopts.h).
 */
#ifndef GWOPTS_ARGV_H
#define GWOPTS_ARGV_H

#include <stddef.h>
#include <stdint.h>

#include "cli/pinhole.h"
#include "daemon/gwopts.h"

enum {
	/* Above any letter: cmd_getopt() keys of long-only options. */
	GWOPTS_MAX_CLIENTS = 256, GWOPTS_MAX_HEAD, GWOPTS_MAX_HEADERS,
	GWOPTS_HANDSHAKE_TIMEOUT, GWOPTS_IDLE_TIMEOUT, GWOPTS_CONNECT_TIMEOUT,
	GWOPTS_GRACE, GWOPTS_LOG_KEY, GWOPTS_LOG_MAX_SIZE, GWOPTS_LOG_KEEP,
	GWOPTS_LOG_FAIL,
	GWOPTS_LOG_FSYNC,
	GWOPTS_DNS_REAL, GWOPTS_DNS_REFUSE, GWOPTS_FAKE_RANGE,
	GWOPTS_ASK, GWOPTS_METRICS, GWOPTS_LOG_SPOOL, GWOPTS_LOG_SPOOL_MAX,
	GWOPTS_LOG_TLS_CA, GWOPTS_LOG_TLS_CERT, GWOPTS_LOG_TLS_KEY,
	GWOPTS_DECIDER, GWOPTS_DECIDER_CA, GWOPTS_DECIDER_CERT,
	GWOPTS_DECIDER_KEY, GWOPTS_DECIDER_MAX, GWOPTS_UPSTREAM,
	GWOPTS_UPSTREAM_AUTH, GWOPTS_LOG_SHIP_WAIT, GWOPTS_LOG_BUDGET,
	GWOPTS_LAST		/* a command's own long-only options follow */
};

/* The options both commands take (--policy and --grace are their own). */
extern const struct cmd_opt	gwopts_opts[];
/*
 * Of those, --allow, --log, --log-key, --resolver, --upstream and
 * --upstream-auth (doctor takes them).
 */
extern const struct cmd_opt	gwopts_where_opts[];

/*
 * Add one value of a repeatable option to a list of GWOPTS_MAX_ARGS;
 * gwopts_push_addr() first checks that it is a socket address
 * (addr_port_parse(); with defport nonzero the port may be left out).
 * Return 0, or EXIT_USAGE after reporting an error.
 */
int	gwopts_push(const struct cmd_entry *, const char **, size_t *,
	    const char *, const char *);
int	gwopts_push_addr(const struct cmd_entry *, const char **, size_t *,
	    const char *, const char *, uint16_t);

/* Parse a number option within [min, max]: 0, or EXIT_USAGE after saying. */
int	gwopts_number(const struct cmd_entry *, const char *, const char *,
	    long long, long long, long long *);

/*
 * Handle one of the shared options.  Returns 0 when handled, -1 when
 * the option is not a shared one, EXIT_USAGE after reporting an error.
 */
int	gwopts_option(const struct cmd_entry *, struct gwopts *, int,
	    const char *);

#endif
