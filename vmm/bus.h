/*
 * An address bus (one for port I/O, one for MMIO): devices claim ranges and
 * get reads and writes with the offset into their range. Ranges are fixed
 * before vCPUs start, so lookups take no lock; devices lock themselves.
 */
#ifndef MVM_BUS_H
#define MVM_BUS_H

#include <stdbool.h>
#include <stdint.h>

#define BUS_MAX_RANGES 64

struct bus_dev_ops {
	/* @data holds @len bytes (1, 2, 4 or 8), little-endian. */
	void (*read)(void *opaque, uint64_t off, uint8_t *data, uint32_t len);
	void (*write)(void *opaque, uint64_t off, const uint8_t *data, uint32_t len);
};

struct bus_range {
	uint64_t base;
	uint64_t len;
	const struct bus_dev_ops *ops;
	void *opaque;
};

struct bus {
	const char *name;
	struct bus_range ranges[BUS_MAX_RANGES];
	int nr;
};

/* -EBUSY when the range overlaps another, -ENOSPC when the bus is full. */
int bus_add(struct bus *b, uint64_t base, uint64_t len,
	    const struct bus_dev_ops *ops, void *opaque);
/* false when nothing claims the address (reads then see all ones). */
bool bus_read(struct bus *b, uint64_t addr, uint8_t *data, uint32_t len);
bool bus_write(struct bus *b, uint64_t addr, const uint8_t *data, uint32_t len);

#endif
