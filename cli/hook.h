/*
 * The harness hook's pure half: read a PreToolUse call, name its
 * session, and write the call again with its shell command wrapped.
 */
#ifndef HOOK_H
#define HOOK_H

#include <stddef.h>

#include "lib/json.h"
#include "proxy/escalate/control.h"

#define HOOK_INPUT_MAX		(1024 * 1024)	/* bytes of one call */
#define HOOK_MEMBERS_MAX	32
#define HOOK_NAME_MAX		CONTROL_NAME_MAX	/* as pinhole session takes */

/*
 * One tool call as the harness describes it.  Strings point into the
 * store given to hook_parse(); input is tool_input's members, read only
 * for the Bash tool (ninput 0 otherwise).
 */
struct hook_call {
	const char		*event;		/* hook_event_name */
	const char		*tool;		/* tool_name */
	const char		*session;	/* session_id */
	const char		*command;	/* tool_input.command, Bash */
	struct json_member	 top[HOOK_MEMBERS_MAX];
	size_t			 ntop;
	struct json_member	 input[HOOK_MEMBERS_MAX];
	size_t			 ninput;
};

/* Bytes of store hook_parse() needs for len bytes of input. */
#define HOOK_STORE_SIZE(len)	(2 * ((len) + 1))

/*
 * Read one call of len bytes with a store of HOOK_STORE_SIZE(len) bytes.
 * It must be an object naming its event, tool and session; a Bash call
 * must carry tool_input with a string command.  Returns 0, or -1 with
 * *errstr set.
 */
int	hook_parse(const char *, size_t, char *, struct hook_call *,
	    const char **);
/* Tell whether the call is one to wrap: a PreToolUse of the Bash tool. */
int	hook_wraps(const struct hook_call *);
/*
 * Name the session of a harness session id: the id itself when pinhole
 * takes it as a session name, else "h-" and 32 hex digits of its
 * SHA-256.  buf has HOOK_NAME_MAX + 1 bytes.
 */
void	hook_session_name(const char *, char *);
/*
 * The tool call in the string Claude Code's Bash tool gives its shell
 * (`... && eval CMD < /dev/null && pwd -P >| FILE`): CMD unquoted when
 * it is one quoted word, else as the harness wrote it, into buf of len
 * bytes (cut to fit).  Returns 0, or -1 when the string is not of that
 * form.
 */
int	hook_shell_label(const char *, char *, size_t);
/* Append s to w single-quoted for a POSIX shell, ' as '\''. */
void	hook_quote(struct json_writer *, const char *);
/*
 * Write the hook's answer: the call's tool_input, every member as it
 * was but command, which becomes
 *   'PINHOLE' run --session 'NAME' -- 'SHELL' -c 'COMMAND'
 * with decision ("ask" or "allow") as the permission decision.
 */
void	hook_answer(struct json_writer *, const struct hook_call *,
	    const char *, const char *, const char *, const char *);

#endif
