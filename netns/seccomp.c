/*
 * The sandbox's seccomp filter: the few system calls that reach around
 * a network namespace.
 *
 *  - socket(AF_VSOCK, ...): vsock is not confined by network namespaces;
 *    in a virtual machine it reaches the hypervisor's host, around the
 *    gateway.  Refused with EAFNOSUPPORT (what a kernel without vsock
 *    says) unless the policy allows it (allow-vsock).
 *  - io_uring_setup: io_uring creates sockets (IORING_OP_SOCKET) where
 *    seccomp cannot see their arguments.  Refused with EPERM, as
 *    container runtimes do; programs fall back to ordinary calls.
 *
 * Everything else is allowed.  On x86-64 the x32 numbers of the same
 * calls are checked too, and 32-bit x86 programs get the same rules for
 * socket(2); their socketcall(2), whose arguments sit in memory, is
 * refused for SYS_SOCKET when vsock is refused.
 */
#include "config.h"

#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/net.h>
#include <linux/seccomp.h>

#include <errno.h>
#include <stddef.h>

#include "netns/netns-int.h"

#if defined(__x86_64__)
#define SC_ARCH		AUDIT_ARCH_X86_64
#define SC_X32_BIT	0x40000000U	/* x32 numbers: native | this */
#elif defined(__aarch64__)
#define SC_ARCH		AUDIT_ARCH_AARCH64
#define SC_X32_BIT	0		/* none: the same checks twice */
#endif

#ifndef __NR_io_uring_setup
#define __NR_io_uring_setup	425	/* the same on every architecture */
#endif

#define SC_LD(field)	BPF_STMT(BPF_LD | BPF_W | BPF_ABS,		\
	offsetof(struct seccomp_data, field))
#define SC_RET(v)	BPF_STMT(BPF_RET | BPF_K, (v))
#define SC_ERRNO(e)	SC_RET(SECCOMP_RET_ERRNO | ((e) & SECCOMP_RET_DATA))
/* if (A == k) skip t instructions, else skip f. */
#define SC_JEQ(k, t, f)	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (k), (t), (f))

#ifdef SC_ARCH
/* Install the filter (vsock refused unless allowed). */
int
netns_seccomp(int allow_vsock)
{
	unsigned int		 vsock = allow_vsock ? SECCOMP_RET_ALLOW :
	    SECCOMP_RET_ERRNO | EAFNOSUPPORT;
	/* Jumps only go forward, counting the instructions skipped. */
	struct sock_filter	 f[] = {
		/*  0 */ SC_LD(arch),
		/*  1 */ SC_JEQ(SC_ARCH, 0, 11),		/* OTHER */
		/*  2 */ SC_LD(nr),
		/*  3 */ SC_JEQ(__NR_socket, 4, 0),		/* SOCKET */
		/*  4 */ SC_JEQ(__NR_socket | SC_X32_BIT, 3, 0),	/* SOCKET */
		/*  5 */ SC_JEQ(__NR_io_uring_setup | SC_X32_BIT, 5, 0),
		/*  6 */ SC_JEQ(__NR_io_uring_setup, 4, 0),	/* URING */
		/*  7 */ SC_RET(SECCOMP_RET_ALLOW),
		/*  8 SOCKET: the low word of the domain (little-endian) */
			 SC_LD(args[0]),
		/*  9 */ SC_JEQ(AF_VSOCK, 2, 0),		/* VSOCK */
		/* 10 */ SC_RET(SECCOMP_RET_ALLOW),
		/* 11 URING */ SC_ERRNO(EPERM),
		/* 12 VSOCK */ SC_RET(vsock),
		/* 13 OTHER */
#ifdef __x86_64__
		/* 32-bit x86 programs */
		/* 13 */ SC_JEQ(AUDIT_ARCH_I386, 0, 13),	/* KILL */
		/* 14 */ SC_LD(nr),
		/* 15 */ SC_JEQ(359, 3, 0),			/* socket */
		/* 16 */ SC_JEQ(102, 5, 0),			/* socketcall */
		/* 17 */ SC_JEQ(__NR_io_uring_setup, 7, 0),
		/* 18 */ SC_RET(SECCOMP_RET_ALLOW),
		/* 19 */ SC_LD(args[0]),
		/* 20 */ SC_JEQ(AF_VSOCK, 5, 0),		/* VSOCK32 */
		/* 21 */ SC_RET(SECCOMP_RET_ALLOW),
		/* 22 */ SC_LD(args[0]),
		/* 23 */ SC_JEQ(SYS_SOCKET, 2, 0),		/* VSOCK32 */
		/* 24 */ SC_RET(SECCOMP_RET_ALLOW),
		/* 25 */ SC_ERRNO(EPERM),
		/* 26 VSOCK32 */ SC_RET(vsock),
#endif
		/* KILL: an architecture this filter does not know */
			 SC_RET(SECCOMP_RET_KILL_PROCESS),
	};
	struct sock_fprog	 prog = {
		.len = sizeof f / sizeof f[0],
		.filter = f,
	};

	return (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0));
}
#else
/* An architecture this filter does not know: refuse to go on. */
int
netns_seccomp(int allow_vsock)
{
	errno = ENOSYS;
	return (-1);
}
#endif
