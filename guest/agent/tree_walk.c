/* One directory level of a tree walk, shared by the agent's sender and the host's manifest scan. */
#include <dirent.h>
#include <stdio.h>
#include <string.h>

#include "guest/agent/tree.h"

int tree_walk_dir(void *dir, int dfd, char *path, size_t cap, tree_child_fn child, void *ctx)
{
	size_t base = strlen(path);
	struct dirent *de;
	int ret = 0;

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
	return ret;
}
