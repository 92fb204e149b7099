/*
 * pinhole watch: in a second terminal, show each request and blocked
 * attempt as it happens and answer the current request with one key.
 * Everything that came from the sandbox is shown escaped; the terminal
 * is restored on every way out.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "cli/ctl.h"
#include "cli/pinhole.h"
#include "lib/json.h"
#include "proxy/escalate/escalate.h"

#define WATCH_OPEN_MAX		256
#define WATCH_RESCAN_MS		2000

/* An open request shown to the person. */
struct watch_item {
	char		session[CTL_SESSION_LEN];
	char		id[ESCALATE_ID_LEN];
	char		host[HOST_TEXT_LEN];
	int64_t		port;
	char		reason[ESCALATE_TEXT_LEN];
	char		sandbox[AUDIT_SANDBOX_ID_LEN];	/* "": none */
};

struct watch {
	const char		*want;		/* --session */
	struct ctl_conn		 conns[CTL_SESSIONS_MAX];
	size_t			 nconns;
	struct watch_item	 items[WATCH_OPEN_MAX];
	size_t			 nitems;
	int			 tty;
	struct termios		 saved;
	int			 prompted;
	char			 shown_session[CTL_SESSION_LEN];
	char			 shown_id[ESCALATE_ID_LEN];	/* "": none */
	int			 typing;	/* r: a reason to deny */
	char			 reason[ESCALATE_REASON_MAX + 1];
	size_t			 reason_len;
};

static volatile sig_atomic_t	watch_quit;
static struct watch		*watch_current;

/* Note a signal to stop. */
static void
watch_signal(int sig)
{
	watch_quit = 1;
}

/* Put the terminal back as it was. */
static void
watch_restore(void)
{
	if (watch_current != NULL && watch_current->tty)
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &watch_current->saved);
}

/* Read keys one at a time, without echo; signals still work. */
static void
watch_raw(struct watch *w)
{
	struct termios		t;
	struct sigaction	sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = watch_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	watch_current = w;
	if (!isatty(STDIN_FILENO) || tcgetattr(STDIN_FILENO, &w->saved) == -1)
		return;
	w->tty = 1;
	atexit(watch_restore);
	t = w->saved;
	t.c_lflag &= ~(ICANON | ECHO | IEXTEN);
	t.c_cc[VMIN] = 1;
	t.c_cc[VTIME] = 0;
	tcsetattr(STDIN_FILENO, TCSAFLUSH, &t);
}

/* Copy a string member, or "". */
static void
watch_copy(char *dst, size_t len, const struct json_obj *o, const char *key)
{
	const char	*v = json_get_str(o, key);

	snprintf(dst, len, "%s", v != NULL ? v : "");
}

/* Find an open request. */
static struct watch_item *
watch_find(struct watch *w, const char *session, const char *id)
{
	size_t	i;

	for (i = 0; i < w->nitems; i++) {
		if (strcmp(w->items[i].session, session) == 0 &&
		    strcmp(w->items[i].id, id) == 0)
			return (&w->items[i]);
	}
	return (NULL);
}

/* Clear the prompt line before printing above it. */
static void
watch_unprompt(struct watch *w)
{
	if (w->prompted)
		printf("\r\033[K");
	w->prompted = 0;
}

/*
 * Show the question about the current request, and remember which one
 * it is (its session and id): a key answers exactly that one.
 */
static void
watch_prompt(struct watch *w)
{
	struct watch_item	*it = &w->items[0];

	watch_unprompt(w);
	if (w->typing) {
		printf("deny %s (session ", w->shown_id);
		ctl_print_safe(stdout, w->shown_session);
		printf(") saying, for the agent (Enter sends, Esc cancels): ");
		w->reason[w->reason_len] = '\0';
		ctl_print_safe(stdout, w->reason);
		w->prompted = 1;
		fflush(stdout);
		return;
	}
	w->shown_id[0] = '\0';
	if (w->nitems == 0) {
		printf("(no open request; q quits) ");
	} else {
		memcpy(w->shown_session, it->session, sizeof it->session);
		memcpy(w->shown_id, it->id, sizeof it->id);
		printf("%s ", it->id);
		ctl_print_request_target(stdout, it->host, it->port);
		printf(" (session ");
		ctl_print_safe(stdout, it->session);
		if (it->sandbox[0] != '\0') {
			printf(", sandbox ");
			ctl_print_safe(stdout, it->sandbox);
		}
		printf(") [%zu open]: o=once s=session a=always d=deny "
		    "r=deny saying why n=next q=quit ", w->nitems);
	}
	w->prompted = 1;
	fflush(stdout);
}

