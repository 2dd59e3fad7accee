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
#include <string.h>

#include "vmm/arch/arch.h"
#include "vmm/arch/arm64/layout.h"
#include "vmm/arch/arm64/machine.h"
#include "vmm/arch/arm64/regs.h"
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

/* The console the neutral device assembly makes (arch_legacy) is the UART
 * the device tree describes: same base, same SPI as KVM_IRQ_LINE takes it;
 * no port I/O devices on arm64. */
Test(arm64_seam, the_console_is_the_device_trees_uart)
{
	struct arm64_machine m;

	arm64_machine_init(&m, 256ULL << 20, 2, ARM64_GIC_V3);
	cr_assert(arch_legacy.uart_on_mmio);
	cr_assert_eq(arch_legacy.uart_base, m.uart.base);
	cr_assert_eq(arch_legacy.uart_irq, arm64_irq_line_spi(m.uart.spi));
	cr_assert(!arch_legacy.i8042 && !arch_legacy.guest_port);
	cr_assert_str_eq(arch_kernel_name, "Image");
	/* The console is ttyS0; modules may load (Debian's kernel needs them). */
	cr_assert_not_null(strstr(arch_base_cmdline, "console=ttyS0"));
	cr_assert_null(strstr(arch_base_cmdline, "nomodule"));
}
