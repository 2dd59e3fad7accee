/* Per-vCPU CPUID: KVM's supported set, fixed up for APIC IDs and topology. */
#ifndef MVM_CPUID_H
#define MVM_CPUID_H

struct kvm_cpuid2;

/*
 * Rewrite @c (a copy of KVM_GET_SUPPORTED_CPUID) for vCPU @index of @ncpus:
 * APIC ID, logical count, hypervisor bit, leaf 0xb topology, AMD core count.
 * Pure: no ioctls.
 */
void cpuid_fixup(struct kvm_cpuid2 *c, int index, int ncpus);

#endif
