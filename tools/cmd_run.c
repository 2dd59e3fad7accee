/* `mvm run`: boot a throw-away VM, run one command in it, exit with its status. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools/cli.h"
#include "tools/cmd_run.h"
#include "tools/image_overlay.h"
#include "tools/net_opts.h"
#include "vmm/initrd.h"
#include "vmm/vm.h"


static const char run_usage[] =
	"usage: mvm run [OPTIONS] -- CMD [ARGS...]\n"
	"Run CMD in a fresh, throw-away sandbox: create + exec + rm in one step. The\n"
	"sandbox (run-PID) is listed by 'mvm ls' and reachable by 'mvm exec' and\n"
	"'mvm net' while CMD runs, and is removed when it ends.\n"
	"\n"
	"  --kernel PATH       guest kernel: vmlinux (PVH) or bzImage (default: make guest's)\n"
	"  --initrd PATH       initramfs to boot (default: make guest's)\n"
	"  --rootfs IMG[:FLAGS]  boot the command from an ext4 image (becomes /dev/vda)\n"
	"  --image NAME|PATH   boot a raw ext4 root image (NAME from 'mvm image build')\n"
	"                      through a throw-away qcow2 overlay: the image is never\n"
	"                      written, the guest's changes vanish at exit\n"
	"  --disk PATH[:FLAGS]   attach a disk (vda, vdb, ... in order); repeatable.\n"
	"                      FLAGS: ro (read-only), raw (default) or qcow2 — the\n"
	"                      format is stated, never guessed from the file\n"
	"  --disk-size SIZE    an empty ext4 disk of SIZE mounted at /data (the last vdX)\n"
	"  --copy HOST:GUEST   copy a host file or tree in before CMD runs; repeatable\n"
	"  --cpus N            vCPUs (default 1)\n"
	"  --memory SIZE       guest RAM, e.g. 512M, 2G (default 256M)\n"
	"  -e, --env K=V       environment variable for CMD; repeatable\n"
	"  -w, --workdir DIR   working directory for CMD (default /)\n"
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
       OPT_IMAGE, OPT_DISK_SIZE, OPT_COPY };

static const struct option run_longopts[] = {
	{ "kernel", required_argument, NULL, OPT_KERNEL },
	{ "initrd", required_argument, NULL, OPT_INITRD },
	{ "rootfs", required_argument, NULL, OPT_ROOTFS },
	{ "image", required_argument, NULL, OPT_IMAGE },
	{ "disk", required_argument, NULL, OPT_DISK },
	{ "disk-size", required_argument, NULL, OPT_DISK_SIZE },
	{ "copy", required_argument, NULL, OPT_COPY },
	{ "cpus", required_argument, NULL, OPT_CPUS },
	{ "memory", required_argument, NULL, OPT_MEMORY },
	{ "env", required_argument, NULL, 'e' },
	{ "workdir", required_argument, NULL, 'w' },
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

static int add_disk(struct vm_config *cfg, char *arg, bool root)
{
	struct vm_disk *d;

	if (cfg->nr_disks == VM_MAX_DISKS) {
		cli_err("run", "at most %d disks", VM_MAX_DISKS);
		return -1;
	}
	d = &cfg->disks[cfg->nr_disks++];
	/* Trailing flags, any order: PATH[:ro][:raw|:qcow2]. */
	for (char *c = strrchr(arg, ':'); c; c = strrchr(arg, ':')) {
		if (!strcmp(c, ":ro"))
			d->read_only = true;
		else if (!strcmp(c, ":raw") || !strcmp(c, ":qcow2"))
			d->format = c + 1;
		else
			break;
		*c = 0;
	}
	d->path = arg;
	if (root) {
		/* The root disk must be vda: move it to the front. */
		struct vm_disk r = *d;

		memmove(&cfg->disks[1], &cfg->disks[0], sizeof(*d) * (size_t)(cfg->nr_disks - 1));
		cfg->disks[0] = r;
		cfg->root_on_disk = true;
	}
	return 0;
}

static int parse_value(struct run_opts *o, int c, char *arg)
{
	long n;

	switch (c) {
	case OPT_KERNEL: o->cfg.kernel_path = arg; return 0;
	case OPT_INITRD: o->cfg.initrd_path = arg; return 0;
	case OPT_ROOTFS: return add_disk(&o->cfg, arg, true);
	case OPT_DISK: return add_disk(&o->cfg, arg, false);
	case OPT_IMAGE: o->image = arg; return 0;
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
	case 'w': o->cfg.workdir = arg; return 0;
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
		snprintf(o->kernel_buf, sizeof(o->kernel_buf), "%s/vmlinux", dir);
		o->cfg.kernel_path = o->kernel_buf;
	}
	if (!o->cfg.initrd_path && dir) {
		snprintf(o->initrd_buf, sizeof(o->initrd_buf), "%s/initramfs.cpio", dir);
		if (access(o->initrd_buf, R_OK) == 0)
			o->cfg.initrd_path = o->initrd_buf;
	}
	return 0;
}

int run_parse_args(struct run_opts *o, int argc, char **argv)
{
	int c, rootfs = 0, initrd = 0;

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
	while ((c = getopt_long(argc, argv, "+e:w:h", run_longopts, NULL)) != -1) {
		if (c == 'h')
			return 1;
		if (c == '?') {
			cli_err("run", "unknown or incomplete option '%s' (see mvm run --help)",
				argv[optind - 1]);
			return -1;
		}
		rootfs += c == OPT_ROOTFS || c == OPT_IMAGE;
		initrd += c == OPT_INITRD;
		if (parse_value(o, c, optarg))
			return -1;
	}
	if (rootfs > 1 || (rootfs && initrd)) {
		cli_err("run", "use one of --initrd, --rootfs and --image, once");
		return -1;
	}
	if (optind >= argc) {
		cli_err("run", "no command given (mvm run [OPTIONS] -- CMD [ARGS...])");
		return -1;
	}
	o->cfg.argv = &argv[optind];
	o->env[o->nenv] = NULL;
	o->cfg.env = o->env;
	return 0;
}

