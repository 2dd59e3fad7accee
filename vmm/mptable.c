/* MP tables (MP spec 1.4, chapter 4): CPUs, one ISA bus, the IOAPIC, IRQ routes. */
#include <errno.h>
#include <string.h>

#include "vmm/boot_layout.h"
#include "vmm/mptable.h"

#define MP_IRQS 24	/* IOAPIC pins, identity-routed from ISA IRQs */

struct __attribute__((packed)) mpf {
	char sig[4];
	uint32_t physptr;
	uint8_t length, spec, checksum, feature[5];
};
struct __attribute__((packed)) mpc_hdr {
	char sig[4];
	uint16_t length;
	uint8_t spec, checksum;
	char oem[8], product[12];
	uint32_t oemptr;
	uint16_t oemsize, count;
	uint32_t lapic;
	uint16_t ext_len;
	uint8_t ext_checksum, reserved;
};
struct __attribute__((packed)) mpc_cpu {
	uint8_t type, apicid, apicver, flags;
	uint32_t signature, features, reserved[2];
};
struct __attribute__((packed)) mpc_bus {
	uint8_t type, id;
	char name[6];
};
struct __attribute__((packed)) mpc_ioapic {
	uint8_t type, id, ver, flags;
	uint32_t addr;
};
struct __attribute__((packed)) mpc_irq {
	uint8_t type, irqtype;
	uint16_t flags;
	uint8_t srcbus, srcirq, dstapic, dstirq;
};

static uint8_t checksum(const void *p, size_t n)
{
	const uint8_t *b = p;
	uint8_t s = 0;

	while (n--)
		s += *b++;
	return (uint8_t)-s;
}

static size_t put(uint8_t *base, size_t off, const void *e, size_t n)
{
	memcpy(base + off, e, n);
	return off + n;
}

static size_t write_entries(uint8_t *t, size_t off, int ncpus)
{
	struct mpc_bus bus = { .type = 1, .id = 0, .name = "ISA   " };
	struct mpc_ioapic io = { 2, (uint8_t)ncpus, 0x11, 1, (uint32_t)IOAPIC_ADDR };

	for (int i = 0; i < ncpus; i++) {
		struct mpc_cpu c = {
			.type = 0, .apicid = (uint8_t)i, .apicver = 0x14,
			.flags = (uint8_t)(1 | (i == 0 ? 2 : 0)),
			.signature = 0x600, .features = 0x201,	/* FPU, APIC */
		};
		off = put(t, off, &c, sizeof(c));
	}
	off = put(t, off, &bus, sizeof(bus));
	off = put(t, off, &io, sizeof(io));
	for (int i = 0; i < MP_IRQS; i++) {
		struct mpc_irq r = { 3, 0, 0, 0, (uint8_t)i, (uint8_t)ncpus, (uint8_t)i };
		off = put(t, off, &r, sizeof(r));
	}
	struct mpc_irq lint0 = { 4, 3 /* ExtINT */, 0, 0, 0, 0xff, 0 };
	struct mpc_irq lint1 = { 4, 1 /* NMI */, 0, 0, 0, 0xff, 1 };
	off = put(t, off, &lint0, sizeof(lint0));
	return put(t, off, &lint1, sizeof(lint1));
}

int mptable_write(struct guest_mem *m, int ncpus)
{
	const size_t max = sizeof(struct mpc_hdr) + MPTABLE_MAX_CPUS * sizeof(struct mpc_cpu) +
			   sizeof(struct mpc_bus) + sizeof(struct mpc_ioapic) +
			   (MP_IRQS + 2) * sizeof(struct mpc_irq);
	uint64_t table_gpa = BIOS_START + sizeof(struct mpf);
	struct mpf *f = gm_ptr_w(m, BIOS_START, sizeof(*f));
	uint8_t *t = gm_ptr_w(m, table_gpa, max);
	struct mpc_hdr h = {
		.sig = "PCMP", .spec = 4, .oem = "MVM     ", .product = "microVM     ",
		.lapic = (uint32_t)LAPIC_ADDR,
	};
	size_t len;

	if (ncpus < 1 || ncpus > MPTABLE_MAX_CPUS)
		return -EINVAL;
	if (!f || !t)
		return -EFAULT;
	memset(t, 0, max);
	len = write_entries(t, sizeof(h), ncpus);
	h.length = (uint16_t)len;
	h.count = (uint16_t)(ncpus + 2 + MP_IRQS + 2);
	memcpy(t, &h, sizeof(h));
	((struct mpc_hdr *)t)->checksum = checksum(t, len);
	memset(f, 0, sizeof(*f));
	memcpy(f->sig, "_MP_", 4);
	f->physptr = (uint32_t)table_gpa;
	f->length = 1;
	f->spec = 4;
	f->checksum = checksum(f, sizeof(*f));
	return 0;
}
