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
 *  - ioctl(TIOCSTI) and ioctl(TIOCLINUX): the command shares pinhole's
 *    terminal, and pushing keystrokes into it would have the person's
 *    shell run them outside the sandbox once pinhole exits.  Refused with
 *    EPERM (the request's low 32 bits: the kernel reads no more).
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
#include <sys/ioctl.h>

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
		/*  1 */ SC_JEQ(SC_ARCH, 0, 17),		/* OTHER */
		/*  2 */ SC_LD(nr),
		/*  3 */ SC_JEQ(__NR_socket, 6, 0),		/* SOCKET */
		/*  4 */ SC_JEQ(__NR_socket | SC_X32_BIT, 5, 0),	/* SOCKET */
		/*  5 */ SC_JEQ(__NR_io_uring_setup | SC_X32_BIT, 11, 0),
		/*  6 */ SC_JEQ(__NR_io_uring_setup, 10, 0),	/* EPERM */
		/*  7 */ SC_JEQ(__NR_ioctl, 5, 0),		/* IOCTL */
		/*  8 */ SC_JEQ(__NR_ioctl | SC_X32_BIT, 4, 0),	/* IOCTL */
		/*  9 */ SC_RET(SECCOMP_RET_ALLOW),
		/* 10 SOCKET: the low word of the domain (little-endian) */
			 SC_LD(args[0]),
		/* 11 */ SC_JEQ(AF_VSOCK, 6, 0),		/* VSOCK */
		/* 12 */ SC_RET(SECCOMP_RET_ALLOW),
		/* 13 IOCTL: the request's low word, all the kernel reads */
			 SC_LD(args[1]),
		/* 14 */ SC_JEQ(TIOCSTI, 2, 0),			/* EPERM */
		/* 15 */ SC_JEQ(TIOCLINUX, 1, 0),		/* EPERM */
		/* 16 */ SC_RET(SECCOMP_RET_ALLOW),
		/* 17 EPERM */ SC_ERRNO(EPERM),
		/* 18 VSOCK */ SC_RET(vsock),
		/* 19 OTHER */
#ifdef __x86_64__
		/* 32-bit x86 programs */
		/* 19 */ SC_JEQ(AUDIT_ARCH_I386, 0, 18),	/* KILL */
		/* 20 */ SC_LD(nr),
		/* 21 */ SC_JEQ(359, 4, 0),			/* socket */
		/* 22 */ SC_JEQ(102, 6, 0),			/* socketcall */
		/* 23 */ SC_JEQ(__NR_io_uring_setup, 12, 0),	/* EPERM32 */
		/* 24 */ SC_JEQ(54, 7, 0),			/* ioctl */
		/* 25 */ SC_RET(SECCOMP_RET_ALLOW),
		/* 26 */ SC_LD(args[0]),
		/* 27 */ SC_JEQ(AF_VSOCK, 9, 0),		/* VSOCK32 */
		/* 28 */ SC_RET(SECCOMP_RET_ALLOW),
		/* 29 */ SC_LD(args[0]),
		/* 30 */ SC_JEQ(SYS_SOCKET, 6, 0),		/* VSOCK32 */
		/* 31 */ SC_RET(SECCOMP_RET_ALLOW),
		/* 32 */ SC_LD(args[1]),
		/* 33 */ SC_JEQ(TIOCSTI, 2, 0),			/* EPERM32 */
		/* 34 */ SC_JEQ(TIOCLINUX, 1, 0),		/* EPERM32 */
		/* 35 */ SC_RET(SECCOMP_RET_ALLOW),
		/* 36 EPERM32 */ SC_ERRNO(EPERM),
		/* 37 VSOCK32 */ SC_RET(vsock),
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
