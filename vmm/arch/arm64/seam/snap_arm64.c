/*
 * Snapshots on arm64 (issue 31): the KVM state sections snapshots/vm_snap.c
 * saves and loads (vmm/vcpu_state.h, vmm/vm_state.h), arm64's behind the
 * same functions as x86's, so checkpoint/rollback, snapshot/restore and
 * templates run unchanged above them.
 *
 *  vCPU section  its power state (KVM_GET/SET_MP_STATE: a PSCI-off vCPU
 *                stays off) and every register KVM lists for it
 *                (KVM_GET_REG_LIST/KVM_GET_ONE_REG: core, system, firmware
 *                and the architected timer's CTL, CVAL and counter):
 *                vcpu_section.h, reg_record.h
 *  VM section    the in-kernel GICv3 through its device attributes
 *                (distributor, redistributors, CPU interfaces, line
 *                levels): gic_state.h
 *
 * Restore order: vm_snap.c applies the VM section, then each vCPU. The vGIC
 * first is safe: it is addressed by MPIDR, which is KVM's per vCPU id both
 * before and after the registers are set, and KVM ties no register of a
 * vCPU to the vGIC's state. In a vCPU: every register, the counters last
 * (regs.h: writing one moves the VM's counter offset), then the power
 * state. Decoding is pure (the record parsed whole); applying matches the
 * record against what this host's KVM lists before anything is set.
 */
#include <errno.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "vmm/arch/arch.h"
#include "vmm/arch/arm64/gic_state.h"
#include "vmm/arch/arm64/regs.h"
#include "vmm/arch/arm64/seam/arm64_arch.h"
#include "vmm/arch/arm64/vcpu_section.h"
#include "vmm/kvm.h"
#include "vmm/vcpu.h"
#include "vmm/vcpu_state.h"
#include "vmm/vm_state.h"

_Static_assert(ARM64_MP_RUNNABLE == KVM_MP_STATE_RUNNABLE &&
	       ARM64_MP_STOPPED == KVM_MP_STATE_STOPPED &&
	       ARM64_MP_SUSPENDED == KVM_MP_STATE_SUSPENDED, "vcpu_section.h's power states");

struct vcpu_state {
	uint32_t mp;
	uint64_t mpidr;		/* MPIDR_EL1 in the record */
	uint8_t *rec;		/* the register record, a copy */
	size_t len;
};

struct vm_kvm_state {
	uint8_t *rec;		/* the vGIC record, a copy */
	size_t len;
};

static uint8_t *dup(const uint8_t *p, size_t len)
{
	uint8_t *c = malloc(len ? len : 1);

	if (c)
		memcpy(c, p, len);
	return c;
}

int vcpu_state_save(struct kvm *k, struct kvm_vcpu *v, struct snap_w *w)
{
	uint8_t hdr[ARM64_VCPU_SECTION_HDR], *rec = NULL;
	char err[256];
	uint32_t mp = 0;
	size_t len = 0;
	int ret = arm64_vcpu_mp_state(v->fd, &mp, err, sizeof(err));

	(void)k;
	if (!ret)
		ret = arm64_vcpu_regs_save(v->fd, &rec, &len, err, sizeof(err));
	if (ret)
		return ret;
	arm64_vcpu_section_header(hdr, mp);
	snap_w_bytes(w, hdr, sizeof(hdr));
	snap_w_bytes(w, rec, len);
	free(rec);
	return w->err;
}

int vcpu_state_decode(const uint8_t *p, size_t len, struct vcpu_state **out)
{
	struct vcpu_state *s;
	const uint8_t *rec;
	char err[256];
	size_t rec_len;
	uint64_t mpidr = 0;
	uint32_t mp;
	int ret = arm64_vcpu_section_check(p, len, &mp, &rec, &rec_len, &mpidr, err, sizeof(err));

	*out = NULL;
	if (ret)
		return ret == -ENOMEM ? ret : -EBADMSG;
	s = calloc(1, sizeof(*s));
	if (!s || !(s->rec = dup(rec, rec_len))) {
		free(s);
		return -ENOMEM;
	}
	s->mp = mp;
	s->mpidr = mpidr;
	s->len = rec_len;
	*out = s;
	return 0;
}

