/* arm64 vCPU set-up and register save/restore through KVM (aarch64 only). */
#include <errno.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "vmm/arch/arm64/kvm/arm64_kvm.h"
#include "vmm/arch/arm64/reg_record.h"
#include "vmm/arch/arm64/regs.h"

static int fail(const char *what, char *err, size_t errlen)
{
	int e = errno;

	snprintf(err, errlen, "arm64: %s: %s", what, strerror(e));
	return -e;
}

int arm64_vcpu_init(int vm_fd, int vcpu_fd, int id, char *err, size_t errlen)
{
	struct kvm_vcpu_init init;

	/* KVM picks the target matching the host CPU ("generic v8" today). */
	memset(&init, 0, sizeof(init));
	if (ioctl(vm_fd, KVM_ARM_PREFERRED_TARGET, &init) < 0)
		return fail("KVM_ARM_PREFERRED_TARGET", err, errlen);
	memset(init.features, 0, sizeof(init.features));
	init.features[0] = arm64_vcpu_features(id);
	if (ioctl(vcpu_fd, KVM_ARM_VCPU_INIT, &init) < 0)
		return fail("KVM_ARM_VCPU_INIT (PSCI 0.2)", err, errlen);
	return 0;
}

static int set_reg(int vcpu_fd, uint64_t id, const void *val)
{
	struct kvm_one_reg r = { .id = id, .addr = (uint64_t)(uintptr_t)val };

	return ioctl(vcpu_fd, KVM_SET_ONE_REG, &r) < 0 ? -errno : 0;
}

static int get_reg(int vcpu_fd, uint64_t id, void *val)
{
	struct kvm_one_reg r = { .id = id, .addr = (uint64_t)(uintptr_t)val };

	return ioctl(vcpu_fd, KVM_GET_ONE_REG, &r) < 0 ? -errno : 0;
}

int arm64_vcpu_boot_regs(int vcpu_fd, uint64_t entry, uint64_t dtb, char *err, size_t errlen)
{
	struct arm64_reg_val regs[ARM64_BOOT_REGS];

	arm64_boot_regs(entry, dtb, regs);
	for (int i = 0; i < ARM64_BOOT_REGS; i++) {
		int ret = set_reg(vcpu_fd, regs[i].id, &regs[i].val);

		if (ret) {
			snprintf(err, errlen, "arm64: KVM_SET_ONE_REG 0x%llx: %s",
				 (unsigned long long)regs[i].id, strerror(-ret));
			return ret;
		}
	}
	return 0;
}

int arm64_vcpu_mpidr(int vcpu_fd, uint64_t *mpidr, char *err, size_t errlen)
{
	int ret = get_reg(vcpu_fd, arm64_mpidr_reg_id(), mpidr);

	if (ret)
		snprintf(err, errlen, "arm64: reading MPIDR_EL1: %s", strerror(-ret));
	return ret;
}

/* KVM_GET_REG_LIST: asked once for the count (E2BIG), then for the ids,
 * which come back as a malloc'd array of *@n uint64_t (__u64 is another
 * C type on aarch64). */
static int reg_list(int vcpu_fd, uint64_t **ids, size_t *n, char *err, size_t errlen)
{
	struct kvm_reg_list probe = { .n = 0 }, *l;
	uint64_t *out;
	int ret = 0;

	if (ioctl(vcpu_fd, KVM_GET_REG_LIST, &probe) == 0 || errno != E2BIG)
		return fail("KVM_GET_REG_LIST (count)", err, errlen);
	if (probe.n > ARM64_REG_RECORD_MAX) {
		snprintf(err, errlen, "arm64: KVM lists %llu registers, mvm keeps at most %d",
			 (unsigned long long)probe.n, ARM64_REG_RECORD_MAX);
		return -E2BIG;
	}
	l = calloc(1, sizeof(*l) + probe.n * sizeof(l->reg[0]));
	out = calloc(probe.n ? probe.n : 1, sizeof(*out));
	if (!l || !out) {
		ret = -ENOMEM;
		goto out;
	}
	l->n = probe.n;
	if (ioctl(vcpu_fd, KVM_GET_REG_LIST, l) < 0) {
		ret = fail("KVM_GET_REG_LIST", err, errlen);
		goto out;
	}
	for (uint64_t i = 0; i < l->n; i++)
		out[i] = l->reg[i];
	*ids = out;
	*n = l->n;
	out = NULL;
out:
	free(out);
	free(l);
	return ret;
}

