/* The snapshot state file: writer, hostile-input parser, compatibility check. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/crc32c.h"
#include "snapshots/state_file.h"
#include "vmm/guest_mem.h"

/* Header layout (offsets): magic 0, version 8, header size 12, mvm version 16,
 * vendor 48, fingerprint 64, ram 72, regions 80, cpus 84, region table 88,
 * section count 120, reserved 124. */
#define OFF_NSECT 120

void snap_state_begin(struct snap_w *w, const struct snap_header *h)
{
	snap_w_bytes(w, SNAP_MAGIC, 8);
	snap_w_u32(w, SNAP_FORMAT_VERSION);
	snap_w_u32(w, SNAP_HEADER_SIZE);
	snap_w_bytes(w, h->mvm_version, sizeof(h->mvm_version));
	snap_w_bytes(w, h->cpu_vendor, sizeof(h->cpu_vendor));
	snap_w_u64(w, h->cpuid_fingerprint);
	snap_w_u64(w, h->ram_size);
	snap_w_u32(w, h->nr_regions);
	snap_w_u32(w, h->ncpus);
	for (int i = 0; i < SNAP_MAX_REGIONS; i++) {
		snap_w_u64(w, h->regions[i].gpa);
		snap_w_u64(w, h->regions[i].size);
	}
	snap_w_u32(w, 0);	/* section count, patched by finish */
	snap_w_u32(w, 0);
}

void snap_state_section(struct snap_w *w, uint32_t type, uint32_t instance, uint32_t version,
			const void *data, size_t len)
{
	uint32_t n;

	if (len > SNAP_STATE_MAX) {
		w->err = -E2BIG;
		return;
	}
	snap_w_u32(w, type);
	snap_w_u32(w, instance);
	snap_w_u32(w, version);
	snap_w_u32(w, (uint32_t)len);
	snap_w_bytes(w, data, len);
	if (w->err || w->len < SNAP_HEADER_SIZE)
		return;
	memcpy(&n, w->p + OFF_NSECT, 4);
	snap_w_patch_u32(w, OFF_NSECT, n + 1);
}

int snap_state_finish(struct snap_w *w)
{
	uint32_t crc;

	if (w->err)
		return w->err;
	crc = crc32c(0, w->p, w->len);
	snap_w_u32(w, crc);
	if (!w->err && w->len > SNAP_STATE_MAX)
		return -E2BIG;
	return w->err;
}

static int bad(char *err, size_t errlen, int ret, const char *what)
{
	snprintf(err, errlen, "snapshot state: %s", what);
	return ret;
}

static bool str_ok(const char *s, size_t cap)
{
	return memchr(s, 0, cap) != NULL;
}

/* RAM regions: page-aligned, in order, not overlapping, summing to ram_size. */
static bool layout_ok(const struct snap_header *h)
{
	uint64_t sum = 0, end = 0;

	if (h->nr_regions < 1 || h->nr_regions > SNAP_MAX_REGIONS)
		return false;
	if (h->ram_size < GM_MIN_SIZE || h->ram_size > GM_MAX_SIZE || h->ram_size % GM_PAGE_SIZE)
		return false;
	for (uint32_t i = 0; i < h->nr_regions; i++) {
		const struct snap_region *r = &h->regions[i];

		if (!r->size || r->size % GM_PAGE_SIZE || r->gpa % GM_PAGE_SIZE ||
		    r->size > GM_MAX_SIZE || r->gpa > (1ULL << 46) || r->gpa < end)
			return false;
		end = r->gpa + r->size;
		sum += r->size;
	}
	return sum == h->ram_size;
}

