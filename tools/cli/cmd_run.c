/* `mvm run`: boot a throw-away VM, run one command in it, exit with its status. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vmm/arch/arch.h"
#include "common/cli_util.h"
#include "tools/cli/cmd_run.h"
#include "images/image_defaults.h"
#include "images/image_overlay.h"
#include "images/image_store.h"
#include "tools/cli/net_opts.h"
#include "tools/sandbox/env_input.h"
#include "vmm/initrd.h"
#include "vmm/vm.h"


static const char run_usage[] =
	"usage: mvm run [OPTIONS] -- CMD [ARGS...]\n"
	"       mvm run --image NAME [OPTIONS]   (an imported image's own command)\n"
	"Run CMD in a fresh, throw-away sandbox: create + exec + rm in one step. The\n"
	"sandbox (run-PID) is listed by 'mvm ls' and reachable by 'mvm exec' and\n"
	"'mvm net' while CMD runs, and is removed when it ends.\n"
	"\n"
	"  --kernel PATH       guest kernel: vmlinux (PVH) or bzImage (default: make guest's)\n"
	"  --initrd PATH       initramfs to boot (default: make guest's)\n"
	"  --rootfs IMG[:FLAGS]  boot the command from an ext4 image (becomes /dev/vda)\n"
	"  --image NAME|PATH   boot a raw ext4 root image (NAME from 'mvm image build')\n"
	"                      through a throw-away qcow2 overlay: the image is never\n"
	"                      written, the guest's changes vanish at exit. An\n"
	"                      imported image's Env, WorkingDir and User apply (-e,\n"
	"                      -w, -u win);\n"
	"                      with no CMD its Entrypoint + Cmd run\n"
	"  --disk PATH[:FLAGS]   attach a disk (vda, vdb, ... in order); repeatable.\n"
	"                      FLAGS: ro (read-only), raw (default) or qcow2 — the\n"
	"                      format is stated, never guessed from the file\n"
	"  --disk-size SIZE    an empty ext4 disk of SIZE mounted at /data (the last vdX)\n"
	"  --copy HOST:GUEST   copy a host file or tree in before CMD runs; repeatable\n"
	"  --template TPL      start from template TPL instead of booting (see 'mvm\n"
	"                      template'); options that change the machine are refused\n"
	"  --cpus N            vCPUs (default 1)\n"
	"  --memory SIZE       guest RAM, e.g. 512M, 2G (default 256M)\n"
	"  -e, --env K=V       environment variable for CMD; repeatable\n"
	"  --env-fd N          more of it from descriptor N (read to its end), or\n"
	"  --env-file FILE     from FILE: K=V records each ended by a NUL byte, so\n"
	"                      secrets stay off the command line\n"
	"  -w, --workdir DIR   working directory for CMD (default /)\n"
	"  -u, --user UID      run CMD as this numeric uid (gid = uid; default 0, or\n"
	"                      an imported image's User)\n"
	"  --cmdline ARGS      extra kernel command-line arguments\n"
	"  --console           copy the guest kernel console to stderr\n"
	"  --timing            print VMM start, guest init and command exit times\n"
	NET_OPTS_HELP
	"  --events FILE       append denied network attempts as JSON lines\n"
	"  -h, --help          this text\n"
	"\n"
	"Exit status: CMD's status; 128+N if CMD died of signal N; 125 if mvm or the\n"
	"guest failed (bad option, missing kernel, guest panic).\n";

enum { OPT_KERNEL = 256, OPT_INITRD, OPT_ROOTFS, OPT_DISK, OPT_CPUS, OPT_MEMORY,
       OPT_CMDLINE, OPT_CONSOLE, OPT_TIMING, OPT_EXIT_AT_INIT, OPT_SAVE_INITRD,
       OPT_IMAGE, OPT_DISK_SIZE, OPT_COPY, OPT_TEMPLATE, OPT_ENV_FD, OPT_ENV_FILE };

static const struct option run_longopts[] = {
	{ "kernel", required_argument, NULL, OPT_KERNEL },
	{ "initrd", required_argument, NULL, OPT_INITRD },
	{ "rootfs", required_argument, NULL, OPT_ROOTFS },
	{ "image", required_argument, NULL, OPT_IMAGE },
	{ "disk", required_argument, NULL, OPT_DISK },
	{ "disk-size", required_argument, NULL, OPT_DISK_SIZE },
	{ "copy", required_argument, NULL, OPT_COPY },
	{ "template", required_argument, NULL, OPT_TEMPLATE },
	{ "cpus", required_argument, NULL, OPT_CPUS },
	{ "memory", required_argument, NULL, OPT_MEMORY },
	{ "env", required_argument, NULL, 'e' },
	{ "env-fd", required_argument, NULL, OPT_ENV_FD },
	{ "env-file", required_argument, NULL, OPT_ENV_FILE },
	{ "workdir", required_argument, NULL, 'w' },
	{ "user", required_argument, NULL, 'u' },
	{ "cmdline", required_argument, NULL, OPT_CMDLINE },
	{ "console", no_argument, NULL, OPT_CONSOLE },
	{ "timing", no_argument, NULL, OPT_TIMING },
	NET_OPTS_LONGOPTS,
	{ "events", required_argument, NULL, NET_OPT_EVENTS },
	/* Benchmark and debugging aids, deliberately not in --help. */
	{ "exit-at-init", no_argument, NULL, OPT_EXIT_AT_INIT },
	{ "save-initrd", required_argument, NULL, OPT_SAVE_INITRD },
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