/* A request was filed (or asked again). */
static void
watch_on_request(struct watch *w, const char *session, const struct json_obj *o)
{
	struct watch_item	*it;
	const char		*id = json_get_str(o, "request");
	int64_t			 count = 1;

	if (id == NULL || strlen(id) >= ESCALATE_ID_LEN)
		return;
	json_get_int(o, "count", &count);
	if ((it = watch_find(w, session, id)) == NULL) {
		if (w->nitems == WATCH_OPEN_MAX)
			return;
		it = &w->items[w->nitems++];
		memcpy(it->session, session, strnlen(session,
		    sizeof it->session - 1));
		it->session[strnlen(session, sizeof it->session - 1)] = '\0';
		snprintf(it->id, sizeof it->id, "%s", id);
		watch_copy(it->host, sizeof it->host, o, "host");
		watch_copy(it->reason, sizeof it->reason, o, "reason");
		watch_copy(it->sandbox, sizeof it->sandbox, o, "sandbox");
		it->port = 0;
		json_get_int(o, "port", &it->port);
	}
	printf("request %s  ", it->id);
	ctl_print_request_target(stdout, it->host, it->port);
	printf("  session %s", session);
	if (count > 1)
		printf(" (asked %lld times)", (long long)count);
	putchar('\n');
	ctl_print_sandbox(stdout, "    ", o);
	printf("    reason: ");
	ctl_print_safe(stdout, it->reason[0] != '\0' ? it->reason : "-");
	printf("\n");
	ctl_print_lifts(stdout, "    ", o);
}

/* A request was decided, said in words: it leaves the list. */
static void
watch_on_decided(struct watch *w, const char *session, const struct json_obj *o)
{
	struct watch_item	*it;
	const char		*id = json_get_str(o, "request");
	const char		*by = json_get_str(o, "by");

	if (id == NULL)
		return;
	ctl_print_decision(stdout, session, o);
	if (by != NULL) {
		printf(" (by ");
		ctl_print_safe(stdout, by);
		putchar(')');
	}
	printf("\n");
	if ((it = watch_find(w, session, id)) != NULL) {
		memmove(it, it + 1, (w->items + w->nitems - it - 1) *
		    sizeof *it);
		w->nitems--;
	}
}

/* A blocked attempt, and what would open it when no grant can. */
static void
watch_on_blocked(const char *session, const struct json_obj *o)
{
	const char	*host = json_get_str(o, "host"), *via, *sb;
	const char	*fix = json_get_str(o, "fix");
	int64_t		 port = 0, count = 1;

	json_get_int(o, "port", &port);
	json_get_int(o, "count", &count);
	via = json_get_str(o, "via");
	printf("blocked ");
	ctl_print_target(stdout, host != NULL ? host : "?", port);
	printf(" via ");
	ctl_print_safe(stdout, via != NULL ? via : "?");
	printf(" (%lld time%s)  session ", (long long)count,
	    count == 1 ? "" : "s");
	ctl_print_safe(stdout, session);
	if ((sb = json_get_str(o, "sandbox")) != NULL) {
		printf(", sandbox ");
		ctl_print_safe(stdout, sb);
	}
	if (fix != NULL) {
		printf("\n    ");
		ctl_print_safe(stdout, fix);
	}
	printf("\n");
}

/* Handle a line from a session: an event or a reply. */
static void
watch_line(struct watch *w, struct ctl_conn *c, const struct json_obj *o)
{
	const char			*ev = json_get_str(o, "event");
	const struct json_member	*ok = json_get(o, "ok");
	const char			*err = json_get_str(o, "error");

	watch_unprompt(w);
	if (ev != NULL && strcmp(ev, "request") == 0)
		watch_on_request(w, c->session, o);
	else if (ev != NULL && strcmp(ev, "decided") == 0)
		watch_on_decided(w, c->session, o);
	else if (ev != NULL && strcmp(ev, "blocked") == 0)
		watch_on_blocked(c->session, o);
	else if (ok != NULL && ok->type == JSON_BOOL && !ok->num) {
		printf("error (session ");
		ctl_print_safe(stdout, c->session);
		printf("): ");
		ctl_print_safe(stdout, err != NULL ? err : "failed");
		printf("\n");
	}
	watch_prompt(w);
}

