/*
 * The queue's words (proxy/escalate/escalate.h): names of states and
 * scopes, durations, the hint a refusal gives, and untrusted text
 * cleaned for keeping and showing.  Pure.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/json.h"
#include "proxy/escalate/escalate.h"

/* Say what filing came to, for people. */
const char *
escalate_filed_text(enum escalate_filed f)
{
	switch (f) {
	case ESCALATE_FILED_NEW:
		return ("filed");
	case ESCALATE_FILED_SAME:
		return ("already asked: joined the open request");
	case ESCALATE_FILED_JOINED:
		return ("filed");
	case ESCALATE_FILED_FULL:
		return ("too many open requests: wait for an answer");
	case ESCALATE_FILED_RATE:
		return ("too many requests lately (a burst of 5, then 5 a "
		    "minute): ask again in a minute");
	case ESCALATE_FILED_FIXED:
		return ("no approval can open this: the policy must change");
	default:
		return ("out of memory");
	}
}

/* Name a state. */
const char *
escalate_state_name(enum escalate_state st)
{
	static const char	*names[] = { "pending", "approved", "denied",
	    "expired" };

	return (names[st]);
}

/* Name a scope. */
const char *
escalate_scope_name(enum escalate_scope sc)
{
	static const char	*names[] = { "none", "once", "session",
	    "always" };

	return (names[sc]);
}

/* Parse a scope name. */
int
escalate_scope_parse(const char *s, enum escalate_scope *sc)
{
	if (strcmp(s, "once") == 0)
		*sc = ESCALATE_SCOPE_ONCE;
	else if (strcmp(s, "session") == 0)
		*sc = ESCALATE_SCOPE_SESSION;
	else if (strcmp(s, "always") == 0)
		*sc = ESCALATE_SCOPE_ALWAYS;
	else
		return (-1);
	return (0);
}

/* Parse a duration: digits and an optional unit s, m, h or d. */
long
escalate_duration_parse(const char *s)
{
	long	v = 0, mul = 1;
	size_t	i;

	for (i = 0; s[i] >= '0' && s[i] <= '9'; i++) {
		if (i >= 9)
			return (-1);
		v = v * 10 + (s[i] - '0');
	}
	if (i == 0)
		return (-1);
	if (s[i] == 'm')
		mul = 60;
	else if (s[i] == 'h')
		mul = 3600;
	else if (s[i] == 'd')
		mul = 86400;
	else if (s[i] != 's' && s[i] != '\0')
		return (-1);
	if (s[i] != '\0' && s[i + 1] != '\0')
		return (-1);
	if (v > ESCALATE_TTL_MAX / mul)
		return (-1);
	return (v * mul);
}

/* Tell whether a code point is shown escaped. */
static int
escalate_unsafe(uint32_t cp)
{
	return (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) ||
	    (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) ||
	    cp == 0xfeff);
}

/* Clean untrusted text (see escalate.h). */
size_t
escalate_clean(const char *in, size_t len, size_t max, char *out,
    size_t outsz)
{
	const uint8_t	*s = (const uint8_t *)in;
	size_t		 i = 0, n, o = 0;
	uint32_t	 cp;
	char		 esc[8];

	if (outsz == 0)
		return (0);
	while (i < len && s[i] != '\0') {
		if ((n = json_utf8(s + i, len - i, &cp)) == 0) {
			n = 1;
			cp = s[i];
			snprintf(esc, sizeof esc, "\\x%02x", (unsigned)cp);
		} else if (escalate_unsafe(cp) && cp < 0x80)
			snprintf(esc, sizeof esc, "\\x%02x", (unsigned)cp);
		else if (escalate_unsafe(cp))
			snprintf(esc, sizeof esc, "\\u%04x", (unsigned)cp);
		else
			esc[0] = '\0';
		if (i + n > max)
			break;
		if (esc[0] != '\0') {
			if (o + strlen(esc) >= outsz)
				break;
			memcpy(out + o, esc, strlen(esc));
			o += strlen(esc);
		} else {
			if (o + n >= outsz)
				break;
			memcpy(out + o, s + i, n);
			o += n;
		}
		i += n;
	}
	out[o] = '\0';
	return (o);
}

/* Write the command that requests a host (port 0: on every port). */
void
escalate_hint(const struct host *h, uint16_t port, char *buf, size_t len)
{
	char	target[HOST_TEXT_LEN + 16];

	escalate_target(h, port, target, sizeof target);
	snprintf(buf, len, "pinhole request %s%s", target, port == 0 ?
	    " --any-port" : "");
}

/* HOST:PORT, [IPV6]:PORT, or HOST alone for port 0 (a DNS lookup). */
void
escalate_target(const struct host *h, uint16_t port, char *buf, size_t len)
{
	if (port == 0)
		snprintf(buf, len, "%s", h->text);
	else
		snprintf(buf, len, h->kind == HOST_IPV6 ? "[%s]:%u" : "%s:%u",
		    h->text, port);
}
