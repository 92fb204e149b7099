/*
 * Diagnostics to stderr, with syslog priorities when stderr is the
 * journal (a systemd service): not the audit log.
 */
#ifndef LOG_H
#define LOG_H

#include <stdarg.h>

void	log_init(const char *, int);
void	log_setverbose(int);
void	log_warn(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_warnx(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_info(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_debug(const char *, ...) __attribute__((format(printf, 1, 2)));
/*
 * Say why pinhole cannot start, for a reason `pinhole doctor` checks
 * (user namespaces, the sandbox's link, the resolver, the policy, the
 * log, the control directory): the message, then where to look.
 */
#define LOG_DOCTOR_HINT	"run `pinhole doctor`"
void	log_refuse(const char *, ...) __attribute__((format(printf, 1, 2)));
void	fatal(const char *, ...)
	    __attribute__((format(printf, 1, 2), noreturn));
void	fatalx(const char *, ...)
	    __attribute__((format(printf, 1, 2), noreturn));

#endif
