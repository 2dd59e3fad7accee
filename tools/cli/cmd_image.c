/* `mvm image`: create qcow2 overlays, show image info, build and list the image store;
 * the work is in images/ (image_create, image_file, image_build, image_store).
 * `image import` is the program mvm-oci (cmd_image_import.c). */
#include <cjson/cJSON.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cli_util.h"
#include "images/image_build.h"
#include "images/image_create.h"
#include "images/image_file.h"
#include "images/image_store.h"
#include "tools/cli/cmd_beside.h"
#include "tools/cli/cmd_image.h"
#include "tools/cli/verb_args.h"

enum { EXIT_OK = 0, EXIT_ERR = 1, EXIT_USAGE = 2 };

static const char usage_text[] =
	"usage: mvm image create [--base BASE [--base-format raw|qcow2]] [--size SIZE]\n"
	"                        [--cluster-size SIZE] OVERLAY\n"
	"       mvm image info PATH [--json] [--format raw|qcow2] [--trust-backing]\n"
	"       mvm image build NAME [--force] [--size SIZE]\n"
	"       mvm image import SOURCE --name NAME [--force] [--size SIZE]\n"
	"       mvm image ls\n\n"
	"create  make a qcow2 v3 image; with --base, a copy-on-write overlay whose\n"
	"        reads fall through to BASE (never written). The base format is\n"
	"        recorded in the overlay and never guessed later; it defaults to raw.\n"
	"        SIZE defaults to the base's size (suffixes K, M, G, T; bare = MiB).\n"
	"info    format, virtual size, disk usage and the backing chain. Without\n"
	"        --format the header magic picks how to show PATH; backing files\n"
	"        must stay inside PATH's directory unless --trust-backing.\n"
	"build   build root image NAME (minimal: busybox + the guest init, seconds,\n"
	"        offline; debian: Debian 12 minbase via debootstrap from the host's\n"
	"        apt mirror, needs root and the network; browser: debian + Chromium,\n"
	"        Xvfb, openbox, x11vnc/noVNC, xdotool, scrot and a user 'browser';\n"
	"        dev: debian + python3, pip, venv, nodejs, npm, git, build-essential,\n"
	"        curl)\n"
	"        into the store as NAME.ext4\n"
	"        (raw ext4, sparse) + NAME.json. A built image is reused unless\n"
	"        --force. Builders are images/build-NAME.sh. Boot one with\n"
	"        'mvm run --image NAME' (a throw-away overlay; the image stays intact).\n"
	"import  an OCI image (docker save, an OCI layout or archive) as root image\n"
	"        NAME; 'mvm image import --help' for its sources and rules.\n"
	"ls      images in $XDG_DATA_HOME/mvm/images (default ~/.local/share/...).\n";

static int usage(FILE *f, int rc)
{
	fputs(usage_text, f);
	return rc;
}

static void human(uint64_t v, char *buf, size_t len)
{
	static const char *u[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	double d = (double)v;
	int i = 0;

	while (d >= 1024 && i < 5)
		d /= 1024, i++;
	if (i == 0)
		snprintf(buf, len, "%llu B", (unsigned long long)v);
	else
		snprintf(buf, len, "%.4g %s", d, u[i]);
}

static int do_create(const char *base, const char *fmt, uint64_t size,
		     unsigned bits, const char *overlay)
{
	char err[PATH_MAX + 128];

	if (!base && !size) {
		cli_err("image", "create: --size is required without --base");
		return EXIT_USAGE;
	}
	if (!image_create(base, fmt, size, bits, overlay, err, sizeof(err)))
		return EXIT_OK;
	if (err[0])
		cli_err("image", "create: %s", err);
	return EXIT_ERR;
}

static int cluster_bits_of(const char *s, unsigned *bits)
{
	uint64_t v;

	if (cli_parse_size(s, &v) || !v || (v & (v - 1)) || v < 512 || v > (2U << 20))
		return -EINVAL;
	*bits = (unsigned)__builtin_ctzll(v);
	return 0;
}

static int cmd_create(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "base", required_argument, NULL, 'b' },
		{ "base-format", required_argument, NULL, 'F' },
		{ "size", required_argument, NULL, 's' },
		{ "cluster-size", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *base = NULL, *fmt = NULL;
	uint64_t size = 0;
	unsigned bits = 16;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+b:F:s:c:h", opts, NULL)) != -1) {
		switch (c) {
		case 'b': base = optarg; break;
		case 'F': fmt = optarg; break;
		case 's':
			if (cli_parse_size(optarg, &size) || !size)
				return usage(stderr, EXIT_USAGE);
			break;
		case 'c':
			if (cluster_bits_of(optarg, &bits))
				return usage(stderr, EXIT_USAGE);
			break;
		case 'h': return usage(stdout, EXIT_OK);
		default: return usage(stderr, EXIT_USAGE);
		}
	}
	if (optind != argc - 1 || (fmt && strcmp(fmt, "raw") && strcmp(fmt, "qcow2")) ||
	    (fmt && !base))
		return usage(stderr, EXIT_USAGE);
	return do_create(base, fmt, size, bits, argv[optind]);
}