int arm64_vcpu_regs_save(int vcpu_fd, uint8_t **rec, size_t *len, char *err, size_t errlen)
{
	struct arm64_reg_writer w;
	uint64_t *ids = NULL;
	uint8_t *buf = NULL;
	size_t cap, nids = 0;
	long n;
	int ret = reg_list(vcpu_fd, &ids, &nids, err, errlen);

	if (ret)
		return ret;
	cap = arm64_reg_record_size(ids, nids);
	ret = -EINVAL;
	if (!cap) {
		snprintf(err, errlen, "arm64: KVM lists a register mvm cannot record");
		goto out;
	}
	ret = -ENOMEM;
	buf = malloc(cap);
	if (!buf)
		goto out;
	arm64_reg_writer_init(&w, buf, cap);
	for (size_t i = 0; i < nids; i++) {
		uint8_t *val = arm64_reg_writer_add(&w, ids[i]);

		ret = val ? get_reg(vcpu_fd, ids[i], val) : w.err;
		if (ret) {
			snprintf(err, errlen, "arm64: KVM_GET_ONE_REG 0x%llx: %s",
				 (unsigned long long)ids[i], strerror(-ret));
			goto out;
		}
	}
	n = arm64_reg_writer_finish(&w);
	ret = n < 0 ? (int)n : 0;
	if (!ret) {
		*rec = buf;
		*len = (size_t)n;
		buf = NULL;
	}
out:
	free(buf);
	free(ids);
	return ret;
}

int arm64_vcpu_regs_restore(int vcpu_fd, const uint8_t *rec, size_t len,
			    char *err, size_t errlen)
{
	struct arm64_reg_entry *e = calloc(ARM64_REG_RECORD_MAX, sizeof(*e));
	uint64_t *ids = NULL;
	size_t nids = 0;
	int n, ret;

	if (!e)
		return -ENOMEM;
	ret = n = arm64_reg_record_parse(rec, len, e, ARM64_REG_RECORD_MAX, err, errlen);
	if (n < 0)
		goto out;
	ret = reg_list(vcpu_fd, &ids, &nids, err, errlen);
	if (!ret)
		ret = arm64_reg_record_match(e, n, ids, nids, err, errlen);
	/* KVM copies each value from user memory (copy_from_user): the
	 * record's slots serve as they are, whatever their alignment. Two
	 * passes: the counters last (regs.h, arm64_reg_restore_last). */
	for (int pass = 0; !ret && pass < 2; pass++)
		for (int i = 0; !ret && i < n; i++) {
			if (arm64_reg_restore_last(e[i].id) != (pass == 1))
				continue;
			ret = set_reg(vcpu_fd, e[i].id, e[i].val);
			if (ret)
				snprintf(err, errlen, "arm64: KVM_SET_ONE_REG 0x%llx: %s",
					 (unsigned long long)e[i].id, strerror(-ret));
		}
out:
	free(ids);
	free(e);
	return ret < 0 ? ret : 0;
}

int arm64_vcpu_mp_state(int vcpu_fd, uint32_t *state, char *err, size_t errlen)
{
	struct kvm_mp_state mp = { 0 };

	if (ioctl(vcpu_fd, KVM_GET_MP_STATE, &mp) < 0)
		return fail("KVM_GET_MP_STATE", err, errlen);
	*state = mp.mp_state;
	return 0;
}

int arm64_vcpu_set_mp_state(int vcpu_fd, uint32_t state, char *err, size_t errlen)
{
	struct kvm_mp_state mp = { .mp_state = state };

	if (ioctl(vcpu_fd, KVM_SET_MP_STATE, &mp) < 0)
		return fail("KVM_SET_MP_STATE", err, errlen);
	return 0;
}
