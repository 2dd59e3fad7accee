/* The arm64 vCPU register record: writer, and the parser of hostile ones. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "common/le_bytes.h"
#include "vmm/arch/arm64/reg_record.h"
#include "vmm/arch/arm64/regs.h"

static size_t slot(unsigned bytes)
{
	return 8 + (((size_t)bytes + 7) & ~(size_t)7);
}

size_t arm64_reg_record_size(const uint64_t *ids, size_t n)
{
	size_t len = ARM64_REG_RECORD_HDR;
	char err[128];

	if (n > ARM64_REG_RECORD_MAX)
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (!arm64_reg_id_valid(ids[i], err, sizeof(err)))
			return 0;
		len += slot(arm64_reg_bytes(ids[i]));
	}
	return len;
}

void arm64_reg_writer_init(struct arm64_reg_writer *w, uint8_t *buf, size_t cap)
{
	*w = (struct arm64_reg_writer){ .buf = buf, .cap = cap, .len = ARM64_REG_RECORD_HDR };
	if (cap < ARM64_REG_RECORD_HDR) {
		w->err = -ENOSPC;
		return;
	}
	memset(buf, 0, ARM64_REG_RECORD_HDR);
	le_put32(buf, ARM64_REG_RECORD_MAGIC);
	le_put32(buf + 4, ARM64_REG_RECORD_VERSION);
}

uint8_t *arm64_reg_writer_add(struct arm64_reg_writer *w, uint64_t id)
{
	char err[128];
	size_t need;
	uint8_t *p;

	if (w->err)
		return NULL;
	if (!arm64_reg_id_valid(id, err, sizeof(err)) || w->n >= ARM64_REG_RECORD_MAX) {
		w->err = -EINVAL;
		return NULL;
	}
	need = slot(arm64_reg_bytes(id));
	if (need > w->cap - w->len) {
		w->err = -ENOSPC;
		return NULL;
	}
	p = w->buf + w->len;
	memset(p, 0, need);
	le_put32(p, (uint32_t)id);
	le_put32(p + 4, (uint32_t)(id >> 32));
	w->len += need;
	w->n++;
	return p + 8;
}

long arm64_reg_writer_finish(struct arm64_reg_writer *w)
{
	if (w->err)
		return w->err;
	le_put32(w->buf + 8, w->n);
	return (long)w->len;
}

static bool zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* Entries from offset 16 on: each one inside the record, valid, padded. */
static int parse_entries(const uint8_t *p, size_t len, struct arm64_reg_entry *out,
			 uint32_t count, char *err, size_t errlen)
{
	size_t off = ARM64_REG_RECORD_HDR;

	for (uint32_t i = 0; i < count; i++) {
		uint64_t id;
		unsigned bytes;

		if (len - off < 8) {
			snprintf(err, errlen, "register record: entry %u of %u is cut off", i, count);
			return -EINVAL;
		}
		id = le_get64(p + off);
		if (!arm64_reg_id_valid(id, err, errlen))
			return -EINVAL;
		bytes = arm64_reg_bytes(id);
		if (len - off - 8 < slot(bytes) - 8) {
			snprintf(err, errlen, "register record: the value of 0x%llx is cut off",
				 (unsigned long long)id);
			return -EINVAL;
		}
		if (!zero(p + off + 8 + bytes, slot(bytes) - 8 - bytes)) {
			snprintf(err, errlen, "register record: padding after 0x%llx is not zero",
				 (unsigned long long)id);
			return -EINVAL;
		}
		for (uint32_t j = 0; j < i; j++)
			if (out[j].id == id) {
				snprintf(err, errlen, "register record: 0x%llx appears twice",
					 (unsigned long long)id);
				return -EINVAL;
			}
		out[i] = (struct arm64_reg_entry){ id, p + off + 8, bytes };
		off += slot(bytes);
	}
	if (off != len) {
		snprintf(err, errlen, "register record: %zu bytes after the last entry", len - off);
		return -EINVAL;
	}
	return (int)count;
}

int arm64_reg_record_parse(const uint8_t *p, size_t len, struct arm64_reg_entry *out,
			   size_t cap, char *err, size_t errlen)
{
	uint32_t count;

	if (len < ARM64_REG_RECORD_HDR || le_get32(p) != ARM64_REG_RECORD_MAGIC) {
		snprintf(err, errlen, "register record: no arm64 register record header");
		return -EINVAL;
	}
	if (le_get32(p + 4) != ARM64_REG_RECORD_VERSION || le_get32(p + 12)) {
		snprintf(err, errlen, "register record: version %u is not %u", le_get32(p + 4),
			 ARM64_REG_RECORD_VERSION);
		return -EINVAL;
	}
	count = le_get32(p + 8);
	if (count > ARM64_REG_RECORD_MAX || count > cap) {
		snprintf(err, errlen, "register record: %u registers, at most %zu", count,
			 cap < ARM64_REG_RECORD_MAX ? cap : (size_t)ARM64_REG_RECORD_MAX);
		return -E2BIG;
	}
	return parse_entries(p, len, out, count, err, errlen);
}

int arm64_reg_record_match(const struct arm64_reg_entry *e, int n, const uint64_t *list,
			   size_t nlist, char *err, size_t errlen)
{
	/* Entries are unique (the parser's check), so equal counts plus every
	 * listed id present means equal sets. */
	for (size_t i = 0; i < nlist; i++) {
		bool found = false;

		for (int j = 0; j < n && !found; j++)
			found = e[j].id == list[i];
		if (!found) {
			snprintf(err, errlen, "register record: register 0x%llx of this vCPU is"
				 " not in the record", (unsigned long long)list[i]);
			return -EINVAL;
		}
	}
	if ((size_t)n != nlist) {
		snprintf(err, errlen, "register record: %d registers, this vCPU has %zu", n, nlist);
		return -EINVAL;
	}
	return 0;
}
