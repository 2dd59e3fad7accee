/*
 * What an imported image asks of the sandbox by default: its config's Env,
 * WorkingDir, User, Entrypoint and Cmd, as `mvm image import` recorded
 * them under "oci"."config" in NAME.json (images/oci_import.c).
 */
#ifndef MVM_IMAGE_DEFAULTS_H
#define MVM_IMAGE_DEFAULTS_H

#include <stddef.h>
#include <stdint.h>

struct image_defaults {
	char **argv;		/* Entrypoint then Cmd, NULL-terminated; NULL: neither */
	char **env;		/* NAME=VALUE, NULL-terminated; NULL: none */
	char *workdir;		/* NULL: none */
	char *user;		/* as the config says it */
	int has_ids;		/* User resolved at import ("oci"."user"): */
	uint32_t uid, gid;	/* with the image's own passwd and group */
};

/*
 * The defaults recorded beside image file @img (STORE/NAME.ext4 ->
 * NAME.json; a regular file of at most 64 KiB, never a symlink). An image
 * with no such record (built, not imported; a plain path) has none: 0 with
 * every field NULL. -EINVAL with @err for a record that is malformed.
 */
int image_defaults_load(const char *img, struct image_defaults *d, char *err, size_t errlen);
void image_defaults_free(struct image_defaults *d);

/*
 * Merge into a command's environment @env (@n used of @cap slots): the
 * image's entries first, each unless the caller set that name already
 * (the caller's -e wins). 0, or -E2BIG when @cap is too small.
 */
int image_defaults_env(const struct image_defaults *d, char **env, int *n, int cap);

#endif
