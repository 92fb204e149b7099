/*
 * The notices pinhole run says on its stderr (daemon/notice.h): made from
 * the escalation queue's events, put in one line each, and the limit on
 * refusal lines.  Pure: the caller gives the time and does the writing.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "daemon/notice.h"

#define NOTICE_TOKEN_MS	(1000 / NOTICE_RATE)

/* A refusal as the run is told it. */
static void
notice_refusal(const struct sandbox_refusal *f, struct attach_notice *n)
{
	n->kind = ATTACH_NOTICE_REFUSED;
	n->host = f->host;
	n->port = f->port;
	snprintf(n->via, sizeof n->via, "%s", f->via);
	snprintf(n->what, sizeof n->what, "%s", f->what);
	snprintf(n->text, sizeof n->text, "%s", f->why);
	snprintf(n->fix, sizeof n->fix, "%s", f->fix);
	n->ask = f->fix[0] == '\0' && f->ask;
}

/* A request as the run is told it: held, asked for, or decided. */
static void
notice_request(enum attach_notice_kind kind, const struct escalate_request *r,
    struct attach_notice *n)
{
	n->kind = kind;
	n->host = r->host;
	n->port = r->port;
	snprintf(n->request, sizeof n->request, "%s", r->id);
	if (kind == ATTACH_NOTICE_ASKED)
		snprintf(n->text, sizeof n->text, "%s", r->reason);
	if (kind != ATTACH_NOTICE_DECIDED)
		return;
	snprintf(n->state, sizeof n->state, "%s",
	    escalate_state_name(r->state));
	if (r->scope != ESCALATE_SCOPE_NONE)
		snprintf(n->scope, sizeof n->scope, "%s",
		    escalate_scope_name(r->scope));
	snprintf(n->by, sizeof n->by, "%s", r->by);
	snprintf(n->text, sizeof n->text, "%s", r->answer);
}

/*
 * Another sandbox's open request, joined: to this one, a request of its
 * own asked for, as a new one is told.
 */
static int
notice_joined(const struct escalate_event *ev, struct attach_notice *n,
    const char **sandbox)
{
	const struct escalate_asker	*a = ev->asker;

	if (strcmp(a->via, "agent") != 0)
		return (-1);
	notice_request(ATTACH_NOTICE_ASKED, ev->request, n);
	snprintf(n->request, sizeof n->request, "%s", a->id);
	snprintf(n->text, sizeof n->text, "%s", a->reason);
	*sandbox = a->sandbox;
	return (0);
}

/* The notice an event of the queue makes, and the sandbox it is for. */
int
notice_from_event(const struct escalate_event *ev, struct attach_notice *n,
    const char **sandbox)
{
	const struct escalate_request	*r = ev->request;

	memset(n, 0, sizeof *n);
	switch (ev->note) {
	case ESCALATE_NOTE_REFUSED:
		notice_refusal(ev->refusal, n);
		*sandbox = ev->refusal->sandbox;
		return (0);
	case ESCALATE_NOTE_HELD:
		notice_request(ATTACH_NOTICE_HELD, r, n);
		snprintf(n->request, sizeof n->request, "%s",
		    escalate_id_for(r, ev->sandbox));
		n->secs = ev->secs;
		*sandbox = ev->sandbox;
		return (0);
	case ESCALATE_NOTE_REQUEST:
		if (ev->asker != NULL)
			return (notice_joined(ev, n, sandbox));
		if (r->state != ESCALATE_PENDING || r->count != 1 ||
		    strcmp(r->via, "agent") != 0)
			return (-1);
		notice_request(ATTACH_NOTICE_ASKED, r, n);
		*sandbox = r->sandbox;
		return (0);
	case ESCALATE_NOTE_DECIDED:
		notice_request(ATTACH_NOTICE_DECIDED, r, n);
		/* A once grant is its sandbox's: the others still wait. */
		*sandbox = r->scope == ESCALATE_SCOPE_ONCE &&
		    r->sandbox[0] != '\0' ? r->sandbox : NULL;
		return (0);
	default:
		return (-1);
	}
}

