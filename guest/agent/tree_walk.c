/* One directory level of a tree walk, shared by the agent's sender and the host's manifest scan. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "guest/agent/tree.h"

int tree_walk_dir(int dfd, char *path, size_t cap, tree_child_fn child, void *ctx, int *open_err)
{
	size_t base = strlen(path);
	struct dirent *de;
	int ret = 0, fd2 = dup(dfd);
	DIR *dir = fd2 >= 0 ? fdopendir(fd2) : NULL;

	*open_err = 0;
	if (!dir) {
		*open_err = -errno;
		if (fd2 >= 0)
			close(fd2);
		return *open_err;
	}
	while (!ret && (de = readdir(dir))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (base + strlen(de->d_name) + 2 >= cap) {
			ret = child(ctx, dfd, de->d_name, false);
			continue;
		}
		snprintf(path + base, cap - base, "%s%s", base ? "/" : "", de->d_name);
		ret = child(ctx, dfd, de->d_name, true);
		path[base] = 0;
	}
	closedir(dir);
	return ret;
}
