/*
 * qcow2 header parsing: every field a hostile image controls is checked
 * here before any other code uses it (QEMU docs/interop/qcow2.txt, "Header"
 * and "Header extensions").
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "images/qcow2_int.h"
#include "common/log.h"

/* Log why the image is refused and fail with -EINVAL. */
#define BAD(path, fmt, ...)                                     \
	do {                                                    \
		log_error("qcow2 %s: " fmt, path, __VA_ARGS__); \
		return -EINVAL;                                 \
	} while (0)

int qcow2_hdr_peek_cluster_bits(const uint8_t *buf, size_t len,
				const char *path, uint32_t *cluster_bits)
{
	uint32_t version, bits;

	if (len < QCOW2_V2_HDR_LEN)
		BAD(path, "%s", "truncated header");
	if (get_be32(buf + QH_MAGIC) != QCOW2_MAGIC)
		BAD(path, "%s", "not a qcow2 image (bad magic)");
	version = get_be32(buf + QH_VERSION);
	if (version != 2 && version != 3)
		BAD(path, "unsupported qcow2 version %" PRIu32, version);
	if (version == 3 && len < QCOW2_V3_HDR_LEN)
		BAD(path, "%s", "truncated header");
	bits = get_be32(buf + QH_CLUSTER_BITS);
	if (bits < QCOW2_MIN_CLUSTER_BITS || bits > QCOW2_MAX_CLUSTER_BITS)
		BAD(path, "cluster_bits %" PRIu32 " out of range 9..21", bits);
	*cluster_bits = bits;
	return 0;
}

/* Feature name table entries are 48 bytes: type, bit, 46-byte name. */
static void feature_name(const uint8_t *buf, size_t len, uint32_t hdr_len,
			 unsigned bit, char *out, size_t outlen)
{
	size_t off = hdr_len;

	snprintf(out, outlen, "unknown incompatible feature bit %u", bit);
	while (off + 8 <= len) {
		uint32_t type = get_be32(buf + off), elen = get_be32(buf + off + 4);

		if (type == QCOW2_EXT_END || elen > len - off - 8)
			return;
		for (size_t i = 0; type == QCOW2_EXT_FEATURES && i + 48 <= elen; i += 48) {
			const uint8_t *e = buf + off + 8 + i;

			if (e[0] == 0 && e[1] == bit) {
				snprintf(out, outlen, "incompatible feature '%.46s' (bit %u)",
					 (const char *)e + 2, bit);
				return;
			}
		}
		off += 8 + ((elen + 7ULL) & ~7ULL);
	}
}

static int check_features(const uint8_t *buf, size_t len, const char *path,
			  const struct qcow2_hdr *h)
{
	static const struct { uint64_t bit; const char *what; } known[] = {
		{ QCOW2_INCOMPAT_DIRTY, "dirty bit set (lazy refcounts need repair: "
		  "run 'qemu-img check -r all')" },
		{ QCOW2_INCOMPAT_CORRUPT, "image marked corrupt" },
		{ QCOW2_INCOMPAT_DATA_FILE, "external data file not supported" },
		{ QCOW2_INCOMPAT_COMPRESSION, "compression type not supported" },
		{ QCOW2_INCOMPAT_EXTL2, "extended L2 entries (subclusters) not supported" },
	};
	char name[96];

	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (h->incompat & known[i].bit)
			BAD(path, "%s", known[i].what);
	for (unsigned bit = 5; bit < 64; bit++) {
		if (!(h->incompat & (1ULL << bit)))
			continue;
		feature_name(buf, len, h->hdr_len, bit, name, sizeof(name));
		BAD(path, "%s not supported", name);
	}
	return 0;
}

static void read_fixed(const uint8_t *buf, struct qcow2_hdr *h)
{
	memset(h, 0, sizeof(*h));
	h->version = get_be32(buf + QH_VERSION);
	h->backing_off = get_be64(buf + QH_BACKING_OFF);
	h->backing_size = get_be32(buf + QH_BACKING_SIZE);
	h->cluster_bits = get_be32(buf + QH_CLUSTER_BITS);
	h->size = get_be64(buf + QH_SIZE);
	h->l1_size = get_be32(buf + QH_L1_SIZE);
	h->l1_off = get_be64(buf + QH_L1_OFF);
	h->rt_off = get_be64(buf + QH_RT_OFF);
	h->rt_clusters = get_be32(buf + QH_RT_CLUSTERS);
	h->nb_snapshots = get_be32(buf + QH_NB_SNAP);
	h->refcount_order = 4;
	h->hdr_len = QCOW2_V2_HDR_LEN;
	if (h->version >= 3) {
		h->incompat = get_be64(buf + QH_INCOMPAT);
		h->compat = get_be64(buf + QH_COMPAT);
		h->autoclear = get_be64(buf + QH_AUTOCLEAR);
		h->refcount_order = get_be32(buf + QH_REFCOUNT_ORDER);
		h->hdr_len = get_be32(buf + QH_HDR_LEN);
	}
}

/* Is [off, off+len) a cluster-aligned range inside the file? */
static bool range_ok(uint64_t off, uint64_t len, uint64_t cs, uint64_t fsize)
{
	return off && !(off & (cs - 1)) && off <= fsize && len <= fsize - off;
}

