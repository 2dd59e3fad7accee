/*
 * libFuzzer target: an arm64 vCPU register record (vmm/arch/arm64/
 * reg_record.c) as a tampered snapshot would hold it. The parser must
 * refuse or index it without reading outside the input; what it accepts
 * must re-encode to the same bytes (the format has one spelling), and be
 * matched against its own id list.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/arch/arm64/reg_record.h"

static struct arm64_reg_entry ent[ARM64_REG_RECORD_MAX];
static uint64_t ids[ARM64_REG_RECORD_MAX];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct arm64_reg_writer w;
	char err[256];
	uint8_t *out;
	size_t cap;
	int n = arm64_reg_record_parse(data, size, ent, ARM64_REG_RECORD_MAX, err, sizeof(err));

	if (n < 0)
		return 0;
	for (int i = 0; i < n; i++)
		ids[i] = ent[i].id;
	cap = arm64_reg_record_size(ids, (size_t)n);
	if (cap != size || arm64_reg_record_match(ent, n, ids, (size_t)n, err, sizeof(err)))
		abort();
	out = malloc(cap);
	if (!out)
		abort();
	arm64_reg_writer_init(&w, out, cap);
	for (int i = 0; i < n; i++) {
		uint8_t *v = arm64_reg_writer_add(&w, ids[i]);

		if (!v)
			abort();
		memcpy(v, ent[i].val, ent[i].bytes);
	}
	if (arm64_reg_writer_finish(&w) != (long)size || memcmp(out, data, size))
		abort();
	free(out);
	return 0;
}
