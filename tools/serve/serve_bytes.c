/* The host disk files take (tools/serve/serve_bytes.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tools/serve/serve_bytes.h"

static int use_cmp(const void *a, const void *b)
{
	const struct sv_use *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

static int push(struct sv_uses *u, const struct stat *st)
{
	if (u->n == u->cap) {
		size_t cap = u->cap ? u->cap * 2 : 64;
		struct sv_use *nv = realloc(u->v, cap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		u->v = nv;
		u->cap = cap;
	}
	u->v[u->n++] = (struct sv_use){ st->st_dev, st->st_ino, (uint64_t)st->st_blocks * 512 };
	return 0;
}

int sv_uses_add_dir(struct sv_uses *u, int at, int depth, const char *skip)
{
	int dfd = openat(at, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC), sub, ret = 0;
	struct dirent *e;
	struct stat st;
	DIR *d;

	if (dfd < 0 || !(d = fdopendir(dfd))) {
		ret = -errno;
		if (dfd >= 0)
			close(dfd);
		return ret;
	}
	while (!ret && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || (skip && !strcmp(e->d_name, skip)) ||
		    fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW))
			continue;
		if (S_ISREG(st.st_mode)) {
			ret = push(u, &st);
		} else if (S_ISDIR(st.st_mode) && depth > 0) {
			sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			/* One removed meanwhile holds nothing. */
			if (sub >= 0) {
				ret = sv_uses_add_dir(u, sub, depth - 1, NULL);
				close(sub);
			}
		}
	}
	closedir(d);
	return ret;
}

uint64_t sv_uses_sum(struct sv_uses *u)
{
	uint64_t sum = 0;

	if (u->n)
		qsort(u->v, u->n, sizeof(*u->v), use_cmp);
	for (size_t i = 0; i < u->n; i++)
		if (!i || use_cmp(&u->v[i - 1], &u->v[i]))
			sum = sum + u->v[i].bytes < sum ? UINT64_MAX : sum + u->v[i].bytes;
	return sum;
}

void sv_uses_free(struct sv_uses *u)
{
	free(u->v);
	memset(u, 0, sizeof(*u));
}