int vcpu_state_apply(struct kvm *k, struct kvm_vcpu *v, const struct vcpu_state *s,
		     bool set_cpuid, char *err, size_t errlen)
{
	struct arm64_arch *a = arm64_arch_of(arm64_vm_of_kvm(k));
	bool in_range = v->id >= 0 && v->id < ARM64_MAX_CPUS;
	uint64_t kvm_mpidr = in_range ? a->mpidr[v->id] : 0;
	char why[256] = "";
	int ret = 0;

	(void)set_cpuid;
	/* The vGIC addresses this vCPU by the MPIDR KVM gave it: a record
	 * that would change it is another machine. */
	if (!in_range || s->mpidr != kvm_mpidr) {
		snprintf(why, sizeof(why), "the snapshot's MPIDR_EL1 0x%llx is not this vCPU's"
			 " (0x%llx)", (unsigned long long)s->mpidr, (unsigned long long)kvm_mpidr);
		ret = -EINVAL;
	}
	if (!ret)
		ret = arm64_vcpu_regs_restore(v->fd, s->rec, s->len, why, sizeof(why));
	if (!ret)
		ret = arm64_vcpu_set_mp_state(v->fd, s->mp, why, sizeof(why));
	if (ret)
		snprintf(err, errlen, "vCPU %d: %s", v->id, why);
	return ret;
}

void vcpu_state_free(struct vcpu_state *s)
{
	if (!s)
		return;
	free(s->rec);
	free(s);
}

int vm_state_save(struct kvm *k, struct snap_w *w)
{
	struct vm *vm = arm64_vm_of_kvm(k);
	struct arm64_arch *a = arm64_arch_of(vm);
	uint8_t *rec = NULL;
	char err[256];
	size_t len = 0;
	int ret = arm64_gic_state_save(&a->gic, vm->ncpus, a->mpidr, &rec, &len, err, sizeof(err));

	if (ret)
		return ret;
	snap_w_bytes(w, rec, len);
	free(rec);
	return w->err;
}

int vm_state_decode(const uint8_t *p, size_t len, struct vm_kvm_state **out)
{
	struct vm_kvm_state *s;
	char err[256];

	*out = NULL;
	if (arm64_gic_record_check(p, len, err, sizeof(err)))
		return -EBADMSG;
	s = calloc(1, sizeof(*s));
	if (!s || !(s->rec = dup(p, len))) {
		free(s);
		return -ENOMEM;
	}
	s->len = len;
	*out = s;
	return 0;
}

int vm_state_apply(struct kvm *k, const struct vm_kvm_state *s, char *err, size_t errlen)
{
	struct vm *vm = arm64_vm_of_kvm(k);
	struct arm64_arch *a = arm64_arch_of(vm);

	return arm64_gic_state_restore(&a->gic, vm->ncpus, a->mpidr, s->rec, s->len, err, errlen);
}

void vm_state_free(struct vm_kvm_state *s)
{
	if (!s)
		return;
	free(s->rec);
	free(s);
}

/*
 * Which hosts a snapshot may be restored on: vendor "arm64", and a hash of
 * vCPU 0's identification registers as KVM shows them to the guest (the
 * CPU model and its features). KVM refuses a different MIDR_EL1 on restore
 * anyway; checked here it is a clear error before anything is loaded. A
 * register KVM does not show hashes as absent.
 */
void arch_cpu_identity(const struct kvm *k, char vendor[16], uint64_t *fingerprint)
{
	static const uint8_t id_regs[][5] = {
		{ 3, 0, 0, 0, 0 },	/* MIDR_EL1 */
		{ 3, 0, 0, 4, 0 },	/* ID_AA64PFR0_EL1 */
		{ 3, 0, 0, 4, 1 },	/* ID_AA64PFR1_EL1 */
		{ 3, 0, 0, 5, 0 },	/* ID_AA64DFR0_EL1 */
		{ 3, 0, 0, 6, 0 },	/* ID_AA64ISAR0_EL1 */
		{ 3, 0, 0, 6, 1 },	/* ID_AA64ISAR1_EL1 */
		{ 3, 0, 0, 7, 0 },	/* ID_AA64MMFR0_EL1 */
		{ 3, 0, 0, 7, 1 },	/* ID_AA64MMFR1_EL1 */
		{ 3, 0, 0, 7, 2 },	/* ID_AA64MMFR2_EL1 */
	};
	struct vm *vm = arm64_vm_of_kvm((struct kvm *)k);
	uint64_t h = 0xcbf29ce484222325ULL;

	memset(vendor, 0, 16);
	strcpy(vendor, "arm64");
	*fingerprint = 0;
	if (!vm->vcpus || vm->ncpus < 1 || vm->vcpus[0].kv.fd < 0)
		return;
	for (size_t i = 0; i < sizeof(id_regs) / sizeof(id_regs[0]); i++) {
		const uint8_t *r = id_regs[i];
		uint64_t val = 0;
		struct kvm_one_reg one = {
			.id = arm64_sys_reg_id(r[0], r[1], r[2], r[3], r[4]),
			.addr = (uint64_t)(uintptr_t)&val,
		};

		if (ioctl(vm->vcpus[0].kv.fd, KVM_GET_ONE_REG, &one) < 0)
			val = ~0ULL;
		for (int b = 0; b < 8; b++) {
			h ^= (uint8_t)(val >> (8 * b));
			h *= 0x100000001b3ULL;
		}
	}
	*fingerprint = h;
}