static cJSON *info_json(const char *path, const char *fmt, const struct qcow2_info *qi,
			uint64_t vsize, uint64_t disk)
{
	cJSON *o = cJSON_CreateObject(), *chain = cJSON_CreateArray();

	cJSON_AddStringToObject(o, "filename", path);
	cJSON_AddStringToObject(o, "format", fmt);
	cJSON_AddNumberToObject(o, "virtual-size", (double)vsize);
	cJSON_AddNumberToObject(o, "actual-size", (double)disk);
	if (qi) {
		cJSON_AddNumberToObject(o, "version", qi->version);
		cJSON_AddNumberToObject(o, "cluster-size", qi->cluster_size);
		for (unsigned i = 0; i < qi->chain_len; i++) {
			cJSON *e = cJSON_CreateObject();

			cJSON_AddStringToObject(e, "filename", qi->chain[i].path);
			cJSON_AddStringToObject(e, "format", qi->chain[i].format);
			cJSON_AddNumberToObject(e, "virtual-size",
						(double)qi->chain[i].virtual_size);
			cJSON_AddItemToArray(chain, e);
		}
	}
	cJSON_AddItemToObject(o, "backing-chain", chain);
	return o;
}

static void info_text(const char *path, const char *fmt, const struct qcow2_info *qi,
		      uint64_t vsize, uint64_t disk)
{
	char a[32], b[32];

	human(vsize, a, sizeof(a));
	human(disk, b, sizeof(b));
	printf("image: %s\n", path);
	if (qi)
		printf("format: qcow2 (version %u)\n", qi->version);
	else
		printf("format: %s\n", fmt);
	printf("virtual size: %s (%llu bytes)\ndisk size: %s\n", a,
	       (unsigned long long)vsize, b);
	if (!qi)
		return;
	printf("cluster size: %u\n", qi->cluster_size);
	for (unsigned i = 0; i < qi->chain_len; i++) {
		human(qi->chain[i].virtual_size, a, sizeof(a));
		printf("%*sbacking file: %s (%s, %s)\n", 2 * (int)i, "",
		       qi->chain[i].path, qi->chain[i].format, a);
	}
}

static void print_info(const char *path, const char *fmt, const struct qcow2_info *qi,
		       uint64_t vsize, uint64_t disk, bool json)
{
	cJSON *j;
	char *s;

	if (!json) {
		info_text(path, fmt, qi, vsize, disk);
		return;
	}
	j = info_json(path, fmt, qi, vsize, disk);
	s = cJSON_Print(j);
	printf("%s\n", s);
	cJSON_free(s);
	cJSON_Delete(j);
}

struct info_args {
	const char *path, *fmt;
	bool json, trust;
};

static int info_opt(void *ctx, int c, char *arg)
{
	struct info_args *a = ctx;

	if (c == 'j')
		a->json = true;
	else if (c == 't')
		a->trust = true;
	else
		a->fmt = arg;
	if (a->fmt && strcmp(a->fmt, "raw") && strcmp(a->fmt, "qcow2")) {
		cli_err("image", "info: --format is raw or qcow2, not '%s'", a->fmt);
		return -1;
	}
	return 0;
}

/* `image info [--json] [--trust-backing] [--format F] PATH`: 0, 1 for --help, -1. */
static int parse_info(int argc, char **argv, struct info_args *a)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' }, { "trust-backing", no_argument, NULL, 't' },
		{ "format", required_argument, NULL, 'f' }, { 0 },
	};
	static const struct verb_spec spec = { .verb = "image info", .longopts = opts, .min_pos = 1,
					       .max_pos = 1, .synopsis = "one image PATH", .opt = info_opt };
	struct verb_args v;
	int ret;

	memset(a, 0, sizeof(*a));
	ret = verb_parse(&spec, a, argc, argv, &v);
	a->path = v.pos[0];
	return ret;
}

