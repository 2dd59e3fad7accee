/*
 * The vGICv3's state through its device attributes (aarch64 only): the
 * plan of gic_state.h read into a record, and a hostile record matched
 * against this host's plan whole before one attribute is written. Every
 * vCPU must be out of KVM_RUN (KVM answers EBUSY otherwise): snapshots
 * call these with the VM paused.
 */
#include <errno.h>
#include <linux/kvm.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "vmm/arch/arm64/gic_state.h"
#include "vmm/arch/arm64/kvm/arm64_kvm.h"

_Static_assert(ARM64_VGIC_GRP_DIST_REGS == KVM_DEV_ARM_VGIC_GRP_DIST_REGS &&
	       ARM64_VGIC_GRP_REDIST_REGS == KVM_DEV_ARM_VGIC_GRP_REDIST_REGS &&
	       ARM64_VGIC_GRP_CPU_SYSREGS == KVM_DEV_ARM_VGIC_GRP_CPU_SYSREGS &&
	       ARM64_VGIC_GRP_LEVEL_INFO == KVM_DEV_ARM_VGIC_GRP_LEVEL_INFO &&
	       ARM64_VGIC_MPIDR_SHIFT == KVM_DEV_ARM_VGIC_V3_MPIDR_SHIFT &&
	       ARM64_VGIC_LEVEL_INFO_SHIFT == KVM_DEV_ARM_VGIC_LINE_LEVEL_INFO_SHIFT &&
	       VGIC_LEVEL_INFO_LINE_LEVEL == 0,
	       "gic_state.h disagrees with <asm/kvm.h>");

/* One attribute: 32 bits for the register groups, 64 for CPU sysregs. */
static int attr_io(int fd, uint32_t group, uint64_t attr, uint64_t *val, bool write)
{
	uint32_t v32 = (uint32_t)*val;
	bool wide = group == KVM_DEV_ARM_VGIC_GRP_CPU_SYSREGS;
	struct kvm_device_attr da = {
		.group = group,
		.attr = attr,
		.addr = wide ? (uint64_t)(uintptr_t)val : (uint64_t)(uintptr_t)&v32,
	};

	if (ioctl(fd, write ? KVM_SET_DEVICE_ATTR : KVM_GET_DEVICE_ATTR, &da) < 0)
		return -errno;
	if (!write && !wide)
		*val = v32;
	return 0;
}

static int io_fail(int ret, bool write, uint32_t group, uint64_t attr, char *err, size_t errlen)
{
	snprintf(err, errlen, "arm64: vGIC %s group %u attribute 0x%llx: %s",
		 write ? "KVM_SET_DEVICE_ATTR" : "KVM_GET_DEVICE_ATTR", group,
		 (unsigned long long)attr, strerror(-ret));
	return ret;
}

/* This host's plan: KVM's interrupt count and each CPU interface's
 * priority bits, read now. *@plan malloc'd; the count or -errno. */
static int host_plan(const struct arm64_vgic *g, int ncpus, const uint64_t *mpidr,
		     struct arm64_gic_reg **plan, uint32_t *nr_irqs, char *err, size_t errlen)
{
	uint8_t pri[ARM64_MAX_CPUS];
	uint64_t v = 0;
	struct arm64_gic_host h = { .ncpus = ncpus, .mpidr = mpidr, .pribits = pri };
	int ret, n;