/* Subscribe on a new connection. */
static int
watch_subscribe(struct ctl_conn *c)
{
	struct json_writer	w;
	int64_t			id;
	int			rv;

	json_writer_init(&w, 0);
	json_open(&w);
	json_put_str(&w, "op", "subscribe");
	rv = ctl_send(c, &w, &id);
	json_writer_free(&w);
	return (rv);
}

/* Connect to sessions not yet watched. */
static void
watch_rescan(struct watch *w)
{
	struct ctl_conn	found[CTL_SESSIONS_MAX];
	char		err[256];
	size_t		n, i, j;

	n = ctl_open_all(found, CTL_SESSIONS_MAX, w->want, err, sizeof err);
	for (i = 0; i < n; i++) {
		for (j = 0; j < w->nconns; j++) {
			if (strcmp(w->conns[j].session, found[i].session) == 0)
				break;
		}
		if (j < w->nconns || w->nconns == CTL_SESSIONS_MAX ||
		    watch_subscribe(&found[i]) == -1) {
			ctl_close(&found[i]);
			continue;
		}
		watch_unprompt(w);
		printf("watching session %s\n", found[i].session);
		w->conns[w->nconns++] = found[i];
		watch_prompt(w);
	}
}

/* A session went away. */
static void
watch_drop(struct watch *w, size_t i)
{
	watch_unprompt(w);
	printf("session %s ended\n", w->conns[i].session);
	ctl_close(&w->conns[i]);
	w->conns[i] = w->conns[--w->nconns];
	watch_prompt(w);
}

/* Read what a session sent. */
static void
watch_read(struct watch *w, size_t i)
{
	struct ctl_conn	*c = &w->conns[i];
	struct json_obj	 o;
	int		 rv;

	if (ctl_fill(c) == -1) {
		watch_drop(w, i);
		return;
	}
	while ((rv = ctl_take_line(c, &o)) != 0) {
		if (rv == 1)
			watch_line(w, c, &o);
	}
}

/* Answer the request the prompt shows, in the session it belongs to. */
static void
watch_answer(struct watch *w, int key, const char *reason)
{
	struct watch_item	*it;
	struct json_writer	 jw;
	int64_t			 id;
	size_t			 i;

	if (w->shown_id[0] == '\0')
		return;
	for (i = 0; i < w->nconns; i++) {
		if (strcmp(w->conns[i].session, w->shown_session) == 0)
			break;
	}
	if (i == w->nconns ||
	    (it = watch_find(w, w->shown_session, w->shown_id)) == NULL) {
		watch_unprompt(w);
		ctl_print_safe(stdout, w->shown_id);
		printf(" (session ");
		ctl_print_safe(stdout, w->shown_session);
		printf(") is no longer open: nothing done\n");
		watch_prompt(w);
		return;
	}
	json_writer_init(&jw, 0);
	json_open(&jw);
	json_put_str(&jw, "op", key == 'd' ? "deny" : "approve");
	json_put_str(&jw, "request", it->id);
	if (key != 'd')
		json_put_str(&jw, "scope", key == 'o' ? "once" :
		    key == 's' ? "session" : "always");
	else if (reason != NULL && reason[0] != '\0')
		json_put_str(&jw, "reason", reason);
	json_put_str(&jw, "via", "watch");
	ctl_send(&w->conns[i], &jw, &id);
	json_writer_free(&jw);
}

/*
 * Take a key of the reason being typed: Enter denies the request shown
 * with it, Esc (or ^C's ^D) gives up, backspace takes a byte back.
 */
static void
watch_type(struct watch *w, int key)
{
	if (key == '\r' || key == '\n') {
		w->typing = 0;
		w->reason[w->reason_len] = '\0';
		watch_answer(w, 'd', w->reason);
		watch_prompt(w);
	} else if (key == 033 || key == 4) {
		w->typing = 0;
		watch_prompt(w);
	} else if (key == 0177 || key == '\b') {
		if (w->reason_len > 0)
			w->reason_len--;
		watch_prompt(w);
	} else if ((unsigned char)key >= ' ' &&
	    w->reason_len < sizeof w->reason - 1) {
		w->reason[w->reason_len++] = key;
		watch_prompt(w);
	}
}

