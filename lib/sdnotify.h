/*
 * Telling the service manager how the service is doing (sd_notify(3)),
 * without libsystemd.
 */
#ifndef SDNOTIFY_H
#define SDNOTIFY_H

/*
 * Send NEWLINE-separated assignments, such as "READY=1\nSTATUS=serving",
 * to $NOTIFY_SOCKET: 1 sent, 0 no service manager asked for them (the
 * variable is unset), -1 failed (errno; EINVAL: the variable names no
 * unix socket).
 */
int	sdnotify(const char *, ...) __attribute__((format(printf, 1, 2)));

#endif
