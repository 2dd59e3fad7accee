/* The arm64 virtio-mmio slot table: address, SPI and irqfd GSI per device. */
#include <errno.h>

#include "vmm/arch/arm64/virtio_slots.h"

uint32_t arm64_spi_gsi(uint32_t spi)
{
	/* arch/arm64/kvm/vgic/vgic-irqfd.c: the default routing gives GSI n
	 * pin n, and a pin is injected as SPI INTID n + 32 (VGIC_NR_PRIVATE_IRQS).
	 * So the GSI is the device tree's SPI number, not the INTID. */
	return spi;
}

int arm64_virtio_slot_alloc(struct arm64_virtio_slots *s, uint64_t *base, uint32_t *gsi)
{
	if (s->n < 0 || s->n >= ARM64_MAX_VIRTIO)
		return -ENOSPC;
	s->dev[s->n] = arm64_virtio_slot(s->n);
	*base = s->dev[s->n].base;
	*gsi = arm64_spi_gsi(s->dev[s->n].spi);
	s->n++;
	return 0;
}

void arm64_virtio_slots_describe(const struct arm64_virtio_slots *s, struct arm64_machine *m)
{
	m->virtio = s->n > 0 ? s->dev : NULL;
	m->nr_virtio = s->n > 0 ? s->n : 0;
}
