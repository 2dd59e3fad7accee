/* The image store: where built images live and how names resolve to files. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
