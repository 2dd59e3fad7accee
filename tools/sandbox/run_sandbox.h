/* `mvm run`'s runtime: the ephemeral sandbox, and the direct path of the boot benchmark. */
#ifndef MVM_RUN_SANDBOX_H
#define MVM_RUN_SANDBOX_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "images/image_overlay.h"
#include "vmm/vm.h"

#define RUN_MAX_ENV 256
#define RUN_MAX_COPIES 64

struct run_opts {
	struct vm_config cfg;
	bool timing;
	const char *save_initrd;
	const char *template_name;	/* --template TPL: no boot, the template's machine */
	const char *image;		/* --image NAME|PATH: root disk via a per-run overlay */
	struct image_base base;
	char overlay_dir[PATH_MAX], overlay_arg[PATH_MAX];
	char kernel_buf[PATH_MAX], initrd_buf[PATH_MAX];
	uint32_t uid;			/* -u/--user, else an imported image's User; 0: root */
	bool uid_set;			/* -u given: the image's User does not apply */
	char *env[RUN_MAX_ENV + 4];
	int nenv;
	uint64_t disk_size;		/* --disk-size: an empty ext4 disk at /data; 0: none */
	char *copies[RUN_MAX_COPIES];	/* --copy HOST:GUEST */
	int ncopies;
};

/*
 * `mvm run` proper (tools/sandbox/run_sandbox.c): create an ephemeral sandbox from
 * @o, exec the command through its agent, remove it. Returns the exit status.
 */
int run_in_sandbox(struct run_opts *o);
/* --image: a qcow2 overlay on the base in @dir (NULL: a temp dir) as vda. 0 or -1. */
int run_attach_image(struct run_opts *o, const char *dir);
/* This process's peak RSS (VmHWM) in KiB, or -1. */
long run_peak_rss_kib(void);
/* The direct path's status for a VM result (also the sandbox's boot errors). */
int run_exit_status(const struct vm_result *r);

/* Attach disk "PATH[:ro][:raw|:qcow2]" (@arg is modified); @root: as vda,
 * the guest's root. 0, or -1 after a message. */
int run_add_disk(struct vm_config *cfg, char *arg, bool root);
/* --exit-at-init / --save-initrd: the guest init runs the command itself
 * and reports through the guest port. Returns the exit status. */
int run_direct(struct run_opts *o);

#endif
