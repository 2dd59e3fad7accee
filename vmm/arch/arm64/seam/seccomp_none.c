/*
 * The aarch64 build's seccomp programs: none yet. x86's are compiled at
 * build time from the tables by libseccomp for x86_64
 * ($(BUILD)/gen/seccomp_progs.c); the tables name x86 ioctls (the main
 * thread's vmm/confine/seccomp_main.c: MSRs, PIT, LAPIC, XSAVE) and no
 * aarch64 program has been generated from them. With no program,
 * confine_seccomp_thread() refuses (vmm/confine/seccomp_filter.c: only
 * MVM_SECCOMP=none, a test box's knob, lets a thread run unfiltered), so
 * no shipped path runs unconfined by accident.
 */
#include "vmm/confine/seccomp_prog.h"

const struct sc_prog sc_progs[1];
const size_t sc_nr_progs = 0;
const char *const sc_syscall_names[SC_NR_NAMES];

/* seccomp_main.c is x86's (its ioctl list); the event loop's table here
 * names only the thread, for the refusal's message. */
const struct sc_table sc_table_main = { .thread = "main" };
