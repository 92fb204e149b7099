/*
 * Shipping over TLS to a collector that, as it closes, reads and throws
 * away what arrived (as rsyslog's ossl driver does on stopping): the
 * line it threw away comes again on the next connection.  The collector
 * is a child process with OpenSSL on a loopback socket.
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/wait.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <event2/event.h>
#include <openssl/ssl.h>

#include "proxy/audit/audit.h"
#include "proxy/audit/ship.h"

#define LINES_FIRST	3	/* read and kept before the close */
#define SERVE_MS	5000	/* the collector's bound on each wait */

#include "tests/unit/tmpdir.h"

/* Read one octet-counted frame's seq; 0 at the end or on a failure. */
static int
read_frame(SSL *ssl)
{
	char	 buf[8192], *p;
	size_t	 len = 0, want;
	int	 n;

	while (len < 8 || memchr(buf, ' ', len) == NULL) {
		if ((n = SSL_read(ssl, buf + len, 1)) <= 0)
			return (0);
		len += n;
	}
	want = strtoul(buf, &p, 10) + (p - buf) + 1;
	if (want > sizeof buf)
		return (0);
	while (len < want) {
		if ((n = SSL_read(ssl, buf + len, want - len)) <= 0)
			return (0);
		len += n;
	}
	buf[len - 1] = '\0';
	if ((p = strstr(buf, " seq=\"")) == NULL)
		return (0);
	return (atoi(p + 6));
}

/* Accept one TLS connection on lfd. */
static SSL *
serve_accept(SSL_CTX *ctx, int lfd, int *fd)
{
	struct pollfd	 pfd = { lfd, POLLIN, 0 };
	SSL		*ssl;

	if (poll(&pfd, 1, SERVE_MS) != 1 || (*fd = accept(lfd, NULL,
	    NULL)) == -1 || (ssl = SSL_new(ctx)) == NULL)
		return (NULL);
	SSL_set_fd(ssl, *fd);
	if (SSL_accept(ssl) != 1)
		return (NULL);
	return (ssl);
}

/*
 * The collector: keep LINES_FIRST lines; then, once the next has
 * arrived, close as rsyslog does (close_notify, one SSL_read into a
 * buffer thrown away, close: a FIN, nothing left unread); then keep
 * all that a second connection brings until seq last.  Writes the seqs
 * kept to out, one a line.  Exits 0 when it threw a line away.
 */
static int
serve(SSL_CTX *ctx, int lfd, const char *out, int last)
{
	struct pollfd	 pfd;
	FILE		*fp;
	SSL		*ssl;
	char		 junk[16385];
	int		 fd, i, seq, threw;

	if ((fp = fopen(out, "w")) == NULL ||
	    (ssl = serve_accept(ctx, lfd, &fd)) == NULL)
		return (1);
	for (i = 0; i < LINES_FIRST; i++) {
		if ((seq = read_frame(ssl)) == 0)
			return (1);
		fprintf(fp, "%d\n", seq);
	}
	pfd.fd = fd;
	pfd.events = POLLIN;
	if (poll(&pfd, 1, SERVE_MS) != 1)
		return (1);
	usleep(50 * 1000);	/* all of its record is in */
	SSL_shutdown(ssl);
	threw = SSL_read(ssl, junk, sizeof junk) > 0;
	SSL_free(ssl);
	close(fd);
	if ((ssl = serve_accept(ctx, lfd, &fd)) == NULL)
		return (1);
	while ((seq = read_frame(ssl)) != 0) {
		fprintf(fp, "%d\n", seq);
		if (seq == last)
			break;
	}
	fclose(fp);
	return (!threw);
}

static void
ship_cb(void *arg, const char *line, size_t len)
{
	ship_lines(arg, line, len);
}

/* Run the loop for ms. */
static void
run_for(struct event_base *base, int ms)
{
	struct timeval	tv = { ms / 1000, (ms % 1000) * 1000 };

	event_base_loopexit(base, &tv);
	event_base_dispatch(base);
}