/* Does a notice go through the limit? */
int
notice_limited(const struct attach_notice *n)
{
	return (n->kind == ATTACH_NOTICE_REFUSED);
}

/* Append to a line being built; what does not fit is cut. */
static void __attribute__((format(printf, 4, 5)))
notice_add(char *buf, size_t len, size_t *off, const char *fmt, ...)
{
	va_list	ap;
	int	n;

	if (*off >= len)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + *off, len - *off, fmt, ap);
	va_end(ap);
	if (n > 0)
		*off += (size_t)n < len - *off ? (size_t)n : len - *off - 1;
}

/* Append text cleaned for a terminal (escalate_clean()). */
static void
notice_add_clean(char *buf, size_t len, size_t *off, const char *s)
{
	char	clean[ATTACH_TEXT_MAX * 4 + 1];

	escalate_clean(s, strlen(s), ATTACH_TEXT_MAX, clean, sizeof clean);
	notice_add(buf, len, off, "%s", clean);
}

/*
 * Append what a notice is about: "the name x" (refused by the DNS), "x
 * (any port)" (a request for every port), "x:443", "GET / on x:443".
 */
static void
notice_add_target(char *buf, size_t len, size_t *off,
    const struct attach_notice *n)
{
	char	target[HOST_TEXT_LEN + 16];

	escalate_target(&n->host, n->port, target, sizeof target);
	if (n->what[0] != '\0') {
		notice_add_clean(buf, len, off, n->what);
		notice_add(buf, len, off, " on ");
	}
	if (n->port == 0 && n->kind == ATTACH_NOTICE_REFUSED)
		notice_add(buf, len, off, "the name ");
	notice_add_clean(buf, len, off, target);
	if (n->port == 0 && n->kind != ATTACH_NOTICE_REFUSED)
		notice_add(buf, len, off, " (any port)");
}

/*
 * A refusal: what, how often, why, and how to ask and wait for the answer
 * or what to change.
 */
static void
notice_add_refused(char *buf, size_t len, size_t *off,
    const struct attach_notice *n, unsigned int count, int shown)
{
	char	hint[HOST_TEXT_LEN + 32];

	notice_add(buf, len, off, "refused ");
	notice_add_target(buf, len, off, n);
	if (shown)
		notice_add(buf, len, off, " again, %u time%s", count,
		    count == 1 ? "" : "s");
	else if (count > 1)
		notice_add(buf, len, off, " %u times", count);
	if (n->fix[0] != '\0' && !shown) {
		notice_add(buf, len, off, ": ");
		notice_add_clean(buf, len, off, n->fix);
		return;
	}
	notice_add(buf, len, off, " (");
	notice_add_clean(buf, len, off, n->text);
	notice_add(buf, len, off, ")");
	if (n->ask && !shown) {
		escalate_hint(&n->host, n->port, hint, sizeof hint);
		notice_add(buf, len, off, "; ask: ");
		notice_add_clean(buf, len, off, hint);
		notice_add(buf, len, off, ", then wait for the answer: "
		    "pinhole request --status ID --wait (ID is what it prints)");
	}
}

/* The approve command for a request of this gateway. */
static void
notice_add_approve(char *buf, size_t len, size_t *off, const char *session,
    const struct attach_notice *n)
{
	notice_add(buf, len, off, "pinhole approve ");
	if (session != NULL && session[0] != '\0') {
		notice_add_clean(buf, len, off, session);
		notice_add(buf, len, off, "/");
	}
	notice_add_clean(buf, len, off, n->request);
	notice_add(buf, len, off, " [--session|--always]");
}

