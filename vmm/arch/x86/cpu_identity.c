/*
 * Which x86 CPUs a snapshot may be restored on (arch_cpu_identity,
 * vmm/arch/arch.h): the CPUID vendor string and a hash of the feature
 * leaves KVM offers (snapshots/state_file.c compares both).
 */
#include <linux/kvm.h>
#include <stdbool.h>
#include <string.h>

#include "vmm/arch/arch.h"
#include "vmm/kvm.h"

/*
 * Only the leaves that say what the guest may use: features (1, 7, 0x80000001),
 * XSAVE components (0xd) and address sizes (0x80000008). Other leaves carry
 * per-CPU values (APIC ids, topology) that differ between processes.
 */
static bool fingerprint_leaf(const struct kvm_cpuid_entry2 *e, uint32_t r[4])
{
	memset(r, 0, 16);
	switch (e->function) {
	case 1:
		r[2] = e->ecx & ~(1U << 27);	/* OSXSAVE follows the guest's CR4 */
		r[3] = e->edx;
		return true;
	case 7:
		r[1] = e->ebx, r[2] = e->ecx & ~(1U << 4), r[3] = e->edx;	/* minus OSPKE */
		return true;
	case 0xd:
		if (e->index > 1)
			return false;
		r[0] = e->eax, r[3] = e->edx;
		return true;
	case 0x80000001:
		r[2] = e->ecx, r[3] = e->edx;
		return true;
	case 0x80000008:
		r[0] = e->eax & 0xffff;
		return true;
	default:
		return false;
	}
}

static uint64_t cpuid_fingerprint(const struct kvm_cpuid_entry2 *e, uint32_t nent)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (uint32_t i = 0; i < nent; i++) {
		uint32_t v[6];
		const uint8_t *b = (const uint8_t *)v;

		if (!fingerprint_leaf(&e[i], v + 2))
			continue;
		v[0] = e[i].function;
		v[1] = e[i].index;
		for (size_t k = 0; k < sizeof(v); k++) {
			h ^= b[k];
			h *= 0x100000001b3ULL;
		}
	}
	return h;
}

void arch_cpu_identity(const struct kvm *k, char vendor[16], uint64_t *fingerprint)
{
	memset(vendor, 0, 16);
	*fingerprint = 0;
	for (uint32_t i = 0; k->cpuid && i < k->cpuid->nent; i++) {
		const struct kvm_cpuid_entry2 *e = &k->cpuid->entries[i];

		if (e->function == 0) {
			memcpy(vendor, &e->ebx, 4);
			memcpy(vendor + 4, &e->edx, 4);
			memcpy(vendor + 8, &e->ecx, 4);
		}
	}
	if (k->cpuid)
		*fingerprint = cpuid_fingerprint(k->cpuid->entries, k->cpuid->nent);
}
