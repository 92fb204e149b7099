/*
 * Reading audit lines back with lib/json's reader, kept to one line (a
 * record is one line) and to integers in int64_t.  Log files are
 * untrusted input to `pinhole log`: every read is checked against the
 * end of the line and nothing is allocated.  No I/O, no globals.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>

#include "lib/json.h"
#include "proxy/audit/line.h"

/*
 * Parse one line (a trailing newline is allowed) into rec, decoding
 * strings into store.  Returns 0, or -1 when the line is not one flat
 * JSON object in UTF-8.
 */
int
audit_rec_parse(const char *line, size_t len, char *store, size_t storelen,
    struct audit_rec *rec)
{
	struct json_reader	r = { .m = rec->f, .max = AUDIT_REC_MAX,
				    .store = store, .size = storelen,
				    .one_line = 1, .full_range = 1 };
	const char		*err;

	if (len > 0 && line[len - 1] == '\n')
		len--;
	return (json_read(&r, line, len, &rec->n, &err));
}

/* Find a member by its key. */
const struct json_member *
audit_rec_get(const struct audit_rec *rec, const char *key)
{
	return (json_find(rec->f, rec->n, key));
}

/* Give a string member's decoded value, or NULL. */
const char *
audit_rec_str(const struct audit_rec *rec, const char *key)
{
	return (json_str(audit_rec_get(rec, key)));
}

/* Give a number member's value, or -1 when absent or not a number. */
long long
audit_rec_num(const struct audit_rec *rec, const char *key)
{
	const struct json_member	*f = audit_rec_get(rec, key);

	return (f != NULL && f->type == JSON_INT ? f->num : -1);
}
