/* The image store: where built images live and how names resolve to files. */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "images/image_file.h"
#include "images/image_store.h"

char *image_store_dir(void)
{
	const char *x = getenv("XDG_DATA_HOME"), *home = getenv("HOME");
	const char *env = getenv("MVM_IMAGE_DIR");
	char *d = NULL;

	/* MVM_IMAGE_DIR: the store given outright (the nested test box gets the
	 * host's store this way; it passes MVM_* variables, not XDG_*). */
	if (env && *env)
		return strdup(env);
	if (x && *x) {
		if (asprintf(&d, "%s/mvm/images", x) < 0)
			return NULL;
	} else if (asprintf(&d, "%s/.local/share/mvm/images", home && *home ? home : "/") < 0) {
		return NULL;
	}
	return d;
}

int image_name_ok(const char *name)
{
	if (!name || !*name || name[0] == '.' || name[0] == '-' || strlen(name) > 64)
		return 0;
	for (const char *p = name; *p; p++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-", *p))
			return 0;
	return 1;
}

static int readable_file(const char *p)
{
	struct stat st;

	return !stat(p, &st) && !S_ISDIR(st.st_mode) && !access(p, R_OK);
}

int image_store_resolve(const char *arg, char *out, size_t cap)
{
	static const char *suffix[] = { ".ext4", "", ".img", ".raw" };
	char *dir;

	if (!arg || !*arg)
		return -EINVAL;
	if (strchr(arg, '/')) {
		snprintf(out, cap, "%s", arg);
		return access(out, R_OK) ? -errno : 0;
	}
	dir = image_name_ok(arg) ? image_store_dir() : NULL;
	for (size_t i = 0; dir && i < sizeof(suffix) / sizeof(suffix[0]); i++) {
		snprintf(out, cap, "%s/%s%s", dir, arg, suffix[i]);
		if (readable_file(out)) {
			free(dir);
			return 0;
		}
	}
	free(dir);
	snprintf(out, cap, "%s", arg);
	return readable_file(out) ? 0 : -ENOENT;
}

/* Hidden entries are builds in progress; NAME.json is metadata. */
static bool listed(const char *name)
{
	size_t nl = strlen(name);

	return name[0] != '.' && !(nl > 5 && !strcmp(name + nl - 5, ".json")) && nl < 256;
}

static int add_entry(const char *dir, const char *name, struct image_entry **out, int n)
{
	struct image_entry e = { 0 }, *grown;
	struct stat st;
	char *p;

	if (asprintf(&p, "%s/%s", dir, name) < 0)
		return n;
	if (!stat(p, &st) && S_ISREG(st.st_mode) && (e.format = image_file_format(p, &e.vsize))) {
		grown = realloc(*out, (size_t)(n + 1) * sizeof(**out));
		if (grown) {
			snprintf(e.name, sizeof(e.name), "%s", name);
			e.disk = (uint64_t)st.st_blocks * 512;
			grown[n++] = e;
			*out = grown;
		}
	}
	free(p);
	return n;
}

int image_store_list(const char *dir, struct image_entry **out)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	*out = NULL;
	if (!d)
		return -errno;
	while ((e = readdir(d)))
		if (listed(e->d_name))
			n = add_entry(dir, e->d_name, out, n);
	closedir(d);
	return n;
}
