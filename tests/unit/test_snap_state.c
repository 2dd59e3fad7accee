/* The snapshot state file as hostile input, and the vCPU/VM section decoders. */
#include <criterion/criterion.h>
#include <errno.h>
#include <linux/kvm.h>
#include <stdlib.h>
#include <string.h>

#include "common/crc32c.h"
#include "snapshots/state_file.h"
#include "vmm/vcpu_state.h"
#include "vmm/vm_state.h"

static struct snap_header hdr(void)
{
	struct snap_header h;

	memset(&h, 0, sizeof(h));
	strcpy(h.mvm_version, "mvm test");
	strcpy(h.cpu_vendor, "AuthenticAMD");
	h.cpuid_fingerprint = 0x1234;
	h.ram_size = 256ULL << 20;
	h.nr_regions = 1;
	h.regions[0].size = 256ULL << 20;
	h.ncpus = 2;
	return h;
}

static struct snap_w valid_file(void)
{
	struct snap_w w = { 0 };
	struct snap_header h = hdr();

	snap_state_begin(&w, &h);
	snap_state_section(&w, SNAP_SEC_VM, 0, 1, "vmvmvm", 6);
	snap_state_section(&w, SNAP_SEC_DEV, 3, 2, "device bytes", 12);
	cr_assert_eq(snap_state_finish(&w), 0);
	return w;
}

static char err[256];

