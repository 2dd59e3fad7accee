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
 * registers, then set them in the record's order, the counters
 * (arm64_reg_restore_last) after every other. */
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

/* The vCPU's power state (KVM_GET/SET_MP_STATE: RUNNABLE, STOPPED for a
 * PSCI-off vCPU, SUSPENDED). */
int arm64_vcpu_mp_state(int vcpu_fd, uint32_t *state, char *err, size_t errlen);
int arm64_vcpu_set_mp_state(int vcpu_fd, uint32_t state, char *err, size_t errlen);

/*
 * The vGICv3's state (gic_state.h) of a VM whose @ncpus vCPUs have the
 * MPIDRs @mpidr, with every vCPU out of KVM_RUN. Save: a new record in
 * *@rec (malloc'd). Restore: the hostile @rec matched whole against this
 * host's plan, then written in the plan's order. A GICv2 is refused
 * (-ENOTSUP). 0 or -errno with the reason in @err. (kvm/vgic_state.c.)
 */
int arm64_gic_state_save(const struct arm64_vgic *g, int ncpus, const uint64_t *mpidr,
			 uint8_t **rec, size_t *len, char *err, size_t errlen);
int arm64_gic_state_restore(const struct arm64_vgic *g, int ncpus, const uint64_t *mpidr,
			    const uint8_t *rec, size_t len, char *err, size_t errlen);

#endif