/* The chain is walked with the same root rule as a VM open (PATH's own
 * directory), so info on a guest-written overlay reads no host file the
 * guest named, unless the operator says --trust-backing. */
static int cmd_info(int argc, char **argv)
{
	struct info_args a = { 0 };
	struct image_file_info fi;
	char err[PATH_MAX + 128];
	int r = parse_info(argc, argv, &a);

	if (r)
		return r > 0 ? usage(stdout, EXIT_OK) : EXIT_USAGE;
	if (image_file_info(a.path, a.fmt, a.trust, &fi, err, sizeof(err))) {
		if (err[0])
			cli_err("image", "info: %s", err);
		else if (fi.chain_refused && !a.trust)
			cli_err("image", "info: pass --trust-backing to follow backing files "
				"outside the directory of %s", a.path);
		return EXIT_ERR;
	}
	print_info(a.path, fi.format, fi.qcow2 ? &fi.qi : NULL, fi.vsize, fi.disk, a.json);
	if (fi.qcow2)
		qcow2_info_free(&fi.qi);
	return EXIT_OK;
}

static int cmd_build(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "force", no_argument, NULL, 'f' },
		{ "size", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct image_build b = { 0 };
	char err[PATH_MAX + 128];
	int c, rc = EXIT_ERR;

	optind = 1;
	while ((c = getopt_long(argc, argv, "fs:h", opts, NULL)) != -1) {
		switch (c) {
		case 'f': b.force = true; break;
		case 's':
			if (cli_parse_size(optarg, &b.size) || b.size < (16ULL << 20))
				return usage(stderr, EXIT_USAGE);
			break;
		case 'h': return usage(stdout, EXIT_OK);
		default: return usage(stderr, EXIT_USAGE);
		}
	}
	if (optind != argc - 1 || !image_name_ok(argv[optind]))
		return usage(stderr, EXIT_USAGE);
	b.name = argv[optind];
	if (image_build(&b, err, sizeof(err))) {
		if (err[0])
			cli_err("image", "build: %s", err);
	} else if (b.reused) {
		printf("image: %s is built (%s); --force rebuilds it\n", b.name, b.out);
		rc = EXIT_OK;
	} else {
		printf("image: built %s in %.1fs: %s\n", b.name, b.seconds, b.out);
		rc = EXIT_OK;
	}
	image_build_free(&b);
	return rc;
}

static int cmd_ls(int argc, char **argv)
{
	struct image_entry *e = NULL;
	char vs[32], ds[32];
	char *dir;
	int n;

	if (argc == 2 && !strcmp(argv[1], "--help"))
		return usage(stdout, EXIT_OK);
	if (argc > 1)
		return usage(stderr, EXIT_USAGE);
	dir = image_store_dir();
	n = dir ? image_store_list(dir, &e) : -ENOMEM;
	if (n < 0) {
		fprintf(stderr, "mvm: image: no image store at %s\n", dir ? dir : "?");
		free(dir);
		return EXIT_OK;
	}
	printf("%-32s %-6s %12s %12s\n", "NAME", "FORMAT", "VIRTUAL", "DISK");
	for (int i = 0; i < n; i++) {
		human(e[i].vsize, vs, sizeof(vs));
		human(e[i].disk, ds, sizeof(ds));
		printf("%-32s %-6s %12s %12s\n", e[i].name, e[i].format, vs, ds);
	}
	free(e);
	free(dir);
	return EXIT_OK;
}

int cmd_image(int argc, char **argv)
{
	if (argc < 2)
		return usage(stderr, EXIT_USAGE);
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help"))
		return usage(stdout, EXIT_OK);
	if (!strcmp(argv[1], "create"))
		return cmd_create(argc - 1, argv + 1);
	if (!strcmp(argv[1], "info"))
		return cmd_info(argc - 1, argv + 1);
	if (!strcmp(argv[1], "ls"))
		return cmd_ls(argc - 1, argv + 1);
	if (!strcmp(argv[1], "build"))
		return cmd_build(argc - 1, argv + 1);
	/* mvm-oci, beside this program: libarchive stays out of the VMM. */
	if (!strcmp(argv[1], "import"))
		return cli_beside(OCI_EXE, "image import", argv + 1);
	cli_err("image", "unknown subcommand '%s'", argv[1]);
	return usage(stderr, EXIT_USAGE);
}
