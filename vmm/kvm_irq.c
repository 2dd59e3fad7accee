/*
 * The VM's interrupt lines and event file descriptors: the KVM calls the
 * virtio-mmio transport (devices/virtio_mmio.c) makes. Neutral: the same
 * ioctls on x86_64 (a GSI is an IOAPIC pin) and arm64 (a GSI is an SPI
 * through KVM's default vGIC routing, vmm/arch/arm64/virtio_slots.h), so
 * both builds link this file; vmm/kvm.c keeps the x86 VM set-up.
 */
#include <errno.h>
#include <linux/kvm.h>
#include <sys/ioctl.h>

#include "vmm/kvm.h"

int kvm_irq_line(struct kvm *k, uint32_t irq, int level)
{
	struct kvm_irq_level l = { .irq = irq, .level = (uint32_t)level };

	return ioctl(k->vm_fd, KVM_IRQ_LINE, &l) < 0 ? -errno : 0;
}

int kvm_irqfd(struct kvm *k, int fd, uint32_t gsi)
{
	struct kvm_irqfd r = { .fd = (uint32_t)fd, .gsi = gsi };

	return ioctl(k->vm_fd, KVM_IRQFD, &r) < 0 ? -errno : 0;
}

int kvm_ioeventfd(struct kvm *k, int fd, uint64_t addr, uint32_t datamatch)
{
	struct kvm_ioeventfd r = {
		.datamatch = datamatch,
		.addr = addr,
		.len = 4,
		.fd = fd,
		.flags = KVM_IOEVENTFD_FLAG_DATAMATCH,
	};

	return ioctl(k->vm_fd, KVM_IOEVENTFD, &r) < 0 ? -errno : 0;
}
