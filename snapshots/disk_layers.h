/*
 * Disk layers of a sandbox's checkpoints. The sandbox's disk starts as one
 * file (raw); a checkpoint freezes the current top file (read-only from then
 * on: the checkpoint references it) and the VM continues on a new qcow2
 * overlay on top. A rollback drops the current top and puts a fresh overlay
 * on the checkpoint's frozen layer. Files live in the VMM's working
 * directory (the state dir); "disk-top" names the current top so `mvm start`
 * boots the same chain.
 */
#ifndef MVM_DISK_LAYERS_H
#define MVM_DISK_LAYERS_H

#include <stddef.h>

#define DISK_LAYER_NAME 64
#define DISK_TOP_FILE   "disk-top"

struct vm;

struct disk_layer {
	char file[DISK_LAYER_NAME];
	char format[8];		/* "raw" or "qcow2" */
};

struct disk_layers {
	struct disk_layer top;	/* the writable file the VM uses now */
	unsigned next;		/* number of the next overlay file */
	int depth;		/* files in the chain under top */
	/* The shared base image the chain ends in, exactly, absolute ("":
	 * none, every file of the chain is in the state directory). */
	char base_file[4096];
};

/* Current top from disk-top, else @base in @base_format ("raw" or "qcow2");
 * @base_file: the one file outside the state directory the chain may end
 * in (NULL: none). */
void disk_layers_init(struct disk_layers *l, const char *base, const char *base_format,
		      const char *base_file);
/* Freeze the top (into *@frozen, with the files below it in *@depth) and
 * continue on a new overlay. */
int disk_layers_freeze(struct vm *vm, struct disk_layers *l, struct disk_layer *frozen,
		       int *depth, char *err, size_t errlen);
/* Drop the top; continue on a new overlay over @frozen. */
int disk_layers_reset(struct vm *vm, struct disk_layers *l, const struct disk_layer *frozen,
		      int depth, char *err, size_t errlen);
/* For `mvm vmm`: the disk file and format to boot, from disk-top, if any.
 * 0 when found, -ENOENT when the sandbox never took a checkpoint. */
int disk_layers_boot_top(char *file, size_t fcap, char *format, size_t fmtcap);

#endif
