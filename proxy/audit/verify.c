/*
 * Checking the audit chain.  Each line must be a complete, strict JSON
 * object whose chain value is H(the chain before it || its bytes up to
 * ,"chain"); seq counts up by one across files.  On the first line that
 * fails, a look at its neighbours tells an edit from an insertion, a
 * deletion or a reordering, and a file boundary from the inside of a file.
 */
#include "config.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/audit/verify.h"

#define VERIFY_LOOKAHEAD	64	/* lines searched for a moved line */

struct vline {
	const char		*p;
	size_t			 len;	/* without the newline */
	int			 nl;	/* ends with a newline */
	unsigned long long	 no;	/* 1-based, in its file */
};

/* Start checking, with a key (HMAC) or without (SHA-256). */
int
audit_verify_init(struct audit_verify *v, const unsigned char *key,
    size_t keylen)
{
	memset(v, 0, sizeof *v);
	v->storelen = 1 << 20;
	if ((v->hash = audit_hash_create(key, keylen)) == NULL ||
	    (v->store = malloc(v->storelen)) == NULL ||
	    audit_hash_seed(v->hash, v->seed) == -1) {
		audit_verify_free(v);
		return (-1);
	}
	return (0);
}

/* Free what checking holds. */
void
audit_verify_free(struct audit_verify *v)
{
	audit_hash_free(v->hash);
	free(v->store);
	free(v->sess);
	v->hash = NULL;
	v->store = NULL;
	v->sess = NULL;
	v->nsess = v->sesscap = 0;
}

/* Name the first bad line. */
static int
verify_bad(struct audit_verify *v, const struct vline *l, const char *fmt, ...)
{
	va_list	ap;
	char	buf[400];

	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	v->bad_line = l->no;
	snprintf(v->msg, sizeof v->msg, "%s:%llu: %s", v->file, l->no, buf);
	return (-1);
}

/* Take the line at *off of buf; return 0 at the end. */
static int
verify_next(const char *buf, size_t len, size_t *off, struct vline *l)
{
	const char	*nl;

	if (*off >= len)
		return (0);
	l->p = buf + *off;
	if ((nl = memchr(l->p, '\n', len - *off)) == NULL) {
		l->len = len - *off;
		l->nl = 0;
	} else {
		l->len = nl - l->p;
		l->nl = 1;
	}
	*off += l->len + l->nl;
	l->no++;
	return (1);
}

/* Tell whether a line's chain value follows from prev. */
static int
verify_chain(struct audit_verify *v, const struct vline *l,
    const struct audit_link *lk, const unsigned char *prev)
{
	unsigned char	h[AUDIT_HASH_LEN];

	if (audit_hash_step(v->hash, prev, l->p, lk->hashed, h) == -1)
		return (0);
	return (memcmp(h, lk->chain, sizeof h) == 0);
}

/* Tell whether the line after l follows the line before l. */
static int
verify_skips(struct audit_verify *v, const char *buf, size_t len, size_t off,
    struct vline l)
{
	struct audit_link	lk;

	if (!verify_next(buf, len, &off, &l) || !l.nl ||
	    audit_link_parse(l.p, l.len, &lk) == -1 || lk.seq != v->seq + 1)
		return (0);
	return (verify_chain(v, &l, &lk, v->chain));
}

/* Find a later line with a seq, within a few lines. */
static unsigned long long
verify_find_seq(const char *buf, size_t len, size_t off, struct vline l,
    unsigned long long seq)
{
	struct audit_link	lk;
	int			i;

	for (i = 0; i < VERIFY_LOOKAHEAD && verify_next(buf, len, &off, &l);
	    i++) {
		if (audit_link_parse(l.p, l.len, &lk) == 0 && lk.seq == seq)
			return (l.no);
	}
	return (0);
}

/* Say what happened at a line that does not follow the one before it. */
static int
verify_classify(struct audit_verify *v, const char *buf, size_t len,
    size_t off, const struct vline *l, const struct audit_link *lk)
{
	unsigned long long	want = v->seq + 1, at;

	if (lk->seq > want &&
	    (at = verify_find_seq(buf, len, off, *l, want)) != 0)
		return (verify_bad(v, l, "reordered: seq %llu comes before "
		    "seq %llu (line %llu)", lk->seq, want, at));
	if (verify_skips(v, buf, len, off, *l))
		return (verify_bad(v, l, "inserted: this line is not part of "
		    "the chain (the line after it follows the line before it)"));
	if (lk->seq == want)
		return (verify_bad(v, l, "edited: its chain value does not "
		    "match its content (seq %llu)", lk->seq));
	if (lk->seq > want)
		return (verify_bad(v, l, "deleted: %llu line(s) missing before "
		    "this one (seq %llu to %llu)", lk->seq - want, want,
		    lk->seq - 1));
	return (verify_bad(v, l, "reordered or replayed: seq %llu after seq "
	    "%llu", lk->seq, v->seq));
}

