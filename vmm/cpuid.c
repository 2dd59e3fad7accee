/* CPUID fix-ups (Intel SDM vol. 2A "CPUID"; AMD APM vol. 3 appendix E). */
#include <linux/kvm.h>
#include <stdint.h>

#include "vmm/cpuid.h"

static int order(int n)
{
	int s = 0;

	while ((1 << s) < n)
		s++;
	return s;
}

static void fix_leaf1(struct kvm_cpuid_entry2 *e, int index, int ncpus)
{
	e->ebx = (e->ebx & 0xffff) | ((uint32_t)ncpus << 16) | ((uint32_t)index << 24);
	e->ecx |= 1U << 31;		/* running under a hypervisor */
	if (ncpus > 1)
		e->edx |= 1U << 28;	/* HTT: ebx[23:16] is valid */
}

/* Leaf 0xb: one thread per core, @ncpus cores in one package. */
static void fix_leafb(struct kvm_cpuid_entry2 *e, int index, int ncpus)
{
	e->edx = (uint32_t)index;
	switch (e->index) {
	case 0:
		e->eax = 0;
		e->ebx = 1;
		e->ecx = 0x100;
		break;
	case 1:
		e->eax = (uint32_t)order(ncpus);
		e->ebx = (uint32_t)ncpus;
		e->ecx = 0x200 | 1;
		break;
	default:
		e->eax = e->ebx = 0;
		e->ecx = e->index;
		break;
	}
}

void cpuid_fixup(struct kvm_cpuid2 *c, int index, int ncpus)
{
	for (uint32_t i = 0; i < c->nent; i++) {
		struct kvm_cpuid_entry2 *e = &c->entries[i];

		switch (e->function) {
		case 1:
			fix_leaf1(e, index, ncpus);
			break;
		case 4:
			/* cores per package - 1 in eax[31:26]; no cache sharing claims */
			e->eax = (e->eax & 0x3fff) | ((uint32_t)(ncpus - 1) << 26);
			break;
		case 0xb:
			fix_leafb(e, index, ncpus);
			break;
		case 0x80000008:
			e->ecx = (e->ecx & ~0xffU) | (uint32_t)(ncpus - 1);
			break;
		}
	}
}
