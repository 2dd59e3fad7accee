/*
 * Seals of a sandbox's own records, the files a start reads to decide which
 * host paths to open: config.json (kernel, initrd, image, disks) and
 * restore-from (the snapshot or template to map); and the baseline
 * manifests (baseline/N.json: host_src is where promote writes). A running VMM may write
 * its state directory, so each such FILE has a FILE.mac beside it: an
 * HMAC-SHA256 under the host key (common/host_key.h) of the sandbox's name,
 * the file's name and its bytes, written by the CLI whenever it writes the
 * file. The VMM cannot read the key, so it cannot make a valid one; a start
 * checks both records before it opens anything and refuses a changed one.
 */
#ifndef MVM_SB_SEAL_H
#define MVM_SB_SEAL_H

#include <stddef.h>

#define SB_SEALED_CONFIG "config.json"
#define SB_MAC_SUFFIX ".mac"
#define SB_SEAL_BIG   (512u << 20)	/* the largest record sealed (a baseline manifest) */

/* Seal NAME's @file (as it is now) in NAME's state directory. 0 or -errno. */
int sb_seal(const char *name, const char *file);

/*
 * Check NAME's config.json and, if present, restore-from against their
 * seals. State directories made before seals existed are sealed once, on
 * the first check after the upgrade (recorded by a marker in the state
 * root, which no VMM can write); after that a missing seal is a change.
 * 0, or -EBADMSG / -errno with @err saying which record and what to do.
 */
int sb_seal_check(const char *name, char *err, size_t errlen);

/* The bytes of NAME's @file (at most @max), NUL-terminated (free them), as
 * its seal names them: what a reader parses is what was checked. For the
 * records a running VMM could rewrite while the CLI reads them (the
 * baseline manifests, whose host_src is where promote writes). 0, or
 * -EBADMSG / -errno with @err filled. */
int sb_seal_read(const char *name, const char *file, size_t max, char **text, char *err,
		 size_t errlen);

/* HMAC input of @file of sandbox @name with @len bytes @text, as hex
 * (host_mac). For the unit tests and sb_seal. 0 or -errno. */
int sb_seal_mac(const char *name, const char *file, const char *text, size_t len,
		char hex[65], char *err, size_t errlen);

#endif
