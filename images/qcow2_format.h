/* qcow2 on-disk layout constants (docs/interop/qcow2.txt in QEMU). */
#ifndef MVM_QCOW2_FORMAT_H
#define MVM_QCOW2_FORMAT_H

#include <endian.h>
#include <stdint.h>
#include <string.h>

#define QCOW2_MAGIC 0x514649fbU		/* "QFI\xfb" */
#define QCOW2_V2_HDR_LEN 72
#define QCOW2_V3_HDR_LEN 104
#define QCOW2_MIN_CLUSTER_BITS 9
#define QCOW2_MAX_CLUSTER_BITS 21
#define QCOW2_MAX_L1_BYTES (32U << 20)		/* as QEMU: 32 MiB */
#define QCOW2_MAX_REFTABLE_BYTES (8U << 20)	/* as QEMU: 8 MiB */
#define QCOW2_MAX_BACKING_NAME 1023
#define QCOW2_MAX_SNAPSHOTS 65536

/* "Header" fixed field offsets. */
enum {
	QH_MAGIC = 0, QH_VERSION = 4, QH_BACKING_OFF = 8, QH_BACKING_SIZE = 16,
	QH_CLUSTER_BITS = 20, QH_SIZE = 24, QH_CRYPT = 32, QH_L1_SIZE = 36,
	QH_L1_OFF = 40, QH_RT_OFF = 48, QH_RT_CLUSTERS = 56, QH_NB_SNAP = 60,
	QH_SNAP_OFF = 64, QH_INCOMPAT = 72, QH_COMPAT = 80, QH_AUTOCLEAR = 88,
	QH_REFCOUNT_ORDER = 96, QH_HDR_LEN = 100, QH_COMPRESSION = 104,
};

/* "Header": incompatible feature bits. */
#define QCOW2_INCOMPAT_DIRTY		(1ULL << 0)
#define QCOW2_INCOMPAT_CORRUPT		(1ULL << 1)
#define QCOW2_INCOMPAT_DATA_FILE	(1ULL << 2)
#define QCOW2_INCOMPAT_COMPRESSION	(1ULL << 3)
#define QCOW2_INCOMPAT_EXTL2		(1ULL << 4)

/* "Header extensions": type codes. */
#define QCOW2_EXT_END		0x00000000U
#define QCOW2_EXT_BACKING_FMT	0xe2792acaU
#define QCOW2_EXT_FEATURES	0x6803f857U
#define QCOW2_EXT_BITMAPS	0x23852875U
#define QCOW2_EXT_CRYPTO	0x0537be77U
#define QCOW2_EXT_DATA_FILE	0x44415441U

/* "Cluster mapping": L1/L2 entry bits. */
#define QCOW2_OFLAG_COPIED	(1ULL << 63)
#define QCOW2_OFLAG_COMPRESSED	(1ULL << 62)
#define QCOW2_OFLAG_ZERO	(1ULL << 0)	/* v3 only */
#define QCOW2_OFFSET_MASK	0x00fffffffffffe00ULL	/* bits 9-55 */
#define QCOW2_L1_RESERVED	0x7f000000000001ffULL
#define QCOW2_L2_RESERVED	0x3f000000000001feULL
/* "Refcount table": bits 0-8 reserved. */
#define QCOW2_RT_RESERVED	0x1ffULL

static inline uint64_t get_be64(const void *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return be64toh(v);
}

static inline uint32_t get_be32(const void *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return be32toh(v);
}

static inline uint16_t get_be16(const void *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return be16toh(v);
}

static inline void put_be64(void *p, uint64_t v)
{
	v = htobe64(v);
	memcpy(p, &v, 8);
}

static inline void put_be32(void *p, uint32_t v)
{
	v = htobe32(v);
	memcpy(p, &v, 4);
}

static inline void put_be16(void *p, uint16_t v)
{
	v = htobe16(v);
	memcpy(p, &v, 2);
}

#endif
