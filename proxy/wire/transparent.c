/*
 * Transparent capture, its pure part: the ports worth waiting on, and
 * the name a connection's first bytes give, checked against the name
 * its destination (a fake address) stands for.
 */
#include "config.h"

#include <string.h>

#include "proxy/wire/transparent.h"
#include "rules/rules.h"

/* Ports where the client is expected to speak TLS or HTTP first. */
static const uint16_t transparent_ports[] = {
	80, 443, 8000, 8008, 8080, 8443, 8888
};

static const char *const transparent_names[] = {
	"need-more", "other", "no-name", "match", "fronting", "malformed"
};

/* Should a capture wait for the client's first bytes on this port? */
int
transparent_wait_port(uint16_t port)
{
	size_t	i;

	for (i = 0; i < sizeof transparent_ports / sizeof *transparent_ports;
	    i++) {
		if (transparent_ports[i] == port)
			return (1);
	}
	return (0);
}

/* Does a name from SNI or Host stand for the expected host? */
static int
transparent_same(const char *name, const struct host *want,
    const char *addr)
{
	struct host	 h;
	const char	*errstr;

	if (host_parse(name, strlen(name), &h, &errstr) == -1)
		return (0);
	if (h.kind != HOST_NAME)
		return (addr != NULL && strcmp(h.text, addr) == 0);
	return (want->kind == HOST_NAME && strcmp(h.text, want->text) == 0);
}

/* Look at a connection's first bytes: do they name the expected host? */
enum transparent_verdict
transparent_check(const uint8_t *buf, size_t len, const struct host *want,
    const char *addr, struct transparent_sniff *t)
{
	struct sni_result	r;

	memset(t, 0, sizeof *t);
	switch (sni_sniff(buf, len, &r)) {
	case SNI_NEED_MORE:
		t->need = r.need;
		return (TRANSPARENT_NEED_MORE);
	case SNI_OTHER:
		return (TRANSPARENT_OTHER);
	case SNI_NO_NAME:
		t->proto = r.proto;
		return (TRANSPARENT_NO_NAME);
	case SNI_ERROR:
		t->proto = r.proto;
		t->error = r.error != NULL ? r.error : "malformed";
		return (TRANSPARENT_MALFORMED);
	case SNI_NAME:
		break;
	}
	t->proto = r.proto;
	memcpy(t->name, r.name, sizeof t->name);
	t->name[sizeof t->name - 1] = '\0';
	if (transparent_same(t->name, want, addr))
		return (TRANSPARENT_MATCH);
	return (TRANSPARENT_FRONTING);
}

/* Where the name of a matching connection was read. */
const char *
transparent_name_from(const struct transparent_sniff *t)
{
	return (t->proto == SNI_PROTO_TLS ? "sni" : "host");
}

/* Name a verdict for logs and tests. */
const char *
transparent_verdict_name(enum transparent_verdict v)
{
	if ((size_t)v >= sizeof transparent_names / sizeof *transparent_names)
		return ("unknown");
	return (transparent_names[v]);
}
