/*
 * Small helpers shared by the benchmark's load generator and origin.
 * Plain POSIX and Linux epoll; nothing from libpinhole.
 */
#ifndef BENCH_H
#define BENCH_H

#include <sys/socket.h>
#include <netinet/in.h>

#include <stdint.h>

double	bench_now(void);
void	bench_nofile(void);
int	bench_nonblock(int);
int	bench_addr(const char *, struct sockaddr_in *);
int	bench_port(const char *);
void	bench_usage(const char *);
int	bench_epoll_set(int, int, int, uint32_t, void *);

#endif
