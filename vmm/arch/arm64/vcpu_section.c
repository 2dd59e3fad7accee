/* An arm64 vCPU's snapshot section: power state and register record. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/le_bytes.h"
#include "vmm/arch/arm64/reg_record.h"
#include "vmm/arch/arm64/regs.h"
#include "vmm/arch/arm64/vcpu_section.h"

void arm64_vcpu_section_header(uint8_t hdr[ARM64_VCPU_SECTION_HDR], uint32_t mp)
{
	memset(hdr, 0, ARM64_VCPU_SECTION_HDR);
	for (int i = 0; i < 4; i++)
		hdr[i] = (uint8_t)(mp >> (8 * i));
}

/* The 8-byte little-endian value of register @id among @e's @n, if there. */
static int find64(const struct arm64_reg_entry *e, int n, uint64_t id, uint64_t *val)
{
	for (int i = 0; i < n; i++)
		if (e[i].id == id && e[i].bytes == 8) {
			*val = (uint64_t)le_get32(e[i].val) | (uint64_t)le_get32(e[i].val + 4) << 32;
			return 0;
		}
	return -ENOENT;
}

int arm64_vcpu_section_check(const uint8_t *p, size_t len, uint32_t *mp, const uint8_t **rec,
			     size_t *rec_len, uint64_t *mpidr, char *err, size_t errlen)
{
	struct arm64_reg_entry *e;
	uint32_t state;
	int n;

	if (len < ARM64_VCPU_SECTION_HDR || le_get32(p + 4)) {
		snprintf(err, errlen, "vCPU section: no power state header");
		return -EINVAL;
	}
	state = le_get32(p);
	if (state != ARM64_MP_RUNNABLE && state != ARM64_MP_STOPPED &&
	    state != ARM64_MP_SUSPENDED) {
		snprintf(err, errlen, "vCPU section: power state %u is none KVM takes on arm64",
			 state);
		return -EINVAL;
	}
	e = calloc(ARM64_REG_RECORD_MAX, sizeof(*e));
	if (!e)
		return -ENOMEM;
	n = arm64_reg_record_parse(p + ARM64_VCPU_SECTION_HDR, len - ARM64_VCPU_SECTION_HDR, e,
				   ARM64_REG_RECORD_MAX, err, errlen);
	if (n >= 0 && find64(e, n, arm64_mpidr_reg_id(), mpidr)) {
		snprintf(err, errlen, "vCPU section: no MPIDR_EL1 among its registers");
		n = -EINVAL;
	}
	free(e);
	if (n < 0)
		return n;
	*mp = state;
	*rec = p + ARM64_VCPU_SECTION_HDR;
	*rec_len = len - ARM64_VCPU_SECTION_HDR;
	return 0;
}
