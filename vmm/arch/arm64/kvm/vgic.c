/* The in-kernel vGIC (v3, else v2) through KVM's device API (aarch64 only). */
#include <errno.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "vmm/arch/arm64/gic.h"
#include "vmm/arch/arm64/kvm/arm64_kvm.h"

_Static_assert(ARM64_VGIC_GRP_ADDR == KVM_DEV_ARM_VGIC_GRP_ADDR &&
	       ARM64_VGIC_GRP_NR_IRQS == KVM_DEV_ARM_VGIC_GRP_NR_IRQS &&
	       ARM64_VGIC_GRP_CTRL == KVM_DEV_ARM_VGIC_GRP_CTRL &&
	       ARM64_VGIC_CTRL_INIT == KVM_DEV_ARM_VGIC_CTRL_INIT &&
	       ARM64_VGIC_V2_ADDR_DIST == KVM_VGIC_V2_ADDR_TYPE_DIST &&
	       ARM64_VGIC_V2_ADDR_CPU == KVM_VGIC_V2_ADDR_TYPE_CPU &&
	       ARM64_VGIC_V3_ADDR_DIST == KVM_VGIC_V3_ADDR_TYPE_DIST &&
	       ARM64_VGIC_V3_ADDR_REDIST == KVM_VGIC_V3_ADDR_TYPE_REDIST,
	       "gic.h disagrees with <asm/kvm.h>");

static int create(int vm_fd, enum arm64_gic_version v)
{
	struct kvm_create_device d = {
		.type = v == ARM64_GIC_V3 ? KVM_DEV_TYPE_ARM_VGIC_V3 : KVM_DEV_TYPE_ARM_VGIC_V2,
	};

	return ioctl(vm_fd, KVM_CREATE_DEVICE, &d) < 0 ? -errno : (int)d.fd;
}

static int set_attr(int fd, const struct arm64_gic_attr *a)
{
	uint64_t addr = a->value;
	uint32_t count = (uint32_t)a->value;
	struct kvm_device_attr da = {
		.group = a->group,
		.attr = a->attr,
		/* Addresses are u64; the interrupt count is a u32. */
		.addr = a->group == ARM64_VGIC_GRP_ADDR ? (uint64_t)(uintptr_t)&addr :
							  (uint64_t)(uintptr_t)&count,
	};

	return ioctl(fd, KVM_SET_DEVICE_ATTR, &da) < 0 ? -errno : 0;
}

int arm64_gic_create(int vm_fd, int ncpus, struct arm64_vgic *g, char *err, size_t errlen)
{
	struct arm64_gic_attr attrs[ARM64_GIC_ATTRS];
	enum arm64_gic_version v = ARM64_GIC_V3;
	int fd = create(vm_fd, v), v3_err = fd, n, ret;

	/* A host whose GIC cannot back a virtual v3 (GICv2 hardware) has no v3
	 * device type (ENODEV); any v3 failure is worth one try at v2. */
	if (fd < 0 && ncpus <= ARM64_GICV2_MAX_CPUS) {
		v = ARM64_GIC_V2;
		fd = create(vm_fd, v);
	}
	if (fd < 0) {
		if (v == ARM64_GIC_V2)
			snprintf(err, errlen, "arm64: KVM_CREATE_DEVICE: GICv3: %s; GICv2: %s",
				 strerror(-v3_err), strerror(-fd));
		else
			snprintf(err, errlen, "arm64: KVM_CREATE_DEVICE (GICv3, and %d vCPUs are"
				 " too many for GICv2): %s", ncpus, strerror(-fd));
		return fd;
	}
	n = arm64_gic_attrs(v, ncpus, attrs, err, errlen);
	ret = n < 0 ? n : 0;
	for (int i = 0; !ret && i < n; i++) {
		ret = set_attr(fd, &attrs[i]);
		if (ret)
			snprintf(err, errlen, "arm64: GICv%d attribute %u/%llu: %s", (int)v,
				 attrs[i].group, (unsigned long long)attrs[i].attr,
				 strerror(-ret));
	}
	if (ret) {
		close(fd);
		return ret;
	}
	*g = (struct arm64_vgic){ .fd = fd, .version = v };
	return 0;
}

int arm64_gic_finish(struct arm64_vgic *g, char *err, size_t errlen)
{
	struct kvm_device_attr da = {
		.group = KVM_DEV_ARM_VGIC_GRP_CTRL,
		.attr = KVM_DEV_ARM_VGIC_CTRL_INIT,
	};

	if (ioctl(g->fd, KVM_SET_DEVICE_ATTR, &da) < 0) {
		int e = errno;

		snprintf(err, errlen, "arm64: GICv%d KVM_DEV_ARM_VGIC_CTRL_INIT: %s",
			 (int)g->version, strerror(e));
		return -e;
	}
	return 0;
}

void arm64_gic_close(struct arm64_vgic *g)
{
	if (g->fd >= 0)
		close(g->fd);
	g->fd = -1;
}
