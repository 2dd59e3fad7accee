/* Initial architectural state of each vCPU: the boot protocol's entry state. */
#include <errno.h>
#include <linux/kvm.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "vmm/boot_layout.h"
#include "vmm/cpuid.h"
#include "vmm/vcpu.h"

#define MSR_IA32_SYSENTER_CS  0x174
#define MSR_IA32_SYSENTER_ESP 0x175
#define MSR_IA32_SYSENTER_EIP 0x176
#define MSR_IA32_MISC_ENABLE  0x1a0
#define MSR_MTRR_DEF_TYPE     0x2ff
#define MSR_STAR              0xc0000081
#define MSR_LSTAR             0xc0000082
#define MSR_CSTAR             0xc0000083
#define MSR_SYSCALL_MASK      0xc0000084
#define MSR_KERNEL_GS_BASE    0xc0000102
#define APIC_LVT0             0x350
#define APIC_LVT1             0x360

int vcpu_set_cpuid(struct kvm *k, struct kvm_vcpu *v, int ncpus)
{
	size_t sz = sizeof(*k->cpuid) + k->cpuid->nent * sizeof(k->cpuid->entries[0]);
	struct kvm_cpuid2 *c = malloc(sz);
	int ret = 0;

	if (!c)
		return -ENOMEM;
	memcpy(c, k->cpuid, sz);
	cpuid_fixup(c, v->id, ncpus);
	if (ioctl(v->fd, KVM_SET_CPUID2, c) < 0)
		ret = -errno;
	free(c);
	return ret;
}

int vcpu_set_msrs(struct kvm_vcpu *v)
{
	static const uint32_t zero_msrs[] = {
		MSR_IA32_SYSENTER_CS, MSR_IA32_SYSENTER_ESP, MSR_IA32_SYSENTER_EIP,
		MSR_STAR, MSR_LSTAR, MSR_CSTAR, MSR_SYSCALL_MASK, MSR_KERNEL_GS_BASE,
	};
	struct {
		struct kvm_msrs h;
		struct kvm_msr_entry e[16];
	} m = { 0 };
	uint32_t n = 0;

	for (size_t i = 0; i < sizeof(zero_msrs) / sizeof(zero_msrs[0]); i++)
		m.e[n++].index = zero_msrs[i];
	m.e[n].index = MSR_IA32_MISC_ENABLE;
	m.e[n++].data = 1;			/* fast strings */
	m.e[n].index = MSR_MTRR_DEF_TYPE;
	m.e[n++].data = (1 << 11) | 6;		/* MTRRs on, default write-back */
	m.h.nmsrs = n;
	if (ioctl(v->fd, KVM_SET_MSRS, &m) != (int)n)
		return -EINVAL;
	return 0;
}

int vcpu_set_fpu_lapic(struct kvm_vcpu *v)
{
	struct kvm_fpu fpu = { .fcw = 0x37f, .mxcsr = 0x1f80 };
	struct kvm_lapic_state lapic;
	uint32_t *lvt0 = (uint32_t *)(lapic.regs + APIC_LVT0);
	uint32_t *lvt1 = (uint32_t *)(lapic.regs + APIC_LVT1);

	if (ioctl(v->fd, KVM_SET_FPU, &fpu) < 0)
		return -errno;
	if (ioctl(v->fd, KVM_GET_LAPIC, &lapic) < 0)
		return -errno;
	/* Virtual wire: LINT0 = ExtINT (the PIC), LINT1 = NMI. */
	*lvt0 = (*lvt0 & ~0x700U) | (7U << 8);
	*lvt1 = (*lvt1 & ~0x700U) | (4U << 8);
	if (ioctl(v->fd, KVM_SET_LAPIC, &lapic) < 0)
		return -errno;
	return 0;
}

static struct kvm_segment flat_seg(uint16_t sel, uint8_t type, bool code64)
{
	return (struct kvm_segment){
		.base = 0, .limit = 0xffffffff, .selector = sel, .type = type,
		.present = 1, .dpl = 0, .db = code64 ? 0 : 1, .s = 1,
		.l = code64 ? 1 : 0, .g = 1,
	};
}

/* PVH: 32-bit protected mode, paging off, ebx = start info (Xen PVH ABI). */
static void regs_pvh(struct kvm_sregs *s, struct kvm_regs *r, uint64_t entry)
{
	s->cs = flat_seg(0x08, 0xb, false);
	s->ds = s->es = s->fs = s->gs = s->ss = flat_seg(0x10, 0x3, false);
	s->tr = flat_seg(0x18, 0xb, false);
	s->tr.s = 0;
	s->cr0 = 0x11;		/* PE | ET */
	s->cr4 = 0;
	s->efer = 0;
	r->rip = entry;
	r->rbx = BOOT_PVH_INFO_ADDR;
}

/* bzImage 64-bit boot protocol: long mode, identity paging, rsi = zero page. */
static void regs_long(struct kvm_sregs *s, struct kvm_regs *r, uint64_t entry)
{
	s->cs = flat_seg(0x08, 0xb, true);
	s->ds = s->es = s->fs = s->gs = s->ss = flat_seg(0x10, 0x3, false);
	s->tr = flat_seg(0x18, 0xb, false);
	s->tr.s = 0;
	s->cr3 = BOOT_PML4_ADDR;
	s->cr4 = 0x20;			/* PAE */
	s->cr0 = 0x80000011;		/* PG | ET | PE */
	s->efer = 0x500;		/* LME | LMA */
	r->rip = entry;
	r->rsi = BOOT_ZERO_PAGE_ADDR;
}

int vcpu_set_boot_regs(struct kvm_vcpu *v, const struct kernel_image *k)
{
	struct kvm_sregs s;
	struct kvm_regs r = { .rflags = 2, .rsp = BOOT_STACK_ADDR, .rbp = BOOT_STACK_ADDR };

	if (ioctl(v->fd, KVM_GET_SREGS, &s) < 0)
		return -errno;
	s.gdt.base = BOOT_GDT_ADDR;
	s.gdt.limit = 4 * 8 - 1;
	s.idt.base = BOOT_IDT_ADDR;
	s.idt.limit = 0;
	if (k->kind == KIMG_PVH)
		regs_pvh(&s, &r, k->entry);
	else
		regs_long(&s, &r, k->entry);
	if (ioctl(v->fd, KVM_SET_SREGS, &s) < 0)
		return -errno;
	if (ioctl(v->fd, KVM_SET_REGS, &r) < 0)
		return -errno;
	return 0;
}
