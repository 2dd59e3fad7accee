/* CPUID fix-ups per vCPU (Intel SDM vol. 2A "CPUID"; AMD APM vol. 3 E.4). */
#include <criterion/criterion.h>
#include <linux/kvm.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/cpuid.h"

enum { L0, L1, L4, LB0, LB1, LB2, LX8, NENT };

static struct kvm_cpuid2 *make(void)
{
	struct kvm_cpuid2 *c = calloc(1, sizeof(*c) + NENT * sizeof(struct kvm_cpuid_entry2));

	c->nent = NENT;
	c->entries[L0] = (struct kvm_cpuid_entry2){ .function = 0, .eax = 0x1f,
		.ebx = 0x756e6547, .ecx = 0x6c65746e, .edx = 0x49656e69 };
	/* Leaf 1: stepping etc. in eax; ebx[15:0] brand/CLFLUSH; stale topology above. */
	c->entries[L1] = (struct kvm_cpuid_entry2){ .function = 1, .eax = 0x000906ea,
		.ebx = 0xab100800, .ecx = 0x7ffafbff, .edx = 0x0fabfbff };
	c->entries[L4] = (struct kvm_cpuid_entry2){ .function = 4, .index = 0,
		.flags = KVM_CPUID_FLAG_SIGNIFCANT_INDEX, .eax = 0xfc004121, .ebx = 0x01c0003f,
		.ecx = 0x3f, .edx = 0 };
	c->entries[LB0] = (struct kvm_cpuid_entry2){ .function = 0xb, .index = 0,
		.flags = KVM_CPUID_FLAG_SIGNIFCANT_INDEX, .eax = 7, .ebx = 99, .ecx = 0xffff, .edx = 77 };
	c->entries[LB1] = (struct kvm_cpuid_entry2){ .function = 0xb, .index = 1,
		.flags = KVM_CPUID_FLAG_SIGNIFCANT_INDEX, .eax = 7, .ebx = 99, .ecx = 0xffff, .edx = 77 };
	c->entries[LB2] = (struct kvm_cpuid_entry2){ .function = 0xb, .index = 2,
		.flags = KVM_CPUID_FLAG_SIGNIFCANT_INDEX, .eax = 7, .ebx = 99, .ecx = 0xffff, .edx = 77 };
	c->entries[LX8] = (struct kvm_cpuid_entry2){ .function = 0x80000008, .eax = 0x3027,
		.ebx = 0x1234, .ecx = 0xf0ff, .edx = 0 };
	return c;
}

static void check(int index, int ncpus)
{
	struct kvm_cpuid2 *c = make(), *orig = make();
	const struct kvm_cpuid_entry2 *e = c->entries, *o = orig->entries;

	cpuid_fixup(c, index, ncpus);

	/* Leaf 0 is not topology: untouched. */
	cr_assert_eq(memcmp(&e[L0], &o[L0], sizeof(e[L0])), 0);

	/* Leaf 1: initial APIC ID in ebx[31:24], logical processors in ebx[23:16]. */
	cr_assert_eq(e[L1].ebx >> 24, (uint32_t)index);
	cr_assert_eq((e[L1].ebx >> 16) & 0xff, (uint32_t)ncpus);
	cr_assert_eq(e[L1].ebx & 0xffff, o[L1].ebx & 0xffff, "brand/CLFLUSH bits lost");
	cr_assert(e[L1].ecx & (1U << 31), "hypervisor bit");
	cr_assert_eq(e[L1].ecx & ~(1U << 31), o[L1].ecx & ~(1U << 31));
	cr_assert_eq(e[L1].eax, o[L1].eax);
	if (ncpus > 1)
		cr_assert(e[L1].edx & (1U << 28), "HTT must be set for ebx[23:16] to count");

	/* Leaf 4: eax[31:26] = cores per package - 1; cache description kept. */
	cr_assert_eq(e[L4].eax >> 26, (uint32_t)(ncpus - 1));
	cr_assert_eq(e[L4].eax & 0x3fff, o[L4].eax & 0x3fff);

	/* Leaf 0xb: edx is the x2APIC ID on every subleaf and equals leaf 1's. */
	for (int s = LB0; s <= LB2; s++) {
		cr_assert_eq(e[s].edx, (uint32_t)index, "subleaf %u", e[s].index);
		cr_assert_eq(e[s].ecx & 0xff, e[s].index, "ecx[7:0] echoes the subleaf");
	}
	/* Subleaf 0: SMT level, one thread per core. */
	cr_assert_eq((e[LB0].ecx >> 8) & 0xff, 1, "level type SMT");
	cr_assert_eq(e[LB0].ebx & 0xffff, 1);
	cr_assert_eq(e[LB0].eax & 0x1f, 0, "no APIC ID bits for threads");
	/* Subleaf 1: core level, ncpus logical processors in the package. */
	cr_assert_eq((e[LB1].ecx >> 8) & 0xff, 2, "level type core");
	cr_assert_eq(e[LB1].ebx & 0xffff, (uint32_t)ncpus);
	/* The shift must give every vCPU's APIC ID the same package ID (0). */
	uint32_t shift = e[LB1].eax & 0x1f;
	for (int i = 0; i < ncpus; i++)
		cr_assert_eq((uint32_t)i >> shift, 0, "APIC %d outside package 0 (shift %u)", i, shift);
	/* ... and be the smallest such shift, as Linux derives core IDs from it. */
	if (shift)
		cr_assert((uint32_t)(ncpus - 1) >> (shift - 1) != 0, "shift %u not minimal", shift);
	/* Subleaf 2: invalid level terminates enumeration. */
	cr_assert_eq((e[LB2].ecx >> 8) & 0xff, 0);
	cr_assert_eq(e[LB2].ebx & 0xffff, 0);

	/* AMD 0x80000008: ecx[7:0] = NC, threads in package - 1; rest kept. */
	cr_assert_eq(e[LX8].ecx & 0xff, (uint32_t)(ncpus - 1));
	cr_assert_eq(e[LX8].ecx & ~0xffU, o[LX8].ecx & ~0xffU);
	cr_assert_eq(e[LX8].eax, o[LX8].eax);
	free(c);
	free(orig);
}

Test(vmm_cpuid, single_cpu) { check(0, 1); }
Test(vmm_cpuid, bsp_of_four) { check(0, 4); }
Test(vmm_cpuid, ap_of_four) { check(3, 4); }
Test(vmm_cpuid, ap_of_three) { check(1, 3); }
Test(vmm_cpuid, ap_of_five) { check(4, 5); }
Test(vmm_cpuid, last_of_64) { check(63, 64); }

Test(vmm_cpuid, every_vcpu_gets_a_distinct_apic_id)
{
	const int n = 8;
	uint32_t seen = 0;

	for (int i = 0; i < n; i++) {
		struct kvm_cpuid2 *c = make();

		cpuid_fixup(c, i, n);
		uint32_t id = c->entries[L1].ebx >> 24;
		cr_assert_eq(c->entries[LB1].edx, id);
		cr_assert_not(seen & (1U << id));
		seen |= 1U << id;
		free(c);
	}
	cr_assert_eq(seen, 0xff);
}

Test(vmm_cpuid, empty_table_is_fine)
{
	struct kvm_cpuid2 c = { .nent = 0 };

	cpuid_fixup(&c, 0, 1);
	cr_assert_eq(c.nent, 0);
}
