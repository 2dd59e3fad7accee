/* `mvm run` option parsing, shared with its unit tests. */
#ifndef MVM_CMD_RUN_H
#define MVM_CMD_RUN_H

#include <limits.h>
#include <stdbool.h>

#include "tools/image_overlay.h"
#include "vmm/vm.h"

#define RUN_MAX_ENV 256

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
};

/* Parse argv into @o: 0 ok, 1 for --help, -1 after printing a usage error. */
int run_parse_args(struct run_opts *o, int argc, char **argv);

#endif
