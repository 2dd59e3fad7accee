/*
 * A tenant's quotas in `mvm serve`: sandboxes at once, vCPUs, memory,
 * templates held, checkpoints held, and disk: each sandbox's disk size
 * (its config.json: a reservation, the most its writable disk can grow
 * to) plus the bytes everything else in its state directory takes (its
 * checkpoints' frozen disk layers and memory files, a fork's snapshot:
 * sv_sandbox_held) plus the bytes its templates hold (serve_tpl_scope.h),
 * with the creates, templates and checkpoints in flight. One
 * implementation for the HTTP API and the MCP transport (/v1/mcp's
 * sandbox_create and checkpoint go through the same reserves). The check
 * is pure (unit-tested); the sums read the state dirs and the template
 * store.
 */
#ifndef MVM_SERVE_QUOTA_H
#define MVM_SERVE_QUOTA_H

#include <stddef.h>
#include <stdint.h>

#include "tools/serve/serve_bytes.h"
#include "tools/serve/serve_token.h"

/*
 * What @use plus @add would be: 0 within @q, else -1 with the limit passed
 * named in @why. The template and checkpoint counts are checked only when
 * @add has one (a sandbox beside more than an operator's lowered count is
 * not refused for them; their bytes count in the disk, checked always).
 */
int sv_quota_check(const struct sv_quota *q, const struct sv_quota *use, const struct sv_quota *add,
		   char *why, size_t cap);

/* The sums over @tenant's sandboxes and templates on this host. 0 or -errno. */
int sv_quota_usage(const char *tenant, struct sv_quota *use);

/*
 * What the sandbox @host holds on the host beyond its disk's reservation:
 * every regular file under its state directory (no symlink followed)
 * except the disk file the VM writes now (disk-top's, else @disk, its
 * config's disk) into @u; in @checkpoints the checkpoints it holds (their
 * memory files: a boot starts with none). 0 or -errno.
 */
int sv_sandbox_held(const char *host, const char *disk, struct sv_uses *u, int *checkpoints);

/*
 * The most a template of a sandbox with @mem bytes of memory and a @disk
 * byte disk can hold before it is made: its memory image and every byte of
 * its disk (saturating). Pure.
 */
uint64_t sv_quota_tpl_bound(uint64_t mem, uint64_t disk);

/*
 * The most one checkpoint of a sandbox with @mem bytes of memory and a
 * @disk byte disk adds on the host: its memory file (the pages changed,
 * at most all, and two bitmaps), its state file (at most SNAP_STATE_MAX),
 * and the disk top it freezes (at most the disk and its qcow2 tables; the
 * new top is within the disk's reservation already). Saturating. Pure.
 */
uint64_t sv_quota_ckpt_bound(uint64_t mem, uint64_t disk);

struct sv_server;
/*
 * Reserve @add for @tenant against its quota @q (existing sandboxes and
 * templates plus what is in flight), under the server's lock. @host: the
 * sandbox to be made (no second create of it meanwhile), or NULL for a
 * template (@add->templates 1, its bound in @add->disk). A slot index
 * >= 0, or -1 with @why (quota), -2 (too many in flight) or -3 (@host is
 * being created by another request, or exists).
 */
int sv_quota_reserve(struct sv_server *s, const char *tenant, const char *host, const struct sv_quota *q,
		     const struct sv_quota *add, char *why, size_t cap);
void sv_quota_release(struct sv_server *s, int slot);

/*
 * Reserve one checkpoint of @tenant's sandbox @host against @q: one more
 * checkpoint and sv_quota_ckpt_bound() of its disk. A slot as
 * sv_quota_reserve (-1: quota, -2: in flight or the sandbox's config
 * unreadable), @why set. Release it after the checkpoint, taken or not:
 * the bound is an upper bound, so nothing is measured after (the next
 * count reads the files as they are).
 */
int sv_quota_ckpt_reserve(struct sv_server *s, const char *tenant, const char *host, const struct sv_quota *q,
			  char *why, size_t cap);

/*
 * After a template or a fork was made: @tenant's disk as it now is (what
 * was made measured) within @q's disk. 0, or -1 with @why (the caller
 * removes it).
 */
int sv_quota_disk_recheck(const char *tenant, const struct sv_quota *q, char *why, size_t cap);

#endif