/* Check a line that starts the whole check. */
static int
verify_first(struct audit_verify *v, const struct vline *l,
    const struct audit_link *lk)
{
	const unsigned char	*prev = lk->has_prev ? lk->prev : v->seed;

	if (!lk->has_prev && lk->seq != 1)
		return (verify_bad(v, l, "deleted: the log starts at seq %llu "
		    "with no link to an earlier file (lines before it were "
		    "removed)", lk->seq));
	if (!verify_chain(v, l, lk, prev))
		return (verify_bad(v, l, "edited, or the wrong key: its chain "
		    "value does not match (was the log written with "
		    "--log-key? give the same key with --key)"));
	v->midchain = lk->has_prev;
	v->first_seq = lk->seq;
	return (0);
}

/* Check a line that starts a file after another one. */
static int
verify_boundary(struct audit_verify *v, const struct vline *l,
    const struct audit_link *lk)
{
	if (lk->seq == v->seq + 1 && (!lk->has_prev ||
	    memcmp(lk->prev, v->chain, sizeof v->chain) == 0))
		return (0);
	if (!lk->has_prev && lk->seq == 1)
		return (verify_bad(v, l, "gap: this file starts a new chain; "
		    "it does not carry on from %s", v->prevfile));
	return (verify_bad(v, l, "gap between files: this file carries on "
	    "from seq %llu, but %s ends at seq %llu (a file is missing or "
	    "was cut short, or the files are not given oldest first)",
	    lk->seq - 1, v->prevfile, v->seq));
}

/* Count a "loss" line, and describe the first few. */
static void
verify_loss(struct audit_verify *v, const struct vline *l,
    const struct audit_rec *rec)
{
	const char	*first = audit_rec_str(rec, "lost_first");
	const char	*last = audit_rec_str(rec, "lost_last");
	const char	*why = audit_rec_str(rec, "reason");
	long long	 n = audit_rec_num(rec, "lost");
	long long	 bytes = audit_rec_num(rec, "lost_bytes");

	if (v->losses < AUDIT_VERIFY_LOSSES)
		snprintf(v->loss[v->losses], sizeof v->loss[0], "%s:%llu: "
		    "%lld line(s), %lld bytes, not written from %s to %s: %s",
		    v->file, l->no, n, bytes, first != NULL ? first : "?",
		    last != NULL ? last : "?", why != NULL ? why : "?");
	v->losses++;
	if (n > 0)
		v->lost += n;
}

/* Count a "drop" line, and describe the first few. */
static void
verify_drop(struct audit_verify *v, const struct vline *l,
    const struct audit_rec *rec)
{
	const char	*what = audit_rec_str(rec, "detail");
	const char	*chain = audit_rec_str(rec, "end_chain");
	long long	 n = audit_rec_num(rec, "count");
	long long	 denied = audit_rec_num(rec, "denied");

	if (v->drops < AUDIT_VERIFY_LOSSES)
		snprintf(v->drop[v->drops], sizeof v->drop[0], "%s:%llu: "
		    "%lld line(s), seq %lld to %lld, %lld of them refusals, "
		    "ending in chain %.64s: %s", v->file, l->no, n,
		    audit_rec_num(rec, "seq_first"),
		    audit_rec_num(rec, "seq_last"), denied,
		    chain != NULL ? chain : "?", what != NULL ? what : "?");
	v->drops++;
	/*
	 * A gateway's drop lines each carry on its ones before (they share
	 * their seq_first): its last one says it all.  Another gateway's
	 * (another seq_first) are added.
	 */
	if (v->drops == 1 || audit_rec_num(rec, "seq_first") != v->drop_from) {
		v->drop_base += v->drop_cur;
		v->drop_base_denied += v->drop_cur_denied;
		v->drop_from = audit_rec_num(rec, "seq_first");
	}
	v->drop_cur = n > 0 ? n : 0;
	v->drop_cur_denied = denied > 0 ? denied : 0;
	v->dropped = v->drop_base + v->drop_cur;
	v->dropped_denied = v->drop_base_denied + v->drop_cur_denied;
}

/* FNV-1a of a session's name. */
static size_t
verify_hash(const char *name)
{
	uint32_t	h = 2166136261U;

	for (; *name != '\0'; name++)
		h = (h ^ (uint8_t)*name) * 16777619U;
	return (h % AUDIT_VERIFY_BUCKETS);
}

/* Find the newest session of a name (its name as kept); 0: none. */
static size_t
verify_find(const struct audit_verify *v, const char *name)
{
	size_t	i;

	if (v->cur != 0 && strcmp(v->sess[v->cur].name, name) == 0)
		return (v->cur);
	for (i = v->bucket[verify_hash(name)]; i != 0; i = v->sess[i].next)
		if (strcmp(v->sess[i].name, name) == 0)
			return (i);
	return (0);
}

