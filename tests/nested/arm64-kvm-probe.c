/*
 * Run inside the arm64 box (tests/nested/box-arm64.sh), static for aarch64:
 * mvm's arm64 KVM calls (vmm/arch/arm64/kvm/) against a real /dev/kvm.
 * Two vCPUs are initialised (PSCI 0.2, the second powered off), the vGIC
 * made (v3, else v2) and initialised, the boot vCPU given the boot
 * protocol's registers; it runs three instructions at the kernel entry
 * (store X0 to the UART's address) and must exit with an MMIO write of the
 * device tree's address there: PC, X0 and EL1 as the boot protocol says.
 * Then its registers are saved to a record, PC is clobbered, the record is
 * restored, and PC must be back. Prints "arm64-probe: ok" lines; exit 0
 * only when every step held.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "vmm/arch/arm64/kvm/arm64_kvm.h"
#include "vmm/arch/arm64/layout.h"
#include "vmm/arch/arm64/reg_record.h"
#include "vmm/arch/arm64/regs.h"

#define RAM_SIZE 0x200000UL
#define DTB_ADDR (ARM64_RAM_BASE + 0x100000ULL)

static char err[512];

static int die(const char *what)
{
	printf("arm64-probe: FAIL %s: %s\n", what, err[0] ? err : strerror(errno));
	return 1;
}

static int get_pc(int fd, uint64_t *pc)
{
	struct kvm_one_reg r = { arm64_core_reg_id(ARM64_CORE_PC, 8), (uint64_t)(uintptr_t)pc };

	return ioctl(fd, KVM_GET_ONE_REG, &r);
}

static int set_pc(int fd, uint64_t pc)
{
	struct kvm_one_reg r = { arm64_core_reg_id(ARM64_CORE_PC, 8), (uint64_t)(uintptr_t)&pc };

	return ioctl(fd, KVM_SET_ONE_REG, &r);
}

int main(void)
{
	/* movz x1, #0x900, lsl #16 (the UART); str x0, [x1]; b . */
	static const uint32_t code[] = { 0xd2a12001, 0xf9000020, 0x14000000 };
	struct arm64_vgic g;
	struct kvm_run *run;
	int sys, vm, cpu[2];
	uint64_t mpidr[2], pc = 0, x0;
	uint8_t *ram, *rec = NULL;
	size_t rec_len = 0;
	long run_size;

	sys = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (sys < 0)
		return die("open /dev/kvm");
	vm = ioctl(sys, KVM_CREATE_VM, 0);
	if (vm < 0)
		return die("KVM_CREATE_VM");
	ram = mmap(NULL, RAM_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ram == MAP_FAILED)
		return die("mmap");
	memcpy(ram, code, sizeof(code));
	struct kvm_userspace_memory_region mr = { .slot = 0, .guest_phys_addr = ARM64_RAM_BASE,
		.memory_size = RAM_SIZE, .userspace_addr = (uint64_t)(uintptr_t)ram };
	if (ioctl(vm, KVM_SET_USER_MEMORY_REGION, &mr) < 0)
		return die("KVM_SET_USER_MEMORY_REGION");
	for (int i = 0; i < 2; i++) {
		cpu[i] = ioctl(vm, KVM_CREATE_VCPU, i);
		if (cpu[i] < 0)
			return die("KVM_CREATE_VCPU");
		if (arm64_vcpu_init(vm, cpu[i], i, err, sizeof(err)))
			return die("arm64_vcpu_init");
		if (arm64_vcpu_mpidr(cpu[i], &mpidr[i], err, sizeof(err)))
			return die("arm64_vcpu_mpidr");
	}
	printf("arm64-probe: ok 2 vCPUs (PSCI 0.2), MPIDR 0x%llx 0x%llx\n",
	       (unsigned long long)mpidr[0], (unsigned long long)mpidr[1]);
	if (arm64_gic_create(vm, 2, &g, err, sizeof(err)) || arm64_gic_finish(&g, err, sizeof(err)))
		return die("vGIC");
	printf("arm64-probe: ok vGICv%d created and initialised\n", (int)g.version);
	if (arm64_vcpu_boot_regs(cpu[0], ARM64_RAM_BASE, DTB_ADDR, err, sizeof(err)))
		return die("arm64_vcpu_boot_regs");
	run_size = ioctl(sys, KVM_GET_VCPU_MMAP_SIZE, 0);
	run = mmap(NULL, (size_t)run_size, PROT_READ | PROT_WRITE, MAP_SHARED, cpu[0], 0);
	if (run_size < 0 || run == MAP_FAILED)
		return die("kvm_run mmap");
	if (ioctl(cpu[0], KVM_RUN, 0) < 0)
		return die("KVM_RUN");
	memcpy(&x0, run->mmio.data, sizeof(x0));
	if (run->exit_reason != KVM_EXIT_MMIO || !run->mmio.is_write ||
	    run->mmio.phys_addr != ARM64_UART_BASE || run->mmio.len != 8 || x0 != DTB_ADDR) {
		printf("arm64-probe: FAIL exit %u at 0x%llx len %u data 0x%llx\n", run->exit_reason,
		       (unsigned long long)run->mmio.phys_addr, run->mmio.len,
		       (unsigned long long)x0);
		return 1;
	}
	printf("arm64-probe: ok boot vCPU ran from PC 0x%llx: MMIO write of X0 = 0x%llx"
	       " (the device tree's address) to 0x%llx\n", (unsigned long long)ARM64_RAM_BASE,
	       (unsigned long long)x0, (unsigned long long)ARM64_UART_BASE);
	if (arm64_vcpu_regs_save(cpu[0], &rec, &rec_len, err, sizeof(err)))
		return die("arm64_vcpu_regs_save");
	if (get_pc(cpu[0], &pc) < 0 || set_pc(cpu[0], 0x12345678) < 0)
		return die("PC");
	if (arm64_vcpu_regs_restore(cpu[0], rec, rec_len, err, sizeof(err)))
		return die("arm64_vcpu_regs_restore");
	uint64_t back = 0;

	if (get_pc(cpu[0], &back) < 0 || back != pc) {
		printf("arm64-probe: FAIL PC after restore 0x%llx, saved 0x%llx\n",
		       (unsigned long long)back, (unsigned long long)pc);
		return 1;
	}
	/* The record's count is its bytes 8..11 (reg_record.h). */
	printf("arm64-probe: ok %u registers saved (%zu bytes), PC 0x%llx restored\n",
	       (unsigned)(rec[8] | rec[9] << 8 | rec[10] << 16 | (unsigned)rec[11] << 24), rec_len,
	       (unsigned long long)back);
	free(rec);
	printf("arm64-probe: ok all\n");
	return 0;
}