/* --env-fd / --env-file (tools/sandbox/env_input.h): values off argv. */
static int env_input(struct run_opts *o, int c, const char *arg)
{
	char err[512];

	if (!env_input_opt(c == OPT_ENV_FD ? "--env-fd" : "--env-file", arg, o->env, &o->nenv, RUN_MAX_ENV, err,
			   sizeof(err)))
		return 0;
	cli_err("run", "%s", err);
	return -1;
}

static int parse_value(struct run_opts *o, int c, char *arg)
{
	long n;

	switch (c) {
	case OPT_KERNEL: o->cfg.kernel_path = arg; return 0;
	case OPT_INITRD: o->cfg.initrd_path = arg; return 0;
	case OPT_ROOTFS: return run_add_disk(&o->cfg, arg, true);
	case OPT_DISK: return run_add_disk(&o->cfg, arg, false);
	case OPT_IMAGE: o->image = arg; return 0;
	case OPT_TEMPLATE: o->template_name = arg; return 0;
	case OPT_DISK_SIZE:
		if (cli_parse_size(arg, &o->disk_size) || o->disk_size < (16ull << 20)) {
			cli_err("run", "--disk-size: '%s' is not a size of at least 16M", arg);
			return -1;
		}
		return 0;
	case OPT_COPY:
		if (!strchr(arg, ':') || o->ncopies == RUN_MAX_COPIES) {
			cli_err("run", "--copy: expected HOST_PATH:GUEST_PATH, got '%s'", arg);
			return -1;
		}
		o->copies[o->ncopies++] = arg;
		return 0;
	case OPT_CPUS:
		if (cli_parse_int(arg, 1, VM_MAX_CPUS, &n)) {
			cli_err("run", "--cpus: '%s' is not a number from 1 to %d", arg, VM_MAX_CPUS);
			return -1;
		}
		o->cfg.cpus = (int)n;
		return 0;
	case OPT_MEMORY:
		if (cli_parse_size(arg, &o->cfg.mem_size)) {
			cli_err("run", "--memory: '%s' is not a size (e.g. 512M, 2G)", arg);
			return -1;
		}
		return 0;
	case 'e':
		if (!strchr(arg, '=') || arg[0] == '=' || o->nenv == RUN_MAX_ENV) {
			cli_err("run", "--env: expected K=V, got '%s'", arg);
			return -1;
		}
		o->env[o->nenv++] = arg;
		return 0;
	case OPT_ENV_FD:
	case OPT_ENV_FILE: return env_input(o, c, arg);
	case 'w': o->cfg.workdir = arg; return 0;
	case 'u':
		if (cli_parse_int(arg, 0, 0x7fffffff, &n)) {
			cli_err("run", "--user: '%s' is not a numeric uid", arg);
			return -1;
		}
		o->uid = (uint32_t)n;
		o->uid_set = true;
		return 0;
	case OPT_CMDLINE: o->cfg.extra_cmdline = arg; return 0;
	case OPT_CONSOLE: o->cfg.console_fd = STDERR_FILENO; return 0;
	case OPT_TIMING: o->timing = true; return 0;
	case OPT_EXIT_AT_INIT: o->cfg.exit_at_init = true; return 0;
	case OPT_SAVE_INITRD: o->save_initrd = arg; return 0;
	}
	return net_opt_parse(&o->cfg.net, "run", c, arg) ? -1 : 0;
}

static int find_defaults(struct run_opts *o)
{
	const char *dir = NULL;

	if (!o->cfg.kernel_path || !o->cfg.initrd_path)
		dir = cli_guest_dir();
	if (!o->cfg.kernel_path) {
		if (!dir) {
			cli_err("run", "no guest kernel: pass --kernel, or build one with 'make guest'");
			return -1;
		}
		snprintf(o->kernel_buf, sizeof(o->kernel_buf), "%s/%s", dir, arch_kernel_name);
		o->cfg.kernel_path = o->kernel_buf;
	}
	if (!o->cfg.initrd_path && dir) {
		snprintf(o->initrd_buf, sizeof(o->initrd_buf), "%s/initramfs.cpio", dir);
		if (access(o->initrd_buf, R_OK) == 0)
			o->cfg.initrd_path = o->initrd_buf;
	}
	return 0;
}

