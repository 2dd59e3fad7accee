/*
 * The arm64 vCPU register record (vmm/arch/arm64/reg_record.c): a record
 * written from a register list reads back the same, and a hostile one is
 * refused whole, with a reason, before any register would be set. Run
 * natively and under qemu-aarch64 (make test-arm64).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/arch/arm64/reg_record.h"
#include "vmm/arch/arm64/regs.h"

static char err[256];
static struct arm64_reg_entry ent[ARM64_REG_RECORD_MAX];

/* A list like KVM's: core registers of three widths, a sysreg, firmware. */
static uint64_t ids[5];

static void make_ids(void)
{
	ids[0] = arm64_core_reg_id(ARM64_CORE_PC, 8);
	ids[1] = arm64_core_reg_id(ARM64_CORE_VREG(7), 16);
	ids[2] = arm64_core_reg_id(ARM64_CORE_FPCR, 4);
	ids[3] = arm64_mpidr_reg_id();
	ids[4] = ARM64_REG_ARCH | ARM64_REG_SIZE_U64 | ARM64_REG_FW;	/* PSCI version */
}

/* Write the record of ids[] with value bytes i*16+j; returns its length. */
static size_t write_record(uint8_t *buf, size_t cap)
{
	struct arm64_reg_writer w;
	long len;

	make_ids();
	arm64_reg_writer_init(&w, buf, cap);
	for (int i = 0; i < 5; i++) {
		uint8_t *v = arm64_reg_writer_add(&w, ids[i]);

		cr_assert_not_null(v);
		for (unsigned j = 0; j < arm64_reg_bytes(ids[i]); j++)
			v[j] = (uint8_t)(i * 16 + j + 1);
	}
	len = arm64_reg_writer_finish(&w);
	cr_assert_gt(len, 0);
	return (size_t)len;
}

static uint8_t rec[4096];

Test(arm64_reg_record, round_trips_ids_order_and_values)
{
	size_t len = write_record(rec, sizeof(rec));

	cr_assert_eq(len, arm64_reg_record_size(ids, 5));
	/* Header, then 8+8, 8+16, 8+8 (4 bytes padded), 8+8, 8+8. */
	cr_assert_eq(len, 16 + 16 + 24 + 16 + 16 + 16);
	cr_assert_eq(arm64_reg_record_parse(rec, len, ent, ARM64_REG_RECORD_MAX, err,
					    sizeof(err)), 5, "%s", err);
	for (int i = 0; i < 5; i++) {
		cr_assert_eq(ent[i].id, ids[i]);
		cr_assert_eq(ent[i].bytes, arm64_reg_bytes(ids[i]));
		for (unsigned j = 0; j < ent[i].bytes; j++)
			cr_assert_eq(ent[i].val[j], (uint8_t)(i * 16 + j + 1));
	}
	cr_assert_eq(arm64_reg_record_match(ent, 5, ids, 5, err, sizeof(err)), 0, "%s", err);
}

static void refused(size_t len, int want, const char *words)
{
	err[0] = 0;
	cr_assert_eq(arm64_reg_record_parse(rec, len, ent, ARM64_REG_RECORD_MAX, err,
					    sizeof(err)), want, "%s", err);
	cr_assert(strstr(err, words), "'%s' does not say '%s'", err, words);
}

Test(arm64_reg_record, every_cut_is_refused)
{
	size_t len = write_record(rec, sizeof(rec));

	for (size_t cut = 0; cut < len; cut++) {
		err[0] = 0;
		cr_assert_lt(arm64_reg_record_parse(rec, cut, ent, ARM64_REG_RECORD_MAX, err,
						    sizeof(err)), 0, "a record cut at %zu", cut);
		cr_assert_neq(err[0], 0);
	}
}

