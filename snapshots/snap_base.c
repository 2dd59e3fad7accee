/* The image-store base a snapshot's disk chain ends in (snapshots/snap_base.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/sha256.h"
#include "common/snap_buf.h"
#include "images/image_hash.h"
#include "images/image_store.h"
#include "snapshots/mem_delta.h"
#include "snapshots/snap_base.h"
#include "snapshots/state_file.h"

#define CHUNK (1u << 20)

int snap_ident_fd(int fd, struct snap_ident *id)
{
	struct stat st;

	if (fstat(fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	id->size = (uint64_t)st.st_size;
	id->ino = (uint64_t)st.st_ino;
	id->dev = (uint64_t)st.st_dev;
	id->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	return 0;
}

const char *snap_ident_differs(const struct snap_ident *was, const struct snap_ident *now)
{
	if (was->size != now->size)
		return "size";
	if (was->mtime_ns != now->mtime_ns)
		return "modification time";
	if (was->ino != now->ino)
		return "inode";
	if (was->dev != now->dev)
		return "device";
	return NULL;
}

/* Absolute, and no empty, "." or ".." component, no trailing '/'. */
static bool canonical(const char *p)
{
	if (p[0] != '/')
		return false;
	for (const char *c = p; *c == '/';) {
		const char *end = strchrnul(c + 1, '/');
		size_t n = (size_t)(end - c - 1);

		if (n == 0 || (n == 1 && c[1] == '.') || (n == 2 && c[1] == '.' && c[2] == '.'))
			return c == p && n == 0 && !*end;	/* only "/" itself */
		c = end;
	}
	return true;
}

bool snap_base_path_ok(const char *path, const char *store)
{
	size_t n = strlen(store);

	if (strlen(path) >= SNAP_BASE_PATH || !canonical(path) || !canonical(store) ||
	    !strcmp(path, "/"))
		return false;
	if (n == 1)		/* the store is "/" */
		n = 0;
	return !strncmp(path, store, n) && path[n] == '/' && path[n + 1] &&
	       !strchr(path + n + 1, '/');
}

void snap_base_section(struct snap_w *w, const struct snap_base *b)
{
	struct snap_w s = { 0 };

	snap_w_blob(&s, b->path, (uint32_t)strlen(b->path));
	snap_w_blob(&s, "raw", 3);
	snap_w_u64(&s, b->id.size);
	snap_w_u64(&s, b->id.ino);
	snap_w_u64(&s, b->id.dev);
	snap_w_u64(&s, (uint64_t)b->id.mtime_ns);
	snap_state_section(w, SNAP_SEC_BASE, 0, 1, s.p, s.len);
	if (s.err)
		w->err = s.err;
	snap_w_free(&s);
}

int snap_base_decode(const struct snap_section *sec, struct snap_base *b)
{
	struct snap_r r;
	uint32_t pl, fl;
	const uint8_t *path, *fmt;

	memset(b, 0, sizeof(*b));
	if (sec->version != 1)
		return -EBADMSG;
	snap_r_init(&r, sec->data, sec->len);
	path = snap_r_blob(&r, SNAP_BASE_PATH - 1, &pl);
	fmt = snap_r_blob(&r, 8, &fl);
	if (!path || !fmt || fl != 3 || memcmp(fmt, "raw", 3))
		return -EBADMSG;
	memcpy(b->path, path, pl);
	if (strlen(b->path) != pl)
		return -EBADMSG;	/* a NUL inside */
	b->id.size = snap_r_u64(&r);
	b->id.ino = snap_r_u64(&r);
	b->id.dev = snap_r_u64(&r);
	b->id.mtime_ns = (int64_t)snap_r_u64(&r);
	return snap_r_done(&r) ? -EBADMSG : 0;
}

/* The image store's directory, symlinks resolved; "" when it does not exist. */
static void store_real(char out[PATH_MAX])
{
	char *d = image_store_dir();

	if (!d || !realpath(d, out))
		out[0] = 0;
	free(d);
}