/* Act on one key. */
static void
watch_key(struct watch *w, int key)
{
	struct watch_item	tmp;

	if (w->typing) {
		watch_type(w, key);
		return;
	}
	if (key == 'q' || key == 4) {	/* q, ^D */
		watch_quit = 1;
		return;
	}
	if (w->nitems == 0)
		return;
	if (key == 'n' && w->nitems > 1) {
		tmp = w->items[0];
		memmove(&w->items[0], &w->items[1], (w->nitems - 1) *
		    sizeof tmp);
		w->items[w->nitems - 1] = tmp;
		watch_prompt(w);
	} else if (key == 'o' || key == 's' || key == 'a' || key == 'd')
		watch_answer(w, key, NULL);
	else if (key == 'r' && w->shown_id[0] != '\0') {
		w->typing = 1;
		w->reason_len = 0;
		watch_prompt(w);
	}
}

/* Wait for keys and events; rescan for sessions now and then. */
static void
watch_loop(struct watch *w)
{
	struct pollfd	pfd[CTL_SESSIONS_MAX + 1];
	size_t		i, n;
	char		key;
	time_t		last = 0;

	while (!watch_quit) {
		if (time(NULL) - last >= WATCH_RESCAN_MS / 1000) {
			watch_rescan(w);
			last = time(NULL);
		}
		pfd[0].fd = STDIN_FILENO;
		pfd[0].events = POLLIN;
		for (i = 0; i < w->nconns; i++) {
			pfd[i + 1].fd = w->conns[i].fd;
			pfd[i + 1].events = POLLIN;
		}
		n = w->nconns;
		if (poll(pfd, n + 1, WATCH_RESCAN_MS) <= 0)
			continue;
		if (pfd[0].revents & (POLLIN | POLLHUP)) {
			if (read(STDIN_FILENO, &key, 1) != 1)
				break;
			watch_key(w, key);
		}
		for (i = n; i > 0; i--) {
			if (pfd[i].revents & (POLLIN | POLLHUP | POLLERR))
				watch_read(w, i - 1);
		}
	}
}

/* Watch and answer. */
static int
cmd_watch_exec(const struct cmd_entry *self, int argc, char **argv)
{
	struct watch	*w;
	size_t		 i;
	int		 ch;

	if ((w = calloc(1, sizeof *w)) == NULL)
		return (1);
	while ((ch = cmd_getopt(self, argc, argv)) != -1) {
		if (ch == '?') {
			free(w);
			return (EXIT_USAGE);
		}
		w->want = optarg;
	}
	if (optind != argc) {
		free(w);
		return (cmd_usage_error(self, "takes no arguments"));
	}
	watch_raw(w);
	printf("pinhole watch: answer the current request with one key; "
	    "q quits.\n");
	watch_loop(w);
	watch_unprompt(w);
	printf("\n");
	watch_restore();
	watch_current = NULL;
	for (i = 0; i < w->nconns; i++)
		ctl_close(&w->conns[i]);
	free(w);
	return (0);
}

/* The options of watch. */
static const struct cmd_opt watch_opts[] = {
	{ "session", 's', CMD_ARG_REQUIRED, "SESSION",
	    .help = "only this session" },
	{ .name = "session-id" },
	{ .name = NULL }
};

const struct cmd_entry cmd_watch_entry = {
	.name = "watch",
	.usage = "[--session SESSION]",
	.summary = "Watch requests and blocked hosts live, answer with one key",
	.opts = watch_opts,
	.help =
	    "Keys: o approve once, s approve for the session, a approve always\n"
	    "(written into the policy), d deny, r deny saying why (type the\n"
	    "reason the agent is told, then Enter; Esc gives up), n next\n"
	    "request, q quit.  The prompt shows one open request, the session\n"
	    "it belongs to and the sandbox that asked; a key answers exactly\n"
	    "that request, in that session.  Each decision is said in words:\n"
	    "once for which sandbox, for this session, or always and the line\n"
	    "written to the policy file, and for a denial what the agent is\n"
	    "told.\n"
	    "\n"
	    "Watches every running session of this user (or only --session SESSION),\n"
	    "and sessions that start later.  Text that came from the sandbox is\n"
	    "shown escaped: it cannot move the cursor or change the terminal.\n",
	.exec = cmd_watch_exec,
};
