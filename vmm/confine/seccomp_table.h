/*
 * The per-thread seccomp filters as data: one table per kind of thread
 * (confine/seccomp_vcpu.c, confine/seccomp_main.c, confine/seccomp_blk.c,
 * the network helper's confine/seccomp_nethelper.c, the relay's
 * confine/seccomp_relay.c, the PID namespace's keeper's
 * confine/seccomp_keeper.c), compiled to BPF at build time
 * (confine/gen/seccomp_gen.c) and installed by confine/seccomp_filter.c. A table names the system calls its thread may
 * make once set-up is done; a few carry an argument rule.
 */
#ifndef MVM_CONFINE_SECCOMP_TABLE_H
#define MVM_CONFINE_SECCOMP_TABLE_H

#include <stddef.h>

enum sc_arg {
	SC_ANY,		/* any arguments */
	SC_IOCTL,	/* request (arg 1, low 32 bits) in the table's ioctls */
	SC_SOCKET,	/* family (arg 0) in the table's families */
	SC_NO_EXEC,	/* mmap/mprotect: no PROT_EXEC in arg 2 (no new code) */
	SC_SELF,	/* tgkill: only threads of this process (arg 0 = own pid) */
	SC_ENOSYS,	/* fails with ENOSYS (clone3: glibc then uses clone) */
	SC_NO_WRITE_MODE, /* fchmod: no write bit (0222) in arg 1 (no frozen layer made writable) */
};

struct sc_rule {
	const char *name;	/* the system call, as libseccomp names it */
	enum sc_arg arg;
};

/* An architecture's own ioctls for a table (vmm/arch/x86/seccomp_ioctls.c,
 * vmm/arch/arm64/seam/seccomp_ioctls.c): KVM's x86 and arm64 state ioctls
 * differ, the rest of the table does not. */
struct sc_ioctls {
	const unsigned long *v;
	size_t n;
};

struct sc_table {
	const char *thread;	/* for messages: "vcpu", "main" */
	const struct sc_rule *rules;
	size_t nr_rules;
	const unsigned long *ioctls;
	size_t nr_ioctls;
	const struct sc_ioctls *arch_ioctls;	/* more of them; NULL: none */
	const int *families;
	size_t nr_families;
};

extern const struct sc_table sc_table_vcpu;	/* vCPU threads: KVM_RUN and exits */
extern const struct sc_table sc_table_main;	/* the event loop: devices, API, slirp */
extern const struct sc_table sc_table_blk;	/* virtio-blk I/O threads: disk I/O only */
extern const struct sc_table sc_table_nethelper; /* mvm-net: libslirp, glib, upstream DNS */
extern const struct sc_table sc_table_relay;	/* `mvm relay`: loopback to the guest's vsock */
extern const struct sc_table sc_table_keeper;
/* The main thread's architecture ioctls (one definition per build). */
extern const struct sc_ioctls sc_main_arch_ioctls;	/* confine/pidns.c's keeper: waits, mirrors */

#endif
