/* The staging tree of an OCI import (oci_stage.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fs_util.h"
#include "images/oci_path.h"
#include "images/oci_stage.h"

int oci_stage_init(struct oci_stage *s, const char *dir)
{
	memset(s, 0, sizeof(*s));
	s->root = -1;
	if (mkdir(dir, 0700))
		return -errno;
	if (!(s->dir = strdup(dir)))
		return -ENOMEM;
	s->root = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return s->root < 0 ? -errno : 0;
}

void oci_stage_free(struct oci_stage *s)
{
	if (s->root >= 0)
		close(s->root);
	for (size_t i = 0; i < s->n_meta; i++)
		free(s->meta[i].path);
	free(s->meta);
	free(s->dir);
	memset(s, 0, sizeof(*s));
	s->root = -1;
}

/* One step down: a real directory, never a link (O_NOFOLLOW + O_DIRECTORY). */
static int step(int fd, const char *name, bool create)
{
	int sub = openat(fd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (sub < 0 && errno == ENOENT && create) {
		if (mkdirat(fd, name, 0700) && errno != EEXIST)
			return -errno;
		sub = openat(fd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (sub >= 0)
		return sub;
	return errno == ENOTDIR ? -ELOOP : -errno;
}

int oci_stage_parent(struct oci_stage *s, const char *rel, bool create, const char **base)
{
	char comp[OCI_NAME_MAX + 1];
	const char *p = rel, *slash;
	int fd = fcntl(s->root, F_DUPFD_CLOEXEC, 3), sub;

	if (fd < 0)
		return -errno;
	while ((slash = strchr(p, '/'))) {
		size_t n = (size_t)(slash - p);

		if (!n || n > OCI_NAME_MAX) {
			close(fd);
			return -EINVAL;
		}
		memcpy(comp, p, n);
		comp[n] = 0;
		sub = step(fd, comp, create);
		close(fd);
		if (sub < 0)
			return sub;
		fd = sub;
		p = slash + 1;
	}
	if (!*p) {
		close(fd);
		return -EINVAL;
	}
	*base = p;
	return fd;
}

int oci_stage_remove(struct oci_stage *s, const char *rel)
{
	const char *base;
	int fd = oci_stage_parent(s, rel, false, &base), ret;

	if (fd == -ENOENT)
		return 0;
	if (fd < 0)
		return fd;
	ret = rm_tree_at(fd, base);
	close(fd);
	if (ret == -ENOENT)
		ret = 0;
	return ret ? ret : oci_stage_note(s, rel, 0, 0, 0);
}

/* An O_RDONLY fd of directory @rel, or -errno (-ENOENT: absent). A
 * non-directory there (a file, a symlink) is removed instead: the layer
 * making @rel an opaque directory hides whatever the lower ones had. */
static int open_dir(struct oci_stage *s, const char *rel)
{
	const char *base;
	struct stat st;
	int pfd, fd;

	if (!*rel) {
		fd = openat(s->root, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		return fd < 0 ? -errno : fd;
	}
	pfd = oci_stage_parent(s, rel, false, &base);
	if (pfd < 0)
		return pfd;
	if (fstatat(pfd, base, &st, AT_SYMLINK_NOFOLLOW))
		fd = -errno;
	else if (!S_ISDIR(st.st_mode))
		fd = rm_tree_at(pfd, base) ? -EIO : -ENOENT;
	else if ((fd = openat(pfd, base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		fd = -errno;
	close(pfd);
	return fd;
}

int oci_stage_empty_dir(struct oci_stage *s, const char *rel)
{
	int fd = open_dir(s, rel), ret = 0;
	struct dirent *e;
	DIR *d;

	if (fd == -ENOENT)
		return 0;
	if (fd < 0)
		return fd;
	if (!(d = fdopendir(fd))) {
		close(fd);
		return -errno;
	}
	/* Removing while reading: readdir may skip entries, so read again
	 * until a pass removes nothing. */
	for (int removed = 1; removed && !ret;) {
		removed = 0;
		rewinddir(d);
		while (!ret && (e = readdir(d))) {
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			ret = rm_tree_at(dirfd(d), e->d_name);
			removed = 1;
		}
	}
	closedir(d);
	return ret;
}

int oci_stage_note(struct oci_stage *s, const char *rel, uint32_t uid, uint32_t gid, uint32_t mode)
{
	struct oci_meta *m;

	if (s->n_meta == s->cap_meta) {
		size_t cap = s->cap_meta ? s->cap_meta * 2 : 1024;

		if (!(m = realloc(s->meta, cap * sizeof(*m))))
			return -ENOMEM;
		s->meta = m;
		s->cap_meta = cap;
	}
	m = &s->meta[s->n_meta];
	if (!(m->path = strdup(rel)))
		return -ENOMEM;
	m->seq = s->n_meta++;
	m->uid = uid;
	m->gid = gid;
	m->mode = mode;
	return 0;
}

static int meta_cmp(const void *a, const void *b)
{
	const struct oci_meta *x = a, *y = b;
	int c = strcmp(x->path, y->path);

	return c ? c : (x->seq > y->seq) - (x->seq < y->seq);
}

/* The last note for @rel, or NULL. The table is sorted (meta_cmp). */
static const struct oci_meta *lookup(const struct oci_stage *s, const char *rel)
{
	size_t lo = 0, hi = s->n_meta;

	/* The first entry past every note for @rel. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(s->meta[mid].path, rel) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || strcmp(s->meta[lo - 1].path, rel))
		return NULL;
	return &s->meta[lo - 1];
}

/* debugfs's quoting: a name in double quotes, a quote doubled. */
static void quoted(FILE *f, const char *rel)
{
	fputs("\"/", f);
	for (const char *p = rel; *p; p++) {
		if (*p == '"')
			fputc('"', f);
		fputc(*p, f);
	}
	fputc('"', f);
}

static void sif(FILE *f, const char *rel, const char *field, unsigned long v, bool octal)
{
	fputs("sif ", f);
	quoted(f, rel);
	fprintf(f, octal ? " %s 0%lo\n" : " %s %lu\n", field, v);
}

/* nftw has no context pointer: one walk at a time per process. */
static struct {
	const struct oci_stage *s;
	FILE *f;
	size_t skip;
	uint64_t bytes;
} walk;

static int visit(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	const char *rel = path + walk.skip;
	const struct oci_meta *m;
	uint32_t uid = 0, gid = 0, mode;

	if (*rel == '/')
		rel++;
	walk.bytes += (uint64_t)st->st_blocks * 512 + 256;
	m = lookup(walk.s, rel);
	if (m && (m->mode & S_IFMT) == (st->st_mode & S_IFMT)) {
		uid = m->uid;
		gid = m->gid;
		mode = m->mode;
	} else {
		/* Made implicitly (a parent no entry named): what runtimes use. */
		mode = S_ISDIR(st->st_mode) ? (S_IFDIR | 0755) : (st->st_mode & S_IFMT) | 0644;
	}
	sif(walk.f, rel, "uid", uid, false);
	sif(walk.f, rel, "gid", gid, false);
	if (!S_ISLNK(st->st_mode))
		sif(walk.f, rel, "mode", mode, true);
	return 0;
}

int oci_stage_owner_script(struct oci_stage *s, FILE *script, uint64_t *bytes)
{
	int ret;

	qsort(s->meta, s->n_meta, sizeof(*s->meta), meta_cmp);
	walk.s = s;
	walk.f = script;
	walk.skip = strlen(s->dir);
	walk.bytes = 0;
	ret = nftw(s->dir, visit, 16, FTW_PHYS | FTW_MOUNT);
	*bytes = walk.bytes;
	if (ret)
		return -errno ? -errno : -EIO;
	return ferror(script) ? -EIO : 0;
}