/* The long name of an option that fixes the machine, which a template is already. */
static const char *machine_option(int c)
{
	if (c == OPT_TEMPLATE || c == OPT_COPY || c == OPT_CONSOLE || c == OPT_TIMING || c < OPT_KERNEL)
		return NULL;
	for (const struct option *l = run_longopts; l->name; l++)
		if (l->val == c && c >= OPT_KERNEL && c <= OPT_DISK_SIZE)
			return l->name;
	return NULL;
}

int run_parse_args(struct run_opts *o, int argc, char **argv)
{
	int c, rootfs = 0, initrd = 0;
	const char *machine = NULL;

	memset(o, 0, sizeof(*o));
	o->cfg.cpus = 1;
	o->cfg.mem_size = 256ULL << 20;
	o->cfg.console_fd = -1;
	o->cfg.stdout_fd = STDOUT_FILENO;
	o->cfg.stderr_fd = STDERR_FILENO;
	o->cfg.want_rng = true;
	o->cfg.net.enabled = true;	/* deny by default; --net none removes the device */
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+e:w:u:h", run_longopts, NULL)) != -1) {
		if (c == 'h')
			return 1;
		if (c == '?') {
			cli_err("run", "unknown or incomplete option '%s' (see mvm run --help)",
				argv[optind - 1]);
			return -1;
		}
		rootfs += c == OPT_ROOTFS || c == OPT_IMAGE;
		initrd += c == OPT_INITRD;
		if (!machine)
			machine = machine_option(c);
		if (parse_value(o, c, optarg))
			return -1;
	}
	if (o->template_name && machine) {
		cli_err("run", "--template %s fixes the machine (kernel, disks, vCPUs, memory): "
			"--%s does not apply", o->template_name, machine);
		return -1;
	}
	if (rootfs > 1 || (rootfs && initrd)) {
		cli_err("run", "use one of --initrd, --rootfs and --image, once");
		return -1;
	}
	/* With --image the image may name the command (run_image_defaults). */
	if (optind >= argc && !o->image) {
		cli_err("run", "no command given (mvm run [OPTIONS] -- CMD [ARGS...])");
		return -1;
	}
	o->cfg.argv = optind < argc ? &argv[optind] : NULL;
	o->env[o->nenv] = NULL;
	o->cfg.env = o->env;
	return 0;
}

/* An imported image's Env, WorkingDir and (without a CMD) Entrypoint + Cmd. */
static int run_image_defaults(struct run_opts *o, struct image_defaults *d)
{
	char img[PATH_MAX], err[PATH_MAX + 128];

	if (o->image && !image_store_resolve(o->image, img, sizeof(img)) &&
	    image_defaults_load(img, d, err, sizeof(err))) {
		cli_err("run", "%s", err);
		return -1;
	}
	if (image_defaults_env(d, o->env, &o->nenv, RUN_MAX_ENV)) {
		cli_err("run", "the image's Env and -e make over %d variables", RUN_MAX_ENV);
		return -1;
	}
	o->env[o->nenv] = NULL;
	if (!o->cfg.workdir && d->workdir)
		o->cfg.workdir = d->workdir;
	if (!o->uid_set && d->has_ids) {
		o->uid = d->uid;
		if (d->gid != d->uid)
			cli_err("run", "warning: image user %u:%u runs with group %u (commands get gid = uid)",
				d->uid, d->gid, d->uid);
	}
	if (!o->cfg.argv)
		o->cfg.argv = d->argv;
	if (!o->cfg.argv) {
		cli_err("run", "no command given, and image '%s' names none (no Entrypoint or Cmd)",
			o->image);
		return -1;
	}
	return 0;
}

int cmd_run(int argc, char **argv)
{
	struct run_opts *o = calloc(1, sizeof(*o));
	struct image_defaults defaults = { 0 };
	int ret = MVM_EXIT_USAGE;

	if (!o)
		return MVM_EXIT_ERROR;
	switch (run_parse_args(o, argc, argv)) {
	case 1:
		fputs(run_usage, stdout);
		ret = 0;
		goto out;
	case -1:
		goto out;
	}
	ret = MVM_EXIT_ERROR;
	if (run_image_defaults(o, &defaults) || find_defaults(o))
		goto out;
	/* --exit-at-init (the boot benchmark's boot timer) stops before any
	 * agent could answer: only that aid and --save-initrd keep the direct path. */
	if (o->template_name || (!o->cfg.exit_at_init && !o->save_initrd)) {
		ret = run_in_sandbox(o);
		goto out;
	}
	ret = run_direct(o);
out:
	image_defaults_free(&defaults);
	free(o);
	return ret;
}
