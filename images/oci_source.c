/* Where an OCI import reads from (oci_source.h). */
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/sha256.h"
#include "images/oci_path.h"
#include "images/oci_source.h"
#include "images/oci_stage.h"

#define ARCHIVE_ENTRIES_MAX 100000

static const struct {
	const char *prefix;
	enum oci_source_kind kind;
} prefixes[] = {
	{ "docker-archive:", OCI_SRC_DOCKER_ARCHIVE },
	{ "oci-archive:", OCI_SRC_OCI_ARCHIVE },
	{ "oci:", OCI_SRC_OCI_DIR },
};

int oci_source_parse(const char *source, struct oci_source_ref *ref, char *err, size_t errlen)
{
	const char *rest = source;
	struct stat st;
	char *colon;

	memset(ref, 0, sizeof(*ref));
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(source, prefixes[i].prefix, strlen(prefixes[i].prefix))) {
			ref->kind = prefixes[i].kind;
			rest = source + strlen(prefixes[i].prefix);
		}
	if (!*rest || strlen(rest) >= sizeof(ref->path)) {
		snprintf(err, errlen, "SOURCE: no path (docker-archive:FILE, oci:DIR[:TAG], "
			 "oci-archive:FILE[:TAG], or a FILE or DIR)");
		return -EINVAL;
	}
	snprintf(ref->path, sizeof(ref->path), "%s", rest);
	if (ref->kind == OCI_SRC_AUTO || !stat(rest, &st))
		return 0;
	/* PATH:TAG. A docker reference has a colon of its own (repo:tag). */
	colon = ref->kind == OCI_SRC_DOCKER_ARCHIVE ? strchr(ref->path, ':') : strrchr(ref->path, ':');
	if (colon && colon != ref->path && colon[1]) {
		if (strlen(colon + 1) >= sizeof(ref->tag)) {
			snprintf(err, errlen, "SOURCE: tag too long");
			return -EINVAL;
		}
		snprintf(ref->tag, sizeof(ref->tag), "%s", colon + 1);
		*colon = 0;
	}
	return 0;
}

