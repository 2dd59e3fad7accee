/* The vGIC's device attributes for mvm's arm64 layout: pure. */
#include <errno.h>
#include <stdio.h>

#include "vmm/arch/arm64/gic.h"

_Static_assert(ARM64_VGIC_NR_IRQS % 32 == 0 && ARM64_VGIC_NR_IRQS <= 1024,
	       "KVM takes a multiple of 32 interrupts, at most 1024");

int arm64_gic_attrs(enum arm64_gic_version v, int ncpus,
		    struct arm64_gic_attr out[ARM64_GIC_ATTRS], char *err, size_t errlen)
{
	int max = v == ARM64_GIC_V2 ? ARM64_GICV2_MAX_CPUS : ARM64_GICV3_MAX_CPUS;

	if (v != ARM64_GIC_V2 && v != ARM64_GIC_V3) {
		snprintf(err, errlen, "arm64: GIC version %d is neither 2 nor 3", (int)v);
		return -EINVAL;
	}
	if (ncpus < 1 || ncpus > max) {
		snprintf(err, errlen, "arm64: GICv%d serves 1 to %d vCPUs, not %d", (int)v, max,
			 ncpus);
		return -EINVAL;
	}
	if (v == ARM64_GIC_V3) {
		out[0] = (struct arm64_gic_attr){ ARM64_VGIC_GRP_ADDR, ARM64_VGIC_V3_ADDR_DIST,
						  ARM64_GIC_DIST_BASE };
		/* One base: KVM places vCPU i's frames at base + i * 128 KiB. */
		out[1] = (struct arm64_gic_attr){ ARM64_VGIC_GRP_ADDR, ARM64_VGIC_V3_ADDR_REDIST,
						  ARM64_GICV3_REDIST_BASE };
	} else {
		out[0] = (struct arm64_gic_attr){ ARM64_VGIC_GRP_ADDR, ARM64_VGIC_V2_ADDR_DIST,
						  ARM64_GIC_DIST_BASE };
		out[1] = (struct arm64_gic_attr){ ARM64_VGIC_GRP_ADDR, ARM64_VGIC_V2_ADDR_CPU,
						  ARM64_GICV2_CPU_BASE };
	}
	/* Said, not left to KVM's default: the device tree's SPIs must exist. */
	out[2] = (struct arm64_gic_attr){ ARM64_VGIC_GRP_NR_IRQS, 0, ARM64_VGIC_NR_IRQS };
	return ARM64_GIC_ATTRS;
}
