/*
 * The arm64 KVM calls of a vCPU and of the in-kernel vGIC: thin loops over
 * the pure plans of vmm/arch/arm64/ (regs.h, gic.h, reg_record.h). Built
 * for aarch64 only (make arm64-check, make test-arm64); nothing on x86
 * includes this. Every call returns 0 or -errno with the failing step in
 * @err.
 *
 * Call order (KVM's api.rst): KVM_CREATE_VCPU for every vCPU, then
 * arm64_vcpu_init() on each (boot vCPU 0 runnable, others powered off
 * until PSCI CPU_ON), then arm64_gic_create() and arm64_gic_finish() (the
 * vGIC's init needs every vCPU to exist), then arm64_vcpu_boot_regs() on
 * vCPU 0 once the device tree's address is known.
 */
#ifndef MVM_ARM64_KVM_H
#define MVM_ARM64_KVM_H

#include <stddef.h>
#include <stdint.h>

#include "vmm/arch/arm64/machine.h"

/* KVM_ARM_PREFERRED_TARGET on @vm_fd, then KVM_ARM_VCPU_INIT on @vcpu_fd
 * with PSCI 0.2 (and POWER_OFF for @id > 0). */
int arm64_vcpu_init(int vm_fd, int vcpu_fd, int id, char *err, size_t errlen);
/* The boot protocol's registers (arm64_boot_regs) through KVM_SET_ONE_REG. */
int arm64_vcpu_boot_regs(int vcpu_fd, uint64_t entry, uint64_t dtb, char *err, size_t errlen);
/* MPIDR_EL1 as KVM assigned it (for the device tree's cpu nodes). */
int arm64_vcpu_mpidr(int vcpu_fd, uint64_t *mpidr, char *err, size_t errlen);

/* Every listed register of @vcpu_fd into a new record (reg_record.h);
 * *@rec is malloc'd, the caller frees it. */
int arm64_vcpu_regs_save(int vcpu_fd, uint8_t **rec, size_t *len, char *err, size_t errlen);
/* Parse the hostile @rec whole, check it names exactly this vCPU's
 * registers, then set them in the record's order. */
int arm64_vcpu_regs_restore(int vcpu_fd, const uint8_t *rec, size_t len,
			    char *err, size_t errlen);

struct arm64_vgic {
	int fd;				/* the KVM device */
	enum arm64_gic_version version;
};

/* KVM_CREATE_DEVICE: a GICv3, or a GICv2 where KVM cannot make a v3 (and
 * @ncpus <= 8); its addresses and interrupt count (arm64_gic_attrs). */
int arm64_gic_create(int vm_fd, int ncpus, struct arm64_vgic *g, char *err, size_t errlen);
/* KVM_DEV_ARM_VGIC_CTRL_INIT, after every vCPU is created and initialised. */
int arm64_gic_finish(struct arm64_vgic *g, char *err, size_t errlen);
void arm64_gic_close(struct arm64_vgic *g);

#endif
