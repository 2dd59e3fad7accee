/*
 * A build without seccomp programs, for tests/arm64/test_arm64_seam.c:
 * confine_seccomp_thread() must refuse then (vmm/confine/seccomp_filter.c:
 * only MVM_SECCOMP=none lets a thread run unfiltered, and says so), so a
 * build whose programs went missing never runs unconfined by accident.
 * The aarch64 mvm has its programs ($(BUILD)/arm64/gen/seccomp_progs.c).
 */
#include "vmm/confine/seccomp_prog.h"

const struct sc_prog sc_progs[1];
const size_t sc_nr_progs = 0;
const char *const sc_syscall_names[SC_NR_NAMES];

/* The event loop's table: only its name, for the refusal's message. */
const struct sc_table sc_table_main = { .thread = "main" };
