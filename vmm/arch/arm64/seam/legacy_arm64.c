/*
 * The arm64 guest's fixed facts for the neutral code (vmm/arch/arch.h):
 * its base command line, its kernel's file name, where the console is.
 * Data only, in a file of its own so the arm64 unit tests check it against
 * the machine the device tree describes (tests/arm64/test_arm64_seam.c).
 */
#include "vmm/arch/arch.h"
#include "vmm/arch/arm64/layout.h"

/*
 * As x86's (vmm/arch/x86/vm_x86.c) less what is x86's: console on the
 * ns16550a (ttyS0, the device tree's stdout-path), panic=-1 so a panic
 * resets (a system-event exit), no `nomodule`: Debian's arm64 kernel has
 * virtio-mmio, vsock and virtio-net as modules, which mvm-init loads.
 */
const char arch_base_cmdline[] =
	"console=ttyS0 quiet panic=-1 swiotlb=noforce cryptomgr.notests";

const char arch_kernel_name[] = "Image";

/* KVM_IRQ_LINE on arm64 takes type << 24 | INTID (regs.h: arm64_irq_line_spi). */
const struct arch_legacy arch_legacy = {
	.uart_on_mmio = true, .uart_base = ARM64_UART_BASE,
	.uart_irq = 1U << 24 | ARM64_SPI_INTID(ARM64_SPI_UART),
	.i8042 = false, .guest_port = false,
};