/* Begin following a session at its first line here; 0 past the limit. */
static size_t
verify_add(struct audit_verify *v, const char *name, const struct vline *l,
    const struct audit_rec *rec, unsigned long long seq)
{
	struct audit_vsession	*s;
	const char		*ts = audit_rec_str(rec, "ts");
	size_t			 cap, h;

	if (v->nsess == 0)
		v->nsess = 1;		/* 0 is none */
	if (v->nsess >= AUDIT_VERIFY_SESSIONS)
		return (0);
	if (v->nsess >= v->sesscap) {
		cap = v->sesscap == 0 ? 64 : v->sesscap * 2;
		if ((s = realloc(v->sess, cap * sizeof *s)) == NULL)
			return (0);
		v->sess = s;
		v->sesscap = cap;
	}
	s = &v->sess[v->nsess];
	memset(s, 0, sizeof *s);
	snprintf(s->name, sizeof s->name, "%s", name);
	snprintf(s->ts, sizeof s->ts, "%s", ts != NULL ? ts : "?");
	s->file = v->file;
	s->line = l->no;
	s->first_seq = seq;
	s->gateway_pid = -1;
	h = verify_hash(s->name);
	s->next = v->bucket[h];
	v->bucket[h] = v->nsess;
	return (v->nsess++);
}

/*
 * Follow the session a schema 2 line names: a "start" begins it (a start
 * of a name still open means the one before never stopped), a "stop"
 * ends it.
 */
static void
verify_session(struct audit_verify *v, const struct vline *l,
    const struct audit_rec *rec, const char *ev, unsigned long long seq)
{
	const char		*name = audit_rec_str(rec, "session");
	char			 key[AUDIT_VERIFY_NAME];
	struct audit_vsession	*s;
	int			 start = ev != NULL && strcmp(ev, "start") == 0;
	size_t			 i;

	/* Schema 1 named a connection or sandbox loosely, not a gateway. */
	if (name == NULL || audit_rec_num(rec, "schema") < 2)
		return;
	snprintf(key, sizeof key, "%s", name);
	if ((i = verify_find(v, key)) != 0 && start &&
	    (v->sess[i].lines > 0)) {
		v->sess[i].superseded = !v->sess[i].stopped;
		i = 0;
	}
	if (i == 0 && (i = verify_add(v, key, l, rec, seq)) == 0) {
		v->untracked++;
		return;
	}
	v->cur = i;
	s = &v->sess[i];
	if (s->lines++ == 0 && start) {
		s->started = 1;
		s->gateway_pid = audit_rec_num(rec, "gateway_pid");
	}
	s->last_seq = seq;
	if (ev != NULL && strcmp(ev, "stop") == 0)
		s->stopped = 1;
}

/* The sessions met, in the order met. */
const struct audit_vsession *
audit_verify_sessions(const struct audit_verify *v, size_t *n)
{
	*n = v->nsess > 1 ? v->nsess - 1 : 0;
	return (v->sess != NULL ? v->sess + 1 : NULL);
}

/* Check one line against the chain so far. */
static int
verify_line(struct audit_verify *v, const char *buf, size_t len, size_t off,
    const struct vline *l)
{
	struct audit_link	lk;
	struct audit_rec	rec;
	const char		*ev;

	if (!l->nl)
		return (verify_bad(v, l, "cut short: the file ends in the "
		    "middle of this line (an interrupted write, or the file "
		    "was truncated)"));
	if (audit_link_parse(l->p, l->len, &lk) == -1 || l->len >=
	    v->storelen || audit_rec_parse(l->p, l->len, v->store,
	    v->storelen, &rec) == -1)
		return (verify_bad(v, l, "damaged: not a complete audit line "
		    "with a chain value (cut short by an interrupted write, "
		    "or edited)"));
	if (!v->known) {
		if (verify_first(v, l, &lk) == -1)
			return (-1);
	} else if (l->no == 1 && v->prevfile != NULL) {
		if (verify_boundary(v, l, &lk) == -1)
			return (-1);
		if (!verify_chain(v, l, &lk, v->chain))
			return (verify_classify(v, buf, len, off, l, &lk));
	} else if (lk.has_prev && memcmp(lk.prev, v->chain, sizeof v->chain))
		return (verify_bad(v, l, "gap: this line links to a chain "
		    "value that is not the line before it"));
	else if (lk.seq != v->seq + 1 || !verify_chain(v, l, &lk, v->chain))
		return (verify_classify(v, buf, len, off, l, &lk));
	v->known = 1;
	v->seq = lk.seq;
	memcpy(v->chain, lk.chain, sizeof v->chain);
	v->lines++;
	ev = audit_rec_str(&rec, "event");
	if (ev != NULL && strcmp(ev, "loss") == 0)
		verify_loss(v, l, &rec);
	else if (ev != NULL && strcmp(ev, "drop") == 0)
		verify_drop(v, l, &rec);
	verify_session(v, l, &rec, ev, lk.seq);
	return (0);
}

/*
 * Check one file, after those given before it.  Returns 0 when intact,
 * -1 with v->msg naming the first bad line.
 */
int
audit_verify_file(struct audit_verify *v, const char *name, const char *buf,
    size_t len)
{
	struct vline	l;
	size_t		off = 0;
	int		rv = 0;

	v->file = name;
	memset(&l, 0, sizeof l);
	while (verify_next(buf, len, &off, &l)) {
		if ((rv = verify_line(v, buf, len, off, &l)) == -1)
			break;
	}
	v->prevfile = name;
	return (rv);
}
