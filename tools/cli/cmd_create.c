/* `mvm create NAME [OPTIONS]`: a long-lived sandbox, booted and ready for exec. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/cli_util.h"
#include "devices/net_slirp.h"
#include "tools/cli/cmd_sandbox.h"
#include "tools/cli/net_opts.h"
#include "tools/sandbox/env_input.h"
#include "tools/sandbox/operator_policy.h"
#include "tools/sandbox/sandbox.h"
#include "tools/sandbox/sandbox_cgroup.h"
#include "tools/sandbox/sandbox_create.h"
#include "tools/sandbox/sandbox_policy.h"

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
	"  --cpu-quota PCT        at most PCT% of one CPU for the whole sandbox (cgroup\n"
	"                         cpu.max, where a delegated cgroup exists: mvm inspect)\n"
	"  --lifetime SECS        the host stops the sandbox SECS seconds after create\n"
	"                         (kept by forks; it cannot start again: mvm rm it)\n"
	"  --disk-size SIZE       size of the /data disk without --image (default 1G)\n"
	"  --kernel PATH          guest kernel (default: make guest's)\n"
	"  --copy HOST:GUEST      copy a host file or tree in after boot and record it\n"
	"                         as the baseline of 'mvm diff'/'promote'; repeatable\n"
	"  --env K=V              environment for every exec; repeatable\n"
	"  --env-fd N             more of it from descriptor N, read to its end, and\n"
	"  --env-file FILE        from FILE: K=V records each ended by a NUL byte (as\n"
	"                         /proc/PID/environ): values stay off the command\n"
	"                         line, which every local user can read\n"
	"  --template TPL         start from template TPL instead of booting (see\n"
	"                         'mvm template'); --image, --kernel, --cpus, --memory\n"
	"                         and --disk-size are the template's and are refused\n"
	"Network (deny by default; 'mvm net' changes the rules of a running sandbox,\n"
	"and they are kept across stop/start):\n"
	NET_OPTS_HELP
	"  --owner OWNER          record OWNER (mcp:ID or tenant:NAME) as the sandbox's\n"
	"                         owner: remote callers see only their own sandboxes\n"
	"                         (docs/security.md)\n"
	"  -h, --help             this text\n"
	"\n"
	"State lives in ${MVM_STATE_DIR:-${XDG_STATE_HOME:-~/.local/state}/mvm}/NAME/.\n"
	"Nothing from the host enters the guest except what --env, --copy and\n"
	"'mvm cp' pass. Boot waits up to MVM_START_TIMEOUT seconds (default 120).\n";

/* Options a template fixes (it is a whole machine): refused beside --template. */
static const char *const machine_opts[] = { "--image", "--cpus", "--memory", "--disk-size",
					    "--kernel" };

enum { O_IMAGE = 256, O_CPUS, O_MEMORY, O_DISK_SIZE, O_KERNEL, O_COPY, O_ENV, O_TEMPLATE,
       O_CPU_QUOTA, O_OWNER, O_ENV_FD, O_ENV_FILE, O_LIFETIME };

/* --env-fd / --env-file (tools/sandbox/env_input.h): values off argv. */
static int env_input(struct sb_create *o, int ch, const char *arg)
{
	char err[512];

	if (!env_input_opt(ch == O_ENV_FD ? "--env-fd" : "--env-file", arg, o->c.env, &o->c.nenv,
			   SB_MAX_ENV, err, sizeof(err)))
		return 0;
	cli_err("create", "%s", err);
	return -1;
}

static int parse_opt(struct sb_create *o, int ch, char *arg, const char **machine)
{
	long n;

	if (ch >= O_IMAGE && ch <= O_KERNEL && !*machine)
		*machine = machine_opts[ch - O_IMAGE];
	switch (ch) {
	case O_TEMPLATE: o->template_name = arg; return 0;
	case O_ENV_FD:
	case O_ENV_FILE: return env_input(o, ch, arg);
	case O_OWNER:
		if (!op_owner_ok(arg))
			break;
		snprintf(o->c.owner, sizeof(o->c.owner), "%s", arg);
		return 0;
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
	case O_LIFETIME:	/* up to a year; counted from now, on the wall clock */
		if (cli_parse_int(arg, 1, 366L * 86400, &n))
			break;
		o->c.expires = (double)time(NULL) + (double)n;
		return 0;
	case O_DISK_SIZE:
		if (cli_parse_size(arg, &o->c.disk_size) || o->c.disk_size < (16ull << 20))
			break;
		return 0;
	case O_COPY:
		if (!strchr(arg, ':') || o->ncopies == SB_MAX_COPIES)
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

/* Network options into the config (and policy.json once the directory exists). */
static int check_net(struct sb_create *o)
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

int cmd_create(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "image", required_argument, NULL, O_IMAGE }, { "cpus", required_argument, NULL, O_CPUS },
		{ "memory", required_argument, NULL, O_MEMORY },
		{ "cpu-quota", required_argument, NULL, O_CPU_QUOTA },
		{ "lifetime", required_argument, NULL, O_LIFETIME },
		{ "disk-size", required_argument, NULL, O_DISK_SIZE },
		{ "kernel", required_argument, NULL, O_KERNEL }, { "copy", required_argument, NULL, O_COPY },
		{ "env", required_argument, NULL, O_ENV }, NET_OPTS_LONGOPTS,
		{ "env-fd", required_argument, NULL, O_ENV_FD },
		{ "env-file", required_argument, NULL, O_ENV_FILE },
		{ "owner", required_argument, NULL, O_OWNER },
		{ "template", required_argument, NULL, O_TEMPLATE },
		{ "help", no_argument, NULL, 'h' }, { 0 },
	};
	struct sb_create *o = calloc(1, sizeof(*o));
	const char *name = NULL, *machine = NULL;
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
		if (ch == 1 || ch == '?' || parse_opt(o, ch, optarg, &machine)) {
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
	if (o->template_name && machine) {
		cli_err("create", "--template %s fixes the machine (image, kernel, vCPUs, memory, "
			"disk): %s does not apply", o->template_name, machine);
		goto out;
	}
	if (check_net(o))
		goto out;
	ret = sb_create(o) ? MVM_EXIT_ERROR : 0;
	if (!ret)
		printf("%s\n", o->c.name);
	if (!ret)
		cli_say_placement("create", o->c.name);
out:
	sb_config_free(&o->c);
	free(o);
	return ret;
}
