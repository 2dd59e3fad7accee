/* `mvm image`: create qcow2 overlays, show image info, build and list the image store. */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "images/qcow2.h"
#include "images/qcow2_format.h"
#include "common/cli_util.h"
#include "common/fs_util.h"
#include "common/mono_time.h"
#include "tools/cli/cmd_image.h"
#include "tools/cli/verb_args.h"
#include "images/image_store.h"

enum { EXIT_OK = 0, EXIT_ERR = 1, EXIT_USAGE = 2 };

static const char usage_text[] =
	"usage: mvm image create [--base BASE [--base-format raw|qcow2]] [--size SIZE]\n"
	"                        [--cluster-size SIZE] OVERLAY\n"
	"       mvm image info PATH [--json] [--format raw|qcow2] [--trust-backing]\n"
	"       mvm image build NAME [--force] [--size SIZE]\n"
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
	"        Xvfb, openbox, x11vnc/noVNC, xdotool, scrot and a user 'browser')\n"
	"        into the store as NAME.ext4\n"
	"        (raw ext4, sparse) + NAME.json. A built image is reused unless\n"
	"        --force. Builders are images/build-NAME.sh. Boot one with\n"
	"        'mvm run --image NAME' (a throw-away overlay; the image stays intact).\n"
	"ls      images in $XDG_DATA_HOME/mvm/images (default ~/.local/share/...).\n";

static int usage(FILE *f, int rc)
{
	fputs(usage_text, f);
	return rc;
}

