/*
 * Tar for `mvm serve`'s trees (docs/api.md, "Trees"): pure, unit-tested
 * and fuzzed (tests/fuzz/serve_tar_fuzz.c).
 *
 * In: a client's archive is hostile. sv_tar_parse() reads POSIX ustar, pax
 * ('x' path/linkpath/size) and GNU ('L'/'K' long names) headers from a
 * buffer, checks every one, and hands back a plan that the agent's tree
 * stream can carry as is: relative paths without "."/".." components,
 * sorted so a directory comes before everything beneath it, no path twice,
 * nothing beneath a file or a symlink, missing parent directories added.
 * Anything else (absolute or climbing paths, devices, FIFOs, sparse files,
 * a bad checksum, a size past the end) is refused before any byte reaches
 * the guest, which then extracts (guest/agent/tree_recv.c).
 *
 * Out: sv_tar_header() writes one entry's header (pax records when a name
 * does not fit ustar) for a tree the guest sent, already checked by the
 * caller; the host never writes guest files to its own disk.
 */
#ifndef MVM_SERVE_TAR_H
#define MVM_SERVE_TAR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "guest/agent/proto.h"

#define SV_TAR_BLOCK       512
#define SV_TAR_MAX_ENTRIES 100000	/* entries of an upload, added parents included */
#define SV_TAR_META_MAX    (64u << 10)	/* one pax or GNU long-name record's bytes */
/* The most sv_tar_header() writes: pax header + records (two paths) + ustar header. */
#define SV_TAR_HDR_MAX     (3 * SV_TAR_BLOCK + 2 * AP_PATH_MAX + 2 * SV_TAR_BLOCK)

struct sv_tar_ent {
	uint32_t kind;			/* AP_FILE, AP_DIR, AP_SYMLINK */
	uint32_t mode;			/* 07777 */
	uint64_t size;			/* AP_FILE */
	const uint8_t *data;		/* AP_FILE: size bytes inside the parsed buffer */
	const char *path;		/* relative, not NUL-terminated here: plen bytes */
	size_t plen;
	char *target;			/* AP_SYMLINK, NUL-terminated */
	bool added;			/* a parent directory the archive did not name */
	bool owned;			/* path (and target) malloc'd by the parser */
};

struct sv_tar {
	struct sv_tar_ent *e;		/* in order: parents first, each path once */
	size_t n;
	bool has_root;			/* the archive named "." (or "./") */
	uint32_t root_mode;
	uint64_t bytes;			/* file bytes in all */
};

/*
 * Parse and check the archive @p[0..n). 0 with @t filled (entries point
 * into @p, which must outlive @t), or 400 with the reason in @err and
 * nothing allocated. An archive ends at two zero blocks, one, or the end
 * of the buffer on a block boundary. Free with sv_tar_free.
 */
int sv_tar_parse(const uint8_t *p, size_t n, struct sv_tar *t, char *err, size_t cap);
void sv_tar_free(struct sv_tar *t);

/* Entries [i, end) are one top-level name and all beneath it: end. */
size_t sv_tar_group_end(const struct sv_tar *t, size_t i);

/*
 * The header of @e (its path in the archive is @name; directories get a
 * trailing '/') into @buf (at least SV_TAR_HDR_MAX bytes), mtime @mtime,
 * owner 0. Bytes written (a multiple of 512), or -1 if @name or the target
 * are empty or longer than AP_PATH_MAX - 1.
 */
long sv_tar_header(const struct ap_entry *e, const char *name, time_t mtime, uint8_t *buf, size_t cap);

/* Zero bytes that pad @size bytes of file data to a block. */
static inline size_t sv_tar_pad(uint64_t size)
{
	return (size_t)((SV_TAR_BLOCK - size % SV_TAR_BLOCK) % SV_TAR_BLOCK);
}

#endif