/*
 * --image: the base through a qcow2 overlay (tools/image_overlay.c, shared
 * with `mvm create --image`), made in @dir, or in a private temp dir that
 * drop_overlay() removes when @dir is NULL.
 */
int run_attach_image(struct run_opts *o, const char *dir)
{
	const char *tmp = getenv("TMPDIR");
	char err[PATH_MAX + 128];

	if (image_base_resolve(o->image, &o->base, err, sizeof(err))) {
		cli_err("run", "--image: %s", err);
		return -1;
	}
	if (!dir) {
		snprintf(o->overlay_dir, sizeof(o->overlay_dir), "%s/mvm-run.XXXXXX",
			 tmp && *tmp ? tmp : "/tmp");
		if (!mkdtemp(o->overlay_dir)) {
			cli_err("run", "--image: temp dir %s: %s", o->overlay_dir, strerror(errno));
			o->overlay_dir[0] = 0;
			return -1;
		}
	}
	snprintf(o->overlay_arg, sizeof(o->overlay_arg), "%s/root.qcow2", dir ? dir : o->overlay_dir);
	if (image_overlay_create(o->overlay_arg, &o->base, err, sizeof(err))) {
		cli_err("run", "--image: %s", err);
		return -1;
	}
	strcat(o->overlay_arg, ":" IMAGE_OVERLAY_FORMAT);	/* add_disk strips the flag again */
	if (add_disk(&o->cfg, o->overlay_arg, true))
		return -1;
	o->cfg.disks[0].backing_root = o->base.dir;
	o->cfg.disks[0].backing_format = IMAGE_BASE_FORMAT;
	return 0;
}

/* The overlay goes as soon as the VMM holds it open (and on every exit path). */
static void drop_overlay(struct run_opts *o)
{
	char p[PATH_MAX];

	if (!o->overlay_dir[0])
		return;
	snprintf(p, sizeof(p), "%s/root.qcow2", o->overlay_dir);
	unlink(p);
	rmdir(o->overlay_dir);
	o->overlay_dir[0] = 0;
}

long run_peak_rss_kib(void)
{
	char line[256];
	long kib = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmHWM: %ld", &kib) == 1)
			break;
	if (f)
		fclose(f);
	return kib;
}

static void print_timing(const struct vm *vm, const struct vm_result *r)
{
	long rss = run_peak_rss_kib();
	uint64_t guest = vm_guest_resident_kib(vm);

	fprintf(stderr, "mvm: timing: vmm-start 0.000s guest-init %.3fs command-exit %.3fs "
		"vmm-exit %.3fs\n", r->t_init, r->t_exit, vm_elapsed(vm));
	fprintf(stderr, "mvm: memory: peak-rss %ld KiB, guest-resident %llu KiB, "
		"vmm-overhead %lld KiB\n", rss, (unsigned long long)guest,
		(long long)rss - (long long)guest);
}

static int save_initrd(const struct run_opts *o)
{
	struct run_spec rs = { .argv = o->cfg.argv, .env = o->cfg.env,
			       .workdir = o->cfg.workdir, .root_on_disk = o->cfg.root_on_disk };
	struct buf b = { 0 };
	FILE *f;
	int ret = initrd_build(o->cfg.initrd_path, &rs, &b);

	f = ret ? NULL : fopen(o->save_initrd, "wb");
	if (!f || fwrite(b.data, 1, b.len, f) != b.len || fclose(f)) {
		cli_err("run", "cannot write initrd to %s", o->save_initrd);
		ret = -1;
	}
	buf_free(&b);
	return ret ? MVM_EXIT_ERROR : 0;
}

int run_exit_status(const struct vm_result *r)
{
	switch (r->outcome) {
	case VM_EXITED:
		return r->code;
	case VM_SIGNALED:
		return 128 + r->code;
	default:
		cli_err("run", "%s", r->message);
		return MVM_EXIT_ERROR;
	}
}

int cmd_run(int argc, char **argv)
{
	struct run_opts *o = calloc(1, sizeof(*o));
	struct vm_result res;
	struct vm *vm = NULL;
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
	if (find_defaults(o))
		goto out;
	/* --exit-at-init (the boot benchmark's boot timer) stops before any
	 * agent could answer: only that aid and --save-initrd keep the direct path. */
	if (!o->cfg.exit_at_init && !o->save_initrd) {
		ret = run_in_sandbox(o);
		goto out;
	}
	if (o->image && run_attach_image(o, NULL))
		goto out;
	if (o->save_initrd) {
		ret = save_initrd(o);
		goto out;
	}
	vm = calloc(1, sizeof(*vm));
	if (!vm)
		goto out;
	if (vm_create(vm, &o->cfg, &res)) {
		cli_err("run", "%s", res.message);
		goto out_vm;
	}
	drop_overlay(o);
	vm_run(vm, &res);
	if (o->timing)
		print_timing(vm, &res);
	ret = run_exit_status(&res);
out_vm:
	vm_destroy(vm);
out:
	drop_overlay(o);
	free(vm);
	free(o);
	return ret;
}