static void
write_line(struct audit *a, int i)
{
	struct audit_event	ev;
	char			host[32];

	snprintf(host, sizeof host, "h%d.test", i);
	audit_event_init(&ev);
	ev.event = "connect";
	ev.host = host;
	audit_write(a, &ev);
}

/* The line a TLS collector threw away as it closed comes again. */
static void
test_tls_close(void **state)
{
	struct fixture		*f = *state;
	struct ship_config	 cfg;
	struct sockaddr_in	 sin;
	struct event_base	*base;
	struct audit		*a;
	struct ship		*s;
	socklen_t		 slen = sizeof sin;
	SSL_CTX			*ctx;
	FILE			*fp;
	char			 cmd[1024], path[128], ca[128], out[128];
	char			 dest[64];
	char			 err[256];
	int			 lfd, st, i, got[16], n = 0, seq;
	pid_t			 pid;

	snprintf(cmd, sizeof cmd, "cd %s && openssl req -x509 -newkey ec "
	    "-pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=c "
	    "-addext subjectAltName=IP:127.0.0.1 -keyout k.pem -out c.pem "
	    ">/dev/null 2>&1", f->dir);
	if (system(cmd) != 0)
		skip();
	ctx = SSL_CTX_new(TLS_server_method());
	assert_non_null(ctx);
	snprintf(path, sizeof path, "%s/c.pem", f->dir);
	assert_int_equal(SSL_CTX_use_certificate_file(ctx, path,
	    SSL_FILETYPE_PEM), 1);
	snprintf(path, sizeof path, "%s/k.pem", f->dir);
	assert_int_equal(SSL_CTX_use_PrivateKey_file(ctx, path,
	    SSL_FILETYPE_PEM), 1);

	lfd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(lfd != -1);
	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(lfd, (struct sockaddr *)&sin, sizeof sin), 0);
	assert_int_equal(listen(lfd, 4), 0);
	assert_int_equal(getsockname(lfd, (struct sockaddr *)&sin, &slen), 0);
	snprintf(out, sizeof out, "%s/out", f->dir);
	pid = fork();
	assert_true(pid != -1);
	if (pid == 0)
		_exit(serve(ctx, lfd, out, LINES_FIRST + 3));
	close(lfd);

	base = event_base_new();
	assert_non_null(base);
	memset(&cfg, 0, sizeof cfg);
	cfg.spool_dir = f->dir;
	cfg.spool_max = 1 << 20;
	snprintf(ca, sizeof ca, "%s/c.pem", f->dir);
	cfg.ca = ca;
	snprintf(dest, sizeof dest, "syslog+tls://127.0.0.1:%d",
	    ntohs(sin.sin_port));
	s = ship_open(base, dest, &cfg, err, sizeof err);
	assert_non_null(s);
	snprintf(path, sizeof path, "%s/audit.log", f->dir);
	a = audit_open(path, err, sizeof err);
	assert_non_null(a);
	audit_set_hook(a, ship_cb, s);

	/* Three lines kept; the fourth read and thrown away; two more. */
	run_for(base, 200);
	for (i = 1; i <= LINES_FIRST; i++)
		write_line(a, i);
	run_for(base, 300);
	write_line(a, LINES_FIRST + 1);
	run_for(base, 400);
	for (i = LINES_FIRST + 2; i <= LINES_FIRST + 3; i++)
		write_line(a, i);
	for (i = 0; i < 50 && waitpid(pid, &st, WNOHANG) == 0; i++)
		run_for(base, 100);
	if (i == 50) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
	}
	audit_set_hook(a, NULL, NULL);
	audit_close(a);
	ship_close(s);
	event_base_free(base);
	SSL_CTX_free(ctx);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);	/* a line thrown away */

	/* Every line kept, in order; repeats allowed. */
	fp = fopen(out, "r");
	assert_non_null(fp);
	while (n < 16 && fscanf(fp, "%d", &seq) == 1) {
		if (n == 0 || seq > got[n - 1])
			got[n++] = seq;
		else
			assert_true(seq >= got[0]);
	}
	fclose(fp);
	assert_int_equal(n, LINES_FIRST + 3);
	for (i = 0; i < n; i++)
		assert_int_equal(got[i], i + 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_tls_close, setup,
		    teardown),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
