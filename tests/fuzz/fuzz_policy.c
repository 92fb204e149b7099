/*
 * Fuzz the policy parser: any text either loads or is refused with a
 * message, and a loaded policy answers lookups, says which of its
 * rules cannot take effect, and names an upstream proxy whole.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rules/rules.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* Hosts every loaded policy is asked about. */
static const char *const fuzz_hosts[] = {
	"pypi.org", "a.b.pypi.org", "203.0.113.7", "[2001:db8::1]:22",
	"10.20.1.2:8080", "example.com:80"
};

/* Say a rule that cannot take effect, as a load would. */
static int
fuzz_dead(const struct rules_dead *d, void *arg)
{
	char	line[2048];

	(void)arg;
	rules_dead_text(d, line, sizeof line);
	if (strnlen(line, sizeof line) == sizeof line)
		abort();
	return (0);
}

/* Each secret of a loaded policy goes in one header at least, named. */
static void
fuzz_secrets(const struct rules *r)
{
	const struct rules_secret	*rs[8];
	const char *const		*names;
	size_t				 i, k, n, nh;

	n = rules_secrets(r, rs, 8);
	for (i = 0; i < n && i < 8; i++) {
		if ((nh = rules_secret_headers(rs[i], &names)) == 0 ||
		    nh > RULES_SECRET_HEADERS_MAX)
			abort();
		for (k = 0; k < nh; k++) {
			if (names[k][0] == '\0' ||
			    strlen(names[k]) > RULES_SECRET_HEADER_LEN)
				abort();
		}
	}
}

/* An upstream is whole: its host, a port; no-upstream lists are there. */
static void
fuzz_upstream(const struct rules *r)
{
	const struct rules_upstream	*u = rules_upstream(r);
	const char			*list[4];
	size_t				 i, n;

	if (u != NULL && (u->host == NULL || u->host[0] == '\0' ||
	    u->port == 0 || u->origin == NULL))
		abort();
	if (u != NULL && u->auth != NULL && u->auth_origin == NULL)
		abort();
	n = rules_no_upstream_list(r, list, 4);
	for (i = 0; i < n && i < 4; i++)
		if (list[i] == NULL || list[i][0] == '\0')
			abort();
}

/* Load the input as a policy, then match a few hosts against it. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	static const uint8_t	 private[4] = { 10, 20, 1, 2 };
	struct rules		*r;
	struct rules_verdict	 v;
	struct host		 h;
	uint16_t		 port, ports[8];
	const char		*errstr;
	char			 err[512];
	size_t			 i;

	/*
	 * Includes are checked, never read: a pattern would have glob(3)
	 * walk the filesystem, a file read whatever the input names.
	 */
	setenv("PINHOLE_PRESETDIR", "/nonexistent", 1);
	if ((r = rules_create()) == NULL)
		return (0);
	rules_no_includes(r);
	if (rules_load_text(r, "fuzz", (const char *)data, len, err,
	    sizeof err) == 0) {
		for (i = 0; i < sizeof fuzz_hosts / sizeof fuzz_hosts[0]; i++) {
			if (host_port_parse(fuzz_hosts[i], &h, &port, 443,
			    &errstr) == 0) {
				rules_match(r, &h, port, &v);
				rules_no_upstream(r, &h);
			}
		}
		fuzz_upstream(r);
		rules_private_ok(r, private, sizeof private, &v);
		rules_ports(r, ports, 8);
		rules_dead(r, fuzz_dead, NULL);
		fuzz_secrets(r);
	} else if (memchr(err, ':', strnlen(err, sizeof err)) == NULL)
		abort();		/* every refusal names its place */
	rules_free(r);
	return (0);
}