static int check_tables(const struct qcow2_hdr *h, uint64_t fsize, const char *path)
{
	uint64_t cs = 1ULL << h->cluster_bits;
	uint64_t l2_span = cs * (cs / 8);
	uint64_t need_l1 = (h->size + l2_span - 1) / l2_span;

	if (h->size > QCOW2_MAX_VSIZE)
		BAD(path, "virtual size %" PRIu64 " exceeds the 64 TiB limit", h->size);
	if (h->l1_size < need_l1)
		BAD(path, "L1 table (%" PRIu32 " entries) too small for the virtual size",
		    h->l1_size);
	if ((uint64_t)h->l1_size * 8 > QCOW2_MAX_L1_BYTES)
		BAD(path, "L1 table of %" PRIu32 " entries is too large", h->l1_size);
	if (h->l1_size && !range_ok(h->l1_off, (uint64_t)h->l1_size * 8, cs, fsize))
		BAD(path, "L1 table offset 0x%" PRIx64 " invalid or outside the file",
		    h->l1_off);
	if (h->rt_clusters == 0 || h->rt_clusters > QCOW2_MAX_REFTABLE_BYTES / cs)
		BAD(path, "refcount table size %" PRIu32 " clusters invalid", h->rt_clusters);
	if (!range_ok(h->rt_off, (uint64_t)h->rt_clusters * cs, cs, fsize))
		BAD(path, "refcount table offset 0x%" PRIx64 " invalid or outside the file",
		    h->rt_off);
	if (h->nb_snapshots > QCOW2_MAX_SNAPSHOTS)
		BAD(path, "too many snapshots (%" PRIu32 ")", h->nb_snapshots);
	return 0;
}

static int check_basic(const struct qcow2_hdr *h, uint32_t crypt, size_t len,
		       const char *path)
{
	uint64_t cs = 1ULL << h->cluster_bits;

	if (crypt)
		BAD(path, "encryption (method %" PRIu32 ") not supported", crypt);
	if (h->version >= 3 && (h->hdr_len < QCOW2_V3_HDR_LEN || h->hdr_len % 8 ||
				h->hdr_len > cs || h->hdr_len > len))
		BAD(path, "header length %" PRIu32 " invalid", h->hdr_len);
	if (h->refcount_order > 6)
		BAD(path, "refcount_order %" PRIu32 " out of range 0..6", h->refcount_order);
	return 0;
}

static int parse_backing_fmt(const uint8_t *data, uint32_t elen, const char *path,
			     struct qcow2_hdr *h)
{
	if (elen == 0 || elen >= sizeof(h->backing_fmt) || memchr(data, 0, elen))
		BAD(path, "%s", "backing format extension malformed");
	memcpy(h->backing_fmt, data, elen);
	h->backing_fmt[elen] = 0;
	return 0;
}

/* "Header extensions": start after the header, 8-byte aligned entries. */
static int parse_extensions(const uint8_t *buf, size_t end, const char *path,
			    struct qcow2_hdr *h)
{
	size_t off = h->hdr_len;

	for (;;) {
		uint32_t type, elen;

		if (off + 8 > end)
			BAD(path, "%s", "header extensions run past their area");
		type = get_be32(buf + off);
		elen = get_be32(buf + off + 4);
		if (type == QCOW2_EXT_END)
			return 0;
		if (elen > end - off - 8)
			BAD(path, "header extension 0x%08" PRIx32 " length %" PRIu32
			    " out of bounds", type, elen);
		if (type == QCOW2_EXT_CRYPTO)
			BAD(path, "%s", "encryption not supported");
		if (type == QCOW2_EXT_DATA_FILE)
			BAD(path, "%s", "external data file not supported");
		if (type == QCOW2_EXT_BACKING_FMT &&
		    parse_backing_fmt(buf + off + 8, elen, path, h))
			return -EINVAL;
		off += 8 + ((elen + 7ULL) & ~7ULL);
	}
}

static int parse_backing_name(const uint8_t *buf, size_t len, const char *path,
			      struct qcow2_hdr *h)
{
	if (!h->backing_off && !h->backing_size)
		return 0;
	/* backing_off is a guest-controlled u64: off + size could wrap, so compare with len - off. */
	if (h->backing_size == 0 || h->backing_size > QCOW2_MAX_BACKING_NAME ||
	    h->backing_off < h->hdr_len || h->backing_off > len ||
	    h->backing_size > len - h->backing_off)
		BAD(path, "backing file name (offset %" PRIu64 ", length %" PRIu32
		    ") out of bounds", h->backing_off, h->backing_size);
	memcpy(h->backing, buf + h->backing_off, h->backing_size);
	h->backing[h->backing_size] = 0;
	if (strlen(h->backing) != h->backing_size)
		BAD(path, "%s", "backing file name contains a NUL byte");
	return 0;
}

int qcow2_hdr_parse(const uint8_t *buf, size_t len, uint64_t file_size,
		    const char *path, struct qcow2_hdr *h)
{
	uint32_t bits;
	int err;

	err = qcow2_hdr_peek_cluster_bits(buf, len, path, &bits);
	if (err)
		return err;
	read_fixed(buf, h);
	err = check_basic(h, get_be32(buf + QH_CRYPT), len, path);
	if (!err)
		err = check_features(buf, len, path, h);
	if (!err)
		err = check_tables(h, file_size, path);
	if (!err)
		err = parse_backing_name(buf, len, path, h);
	/* The extensions end where the backing name starts (checked <= len above). */
	if (!err)
		err = parse_extensions(buf, h->backing_off && h->backing_off < len ?
				       (size_t)h->backing_off : len, path, h);
	return err;
}
