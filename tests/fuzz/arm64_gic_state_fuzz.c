/*
 * libFuzzer target: the arm64 snapshot sections a tampered snapshot would
 * hold (issue 31): the vGICv3 record (vmm/arch/arm64/gic_state.c), checked
 * on its own and then against a fixed host plan (256 interrupts, two
 * vCPUs), and the vCPU section (vcpu_section.c) on the same bytes. Nothing
 * may be read outside the input; a record the plan accepts must re-encode
 * to the same bytes (one spelling), and a vCPU section accepted must point
 * inside the input.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/arch/arm64/gic_state.h"
#include "vmm/arch/arm64/vcpu_section.h"

static struct arm64_gic_reg plan[ARM64_GIC_RECORD_MAX];
static uint64_t vals[ARM64_GIC_RECORD_MAX];
static int nplan = -1;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint64_t mpidr[2] = { 0x80000000ULL, 0x80000001ULL };
	static const uint8_t pri[2] = { 5, 7 };
	char err[256];
	const uint8_t *rec;
	size_t rec_len;
	uint64_t rec_mpidr;
	uint32_t mp;

	if (nplan < 0) {
		struct arm64_gic_host h = {
			.nr_irqs = 256, .ncpus = 2, .mpidr = mpidr, .pribits = pri,
		};

		nplan = arm64_gic_plan(&h, plan, ARM64_GIC_RECORD_MAX, err, sizeof(err));
		if (nplan <= 0)
			abort();
	}
	if (!arm64_gic_record_check(data, size, err, sizeof(err)) &&
	    !arm64_gic_record_match(data, size, plan, (size_t)nplan, 256, 2, vals, err,
				    sizeof(err))) {
		uint8_t *out = malloc(size);

		if (!out || size != arm64_gic_record_size((size_t)nplan))
			abort();
		arm64_gic_record_write(out, plan, vals, (size_t)nplan, 256, 2);
		if (memcmp(out, data, size))
			abort();
		free(out);
	}
	if (!arm64_vcpu_section_check(data, size, &mp, &rec, &rec_len, &rec_mpidr, err,
				      sizeof(err)) &&
	    (rec != data + ARM64_VCPU_SECTION_HDR || rec_len != size - ARM64_VCPU_SECTION_HDR))
		abort();
	return 0;
}
