/*
 * In-process checkpoints of a running VM (the sandbox's VMM): checkpoint,
 * list, rollback in place. Memory: full at the first checkpoint, then only
 * pages dirtied since (KVM's dirty log plus the VMM's own dirty bitmap);
 * rollback rewrites only the pages that differ between now and the target.
 * Disk: each checkpoint freezes a layer (snapshots/disk_layers.h). All calls
 * run on the event-loop thread (the control API).
 */
#ifndef MVM_CHECKPOINT_H
#define MVM_CHECKPOINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SNAP_TAG_MAX     48
#define SNAP_MAX_CKPTS   64
#define SNAP_CKPT_DIR    "checkpoints"

struct vm;

struct snap_ckpt_info {
	char tag[SNAP_TAG_MAX];
	char parent[SNAP_TAG_MAX];	/* "" for the first */
	double time;			/* seconds since the epoch */
	uint64_t pages_covered;		/* pages this checkpoint decided (changed since its parent) */
	uint64_t pages_stored;		/* of those, the non-zero ones written */
	double seconds;			/* how long the VM was paused for it */
	bool current;			/* the VM descends from it (the last taken or rolled back to) */
};

/* Once, after vm_create: @disk is the VM's one disk file (its base), in
 * @format, its own backing file (if any) exactly @base_file (NULL: none). Old
 * checkpoint files in SNAP_CKPT_DIR are from an earlier boot: removed. */
int snap_mgr_init(struct vm *vm, const char *disk, const char *format, const char *base_file);
void snap_mgr_free(struct vm *vm);

/* Tag: [A-Za-z0-9][A-Za-z0-9._-]*, shorter than SNAP_TAG_MAX. */
bool snap_tag_ok(const char *tag);
/* @tag NULL or "": "cpN". The tag taken goes to @out. */
int snap_checkpoint(struct vm *vm, const char *tag, char *out, size_t outcap,
		    char *err, size_t errlen);
int snap_rollback(struct vm *vm, const char *tag, double *seconds, char *err, size_t errlen);
int snap_count(struct vm *vm);
int snap_info(struct vm *vm, int i, struct snap_ckpt_info *out);

/* For snapshots/ itself: the disk layers of @vm (NULL without a manager),
 * and the pages of RAM that may hold data (NULL: unknown, read them all). */
struct disk_layers *snap_mgr_disk(struct vm *vm);
/* Pause the vCPUs unless they already are (false: could not), then drain
 * the disks' requests in flight (vm_quiesce); resume only if this pause
 * did it. */
bool snap_pause(struct vm *vm, bool *was_paused);
void snap_resume(struct vm *vm, bool was_paused);
uint64_t *snap_present_pages(struct vm *vm, uint64_t npages);

#endif
