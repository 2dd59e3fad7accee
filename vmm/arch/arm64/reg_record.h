/*
 * The saved register record of one arm64 vCPU: every register KVM lists
 * for it (KVM_GET_REG_LIST), each with its value (KVM_GET_ONE_REG), in
 * KVM's order. A snapshot carries it; a snapshot is hostile input, so the
 * parser checks the whole record before a caller sets one register. Pure.
 *
 * Layout, little-endian:
 *   0  u32 magic ARM64_REG_RECORD_MAGIC ("A64R")
 *   4  u32 version (1)
 *   8  u32 count (at most ARM64_REG_RECORD_MAX)
 *  12  u32 zero
 *  16  count entries: u64 id, then the value's arm64_reg_bytes(id) bytes,
 *      zero-padded to a multiple of 8
 * Nothing follows the last entry.
 */
#ifndef MVM_ARM64_REG_RECORD_H
#define MVM_ARM64_REG_RECORD_H

#include <stddef.h>
#include <stdint.h>

#define ARM64_REG_RECORD_MAGIC   0x52343641U	/* "A64R" */
#define ARM64_REG_RECORD_VERSION 1
#define ARM64_REG_RECORD_HDR     16
/* KVM lists a few hundred registers without SVE (which mvm does not turn
 * on); the cap bounds what a hostile record makes the parser walk. */
#define ARM64_REG_RECORD_MAX     2048

/* Bytes a record of these @n ids takes; 0 when an id is invalid
 * (arm64_reg_id_valid) or @n is over the cap. */
size_t arm64_reg_record_size(const uint64_t *ids, size_t n);

struct arm64_reg_writer {
	uint8_t *buf;
	size_t cap, len;
	uint32_t n;
	int err;	/* sticky: the first failure */
};

/* Start a record in @buf of @cap bytes (arm64_reg_record_size's). */
void arm64_reg_writer_init(struct arm64_reg_writer *w, uint8_t *buf, size_t cap);
/* Append register @id; returns where its arm64_reg_bytes(id) value bytes
 * go (zeroed), or NULL (invalid id, over the cap, no room; sticky). */
uint8_t *arm64_reg_writer_add(struct arm64_reg_writer *w, uint64_t id);
/* Write the count; the record's length, or the first -errno. */
long arm64_reg_writer_finish(struct arm64_reg_writer *w);

struct arm64_reg_entry {
	uint64_t id;
	const uint8_t *val;	/* inside the parsed buffer */
	unsigned bytes;
};

/*
 * Check the @len-byte record @p whole and index it into @out (room for
 * @cap entries): header, count within both caps, every id valid and
 * unique, every value inside the record, padding zero, no trailing bytes.
 * The count, or -EINVAL / -E2BIG with the reason in @err; nothing in @out
 * is meaningful after an error.
 */
int arm64_reg_record_parse(const uint8_t *p, size_t len, struct arm64_reg_entry *out,
			   size_t cap, char *err, size_t errlen);

/*
 * Does a parsed record hold exactly the registers of @list (the vCPU's
 * KVM_GET_REG_LIST), no more and no fewer? Restoring some registers and
 * leaving others at their reset values would run a guest in a state it
 * was never in. 0, or -EINVAL naming the first register that differs.
 */
int arm64_reg_record_match(const struct arm64_reg_entry *e, int n, const uint64_t *list,
			   size_t nlist, char *err, size_t errlen);

#endif