int snap_base_in_store(const char *path, char *err, size_t errlen)
{
	char store[PATH_MAX], real[PATH_MAX];

	store_real(store);
	if (store[0] && snap_base_path_ok(path, store) && realpath(path, real) &&
	    !strcmp(real, path))
		return 0;
	snprintf(err, errlen, "its base image %.200s is not an image of the image store "
		 "%.200s (mvm image ls; an image given by path cannot be referenced)",
		 path, store[0] ? store : "(none)");
	return -EACCES;
}

int snap_base_check(const struct snap_base *b, char *err, size_t errlen)
{
	char magic[4];
	struct snap_ident now;
	const char *what;
	int fd, ret = snap_base_in_store(b->path, err, errlen);

	if (ret)
		return ret;
	fd = open(b->path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "its base image %.200s: %s", b->path, strerror(errno));
		return -errno;
	}
	ret = snap_ident_fd(fd, &now);
	if (!ret && (pread(fd, magic, 4, 0) != 4 || !memcmp(magic, "QFI\xfb", 4)))
		ret = -EINVAL;
	close(fd);
	if (ret) {
		snprintf(err, errlen, "its base image %.200s: not a raw image", b->path);
		return ret;
	}
	what = snap_ident_differs(&b->id, &now);
	if (what) {
		snprintf(err, errlen, "its base image %.200s changed since it was recorded "
			 "(%s differs)", b->path, what);
		return -EBADMSG;
	}
	return 0;
}

/* IMG.json's "sha256" beside IMG.ext4, when written after the image was. */
static int recorded_sha(const char *path, const struct snap_ident *id, char out[SNAP_SHA256_HEX])
{
	char json[PATH_MAX + 8], *dot;

	snprintf(json, sizeof(json), "%s", path);
	dot = strrchr(json, '.');
	if (!dot || strchr(dot, '/'))
		return -ENOENT;
	strcpy(dot, ".json");
	return image_recorded_sha256(json, id->mtime_ns, out);
}

/* SHA-256 over the size and every non-zero 4 KiB block with its offset, as
 * the snapshot's own checksums: holes, however the file system keeps them,
 * cost nothing. */
static int blocks_sha(int fd, uint64_t size, char out[SNAP_SHA256_HEX])
{
	uint8_t *buf = aligned_alloc(MEM_PAGE, CHUNK);
	struct sha256_ctx h;
	off_t data = 0, end = (off_t)size;
	int ret = buf ? 0 : -ENOMEM;

	sha256_init(&h);
	sha256_update(&h, sizeof(size), (const uint8_t *)&size);
	while (!ret && (data = lseek(fd, data, SEEK_DATA)) >= 0 && data < end) {
		ssize_t r;

		data &= ~(off_t)(MEM_PAGE - 1);
		r = pread(fd, buf, CHUNK, data);
		if (r <= 0) {
			ret = r ? -errno : -EIO;
			break;
		}
		for (ssize_t o = 0; o < r; o += (ssize_t)MEM_PAGE) {
			size_t k = (size_t)(r - o) < MEM_PAGE ? (size_t)(r - o) : MEM_PAGE;
			uint64_t at = (uint64_t)data + (uint64_t)o;

			if (k == MEM_PAGE && !mem_page_nonzero(buf + o))
				continue;
			sha256_update(&h, sizeof(at), (const uint8_t *)&at);
			sha256_update(&h, k, buf + o);
		}
		data += r;
	}
	free(buf);
	if (!ret)
		sha256_hex(&h, out);
	return ret;
}

int snap_base_sha256(struct snap_base *b)
{
	struct snap_ident id;
	int fd = open(b->path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC), ret;

	if (fd < 0)
		return -errno;
	ret = snap_ident_fd(fd, &id);
	snprintf(b->sha256_of, sizeof(b->sha256_of), "file");
	if (!ret && recorded_sha(b->path, &id, b->sha256)) {
		snprintf(b->sha256_of, sizeof(b->sha256_of), "blocks");
		ret = blocks_sha(fd, id.size, b->sha256);
	}
	close(fd);
	return ret;
}