/* A decision on a request the run told of. */
static void
notice_add_decided(char *buf, size_t len, size_t *off,
    const struct attach_notice *n)
{
	if (strcmp(n->state, "expired") == 0) {
		notice_add(buf, len, off, "request ");
		notice_add_clean(buf, len, off, n->request);
		notice_add(buf, len, off, " for ");
		notice_add_target(buf, len, off, n);
		notice_add(buf, len, off, " expired unanswered");
		return;
	}
	notice_add_clean(buf, len, off, n->state);
	notice_add(buf, len, off, " ");
	notice_add_target(buf, len, off, n);
	notice_add(buf, len, off, " (");
	if (n->scope[0] != '\0') {
		notice_add_clean(buf, len, off, n->scope);
		notice_add(buf, len, off, ", ");
	}
	notice_add(buf, len, off, "by ");
	notice_add_clean(buf, len, off, n->by);
	notice_add(buf, len, off, ")");
	if (n->text[0] != '\0') {
		notice_add(buf, len, off, ": ");
		notice_add_clean(buf, len, off, n->text);
	}
}

/* End a line: '\n', with "..." where it was cut. */
static size_t
notice_end(char *buf, size_t len, size_t off)
{
	if (off + 2 > len && len >= 5) {
		memcpy(buf + len - 5, "...\n", 5);
		return (len - 1);
	}
	buf[off++] = '\n';
	buf[off] = '\0';
	return (off);
}

/* The line for a notice. */
size_t
notice_format(const struct attach_notice *n, const char *session,
    unsigned int count, int shown, char *buf, size_t len)
{
	size_t	off = 0;

	if (len < 8)
		return (0);
	notice_add(buf, len, &off, "pinhole: ");
	switch (n->kind) {
	case ATTACH_NOTICE_REFUSED:
		notice_add_refused(buf, len, &off, n, count, shown);
		break;
	case ATTACH_NOTICE_HELD:
		notice_add(buf, len, &off, "holding ");
		notice_add_target(buf, len, &off, n);
		notice_add(buf, len, &off, " for approval (%d s): ", n->secs);
		notice_add_approve(buf, len, &off, session, n);
		break;
	case ATTACH_NOTICE_ASKED:
		notice_add(buf, len, &off, "the command asks for ");
		notice_add_target(buf, len, &off, n);
		if (n->text[0] != '\0') {
			notice_add(buf, len, &off, " (\"");
			notice_add_clean(buf, len, &off, n->text);
			notice_add(buf, len, &off, "\")");
		}
		notice_add(buf, len, &off, ": ");
		notice_add_approve(buf, len, &off, session, n);
		break;
	case ATTACH_NOTICE_DECIDED:
		notice_add_decided(buf, len, &off, n);
		break;
	}
	return (notice_end(buf, len, off));
}

/* Start with no slot used and every token there. */
void
notice_limit_init(struct notice_limit *l, uint64_t now)
{
	memset(l, 0, sizeof *l);
	l->tokens = NOTICE_BURST;
	l->refilled = now;
}

/* Take a token for a line at now: 1, or 0 when none is left. */
static int
notice_token(struct notice_limit *l, uint64_t now)
{
	uint64_t	n;

	if (l->tokens == NOTICE_BURST)
		l->refilled = now;
	else if (now > l->refilled &&
	    (n = (now - l->refilled) / NOTICE_TOKEN_MS) > 0) {
		l->tokens = l->tokens + n > NOTICE_BURST ? NOTICE_BURST :
		    l->tokens + (unsigned int)n;
		l->refilled += n * NOTICE_TOKEN_MS;
	}
	if (l->tokens == 0)
		return (0);
	l->tokens--;
	return (1);
}

/* The reason a refusal is counted under with others of its host. */
static const char *
notice_class(const struct attach_notice *n)
{
	if (n->fix[0] != '\0')
		return (n->fix);
	return (n->ask ? "" : n->text);
}

/* Are two refusals the same for the limit? */
static int
notice_same(const struct attach_notice *a, const struct attach_notice *b)
{
	return (strcmp(a->host.text, b->host.text) == 0 &&
	    strcmp(notice_class(a), notice_class(b)) == 0);
}

