/* `mvm export`'s copy: a guest tree into a new host directory, whole or not at all (export.h). */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cli_util.h"
#include "common/dir_publish.h"
#include "common/fs_util.h"
#include "tools/sandbox/export.h"

/* Move the finished copy (stage/t, wrapped in a directory if it is one file) to @dst. */
static int publish(const char *stage, const char *gpath, const char *dst, char *err, size_t cap)
{
	char t[PATH_MAX + 8], d[PATH_MAX + 8], f[PATH_MAX * 2], g[PATH_MAX];
	struct stat st;
	int ret;

	snprintf(t, sizeof(t), "%s/t", stage);
	if (lstat(t, &st))
		goto fail;
	if (S_ISREG(st.st_mode)) {
		snprintf(d, sizeof(d), "%s/d", stage);
		snprintf(g, sizeof(g), "%s", gpath);
		snprintf(f, sizeof(f), "%s/%s", d, basename(g));
		if (mkdir(d, 0755) || rename(t, f))
			goto fail;
		snprintf(t, sizeof(t), "%s", d);
	}
	/* A HOST_DIR that appeared meanwhile is never replaced. */
	return dir_publish(t, dst, err, cap);
fail:
	ret = -errno;
	snprintf(err, cap, "%s", strerror(-ret));
	return ret;
}

int sb_export(const char *name, const char *gpath, const char *dst, struct fetch_opts *o)
{
	char stage[PATH_MAX], err[PATH_MAX + 160];
	int ret = fetch_staging(dst, stage, sizeof(stage)), dfd;

	if (ret) {
		cli_err("export", ret == -EEXIST ? "%s already exists: name a new directory" :
			"cannot create a staging directory beside %s", dst);
		return ret;
	}
	dfd = open(stage, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ret = dfd < 0 ? -errno : fetch_tree(name, gpath, dfd, "t", o);
	if (dfd >= 0)
		close(dfd);
	refusals_print("export", "skipped", o->refused);
	if (ret)
		cli_err("export", "%s; nothing exported", o->err[0] ? o->err : strerror(-ret));
	if (!ret) {
		ret = publish(stage, gpath, dst, err, sizeof(err));
		if (ret)
			cli_err("export", "cannot move the copy to %s: %s; nothing exported", dst, err);
	}
	rm_tree(stage);
	return ret;
}