Test(snap_state, valid_file_parses)
{
	struct snap_w w = valid_file();
	struct snap_state *s = calloc(1, sizeof(*s));
	const struct snap_section *sec;

	cr_assert_eq(snap_state_parse(w.p, w.len, s, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(s->nr_sections, 2);
	cr_assert_str_eq(s->h.cpu_vendor, "AuthenticAMD");
	cr_assert_eq(s->h.ncpus, 2);
	sec = snap_state_find(s, SNAP_SEC_DEV, 3);
	cr_assert_not_null(sec);
	cr_assert_eq(sec->version, 2);
	cr_assert_eq(sec->len, 12);
	cr_assert_eq(memcmp(sec->data, "device bytes", 12), 0);
	cr_assert_null(snap_state_find(s, SNAP_SEC_DEV, 4));
	free(s);
	snap_w_free(&w);
}

Test(snap_state, every_flipped_bit_is_refused)
{
	struct snap_w w = valid_file();
	struct snap_state *s = calloc(1, sizeof(*s));

	for (size_t i = 0; i < w.len; i++) {
		for (int b = 0; b < 8; b++) {
			w.p[i] ^= (uint8_t)(1 << b);
			cr_assert_neq(snap_state_parse(w.p, w.len, s, err, sizeof(err)), 0,
				      "flip of bit %d of byte %zu accepted", b, i);
			w.p[i] ^= (uint8_t)(1 << b);
		}
	}
	free(s);
	snap_w_free(&w);
}

Test(snap_state, every_truncation_is_refused)
{
	struct snap_w w = valid_file();
	struct snap_state *s = calloc(1, sizeof(*s));

	for (size_t n = 0; n < w.len; n++) {
		uint8_t *copy = malloc(n + 1);	/* exact size: ASan catches overreads */

		memcpy(copy, w.p, n);
		cr_assert_neq(snap_state_parse(copy, n, s, err, sizeof(err)), 0, "length %zu accepted", n);
		free(copy);
	}
	free(s);
	snap_w_free(&w);
}

/* Tampering that also fixes the checksum: the structure checks still hold. */
static int parse_recrc(struct snap_w *w, struct snap_state *s)
{
	uint32_t crc = crc32c(0, w->p, w->len - 4);

	memcpy(w->p + w->len - 4, &crc, 4);
	return snap_state_parse(w->p, w->len, s, err, sizeof(err));
}

Test(snap_state, hostile_structure_with_a_good_checksum)
{
	struct snap_state *s = calloc(1, sizeof(*s));
	struct snap_w w = valid_file();
	uint32_t big = 0xfffffff0u, many = 100000;

	/* First section's length far past the end. */
	memcpy(w.p + SNAP_HEADER_SIZE + 12, &big, 4);
	cr_assert_eq(parse_recrc(&w, s), -EBADMSG);
	cr_assert(strstr(err, "past the end"), "%s", err);
	snap_w_free(&w);

	w = valid_file();
	memcpy(w.p + 120, &many, 4);		/* section count */
	cr_assert_eq(parse_recrc(&w, s), -EBADMSG);
	snap_w_free(&w);

	w = valid_file();
	memset(w.p + 80, 0xff, 4);		/* region count */
	cr_assert_eq(parse_recrc(&w, s), -EBADMSG);
	cr_assert(strstr(err, "memory layout"), "%s", err);
	snap_w_free(&w);

	w = valid_file();
	memset(w.p + 96, 0x11, 8);		/* region size no longer the RAM size */
	cr_assert_eq(parse_recrc(&w, s), -EBADMSG);
	snap_w_free(&w);

	w = valid_file();
	memset(w.p + 84, 0, 4);			/* no vCPUs */
	cr_assert_eq(parse_recrc(&w, s), -EBADMSG);
	snap_w_free(&w);

	w = valid_file();
	memset(w.p + 16, 'x', 32);		/* unterminated version string */
	cr_assert_eq(parse_recrc(&w, s), -EBADMSG);
	snap_w_free(&w);

	w = valid_file();
	w.p[8] = 9;				/* format version */
	cr_assert_eq(parse_recrc(&w, s), -EPROTO);
	snap_w_free(&w);
	free(s);
}

Test(snap_state, size_cap_and_duplicates)
{
	struct snap_state *s = calloc(1, sizeof(*s));
	struct snap_header h = hdr();
	struct snap_w w = { 0 };
	uint8_t one = 0;

	cr_assert_eq(snap_state_parse(&one, (size_t)SNAP_STATE_MAX + 1, s, err, sizeof(err)), -E2BIG);
	snap_state_begin(&w, &h);
	snap_state_section(&w, SNAP_SEC_VCPU, 0, 1, "a", 1);
	snap_state_section(&w, SNAP_SEC_VCPU, 0, 1, "b", 1);
	cr_assert_eq(snap_state_finish(&w), 0);
	cr_assert_eq(snap_state_parse(w.p, w.len, s, err, sizeof(err)), 0);
	cr_assert_null(snap_state_find(s, SNAP_SEC_VCPU, 0), "a duplicate section must not resolve");
	snap_w_free(&w);
	free(s);
}

Test(snap_state, compatibility)
{
	struct snap_header a = hdr(), b = hdr();

	cr_assert_eq(snap_state_compatible(&a, &b, err, sizeof(err)), 0);
	strcpy(b.cpu_vendor, "GenuineIntel");
	cr_assert_eq(snap_state_compatible(&a, &b, err, sizeof(err)), -EXDEV);
	cr_assert(strstr(err, "GenuineIntel"), "%s", err);
	b = hdr();
	b.cpuid_fingerprint++;
	cr_assert_eq(snap_state_compatible(&a, &b, err, sizeof(err)), -EXDEV);
	b = hdr();
	b.ncpus = 1;
	cr_assert_eq(snap_state_compatible(&a, &b, err, sizeof(err)), -EXDEV);
}

/* A plausible vCPU section, built field by field as vcpu_state_encode does. */
static void vcpu_section(struct snap_w *w, uint32_t xsave_len, uint32_t nmsrs)
{
	struct kvm_mp_state mp = { .mp_state = KVM_MP_STATE_RUNNABLE };
	struct kvm_regs regs = { .rip = 0x1234, .rflags = 2 };
	struct kvm_sregs sregs = { .cr0 = 0x80000011 };
	uint8_t *xsave = calloc(1, xsave_len + 1);
	struct kvm_xcrs xcrs = { .nr_xcrs = 1 };
	struct kvm_debugregs dbg = { .dr7 = 0x400 };
	struct kvm_lapic_state lapic = { .regs = { 1, 2, 3 } };
	struct kvm_cpuid_entry2 cpuid[3] = { { .function = 0 }, { .function = 1 }, { .function = 7 } };
	struct kvm_msr_entry *msrs = calloc(nmsrs + 1, sizeof(*msrs));
	struct kvm_vcpu_events ev = { .nmi = { .pending = 1 } };

	for (uint32_t i = 0; i < nmsrs; i++)
		msrs[i] = (struct kvm_msr_entry){ .index = 0x10 + i, .data = i * 7 };
	xsave[0] = 0x7f;
	snap_w_blob(w, &mp, sizeof(mp));
	snap_w_blob(w, &regs, sizeof(regs));
	snap_w_blob(w, &sregs, sizeof(sregs));
	snap_w_blob(w, xsave, xsave_len);
	snap_w_blob(w, &xcrs, sizeof(xcrs));
	snap_w_blob(w, &dbg, sizeof(dbg));
	snap_w_blob(w, &lapic, sizeof(lapic));
	snap_w_u32(w, 2400000);
	snap_w_blob(w, cpuid, sizeof(cpuid));
	snap_w_blob(w, msrs, nmsrs * (uint32_t)sizeof(*msrs));
	snap_w_blob(w, &ev, sizeof(ev));
	free(xsave);
	free(msrs);
}

Test(snap_state, vcpu_section_round_trip)
{
	struct snap_w in = { 0 }, out = { 0 };
	struct vcpu_state *s;

	vcpu_section(&in, 4096, 40);
	cr_assert_eq(vcpu_state_decode(in.p, in.len, &s), 0);
	vcpu_state_encode(s, &out);
	cr_assert_eq(out.len, in.len);
	cr_assert_eq(memcmp(out.p, in.p, in.len), 0, "decode/encode changed the section");
	vcpu_state_free(s);
	snap_w_free(&in);
	snap_w_free(&out);
}

Test(snap_state, vcpu_section_hostile)
{
	struct snap_w w = { 0 };
	struct vcpu_state *s = NULL;

	vcpu_section(&w, 4096, 4);
	for (size_t n = 0; n < w.len; n += 7)
		cr_assert_neq(vcpu_state_decode(w.p, n, &s), 0, "truncated at %zu accepted", n);
	/* A regs blob one byte short: sizes must match the kernel's structs exactly. */
	{
		uint32_t bad = sizeof(struct kvm_regs) - 1;
		size_t off = 4 + sizeof(struct kvm_mp_state);

		memcpy(w.p + off, &bad, 4);
		cr_assert_eq(vcpu_state_decode(w.p, w.len, &s), -EBADMSG);
	}
	snap_w_free(&w);
	w = (struct snap_w){ 0 };
	vcpu_section(&w, 100, 4);	/* xsave smaller than the legacy area */
	cr_assert_eq(vcpu_state_decode(w.p, w.len, &s), -EBADMSG);
	snap_w_free(&w);
	w = (struct snap_w){ 0 };
	vcpu_section(&w, 4096, VCPU_STATE_MAX_MSRS + 1);	/* past the MSR cap */
	cr_assert_eq(vcpu_state_decode(w.p, w.len, &s), -EBADMSG);
	snap_w_free(&w);
}

Test(snap_state, vm_section)
{
	struct kvm_pit_state2 pit = { .flags = 1 };
	struct kvm_clock_data clock = { .clock = 123456789 };
	struct kvm_irqchip chip[3] = { { .chip_id = 0 }, { .chip_id = 1 }, { .chip_id = 2 } };
	struct snap_w w = { 0 };
	struct vm_kvm_state *s;

	snap_w_blob(&w, &pit, sizeof(pit));
	snap_w_blob(&w, &clock, sizeof(clock));
	for (int i = 0; i < 3; i++)
		snap_w_blob(&w, &chip[i], sizeof(chip[i]));
	cr_assert_eq(vm_state_decode(w.p, w.len, &s), 0);
	vm_state_free(s);
	cr_assert_neq(vm_state_decode(w.p, w.len - 1, &s), 0);
	/* chip ids out of order: each goes to KVM under its id, so it must be 0, 1, 2 */
	chip[2].chip_id = 7;
	snap_w_free(&w);
	w = (struct snap_w){ 0 };
	snap_w_blob(&w, &pit, sizeof(pit));
	snap_w_blob(&w, &clock, sizeof(clock));
	for (int i = 0; i < 3; i++)
		snap_w_blob(&w, &chip[i], sizeof(chip[i]));
	cr_assert_eq(vm_state_decode(w.p, w.len, &s), -EBADMSG);
	snap_w_free(&w);
}
