/* `mvm run` option parsing, shared with its unit tests. */
#ifndef MVM_CMD_RUN_H
#define MVM_CMD_RUN_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "tools/image_overlay.h"
#include "vmm/vm.h"

#define RUN_MAX_ENV 256
#define RUN_MAX_COPIES 64

struct run_opts {
	struct vm_config cfg;
	bool timing;
	const char *save_initrd;
	const char *image;		/* --image NAME|PATH: root disk via a per-run overlay */
	struct image_base base;
	char overlay_dir[PATH_MAX], overlay_arg[PATH_MAX];
	char kernel_buf[PATH_MAX], initrd_buf[PATH_MAX];
	char *env[RUN_MAX_ENV + 4];
	int nenv;
	uint64_t disk_size;		/* --disk-size: an empty ext4 disk at /data; 0: none */
	char *copies[RUN_MAX_COPIES];	/* --copy HOST:GUEST */
	int ncopies;
};

/* Parse argv into @o: 0 ok, 1 for --help, -1 after printing a usage error. */
int run_parse_args(struct run_opts *o, int argc, char **argv);

/*
 * `mvm run` proper (tools/run_sandbox.c): create an ephemeral sandbox from
 * @o, exec the command through its agent, remove it. Returns the exit status.
 */
int run_in_sandbox(struct run_opts *o);
/* --image: a qcow2 overlay on the base in @dir (NULL: a temp dir) as vda. 0 or -1. */
int run_attach_image(struct run_opts *o, const char *dir);
/* This process's peak RSS (VmHWM) in KiB, or -1. */
long run_peak_rss_kib(void);
/* The direct path's status for a VM result (also the sandbox's boot errors). */
int run_exit_status(const struct vm_result *r);

#endif
