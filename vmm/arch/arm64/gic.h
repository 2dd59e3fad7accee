/*
 * What the in-kernel vGIC is told before it is initialised, as plain data:
 * the device attributes (group, attribute, value) of KVM_SET_DEVICE_ATTR
 * in the order they are set. Pure; vmm/arch/arm64/kvm/vgic.c sets them.
 */
#ifndef MVM_ARM64_GIC_H
#define MVM_ARM64_GIC_H

#include <stddef.h>
#include <stdint.h>

#include "vmm/arch/arm64/machine.h"

/* Groups and attributes of the arm64 vGIC device (api.rst, devices/
 * arm-vgic-v3.rst and arm-vgic.rst). */
#define ARM64_VGIC_GRP_ADDR     0
#define ARM64_VGIC_GRP_NR_IRQS  3
#define ARM64_VGIC_GRP_CTRL     4
#define ARM64_VGIC_CTRL_INIT    0
#define ARM64_VGIC_V2_ADDR_DIST 0
#define ARM64_VGIC_V2_ADDR_CPU  1
#define ARM64_VGIC_V3_ADDR_DIST 2
#define ARM64_VGIC_V3_ADDR_REDIST 3
/* Interrupts of the vGIC: 32 private ones and SPIs 0..ARM64_SPI_MAX. */
#define ARM64_VGIC_NR_IRQS      (ARM64_SPI_MAX + 1 + 32)

struct arm64_gic_attr {
	uint32_t group;
	uint64_t attr;
	uint64_t value;		/* an address (GRP_ADDR, u64) or a count (u32) */
};

#define ARM64_GIC_ATTRS 3
/*
 * The attributes for a GIC @v with @ncpus vCPUs at layout.h's addresses:
 * distributor, then redistributor (v3) or CPU interface (v2), then the
 * number of interrupts. The count (3), or -EINVAL with the reason in @err
 * when @v cannot serve @ncpus (v2 at most 8, v3 at most 64, at least 1).
 */
int arm64_gic_attrs(enum arm64_gic_version v, int ncpus,
		    struct arm64_gic_attr out[ARM64_GIC_ATTRS], char *err, size_t errlen);

#endif
