/*
 * `mvm image import`: an OCI image into the image store (images/oci_import.h).
 * It runs as the program mvm-oci (tools/cli/mvm_oci.c), the only one linked
 * with libarchive; mvm's `image import` execs it (cmd_beside.c), so the VMM
 * maps none of libarchive's libraries.
 */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "common/cli_util.h"
#include "images/oci_import.h"
#include "tools/cli/cmd_image.h"

enum { EXIT_OK = 0, EXIT_ERR = 1, EXIT_USAGE = 2 };

static const char usage_text[] =
	"usage: mvm image import SOURCE --name NAME [--force] [--size SIZE]\n\n"
	"An OCI image as root image NAME (NAME.ext4 + NAME.json) in the store: SOURCE\n"
	"is docker-archive:FILE (docker save), oci:DIR[:TAG] (an OCI layout),\n"
	"oci-archive:FILE[:TAG], or a FILE or DIR of either kind. Layers are applied\n"
	"with whiteouts; every blob is checked against its digest; hostile layers\n"
	"are refused and leave nothing (docs/images.md). An image NAME is\n"
	"replaced only with --force. SIZE (16M or more) is the ext4's size (default:\n"
	"the content x 1.5 + 256M).\n";

static int usage(FILE *f, int rc)
{
	fputs(usage_text, f);
	return rc;
}

int cmd_image_import(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "name", required_argument, NULL, 'n' },
		{ "force", no_argument, NULL, 'f' },
		{ "size", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct oci_import im = { 0 };
	char err[PATH_MAX + 512];
	int c, rc = EXIT_ERR;

	optind = 1;
	while ((c = getopt_long(argc, argv, "n:fs:h", opts, NULL)) != -1) {
		switch (c) {
		case 'n': im.name = optarg; break;
		case 'f': im.force = true; break;
		case 's':
			if (cli_parse_size(optarg, &im.size) || im.size < (16ULL << 20))
				return usage(stderr, EXIT_USAGE);
			break;
		case 'h': return usage(stdout, EXIT_OK);
		default: return usage(stderr, EXIT_USAGE);
		}
	}
	if (optind != argc - 1 || !im.name) {
		cli_err("image", "import: one SOURCE and --name NAME");
		return usage(stderr, EXIT_USAGE);
	}
	im.source = argv[optind];
	if (oci_import(&im, err, sizeof(err))) {
		cli_err("image", "import: %s", err[0] ? err : "out of memory");
	} else {
		printf("image: imported %s (%u layers) in %.1fs: %s\n", im.name, im.layers, im.seconds,
		       im.out);
		rc = EXIT_OK;
	}
	oci_import_free(&im);
	return rc;
}
