/*
 * The snapshot state file (docs/snapshots.md): a fixed header (magic, format
 * version, mvm version, CPU vendor and CPUID fingerprint, memory layout),
 * typed sections (vCPUs, VM, one per device, each with its own version) and
 * a CRC-32C trailer over everything before it.
 *
 * snap_state_parse() treats the bytes as hostile: size capped, every length
 * and count checked, the checksum verified, and the layout checked for sanity
 * before anything is returned. It only reads; no VM state is touched here.
 */
#ifndef MVM_STATE_FILE_H
#define MVM_STATE_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "common/snap_buf.h"

#define SNAP_MAGIC          "MVMSNAP\x01"
#define SNAP_FORMAT_VERSION 1
#define SNAP_HEADER_SIZE    128
#define SNAP_STATE_MAX      (16u << 20)	/* bytes of state file we will read */
#define SNAP_MAX_SECTIONS   256
#define SNAP_MAX_REGIONS    2
#define SNAP_MAX_CPUS       64

/* Section types (four characters, little-endian). */
#define SNAP_SEC_VCPU 0x55504356u	/* "VCPU": instance = vCPU id */
#define SNAP_SEC_VM   0x53534d56u	/* "VMSS": PIT, clock, irqchips */
#define SNAP_SEC_DEV  0x20564544u	/* "DEV ": instance = device index */

struct snap_region {
	uint64_t gpa, size;
};

struct snap_section {
	uint32_t type, instance, version, len;
	const uint8_t *data;		/* points into the parsed buffer */
};

struct snap_header {
	uint32_t format_version;
	char mvm_version[32];
	char cpu_vendor[16];		/* CPUID leaf 0 vendor string */
	uint64_t cpuid_fingerprint;	/* of KVM_GET_SUPPORTED_CPUID */
	uint64_t ram_size;
	uint32_t nr_regions;
	uint32_t ncpus;
	struct snap_region regions[SNAP_MAX_REGIONS];
};

struct snap_state {
	struct snap_header h;
	uint32_t nr_sections;
	struct snap_section sec[SNAP_MAX_SECTIONS];
};

/* Writer: header first, then sections, then snap_state_finish(). */
void snap_state_begin(struct snap_w *w, const struct snap_header *h);
void snap_state_section(struct snap_w *w, uint32_t type, uint32_t instance, uint32_t version,
			const void *data, size_t len);
/* Patch the section count and append the checksum. 0 or -errno. */
int snap_state_finish(struct snap_w *w);

/* Parse @len bytes at @buf into @out (sections point into @buf). 0, or
 * -EBADMSG / -EPROTO / -E2BIG with a clear message in @err. */
int snap_state_parse(const uint8_t *buf, size_t len, struct snap_state *out,
		     char *err, size_t errlen);

/* The one section of @type/@instance, or NULL (also when there are two). */
const struct snap_section *snap_state_find(const struct snap_state *s, uint32_t type,
					   uint32_t instance);

/* Whether @h fits this host and VM: vendor, fingerprint, layout. 0 or -EXDEV. */
int snap_state_compatible(const struct snap_header *h, const struct snap_header *host,
			  char *err, size_t errlen);


#endif