/* The slot of a refusal: its own, or one whose window is over and said. */
static struct notice_slot *
notice_slot(struct notice_limit *l, const struct attach_notice *n,
    uint64_t now, int *fresh)
{
	struct notice_slot	*s, *free = NULL;
	size_t			 i;

	*fresh = 0;
	for (i = 0; i < NOTICE_SLOTS; i++) {
		s = &l->slot[i];
		if (s->used && notice_same(&s->last, n))
			return (s);
		if (free == NULL && (!s->used || (s->count == 0 &&
		    now >= s->until)))
			free = s;
	}
	*fresh = free != NULL;
	return (free);
}

/* Take a refusal at now: 1 to say it now, 0 held back. */
int
notice_limit_admit(struct notice_limit *l, const struct attach_notice *n,
    uint64_t now)
{
	struct notice_slot	*s;
	int			 fresh;

	if ((s = notice_slot(l, n, now, &fresh)) == NULL) {
		if (l->others++ == 0)
			l->others_until = now + NOTICE_WINDOW_MS;
		return (0);
	}
	if (!fresh && now < s->echo_until)
		return (0);	/* the same lookup, or what followed it */
	s->last = *n;
	if (!fresh && (s->count > 0 || now < s->until)) {
		s->count++;
		return (0);
	}
	s->used = 1;
	s->until = now + NOTICE_WINDOW_MS;
	s->echo_until = n->port == 0 ? now + NOTICE_ECHO_MS : 0;
	s->count = 0;
	s->shown = notice_token(l, now);
	if (!s->shown)
		s->count = 1;
	return (s->shown);
}

/*
 * When a slot's line is due: at the end of its window for repeats of a
 * line said, at once for one the cap held back.
 */
static uint64_t
notice_slot_at(const struct notice_slot *s)
{
	return (s->shown ? s->until : 0);
}

/* Is a slot's line due at now? */
static int
notice_slot_due(const struct notice_slot *s, uint64_t now, int all)
{
	return (s->used && s->count > 0 && (all || now >= notice_slot_at(s)));
}

/* The next line due at now. */
int
notice_limit_due(struct notice_limit *l, uint64_t now, int all,
    struct notice_due *d)
{
	struct notice_slot	*s;
	size_t			 i;

	memset(d, 0, sizeof *d);
	for (i = 0; i < NOTICE_SLOTS; i++) {
		s = &l->slot[i];
		if (!notice_slot_due(s, now, all) ||
		    (!all && !notice_token(l, now)))
			continue;
		d->n = s->last;
		d->count = s->count;
		d->shown = s->shown;
		s->count = 0;
		s->shown = 1;
		s->until = now + NOTICE_WINDOW_MS;
		return (1);
	}
	if (l->others > 0 && (all || (now >= l->others_until &&
	    notice_token(l, now)))) {
		d->others = 1;
		d->count = l->others;
		l->others = 0;
		return (1);
	}
	return (0);
}

/* Milliseconds from now to the next line due. */
int64_t
notice_limit_next(const struct notice_limit *l, uint64_t now)
{
	uint64_t	at = UINT64_MAX;
	size_t		i;

	for (i = 0; i < NOTICE_SLOTS; i++) {
		if (l->slot[i].used && l->slot[i].count > 0 &&
		    notice_slot_at(&l->slot[i]) < at)
			at = notice_slot_at(&l->slot[i]);
	}
	if (l->others > 0 && l->others_until < at)
		at = l->others_until;
	if (at == UINT64_MAX)
		return (-1);
	if (l->tokens == 0 && at < l->refilled + NOTICE_TOKEN_MS)
		at = l->refilled + NOTICE_TOKEN_MS;
	return (at > now ? (int64_t)(at - now) : 0);
}

/* The line for what is due. */
size_t
notice_due_format(const struct notice_due *d, char *buf, size_t len)
{
	if (!d->others)
		return (notice_format(&d->n, NULL, d->count, d->shown, buf,
		    len));
	snprintf(buf, len, "pinhole: %u more refusal%s not shown (pinhole "
	    "log --blocked lists them)\n", d->count, d->count == 1 ? "" : "s");
	return (strlen(buf));
}
