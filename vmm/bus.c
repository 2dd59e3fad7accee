/* Address buses for PIO and MMIO. */
#include <errno.h>
#include <string.h>

#include "vmm/bus.h"

int bus_add(struct bus *b, uint64_t base, uint64_t len,
	    const struct bus_dev_ops *ops, void *opaque)
{
	if (!len || base + len < base)
		return -EINVAL;
	if (b->nr == BUS_MAX_RANGES)
		return -ENOSPC;
	for (int i = 0; i < b->nr; i++) {
		struct bus_range *r = &b->ranges[i];

		if (base < r->base + r->len && r->base < base + len)
			return -EBUSY;
	}
	b->ranges[b->nr++] = (struct bus_range){ base, len, ops, opaque };
	return 0;
}

/* The whole access must fall inside one range: no device sees a straddle. */
static struct bus_range *lookup(struct bus *b, uint64_t addr, uint32_t len)
{
	for (int i = 0; i < b->nr; i++) {
		struct bus_range *r = &b->ranges[i];

		if (addr >= r->base && addr - r->base < r->len &&
		    len <= r->len - (addr - r->base))
			return r;
	}
	return NULL;
}

bool bus_read(struct bus *b, uint64_t addr, uint8_t *data, uint32_t len)
{
	struct bus_range *r = lookup(b, addr, len);

	if (!r || !r->ops->read) {
		memset(data, 0xff, len);
		return r != NULL;
	}
	r->ops->read(r->opaque, addr - r->base, data, len);
	return true;
}

bool bus_write(struct bus *b, uint64_t addr, const uint8_t *data, uint32_t len)
{
	struct bus_range *r = lookup(b, addr, len);

	if (!r)
		return false;
	if (r->ops->write)
		r->ops->write(r->opaque, addr - r->base, data, len);
	return true;
}