/* An fd of regular file @rel beneath @dirfd, no link followed anywhere. */
static int open_beneath(int dirfd, const char *rel)
{
	struct oci_stage walk = { .root = dirfd };
	const char *base;
	int pfd = oci_stage_parent(&walk, rel, false, &base), fd;
	struct stat st;

	if (pfd < 0)
		return pfd;
	fd = openat(pfd, base, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		fd = errno == ELOOP ? -ELOOP : -errno;
	close(pfd);
	if (fd >= 0 && (fstat(fd, &st) || !S_ISREG(st.st_mode))) {
		close(fd);
		return -EINVAL;
	}
	return fd;
}

/* The SHA-256 and size of @fd from its start; left at the start again. */
static int hash_fd(int fd, char hex[SHA256_HEX], int64_t *size)
{
	struct stat st;
	int ret;

	if (fstat(fd, &st) || lseek(fd, 0, SEEK_SET))
		return -errno;
	*size = st.st_size;
	ret = sha256_fd_hex(fd, hex);
	if (!ret && lseek(fd, 0, SEEK_SET))
		ret = -errno;
	return ret;
}

/* @d's blob: its path (docker) or blobs/sha256/HEX, checked (hex, size). */
static int open_blob(struct oci_image *img, const struct oci_desc *d, const char *what, char *err,
		     size_t errlen)
{
	char rel[OCI_REF_MAX + 32], hex[SHA256_HEX];
	int64_t size = 0;
	int fd, ret;

	if (d->path[0])
		snprintf(rel, sizeof(rel), "%s", d->path);
	else
		snprintf(rel, sizeof(rel), "blobs/sha256/%s", d->hex);
	if ((fd = open_beneath(img->dir, rel)) < 0) {
		snprintf(err, errlen, "%s: %s: %s", what, rel,
			 fd == -ELOOP ? "a symlink (never followed)" : fd == -EINVAL ? "not a regular file"
										 : strerror(-fd));
		return fd;
	}
	if (!d->hex[0])
		return fd;
	if ((ret = hash_fd(fd, hex, &size))) {
		snprintf(err, errlen, "%s: %s", rel, strerror(-ret));
	} else if (strcmp(hex, d->hex)) {
		snprintf(err, errlen, "%s: digest mismatch: the content is sha256:%.16s…, "
			 "the manifest says sha256:%.16s…", what, hex, d->hex);
		ret = -EINVAL;
	} else if (d->size >= 0 && size != d->size) {
		snprintf(err, errlen, "%s: size %lld, the manifest says %lld", what, (long long)size,
			 (long long)d->size);
		ret = -EINVAL;
	}
	if (ret) {
		close(fd);
		return ret;
	}
	return fd;
}

/* A JSON document (at most OCI_JSON_MAX) into a malloc'd buffer. */
static char *slurp(int fd, size_t *len)
{
	struct stat st;
	char *buf;

	if (fstat(fd, &st) || st.st_size > (off_t)OCI_JSON_MAX)
		return NULL;
	if (!(buf = malloc((size_t)st.st_size + 1)))
		return NULL;
	*len = 0;
	while (*len < (size_t)st.st_size) {
		ssize_t n = pread(fd, buf + *len, (size_t)st.st_size - *len, (off_t)*len);

		if (n <= 0) {
			free(buf);
			return NULL;
		}
		*len += (size_t)n;
	}
	buf[*len] = 0;
	return buf;
}

static char *read_doc(struct oci_image *img, const struct oci_desc *d, const char *what, size_t *len,
		      char *err, size_t errlen)
{
	int fd = open_blob(img, d, what, err, errlen);
	char *text;

	if (fd < 0)
		return NULL;
	if (!(text = slurp(fd, len)))
		snprintf(err, errlen, "%s: unreadable or over %u bytes", what, OCI_JSON_MAX);
	close(fd);
	return text;
}

/* index.json (named by no digest: the root of trust is the tag) down to
 * one image manifest, through at most one nested index. */
static int open_oci(struct oci_image *img, const char *tag, char *err, size_t errlen)
{
	struct oci_desc d = { .size = -1 }, idx = { .size = -1 };
	char *text = NULL;
	size_t len;
	int is_index = 0, ret = -EINVAL;

	snprintf(idx.path, sizeof(idx.path), "index.json");
	if (!(text = read_doc(img, &idx, "index.json", &len, err, errlen)))
		return -EINVAL;
	if ((ret = oci_parse_index(text, len, *tag ? tag : NULL, &d, &is_index, err, errlen)))
		goto out;
	for (int depth = 0; is_index; depth++) {
		free(text);
		text = NULL;
		if (depth || !(text = read_doc(img, &d, "image index", &len, err, errlen))) {
			if (depth)
				snprintf(err, errlen, "image index: nested more than once");
			ret = -EINVAL;
			goto out;
		}
		if ((ret = oci_parse_platform_index(text, len, &d, &is_index, err, errlen)))
			goto out;
	}
	free(text);
	if (!(text = read_doc(img, &d, "manifest", &len, err, errlen))) {
		ret = -EINVAL;
		goto out;
	}
	memcpy(img->digest, d.hex, sizeof(img->digest));
	ret = oci_parse_manifest(text, len, &img->m, err, errlen);
out:
	free(text);
	return ret;
}

static int open_docker(struct oci_image *img, const char *tag, char *err, size_t errlen)
{
	struct oci_desc d = { .size = -1 };
	char *text;
	size_t len;
	int ret;

	snprintf(d.path, sizeof(d.path), "manifest.json");
	if (!(text = read_doc(img, &d, "manifest.json", &len, err, errlen)))
		return -EINVAL;
	ret = oci_parse_docker_manifest(text, len, *tag ? tag : NULL, &img->m, err, errlen);
	free(text);
	memcpy(img->digest, img->m.config.hex, sizeof(img->digest));
	return ret;
}

/* One member of an image archive into the work tree. */
static int unpack_member(struct oci_stage *s, struct archive *a, struct archive_entry *e,
			 const struct oci_limits *lim, uint64_t *total, char *err, size_t errlen)
{
	char rel[OCI_PATH_MAX], buf[65536];
	const char *why, *base, *name = archive_entry_pathname(e);
	mode_t type = archive_entry_filetype(e);
	int dfd, fd, ret = 0;
	la_ssize_t n;

	/* docker save (v25+) adds symlinks from its legacy paths to the blobs:
	 * the OCI layout beside them is read instead. */
	if (type == S_IFLNK)
		return 0;
	if (!name || oci_path_clean(name, rel, sizeof(rel), &why) || archive_entry_hardlink(e) ||
	    (type != S_IFREG && type != S_IFDIR)) {
		snprintf(err, errlen, "archive member '%.200s': %s", name ? name : "",
			 archive_entry_hardlink(e) ? "hard link" : why && *why ? why : "not a file or directory");
		return -EINVAL;
	}
	if (!rel[0])
		return 0;
	if ((dfd = oci_stage_parent(s, rel, true, &base)) < 0)
		goto io;
	if (type == S_IFDIR) {
		ret = mkdirat(dfd, base, 0700) && errno != EEXIST ? -errno : 0;
		close(dfd);
		return ret;
	}
	fd = openat(dfd, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	close(dfd);
	if (fd < 0) {
		dfd = -errno;
		goto io;
	}
	while ((n = archive_read_data(a, buf, sizeof(buf))) > 0) {
		*total += (uint64_t)n;
		if (*total > lim->max_bytes) {
			snprintf(err, errlen, "image archive: over %llu bytes", (unsigned long long)lim->max_bytes);
			close(fd);
			return -E2BIG;
		}
		if (write(fd, buf, (size_t)n) != n) {
			ret = -EIO;
			break;
		}
	}
	close(fd);
	if (n < 0 || ret) {
		snprintf(err, errlen, "image archive: %s: %s", rel,
			 n < 0 ? archive_error_string(a) : "write failed");
		return -EIO;
	}
	return 0;
io:
	snprintf(err, errlen, "archive member '%.200s': %s", rel,
		 dfd == -ELOOP ? "under a non-directory" : dfd == -EEXIST ? "twice in the archive"
									 : strerror(-dfd));
	return dfd;
}

static int unpack_archive(const char *file, const char *work, const struct oci_limits *lim,
			  char *err, size_t errlen)
{
	struct archive *a = archive_read_new();
	struct archive_entry *e;
	struct oci_stage s;
	uint64_t total = 0, n = 0;
	int r = ARCHIVE_FATAL, ret;

	if (!a)
		return -ENOMEM;
	if ((ret = oci_stage_init(&s, work))) {
		snprintf(err, errlen, "%s: %s", work, strerror(-ret));
		goto out;
	}
	archive_read_support_filter_gzip(a);
	archive_read_support_format_tar(a);
	if (archive_read_open_filename(a, file, 65536) != ARCHIVE_OK) {
		snprintf(err, errlen, "%s: %s", file, archive_error_string(a));
		ret = -EINVAL;
		goto out;
	}
	while (!ret && (r = archive_read_next_header(a, &e)) == ARCHIVE_OK) {
		if (++n > ARCHIVE_ENTRIES_MAX) {
			snprintf(err, errlen, "image archive: over %d members", ARCHIVE_ENTRIES_MAX);
			ret = -E2BIG;
		} else {
			ret = unpack_member(&s, a, e, lim, &total, err, errlen);
		}
	}
	if (!ret && r != ARCHIVE_EOF) {
		snprintf(err, errlen, "%s: %s", file, archive_error_string(a));
		ret = -EINVAL;
	}
out:
	oci_stage_free(&s);
	archive_read_free(a);
	return ret;
}

static int exists_at(int dirfd, const char *name)
{
	struct stat st;

	return !fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) && S_ISREG(st.st_mode);
}

static int open_config(struct oci_image *img, char *err, size_t errlen)
{
	char *text;
	size_t len;
	int ret;

	if (!(text = read_doc(img, &img->m.config, "config", &len, err, errlen)))
		return -EINVAL;
	ret = oci_parse_config(text, len, &img->c, err, errlen);
	free(text);
	if (!ret && img->c.n_diff_ids != img->m.n_layers) {
		snprintf(err, errlen, "config: %u diff_ids for %u layers", img->c.n_diff_ids,
			 img->m.n_layers);
		ret = -EINVAL;
	}
	return ret;
}

int oci_source_open(const struct oci_source_ref *ref, const char *work, const struct oci_limits *lim,
		    struct oci_image *img, char *err, size_t errlen)
{
	const char *dir = ref->path;
	struct stat st;
	int ret;

	memset(img, 0, sizeof(*img));
	img->dir = -1;
	if (stat(ref->path, &st)) {
		snprintf(err, errlen, "%s: %s", ref->path, strerror(errno));
		return -errno;
	}
	if (S_ISDIR(st.st_mode) != (ref->kind == OCI_SRC_OCI_DIR) && ref->kind != OCI_SRC_AUTO) {
		snprintf(err, errlen, "%s: %s", ref->path,
			 S_ISDIR(st.st_mode) ? "a directory (oci:DIR)" : "not a directory");
		return -EINVAL;
	}
	if (!S_ISDIR(st.st_mode)) {
		if ((ret = unpack_archive(ref->path, work, lim, err, errlen)))
			return ret;
		dir = work;
	}
	img->dir = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (img->dir < 0) {
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return -errno;
	}
	/* docker save since v25 writes an OCI layout too: it is preferred. */
	img->docker = ref->kind == OCI_SRC_DOCKER_ARCHIVE && !exists_at(img->dir, "index.json");
	if (ref->kind == OCI_SRC_AUTO)
		img->docker = !exists_at(img->dir, "index.json") && exists_at(img->dir, "manifest.json");
	if (!img->docker && !exists_at(img->dir, "oci-layout")) {
		snprintf(err, errlen, "%s: neither an OCI image layout (oci-layout, index.json) nor a "
			 "docker archive (manifest.json)", ref->path);
		return -EINVAL;
	}
	ret = img->docker ? open_docker(img, ref->tag, err, errlen) : open_oci(img, ref->tag, err, errlen);
	return ret ? ret : open_config(img, err, errlen);
}

int oci_source_layer(struct oci_image *img, unsigned i, char *err, size_t errlen)
{
	char what[32];

	snprintf(what, sizeof(what), "layer %u", i + 1);
	return open_blob(img, &img->m.layers[i], what, err, errlen);
}

void oci_source_close(struct oci_image *img)
{
	if (img->dir >= 0)
		close(img->dir);
	img->dir = -1;
	oci_config_free(&img->c);
}
