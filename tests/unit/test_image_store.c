/* Image store lookup (images/image_store.c) and `mvm run --image` parsing. */
#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tools/cli/cmd_run.h"
#include "images/image_store.h"

static char store[PATH_MAX];

static void touch(const char *dir, const char *name)
{
	char p[PATH_MAX];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	f = fopen(p, "w");
	cr_assert(f);
	fclose(f);
}

static void setup(void)
{
	snprintf(store, sizeof(store), "/tmp/mvm-store-test.XXXXXX");
	cr_assert(mkdtemp(store));
	setenv("MVM_IMAGE_DIR", store, 1);
}

static void teardown(void)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", store);
	cr_assert_eq(system(cmd), 0);
	unsetenv("MVM_IMAGE_DIR");
}

Test(image_store, names)
{
	cr_assert(image_name_ok("debian"));
	cr_assert(image_name_ok("my-img_2.1"));
	cr_assert(!image_name_ok(""));
	cr_assert(!image_name_ok(".hidden"));
	cr_assert(!image_name_ok("-opt"));
	cr_assert(!image_name_ok("a/b"));
	cr_assert(!image_name_ok("a b"));
	cr_assert(!image_name_ok(".."));
}

Test(image_store, dir_from_env_or_xdg)
{
	char *d;

	setenv("MVM_IMAGE_DIR", "/x/store", 1);
	d = image_store_dir();
	cr_assert_str_eq(d, "/x/store");
	free(d);
	unsetenv("MVM_IMAGE_DIR");
	setenv("XDG_DATA_HOME", "/x/data", 1);
	d = image_store_dir();
	cr_assert_str_eq(d, "/x/data/mvm/images");
	free(d);
	unsetenv("XDG_DATA_HOME");
}

Test(image_store, resolves_names_in_the_store, .init = setup, .fini = teardown)
{
	char out[PATH_MAX], want[PATH_MAX];

	touch(store, "debian.ext4");
	touch(store, "debian.json");
	touch(store, "other.img");
	cr_assert_eq(image_store_resolve("debian", out, sizeof(out)), 0);
	snprintf(want, sizeof(want), "%s/debian.ext4", store);
	cr_assert_str_eq(out, want);
	cr_assert_eq(image_store_resolve("other", out, sizeof(out)), 0);
	snprintf(want, sizeof(want), "%s/other.img", store);
	cr_assert_str_eq(out, want);
	cr_assert_eq(image_store_resolve("missing", out, sizeof(out)), -ENOENT);
	/* A name is never a way out of the store. */
	cr_assert_neq(image_store_resolve("..", out, sizeof(out)), 0);
	/* Paths are paths. */
	snprintf(want, sizeof(want), "%s/other.img", store);
	cr_assert_eq(image_store_resolve(want, out, sizeof(out)), 0);
	cr_assert_str_eq(out, want);
}

static int parse(struct run_opts *o, int argc, const char **argv)
{
	return run_parse_args(o, argc, (char **)argv);
}

Test(image_store, run_image_option)
{
	struct run_opts *o = calloc(1, sizeof(*o));
	const char *ok[] = { "run", "--image", "debian", "--", "true" };
	const char *both[] = { "run", "--image", "a", "--rootfs", "b.img", "--", "true" };
	const char *twice[] = { "run", "--image", "a", "--image", "b", "--", "true" };
	const char *initrd[] = { "run", "--initrd", "x", "--image", "b", "--", "true" };

	cr_assert_eq(parse(o, 5, ok), 0);
	cr_assert_str_eq(o->image, "debian");
	cr_assert_eq(o->cfg.nr_disks, 0, "the overlay is made at run time, not while parsing");
	cr_assert_eq(parse(o, 7, both), -1);
	cr_assert_eq(parse(o, 7, twice), -1);
	cr_assert_eq(parse(o, 7, initrd), -1);
	free(o);
}

/* `mvm image ls`: finished images only, with their format by magic. */
Test(image_store, list_skips_builds_in_progress_and_metadata, .init = setup, .fini = teardown)
{
	struct image_entry *e;
	char sub[PATH_MAX + 8];
	int n;

	touch(store, "minimal.ext4");
	touch(store, "minimal.json");
	touch(store, ".debian.ext4.tmp");
	snprintf(sub, sizeof(sub), "%s/dir", store);
	cr_assert_eq(mkdir(sub, 0700), 0);
	n = image_store_list(store, &e);
	cr_assert_eq(n, 1);
	cr_assert_str_eq(e[0].name, "minimal.ext4");
	cr_assert_str_eq(e[0].format, "raw");
	free(e);
	cr_assert_eq(image_store_list("/nonexistent/mvm-store", &e), -ENOENT);
}
