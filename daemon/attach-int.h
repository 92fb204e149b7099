/*
 * What both sides of attaching share, daemon/ only: one message sent,
 * with descriptors alongside (proxy/wire/attachmsg.h).
 */
#ifndef ATTACH_INT_H
#define ATTACH_INT_H

#include <stddef.h>

struct attach_msg;

/* Send one message (and descriptors).  Returns 0 or -1. */
int	attach_send(int, const struct attach_msg *, const int *, size_t);

#endif
