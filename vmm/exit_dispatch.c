/* What a vCPU does with each decoded exit: the pure half of the run loop. */
#include "vmm/bus.h"
#include "vmm/exit.h"
#include "common/log.h"

static const char *const kind_names[] = {
	[EXIT_NONE] = "none", [EXIT_PIO] = "pio", [EXIT_MMIO] = "mmio",
	[EXIT_SHUTDOWN] = "shutdown", [EXIT_SYSTEM_EVENT] = "system-event",
	[EXIT_HLT] = "hlt", [EXIT_FAIL] = "fail", [EXIT_UNKNOWN] = "unknown",
};

const char *exit_kind_name(enum exit_kind k)
{
	if ((unsigned)k < sizeof(kind_names) / sizeof(kind_names[0]))
		return kind_names[k];
	return "?";
}

static bool valid_width(uint32_t len)
{
	return len == 1 || len == 2 || len == 4 || len == 8;
}

static void do_pio(struct bus *pio, struct vm_exit *e)
{
	/* String I/O repeats the access @count times over consecutive data. */
	for (uint32_t i = 0; i < e->count; i++) {
		uint8_t *d = e->data + (uint64_t)i * e->len;

		if (e->is_write)
			bus_write(pio, e->addr, d, e->len);
		else
			bus_read(pio, e->addr, d, e->len);
	}
}

static void do_mmio(struct bus *mmio, struct vm_exit *e)
{
	bool hit;

	if (e->is_write)
		hit = bus_write(mmio, e->addr, e->data, e->len);
	else
		hit = bus_read(mmio, e->addr, e->data, e->len);
	if (!hit)
		log_debug("unclaimed mmio %s at 0x%llx len %u", e->is_write ? "write" : "read",
			  (unsigned long long)e->addr, e->len);
}

enum exit_action exit_dispatch(struct bus *pio, struct bus *mmio, struct vm_exit *e)
{
	switch (e->kind) {
	case EXIT_NONE:
		return EXIT_ACT_CONTINUE;
	case EXIT_PIO:
		/* KVM caps string I/O at one page of data; stay well inside it. */
		if (!valid_width(e->len) || e->len == 8 || e->count == 0 ||
		    (uint64_t)e->count * e->len > 4096)
			return EXIT_ACT_ERROR;
		do_pio(pio, e);
		return EXIT_ACT_CONTINUE;
	case EXIT_MMIO:
		if (!valid_width(e->len))
			return EXIT_ACT_ERROR;
		do_mmio(mmio, e);
		return EXIT_ACT_CONTINUE;
	case EXIT_SHUTDOWN:
	case EXIT_SYSTEM_EVENT:
		return EXIT_ACT_SHUTDOWN;
	case EXIT_HLT:
		/* With the in-kernel irqchip KVM handles HLT; one here means stop. */
		return EXIT_ACT_SHUTDOWN;
	case EXIT_FAIL:
	case EXIT_UNKNOWN:
	default:
		return EXIT_ACT_ERROR;
	}
}
