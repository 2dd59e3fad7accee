/* `mvm create NAME [OPTIONS]`: a long-lived sandbox, booted and ready for exec. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "devices/net_slirp.h"
#include "tools/sandbox/baseline.h"
#include "common/cli_util.h"
#include "tools/cli/cmd_sandbox.h"
#include "tools/sandbox/cp.h"
#include "images/image_overlay.h"
#include "tools/cli/net_opts.h"
#include "tools/sandbox/sandbox.h"
#include "tools/sandbox/sandbox_disk.h"
#include "tools/sandbox/sandbox_policy.h"

#define MAX_COPIES 64

static const char create_usage[] =
	"usage: mvm create NAME [OPTIONS]\n"
	"Create the sandbox NAME and boot it; it runs until 'mvm stop NAME'.\n"
	"\n"
	"  --image IMG            root disk: a raw ext4 image (a path, or a name from\n"
	"                         'mvm image build'), shared read-only; the sandbox\n"
	"                         writes to its own qcow2 overlay (kept across\n"
	"                         stop/start). Default: the built-in initramfs with\n"
	"                         a data disk at /data\n"
	"  --cpus N               vCPUs (default 1)\n"
	"  --memory SIZE          guest RAM (default 512M)\n"
	"  --cpu-quota PCT        at most PCT%% of one CPU for the whole sandbox (cgroup\n"
	"                         cpu.max, where a delegated cgroup exists: mvm inspect)\n"
	"  --disk-size SIZE       size of the /data disk without --image (default 1G)\n"
	"  --kernel PATH          guest kernel (default: make guest's)\n"
	"  --copy HOST:GUEST      copy a host file or tree in after boot and record it\n"
	"                         as the baseline of 'mvm diff'/'promote'; repeatable\n"
	"  --env K=V              environment for every exec; repeatable\n"
	"Network (deny by default; 'mvm net' changes the rules of a running sandbox,\n"
	"and they are kept across stop/start):\n"
	NET_OPTS_HELP
	"  -h, --help             this text\n"
	"\n"
	"State lives in ${MVM_STATE_DIR:-${XDG_STATE_HOME:-~/.local/state}/mvm}/NAME/.\n"
	"Nothing from the host enters the guest except what --env, --copy and\n"
	"'mvm cp' pass. Boot waits up to MVM_START_TIMEOUT seconds (default 120).\n";

enum { O_IMAGE = 256, O_CPUS, O_MEMORY, O_DISK_SIZE, O_KERNEL, O_COPY, O_ENV, O_CPU_QUOTA };

struct create_opts {
	struct sb_config c;
	struct vm_net net;
	const char *image;
	char *copies[MAX_COPIES];
	int ncopies;
};

static int parse_opt(struct create_opts *o, int ch, char *arg)
{
	long n;

	switch (ch) {
	case O_IMAGE: o->image = arg; return 0;
	case O_KERNEL: snprintf(o->c.kernel, sizeof(o->c.kernel), "%s", arg); return 0;
	case O_CPUS:
		if (cli_parse_int(arg, 1, 64, &n))
			break;
		o->c.cpus = (int)n;
		return 0;
	case O_MEMORY:
		if (cli_parse_size(arg, &o->c.mem))
			break;
		return 0;
	case O_CPU_QUOTA:
		if (cli_parse_int(arg, 1, 6400, &n))
			break;
		o->c.cpu_quota = (int)n;
		return 0;
	case O_DISK_SIZE:
		if (cli_parse_size(arg, &o->c.disk_size) || o->c.disk_size < (16ull << 20))
			break;
		return 0;
	case O_COPY:
		if (!strchr(arg, ':') || o->ncopies == MAX_COPIES)
			break;
		o->copies[o->ncopies++] = arg;
		return 0;
	case O_ENV:
		if (!strchr(arg, '=') || arg[0] == '=' || o->c.nenv == SB_MAX_ENV)
			break;
		o->c.env[o->c.nenv++] = strdup(arg);
		return 0;
	default:
		switch (net_opt_parse(&o->net, "create", ch, arg)) {
		case 0: return 0;
		case -1: return -1;
		}
	}
	cli_err("create", "bad option or value '%s' (see mvm create --help)", arg ? arg : "");
	return -1;
}

static int make_disk(struct create_opts *o, const char *dir)
{
	char dst[PATH_MAX + 16], err[PATH_MAX + 128] = "";
	struct image_base base;
	int ret;

	snprintf(o->c.disk, sizeof(o->c.disk), "%s", o->image ? "root.qcow2" : "data.img");
	snprintf(o->c.disk_format, sizeof(o->c.disk_format), "%s",
		 o->image ? IMAGE_OVERLAY_FORMAT : "raw");
	snprintf(dst, sizeof(dst), "%s/%s", dir, o->c.disk);
	if (o->image) {
		/* The shared base is never written: the overlay takes every write. */
		ret = image_base_resolve(o->image, &base, err, sizeof(err));
		if (!ret) {
			snprintf(o->c.image, sizeof(o->c.image), "%s", base.path);
			o->c.root_on_disk = true;
			ret = image_overlay_create(dst, &base, err, sizeof(err));
		}
	} else {
		ret = sb_disk_create(dst, o->c.disk_size, err, sizeof(err));
	}
	if (ret)
		cli_err("create", "%s", err);
	return ret;
}