static int parse_header(struct snap_r *r, struct snap_header *h, char *err, size_t errlen)
{
	char magic[8];

	snap_r_bytes(r, magic, 8);
	if (memcmp(magic, SNAP_MAGIC, 8))
		return bad(err, errlen, -EBADMSG, "not an mvm snapshot (bad magic)");
	h->format_version = snap_r_u32(r);
	if (h->format_version != SNAP_FORMAT_VERSION)
		return bad(err, errlen, -EPROTO, "unsupported format version");
	if (snap_r_u32(r) != SNAP_HEADER_SIZE)
		return bad(err, errlen, -EBADMSG, "bad header size");
	snap_r_bytes(r, h->mvm_version, sizeof(h->mvm_version));
	snap_r_bytes(r, h->cpu_vendor, sizeof(h->cpu_vendor));
	h->cpuid_fingerprint = snap_r_u64(r);
	h->ram_size = snap_r_u64(r);
	h->nr_regions = snap_r_u32(r);
	h->ncpus = snap_r_u32(r);
	for (int i = 0; i < SNAP_MAX_REGIONS; i++) {
		h->regions[i].gpa = snap_r_u64(r);
		h->regions[i].size = snap_r_u64(r);
	}
	if (!str_ok(h->mvm_version, sizeof(h->mvm_version)) ||
	    !str_ok(h->cpu_vendor, sizeof(h->cpu_vendor)))
		return bad(err, errlen, -EBADMSG, "unterminated string in the header");
	if (!layout_ok(h))
		return bad(err, errlen, -EBADMSG, "impossible memory layout");
	if (h->ncpus < 1 || h->ncpus > SNAP_MAX_CPUS)
		return bad(err, errlen, -EBADMSG, "impossible vCPU count");
	return r->err ? bad(err, errlen, -EBADMSG, "truncated header") : 0;
}

int snap_state_parse(const uint8_t *buf, size_t len, struct snap_state *out,
		     char *err, size_t errlen)
{
	struct snap_r r;
	uint32_t crc, want, n;
	int ret;

	memset(out, 0, sizeof(*out));
	if (len > SNAP_STATE_MAX)
		return bad(err, errlen, -E2BIG, "file larger than the 16 MiB cap");
	if (len < SNAP_HEADER_SIZE + 4)
		return bad(err, errlen, -EBADMSG, "file too short");
	memcpy(&want, buf + len - 4, 4);
	crc = crc32c(0, buf, len - 4);
	snap_r_init(&r, buf, len - 4);
	ret = parse_header(&r, &out->h, err, errlen);
	if (ret)
		return ret;
	if (crc != want)
		return bad(err, errlen, -EBADMSG, "checksum mismatch (file damaged or tampered with)");
	n = snap_r_u32(&r);
	snap_r_u32(&r);
	if (n > SNAP_MAX_SECTIONS)
		return bad(err, errlen, -EBADMSG, "too many sections");
	for (uint32_t i = 0; i < n; i++) {
		struct snap_section *s = &out->sec[i];

		s->type = snap_r_u32(&r);
		s->instance = snap_r_u32(&r);
		s->version = snap_r_u32(&r);
		s->data = snap_r_blob(&r, SNAP_STATE_MAX, &s->len);
		if (r.err)
			return bad(err, errlen, -EBADMSG, "section runs past the end of the file");
	}
	if (snap_r_done(&r))
		return bad(err, errlen, -EBADMSG, "trailing bytes after the last section");
	out->nr_sections = n;
	return 0;
}

const struct snap_section *snap_state_find(const struct snap_state *s, uint32_t type,
					   uint32_t instance)
{
	const struct snap_section *found = NULL;

	for (uint32_t i = 0; i < s->nr_sections; i++) {
		if (s->sec[i].type != type || s->sec[i].instance != instance)
			continue;
		if (found)
			return NULL;	/* duplicates are refused, never "first wins" */
		found = &s->sec[i];
	}
	return found;
}

int snap_state_compatible(const struct snap_header *h, const struct snap_header *host,
			  char *err, size_t errlen)
{
	if (strcmp(h->cpu_vendor, host->cpu_vendor)) {
		snprintf(err, errlen, "snapshot taken on a %s CPU, this host is %s",
			 h->cpu_vendor, host->cpu_vendor);
		return -EXDEV;
	}
	if (h->cpuid_fingerprint != host->cpuid_fingerprint) {
		snprintf(err, errlen, "snapshot taken on a host with different CPU features "
			 "(CPUID fingerprint %016llx, this host %016llx)",
			 (unsigned long long)h->cpuid_fingerprint,
			 (unsigned long long)host->cpuid_fingerprint);
		return -EXDEV;
	}
	if (h->ram_size != host->ram_size || h->nr_regions != host->nr_regions ||
	    memcmp(h->regions, host->regions, sizeof(h->regions)) || h->ncpus != host->ncpus) {
		snprintf(err, errlen, "snapshot memory layout or vCPU count differs from the VM's");
		return -EXDEV;
	}
	return 0;
}