Test(arm64_reg_record, hostile_headers_are_refused)
{
	size_t len = write_record(rec, sizeof(rec));

	rec[0] ^= 1;
	refused(len, -EINVAL, "no arm64 register record");
	rec[0] ^= 1;
	rec[4] = 2;
	refused(len, -EINVAL, "version 2");
	rec[4] = 1;
	rec[12] = 1;
	refused(len, -EINVAL, "version");
	rec[12] = 0;
	/* A count over the cap is refused before any entry is read. */
	memcpy(rec + 8, "\xff\xff\xff\xff", 4);
	refused(len, -E2BIG, "at most 2048");
	/* One more than there are: the sixth entry is cut off. */
	rec[8] = 6, rec[9] = rec[10] = rec[11] = 0;
	refused(len, -EINVAL, "entry 5 of 6 is cut off");
	/* One fewer: bytes left over. */
	rec[8] = 4;
	refused(len, -EINVAL, "16 bytes after the last entry");
	rec[8] = 5;
	cr_assert_eq(arm64_reg_record_parse(rec, len, ent, 4, err, sizeof(err)), -E2BIG);
}

Test(arm64_reg_record, hostile_entries_are_refused)
{
	size_t len = write_record(rec, sizeof(rec));
	size_t fpcr = 16 + 16 + 24;	/* the third entry: a 4-byte value padded */

	/* Padding after a 4-byte value must be zero. */
	rec[fpcr + 8 + 5] = 1;
	refused(len, -EINVAL, "padding after");
	rec[fpcr + 8 + 5] = 0;
	/* MPIDR's id grown to 2048 bits: its value would run past the record. */
	rec[fpcr + 16 + 6] = 0x80;
	refused(len, -EINVAL, "is cut off");
	rec[fpcr + 16 + 6] = 0x30;
	/* fpcr's id grown to 2048 bits: no core register is that wide. */
	rec[fpcr + 6] = 0x80;
	refused(len, -EINVAL, "no 256-byte register");
	/* A core id at the padding before v0. */
	rec[fpcr] = (uint8_t)(ARM64_CORE_SPSR(5) / 4);
	rec[fpcr + 6] = 0x30;
	refused(len, -EINVAL, "no 8-byte register");
	/* The same register twice (pc where fpcr was: same slot size). */
	write_record(rec, sizeof(rec));
	memcpy(rec + fpcr, rec + 16, 8);
	rec[fpcr + 8 + 4] = 0;
	refused(len, -EINVAL, "appears twice");
	/* Another architecture's register. */
	write_record(rec, sizeof(rec));
	rec[16 + 7] = 0x20;	/* KVM_REG_X86 */
	refused(len, -EINVAL, "not an arm64 register");
}

Test(arm64_reg_record, a_record_must_hold_exactly_the_vcpus_registers)
{
	size_t len = write_record(rec, sizeof(rec));
	uint64_t more[6];

	cr_assert_eq(arm64_reg_record_parse(rec, len, ent, ARM64_REG_RECORD_MAX, err,
					    sizeof(err)), 5);
	memcpy(more, ids, sizeof(ids));
	more[5] = arm64_sys_reg_id(3, 3, 14, 0, 2);
	cr_assert_eq(arm64_reg_record_match(ent, 5, more, 6, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "0x603000000013df02 of this vCPU is not in the record"), "%s", err);
	cr_assert_eq(arm64_reg_record_match(ent, 5, ids, 4, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "5 registers, this vCPU has 4"), "%s", err);
}

Test(arm64_reg_record, the_writer_refuses_bad_ids_and_full_buffers)
{
	struct arm64_reg_writer w;
	uint8_t small[40];

	make_ids();
	cr_assert_eq(arm64_reg_record_size(ids, ARM64_REG_RECORD_MAX + 1), 0);
	arm64_reg_writer_init(&w, small, sizeof(small));
	cr_assert_not_null(arm64_reg_writer_add(&w, ids[0]));	/* 16 + 16 bytes */
	cr_assert_null(arm64_reg_writer_add(&w, ids[1]));	/* 24 more: no room */
	cr_assert_eq(arm64_reg_writer_finish(&w), -ENOSPC);
	arm64_reg_writer_init(&w, small, sizeof(small));
	cr_assert_null(arm64_reg_writer_add(&w, 0x4030000000100040ULL));
	cr_assert_null(arm64_reg_writer_add(&w, ids[0]));	/* sticky */
	cr_assert_eq(arm64_reg_writer_finish(&w), -EINVAL);
}