	if (g->version != ARM64_GIC_V3) {
		snprintf(err, errlen, "arm64: snapshots need the in-kernel GICv3; this VM has a"
			 " GICv2");
		return -ENOTSUP;
	}
	if (ncpus < 1 || ncpus > ARM64_MAX_CPUS) {
		snprintf(err, errlen, "arm64: %d vCPUs", ncpus);
		return -EINVAL;
	}
	ret = attr_io(g->fd, KVM_DEV_ARM_VGIC_GRP_NR_IRQS, 0, &v, false);
	if (ret)
		return io_fail(ret, false, KVM_DEV_ARM_VGIC_GRP_NR_IRQS, 0, err, errlen);
	h.nr_irqs = (uint32_t)v;
	for (int i = 0; i < ncpus; i++) {
		uint64_t a = arm64_gic_mpidr_attr(mpidr[i]) | arm64_gic_icc_ctlr_attr();

		const uint32_t grp = KVM_DEV_ARM_VGIC_GRP_CPU_SYSREGS;

		ret = attr_io(g->fd, grp, a, &v, false);
		if (ret)
			return io_fail(ret, false, grp, a, err, errlen);
		pri[i] = arm64_gic_pribits(v);
	}
	*plan = calloc(ARM64_GIC_RECORD_MAX, sizeof(**plan));
	if (!*plan)
		return -ENOMEM;
	n = arm64_gic_plan(&h, *plan, ARM64_GIC_RECORD_MAX, err, errlen);
	if (n < 0) {
		free(*plan);
		*plan = NULL;
	}
	*nr_irqs = h.nr_irqs;
	return n;
}

int arm64_gic_state_save(const struct arm64_vgic *g, int ncpus, const uint64_t *mpidr,
			 uint8_t **rec, size_t *len, char *err, size_t errlen)
{
	struct arm64_gic_reg *plan = NULL;
	uint64_t *vals = NULL;
	uint8_t *buf = NULL;
	uint32_t nr_irqs = 0;
	int ret, n = host_plan(g, ncpus, mpidr, &plan, &nr_irqs, err, errlen);

	if (n < 0)
		return n;
	ret = -ENOMEM;
	vals = calloc((size_t)n + 1, sizeof(*vals));
	buf = malloc(arm64_gic_record_size((size_t)n));
	if (!vals || !buf)
		goto out;
	for (int i = 0; i < n; i++) {
		ret = attr_io(g->fd, plan[i].group, plan[i].attr, &vals[i], false);
		if (ret) {
			io_fail(ret, false, plan[i].group, plan[i].attr, err, errlen);
			goto out;
		}
	}
	arm64_gic_record_write(buf, plan, vals, (size_t)n, nr_irqs, (uint32_t)ncpus);
	*rec = buf;
	*len = arm64_gic_record_size((size_t)n);
	buf = NULL;
	ret = 0;
out:
	free(buf);
	free(vals);
	free(plan);
	return ret;
}

/* A set/clear pair: everything the record has clear is cleared, then what
 * it has set is set, whatever the state before (a rollback in place). */
static int write_one(int fd, const struct arm64_gic_reg *r, uint64_t val, char *err,
		     size_t errlen)
{
	uint64_t clear = ~val & 0xffffffffULL;
	int ret = 0;

	if (r->kind == ARM64_GIC_SETCLR32) {
		ret = attr_io(fd, r->group, r->attr + ARM64_GIC_CLEAR_DELTA, &clear, true);
		if (ret)
			return io_fail(ret, true, r->group, r->attr + ARM64_GIC_CLEAR_DELTA, err,
				       errlen);
	}
	ret = attr_io(fd, r->group, r->attr, &val, true);
	return ret ? io_fail(ret, true, r->group, r->attr, err, errlen) : 0;
}

int arm64_gic_state_restore(const struct arm64_vgic *g, int ncpus, const uint64_t *mpidr,
			    const uint8_t *rec, size_t len, char *err, size_t errlen)
{
	struct arm64_gic_reg *plan = NULL;
	uint64_t *vals = NULL;
	uint32_t nr_irqs = 0;
	int ret, n = host_plan(g, ncpus, mpidr, &plan, &nr_irqs, err, errlen);

	if (n < 0)
		return n;
	ret = -ENOMEM;
	vals = calloc((size_t)n + 1, sizeof(*vals));
	if (!vals)
		goto out;
	/* The whole record against this host's plan before any write. */
	ret = arm64_gic_record_match(rec, len, plan, (size_t)n, nr_irqs, (uint32_t)ncpus, vals,
				     err, errlen);
	for (int i = 0; !ret && i < n; i++)
		ret = write_one(g->fd, &plan[i], vals[i], err, errlen);
out:
	free(vals);
	free(plan);
	return ret;
}