/* "qcow2" when the file starts with the qcow2 magic, else "raw". */
static const char *file_format(const char *path, uint64_t *vsize)
{
	uint8_t h[QH_SIZE + 8];
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	*vsize = 0;
	if (fd < 0)
		return NULL;
	n = pread(fd, h, sizeof(h), 0);
	if (!fstat(fd, &st))
		*vsize = (uint64_t)st.st_size;
	close(fd);
	if (n == (ssize_t)sizeof(h) && get_be32(h) == QCOW2_MAGIC) {
		*vsize = get_be64(h + QH_SIZE);
		return "qcow2";
	}
	return "raw";
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

/* Store the base relative to the overlay's directory when it lives below
 * it (the store stays movable), absolute otherwise. */
static char *backing_name(const char *base, const char *overlay)
{
	char *rb = realpath(base, NULL), *tmp = strdup(overlay), *rd = NULL, *out;
	size_t n;

	if (tmp)
		rd = realpath(dirname(tmp), NULL);
	free(tmp);
	if (!rb || !rd) {
		free(rd);
		return rb;
	}
	n = strlen(rd);
	if (!strncmp(rb, rd, n) && rb[n] == '/')
		out = strdup(rb + n + 1);
	else
		out = strdup(rb);
	free(rb);
	free(rd);
	return out;
}

static int do_create(const char *base, const char *fmt, uint64_t size,
		     unsigned bits, const char *overlay)
{
	uint64_t vs;
	const char *probe;
	char *name;
	int err;

	if (!base) {
		if (!size) {
			cli_err("image", "create: --size is required without --base");
			return EXIT_USAGE;
		}
		err = qcow2_create(overlay, size, bits);
		return err ? EXIT_ERR : EXIT_OK;
	}
	probe = file_format(base, &vs);
	if (!probe) {
		cli_err("image", "create: %s: %s", base, strerror(errno));
		return EXIT_ERR;
	}
	/* Guard only: a qcow2 base is never silently used as raw or vice versa. */
	if (!fmt && !strcmp(probe, "qcow2")) {
		cli_err("image", "create: %s is a qcow2 image; pass --base-format qcow2",
			base);
		return EXIT_ERR;
	}
	name = backing_name(base, overlay);
	if (!name) {
		cli_err("image", "create: cannot resolve %s", base);
		return EXIT_ERR;
	}
	err = qcow2_create_overlay(overlay, name, fmt ? fmt : "raw", size, bits);
	free(name);
	return err ? EXIT_ERR : EXIT_OK;
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
	struct qcow2_open_opts o = { 0 };
	struct qcow2_info qi;
	const char *fmt;
	struct stat st;
	uint64_t vsize;
	bool q;

	int r = parse_info(argc, argv, &a);

	if (r)
		return r > 0 ? usage(stdout, EXIT_OK) : EXIT_USAGE;
	o.trust_backing = a.trust;
	fmt = file_format(a.path, &vsize);
	if (!fmt || stat(a.path, &st)) {
		cli_err("image", "info: %s: %s", a.path, strerror(errno));
		return EXIT_ERR;
	}
	if (a.fmt && strcmp(a.fmt, fmt)) {
		if (!strcmp(a.fmt, "qcow2")) {
			cli_err("image", "info: %s is not a qcow2 image", a.path);
			return EXIT_ERR;
		}
		fmt = "raw", vsize = (uint64_t)st.st_size;
	}
	q = !strcmp(fmt, "qcow2");
	if (q && qcow2_info_get(a.path, &o, &qi)) {
		if (!a.trust)
			cli_err("image", "info: pass --trust-backing to follow backing files "
				"outside the directory of %s", a.path);
		return EXIT_ERR;
	}
	print_info(a.path, fmt, q ? &qi : NULL, vsize, (uint64_t)st.st_blocks * 512, a.json);
	if (q)
		qcow2_info_free(&qi);
	return EXIT_OK;
}

static char *store_dir(void)
{
	return image_store_dir();
}

/* images/build-NAME.sh beside the binary's checkout (build/mvm -> images/),
 * or under $MVM_IMAGE_BUILDERS. */
static int builder_path(const char *name, char *out, size_t cap)
{
	const char *env = getenv("MVM_IMAGE_BUILDERS");
	char exe[PATH_MAX], *slash;
	ssize_t n;

	if (env && *env) {
		snprintf(out, cap, "%s/build-%s.sh", env, name);
		return access(out, R_OK) ? -ENOENT : 0;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return -ENOENT;
	exe[n] = 0;
	for (int up = 0; up < 3 && (slash = strrchr(exe, '/')); up++) {
		*slash = 0;
		snprintf(out, cap, "%s/images/build-%s.sh", exe, name);
		if (!access(out, R_OK))
			return 0;
	}
	return -ENOENT;
}

static int run_builder(const char *script, const char *out, uint64_t size)
{
	const char *guest = cli_guest_dir();
	char sz[32];
	int st;
	pid_t pid;

	snprintf(sz, sizeof(sz), "%llu", (unsigned long long)size);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		signal(SIGPIPE, SIG_DFL);
		setenv("MVM_IMAGE_OUT", out, 1);
		setenv("MVM_IMAGE_SIZE", sz, 1);
		if (guest)
			setenv("MVM_GUEST_DIR", guest, 1);
		execl("/bin/sh", "sh", script, (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int cmd_build(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "force", no_argument, NULL, 'f' },
		{ "size", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char script[PATH_MAX], *dir, *out = NULL, *meta = NULL;
	uint64_t size = 0;
	bool force = false;
	int c, ret, rc = EXIT_ERR;
	double t0;

	optind = 1;
	while ((c = getopt_long(argc, argv, "fs:h", opts, NULL)) != -1) {
		switch (c) {
		case 'f': force = true; break;
		case 's':
			if (cli_parse_size(optarg, &size) || size < (16ULL << 20))
				return usage(stderr, EXIT_USAGE);
			break;
		case 'h': return usage(stdout, EXIT_OK);
		default: return usage(stderr, EXIT_USAGE);
		}
	}
	if (optind != argc - 1 || !image_name_ok(argv[optind]))
		return usage(stderr, EXIT_USAGE);
	if (builder_path(argv[optind], script, sizeof(script))) {
		cli_err("image", "build: no builder for '%s' (images/build-%s.sh); "
			"known: minimal, debian, browser", argv[optind], argv[optind]);
		return EXIT_ERR;
	}
	dir = store_dir();
	if (!dir || asprintf(&out, "%s/%s.ext4", dir, argv[optind]) < 0 ||
	    asprintf(&meta, "%s/%s.json", dir, argv[optind]) < 0)
		goto done;
	/* NAME.json is written last: its presence marks a finished build. */
	if (!force && !access(out, R_OK) && !access(meta, R_OK)) {
		printf("image: %s is built (%s); --force rebuilds it\n", argv[optind], out);
		rc = EXIT_OK;
		goto done;
	}
	if ((ret = mkdir_p(dir, 0755))) {
		cli_err("image", "build: %s: %s", dir, strerror(-ret));
		goto done;
	}
	t0 = mono_now_s();
	rc = run_builder(script, out, size);
	if (rc) {
		cli_err("image", "build: %s failed (status %d)", argv[optind], rc);
		rc = EXIT_ERR;
	} else {
		printf("image: built %s in %.1fs: %s\n", argv[optind], mono_now_s() - t0, out);
	}
done:
	free(meta);
	free(out);
	free(dir);
	return rc;
}

static int cmd_ls(int argc, char **argv)
{
	char *dir, *p, vs[32], ds[32];
	struct dirent *e;
	DIR *d;

	if (argc == 2 && !strcmp(argv[1], "--help"))
		return usage(stdout, EXIT_OK);
	if (argc > 1)
		return usage(stderr, EXIT_USAGE);
	dir = store_dir();
	d = dir ? opendir(dir) : NULL;
	if (!d) {
		fprintf(stderr, "mvm: image: no image store at %s\n", dir ? dir : "?");
		free(dir);
		return EXIT_OK;
	}
	printf("%-32s %-6s %12s %12s\n", "NAME", "FORMAT", "VIRTUAL", "DISK");
	while ((e = readdir(d))) {
		struct stat st;
		uint64_t v;
		const char *fmt;

		size_t nl = strlen(e->d_name);

		/* Hidden entries are builds in progress; NAME.json is metadata. */
		if (e->d_name[0] == '.' || (nl > 5 && !strcmp(e->d_name + nl - 5, ".json")) ||
		    asprintf(&p, "%s/%s", dir, e->d_name) < 0)
			continue;
		if (!stat(p, &st) && S_ISREG(st.st_mode) && (fmt = file_format(p, &v))) {
			human(v, vs, sizeof(vs));
			human((uint64_t)st.st_blocks * 512, ds, sizeof(ds));
			printf("%-32s %-6s %12s %12s\n", e->d_name, fmt, vs, ds);
		}
		free(p);
	}
	closedir(d);
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
	cli_err("image", "unknown subcommand '%s'", argv[1]);
	return usage(stderr, EXIT_USAGE);
}
