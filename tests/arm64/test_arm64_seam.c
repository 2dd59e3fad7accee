/*
 * Cross-built only (make test-arm64, under qemu-aarch64): the pieces of
 * the aarch64 mvm's side of the architecture seam that run without KVM.
 * Guest RAM sits at ARM64_RAM_BASE in one region, not around x86's hole;
 * with no seccomp programs for aarch64 the VMM refuses to run a thread
 * unfiltered unless MVM_SECCOMP=none says so, and then it says so.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>

#include "vmm/arch/arch.h"
#include "vmm/arch/arm64/layout.h"
#include "vmm/confine/seccomp_filter.h"
#include "vmm/confine/seccomp_prog.h"
#include "vmm/guest_mem.h"

Test(arm64_seam, ram_is_one_region_at_the_layout_base)
{
	struct guest_mem m;
	uint64_t size = 4ULL << 30;	/* past x86's hole: gm_init makes two regions */

	cr_assert_eq(gm_init(&m, size), 0);
	cr_assert_eq(m.nr_regions, 2, "x86's layout first");
	arch_mem_layout(&m);
	cr_assert_eq(m.nr_regions, 1);
	cr_assert_eq(m.regions[0].gpa, ARM64_RAM_BASE);
	cr_assert_eq(m.regions[0].size, size);
	/* The first and last byte of RAM are RAM; the device area below and
	 * the first byte past the end are not. */
	cr_assert_eq(gm_ptr(&m, ARM64_RAM_BASE, 1), m.map);
	cr_assert_eq(gm_ptr(&m, ARM64_RAM_BASE + size - 1, 1), m.map + size - 1);
	cr_assert_null(gm_ptr(&m, ARM64_RAM_BASE - 1, 1));
	cr_assert_null(gm_ptr(&m, ARM64_UART_BASE, 1));
	cr_assert_null(gm_ptr(&m, 0, 1));
	cr_assert_null(gm_ptr(&m, ARM64_RAM_BASE + size, 1));
	gm_free(&m);
}

Test(arm64_seam, no_seccomp_tables_means_refusal_without_the_knob)
{
	cr_assert_eq(sc_nr_progs, 0);
	unsetenv("MVM_SECCOMP");
	cr_assert_eq(confine_seccomp_thread(&sc_table_main), -ENOSYS);
	/* log mode is x86's SECCOMP_RET_LOG: it does not mean "unfiltered". */
	setenv("MVM_SECCOMP", "log", 1);
	cr_assert_eq(confine_seccomp_thread(&sc_table_main), -ENOSYS);
	setenv("MVM_SECCOMP", "none", 1);
	cr_assert_eq(confine_seccomp_thread(&sc_table_main), 0);
	unsetenv("MVM_SECCOMP");
}