/* Network options into the config (and policy.json once the directory exists). */
static int check_net(struct create_opts *o)
{
	char err[512];
	struct net_publish p;

	o->c.net_off = !o->net.enabled;
	if (o->net.dns_server) {
		struct sockaddr_storage ss;
		socklen_t sl;

		if (strlen(o->net.dns_server) >= sizeof(o->c.dns_server) ||
		    net_dns_server_parse(o->net.dns_server, &ss, &sl)) {
			cli_err("create", "--dns-server %s: expected ADDR, ADDR:PORT or [ADDR6]:PORT",
				o->net.dns_server);
			return -1;
		}
		snprintf(o->c.dns_server, sizeof(o->c.dns_server), "%s", o->net.dns_server);
	}
	for (int i = 0; i < o->net.nr_publish; i++) {
		if (net_publish_parse(o->net.publish[i], &p, err, sizeof(err))) {
			cli_err("create", "%s", err);
			return -1;
		}
		o->c.publish[o->c.npublish++] = strdup(o->net.publish[i]);
	}
	if (o->net.enabled && sb_policy_validate(&o->net, err, sizeof(err))) {
		cli_err("create", "%s", err);
		return -1;
	}
	return 0;
}

static int copy_in(struct create_opts *o)
{
	for (int i = 0; i < o->ncopies; i++) {
		char *colon = strrchr(o->copies[i], ':');

		*colon = 0;
		/* Records the baseline (manifest + contents) that mvm diff compares with. */
		if (baseline_copy_in(o->c.name, o->copies[i], colon + 1))
			return -EIO;
	}
	return 0;
}

static int create(struct create_opts *o)
{
	char dir[PATH_MAX], err[512] = "";
	struct timespec t;
	int ret;

	ret = sb_mkdir(o->c.name, dir, sizeof(dir));
	if (ret) {
		cli_err("create", ret == -EEXIST ? "a sandbox named %s already exists" :
			"cannot create the state directory of %s", o->c.name);
		return MVM_EXIT_ERROR;
	}
	clock_gettime(CLOCK_REALTIME, &t);
	o->c.created = (double)t.tv_sec;
	o->c.cid = 3;
	if (make_disk(o, dir) || sb_config_save(&o->c) ||
	    (o->net.enabled && sb_policy_create(o->c.name, &o->net, err, sizeof(err)))) {
		char p[PATH_MAX + 16];

		if (err[0])
			cli_err("create", "%s", err);
		for (const char *f = "config.json\0" SB_POLICY_FILE "\0"; *f; f += strlen(f) + 1) {
			snprintf(p, sizeof(p), "%s/%s", dir, f);
			unlink(p);
		}
		snprintf(p, sizeof(p), "%s/%s", dir, o->c.disk);
		unlink(p);
		rmdir(dir);
		return MVM_EXIT_ERROR;
	}
	sb_event(o->c.name, "created", "");
	ret = sb_start(o->c.name, sb_self_exe(), sb_start_timeout(), err, sizeof(err));
	if (ret) {
		cli_err("create", "%s created but did not start: %s", o->c.name, err);
		sb_stop(o->c.name, 5);
		return MVM_EXIT_ERROR;
	}
	if (copy_in(o))
		return MVM_EXIT_ERROR;
	printf("%s\n", o->c.name);
	return 0;
}

int cmd_create(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "image", required_argument, NULL, O_IMAGE }, { "cpus", required_argument, NULL, O_CPUS },
		{ "memory", required_argument, NULL, O_MEMORY },
		{ "cpu-quota", required_argument, NULL, O_CPU_QUOTA },
		{ "disk-size", required_argument, NULL, O_DISK_SIZE },
		{ "kernel", required_argument, NULL, O_KERNEL }, { "copy", required_argument, NULL, O_COPY },
		{ "env", required_argument, NULL, O_ENV }, NET_OPTS_LONGOPTS,
		{ "help", no_argument, NULL, 'h' }, { 0 },
	};
	struct create_opts *o = calloc(1, sizeof(*o));
	const char *name = NULL;
	int ch, ret = MVM_EXIT_USAGE;

	if (!o)
		return MVM_EXIT_ERROR;
	o->c.cpus = 1;
	o->c.mem = 512ull << 20;
	o->c.disk_size = 1ull << 30;
	o->net.enabled = true;	/* deny by default; --net none: no device */
	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "-h", opts, NULL)) != -1) {
		if (ch == 'h') {
			fputs(create_usage, stdout);
			ret = 0;
			goto out;
		}
		if (ch == 1 && !name) {
			name = optarg;	/* the one positional argument, wherever it is */
			continue;
		}
		if (ch == 1 || ch == '?' || parse_opt(o, ch, optarg)) {
			if (ch == 1 || ch == '?')
				cli_err("create", "unexpected '%s' (see mvm create --help)", argv[optind - 1]);
			goto out;
		}
	}
	if (!name || !sb_name_ok(name)) {
		cli_err("create", name ? "bad name '%s': letters, digits, '.', '_', '-' (at most 63)"
				       : "expected a sandbox NAME%s", name ? name : "");
		goto out;
	}
	snprintf(o->c.name, sizeof(o->c.name), "%s", name);
	if (check_net(o))
		goto out;
	ret = create(o);
out:
	sb_config_free(&o->c);
	free(o);
	return ret;
}
