/* Export a running VM as a snapshot directory; verify and load one. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <nettle/sha2.h>

#include "common/start_trace.h"
#include "images/qcow2.h"
#include "snapshots/checkpoint.h"
#include "snapshots/disk_layers.h"
#include "snapshots/mem_delta.h"
#include "snapshots/snap_seal.h"
#include "snapshots/snapshot_dir.h"
#include "snapshots/vm_snap.h"
#include "vmm/vm.h"

/* RAM into DIR/memory at its own offsets, zero pages left as holes, and
 * its tag (file 0) computed from the pages as they are written. */
static int write_memory(struct vm *vm, int dfd, const uint8_t k[SNAP_KEY_LEN],
			struct snap_file *f)
{
	uint64_t npages = vm->mem.ram_size / MEM_PAGE;
	uint64_t *hint = vm->mem.file_backed ? NULL : snap_present_pages(vm, npages);
	struct snap_mac *mac = malloc(sizeof(*mac));
	int fd = openat(dfd, SNAP_DIR_MEMORY, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	int ret = fd < 0 ? -errno : mac ? 0 : -ENOMEM;

	if (!ret) {
		snap_mac_start(mac, k, 0, vm->mem.ram_size);
		ret = snap_mem_write(fd, vm->mem.regions[0].host, vm->mem.ram_size, hint, mac);
		snap_mac_end(mac, f->tag);
	}
	if (!ret && fsync(fd))
		ret = -errno;
	if (fd >= 0)
		close(fd);
	snprintf(f->name, sizeof(f->name), SNAP_DIR_MEMORY);
	snprintf(f->format, sizeof(f->format), "memory");
	f->size = vm->mem.ram_size;
	free(mac);
	free(hint);
	return ret;
}

/* The image store's base the chain ends in (@dl's, exactly): into @base,
 * identified, and left out of the files to copy. */
static int take_base(const struct disk_layers *dl, const struct qcow2_info *info,
		     struct snap_base *base)
{
	const struct qcow2_chain_elem *last = &info->chain[info->chain_len - 1];
	char real[PATH_MAX];
	int fd, ret;

	if (!dl->base_file[0] || !realpath(dl->base_file, real) || strcmp(real, last->path) ||
	    strcmp(last->format, "raw") || strlen(real) >= sizeof(base->path))
		return 0;
	fd = open(real, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = snap_ident_fd(fd, &base->id);
	close(fd);
	if (!ret)
		snprintf(base->path, sizeof(base->path), "%s", real);
	return ret ? ret : 1;
}

/* The frozen layer and everything under it, base first, as plain names;
 * an image's base outside the state directory goes to @base instead. */
static int chain_of(const struct disk_layers *dl, const struct disk_layer *top,
		    struct snap_file *f, int *n, struct snap_base *base)
{
	struct qcow2_open_opts o = { .allowed_root = ".",
				     .also_file = dl->base_file[0] ? dl->base_file : NULL };
	struct qcow2_info info;
	int k = 0, ret = 0, skip = 0;

	if (!strcmp(top->format, "qcow2")) {
		ret = qcow2_info_get(top->file, &o, &info);
		if (ret)
			return ret;
		if (info.chain_len)
			skip = take_base(dl, &info, base);
		if (skip < 0)
			ret = skip;
		if (info.chain_len + 2 > SNAP_MAX_FILES)
			ret = -E2BIG;
		for (int i = (int)info.chain_len - 1 - skip; !ret && i >= 0; i--, k++) {
			snprintf(f[k].name, sizeof(f[k].name), "%s", basename(info.chain[i].path));
			snprintf(f[k].format, sizeof(f[k].format), "%s", info.chain[i].format);
		}
		qcow2_info_free(&info);
	}
	snprintf(f[k].name, sizeof(f[k].name), "%s", top->file);
	snprintf(f[k].format, sizeof(f[k].format), "%s", top->format);
	*n = k + 1;
	return ret;
}

/* Layer @index (@f) copied into the snapshot and tagged on the way. */
static int copy_in(int dfd, struct snap_file *f, const uint8_t k[SNAP_KEY_LEN], uint32_t index)
{
	int in = open(f->name, O_RDONLY | O_CLOEXEC), ret;
	int out = openat(dfd, f->name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	struct snap_mac *mac = malloc(sizeof(*mac));
	struct snap_sum s = { .mac = mac };

	ret = in < 0 || out < 0 ? -errno : mac ? snap_sum_size(in, &f->size) : -ENOMEM;
	if (!ret) {
		snap_mac_start(mac, k, index, f->size);
		ret = snap_sum_fd(in, out, &s, &f->size);
		snap_mac_end(mac, f->tag);
	}
	free(mac);
	if (!ret && fsync(out))
		ret = -errno;
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return ret;
}

static int write_state(int dfd, struct snap_w *w)
{
	int fd = openat(dfd, SNAP_DIR_STATE, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, w->p, w->len) != (ssize_t)w->len || fsync(fd))
		ret = -EIO;
	close(fd);
	return ret;
}

/* Paused: state, memory, and the disk frozen so its layers stop changing. */
static int export_paused(struct vm *vm, int dfd, const uint8_t k[SNAP_KEY_LEN], struct snap_w *w,
			 struct snap_file *f, int *n, struct snap_base *base, char *err,
			 size_t errlen)
{
	struct disk_layers *dl = snap_mgr_disk(vm);
	struct disk_layer frozen;
	int depth, ret = vm_snap_capture(vm, w, err, errlen);

	if (ret)
		return ret;
	ret = write_memory(vm, dfd, k, &f[0]);
	if (ret) {
		snprintf(err, errlen, "writing the memory file: %s", strerror(-ret));
		return ret;
	}
	if (!dl) {
		snprintf(err, errlen, "this VM has no disk layers");
		return -ENOTSUP;
	}
	ret = disk_layers_freeze(vm, dl, &frozen, &depth, err, errlen);
	if (ret)
		return ret;
	ret = chain_of(dl, &frozen, f + 1, n, base);
	if (ret == -EACCES)	/* a layer outside the state directory, not its image */
		snprintf(err, errlen, "a disk layer lies outside the sandbox and is not its image");
	else if (ret)
		snprintf(err, errlen, "disk chain of %s: %s", frozen.file, strerror(-ret));
	return ret;
}

int snap_export(struct vm *vm, const char *dir, const uint8_t k[SNAP_KEY_LEN],
		const uint8_t salt[SNAP_SALT_LEN], char *err, size_t errlen)
{
	struct snap_file f[SNAP_MAX_FILES];
	struct snap_base base;
	struct snap_w w = { 0 };
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), n = 0, ret;
	bool was;

	memset(f, 0, sizeof(f));
	memset(&base, 0, sizeof(base));
	if (dfd < 0) {
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return -errno;
	}
	if (!snap_pause(vm, &was)) {
		close(dfd);
		snprintf(err, errlen, "cannot pause the vCPUs");
		return -ETIMEDOUT;
	}
	ret = export_paused(vm, dfd, k, &w, f, &n, &base, err, errlen);
	snap_resume(vm, was);
	/* The layers are frozen: copy them while the guest runs on. */
	for (int i = 1; !ret && i <= n; i++)
		if ((ret = copy_in(dfd, &f[i], k, (uint32_t)i)))
			snprintf(err, errlen, "copying disk layer %s: %s", f[i].name, strerror(-ret));
	if (!ret) {
		snap_files_section(&w, f, n + 1, salt);
		if (base.path[0])
			snap_base_section(&w, &base);
		if (!ret)
			ret = snap_state_finish(&w);
		if (!ret)
			ret = write_state(dfd, &w);
		if (ret)
			snprintf(err, errlen, "writing the state file: %s", strerror(-ret));
	}
	snap_w_free(&w);
	close(dfd);
	return ret;
}

/* The state file open at @fd, whole, into @buf (malloc'd). */
static int read_state_fd(int fd, uint8_t **buf, size_t *len)
{
	struct stat st;
	int ret = 0;

	*buf = NULL;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		ret = -EINVAL;
	else if ((uint64_t)st.st_size > SNAP_STATE_MAX)
		ret = -E2BIG;
	else if (!(*buf = malloc((size_t)st.st_size + 1)))
		ret = -ENOMEM;
	else if (pread(fd, *buf, (size_t)st.st_size, 0) != st.st_size)
		ret = -EIO;
	*len = (size_t)st.st_size;
	if (ret) {
		free(*buf);
		*buf = NULL;
	}
	return ret;
}

static int read_state(int dfd, uint8_t **buf, size_t *len)
{
	int fd = openat(dfd, SNAP_DIR_STATE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC), ret = 0;

	*buf = NULL;
	if (fd < 0)
		return -errno;
	ret = read_state_fd(fd, buf, len);
	close(fd);
	if (ret) {
		free(*buf);
		*buf = NULL;
	}
	return ret;
}

/*
 * @fd (copied into @out unless it is -1) holds file @i of @in: its size,
 * then its digests (v3: its tag under @k, the key of @in's salt). 0,
 * -EBADMSG (*@size says whether the size differed) or -errno.
 */
static int matches(int fd, int out, const struct snap_dir_info *in, int i, const uint8_t *k,
		   uint64_t *size)
{
	const struct snap_file *f = &in->f[i];
	struct sha256_ctx sha;
	struct snap_mac *mac = NULL;
	struct snap_sum s = { .want_crc = in->fver < 3, .sha = in->fver == 2 ? &sha : NULL };
	uint8_t d[SHA256_DIGEST_SIZE];
	int ret = snap_sum_size(fd, size);

	if (!ret && *size != f->size)
		return -EBADMSG;
	if (!ret && in->fver >= 3) {
		if (!(mac = malloc(sizeof(*mac))))
			return -ENOMEM;
		snap_mac_start(mac, k, (uint32_t)i, *size);
		s.mac = mac;
	}
	if (ret)
		return ret;
	sha256_init(&sha);	/* finished below even when the file was never read */
	ret = snap_sum_fd(fd, out, &s, size);
	if (mac)
		snap_mac_end(mac, d);
	else if (s.sha)
		sha256_digest(&sha, sizeof(d), d);
	free(mac);
	if (!ret && *size != f->size)
		ret = -EBADMSG;	/* changed while it was read */
	else if (!ret && (in->fver >= 3 ? !snap_tag_equal(d, f->tag) :
			  s.crc != f->crc || (s.sha && memcmp(d, f->sha256, sizeof(d)))))
		ret = -EBADMSG;
	return ret;
}

static void mismatch(const struct snap_dir_info *in, int i, uint64_t size, char *err,
		     size_t errlen)
{
	const struct snap_file *f = &in->f[i];

	if (size != f->size)
		snprintf(err, errlen, "snapshot file %s: %llu bytes, the snapshot recorded %llu "
			 "(truncated or replaced)", f->name, (unsigned long long)size,
			 (unsigned long long)f->size);
	else if (in->fver >= 3)
		snprintf(err, errlen, "snapshot file %s: its contents do not match the snapshot's "
			 "keyed tag (edited, damaged, or not taken by this user's mvm): refusing it",
			 f->name);
	else
		snprintf(err, errlen, "snapshot file %s: checksum mismatch (damaged or replaced)",
			 f->name);
}

int snap_dir_key(const struct snap_dir_info *in, uint8_t k[SNAP_KEY_LEN], char *err,
		 size_t errlen)
{
	memset(k, 0, SNAP_KEY_LEN);
	return in->fver >= 3 ? snap_mac_key(in->salt, k, err, errlen) : 0;
}

/* File @i of @in in @dfd. @seal (may be NULL): the directory's seal,
 * checked against the state that lists it: the memory file it names
 * unchanged is not read again. */
static int check_file(int dfd, const struct snap_dir_info *in, int i, const uint8_t *k,
		      const struct snap_seal *seal, char *err, size_t errlen)
{
	const struct snap_file *f = &in->f[i];
	int fd = openat(dfd, f->name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC), ret;
	uint64_t size = 0;

	if (fd < 0) {
		snprintf(err, errlen, "snapshot file %s: %s", f->name, strerror(errno));
		return -errno;
	}
	if (seal && snap_files_bound(in) && !strcmp(f->name, SNAP_DIR_MEMORY) &&
	    snap_seal_memory_unchanged(seal, fd) && seal->memory.size == f->size) {
		close(fd);
		return 0;
	}
	ret = matches(fd, -1, in, i, k, &size);
	close(fd);
	if (ret == -EBADMSG)
		mismatch(in, i, size, err, errlen);
	else if (ret)
		snprintf(err, errlen, "snapshot file %s: %s", f->name, strerror(-ret));
	return ret;
}

int snap_dir_info(const char *dir, struct snap_dir_info *out, char *err, size_t errlen)
{
	return snap_dir_info_held(dir, -1, true, out, err, errlen);
}

int snap_dir_info_held(const char *dir, int fd, bool digest, struct snap_dir_info *out,
		       char *err, size_t errlen)
{
	int dfd = fd >= 0 ? -1 : open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), ret;
	uint8_t *buf = NULL;
	size_t len = 0;

	memset(out, 0, sizeof(*out));
	if (fd >= 0)
		ret = read_state_fd(fd, &buf, &len);
	else
		ret = dfd < 0 ? -errno : read_state(dfd, &buf, &len);
	if (ret)
		snprintf(err, errlen, "%s/%s: %s", dir, SNAP_DIR_STATE, strerror(-ret));
	else
		ret = snap_dir_parse(buf, len, digest, out, err, errlen);
	if (dfd >= 0)
		close(dfd);
	free(buf);
	return ret;
}

int snap_verify_dir(const char *dir, struct snap_dir_info *out, char *err, size_t errlen)
{
	struct snap_seal seal;
	bool sealed = false;
	char why[512];
	uint8_t k[SNAP_KEY_LEN];
	int dfd, ret = snap_dir_info(dir, out, err, errlen);

	if (!ret)
		ret = snap_dir_key(out, k, err, errlen);
	if (ret)
		return ret;
	/* A seal that names this very state: its memory line may spare the
	 * memory file's read (snap_seal.h). Without one, or with another
	 * state, every file is read; whether a seal is required is the
	 * caller's to say (snap_seal_check_state). */
	if (snap_files_bound(out) && !snap_seal_load(dir, "snapshot", &seal, why, sizeof(why)) &&
	    !snap_seal_expect(&seal, dir, SNAP_DIR_STATE, out->state_sha256, why, sizeof(why)))
		sealed = true;
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return -errno;
	}
	for (int i = 0; !ret && i < out->nfiles; i++)
		ret = check_file(dfd, out, i, k, sealed ? &seal : NULL, err, errlen);
	explicit_bzero(k, sizeof(k));
	close(dfd);
	if (!ret && out->has_base)
		ret = snap_base_check(&out->base, err, errlen);
	return ret;
}

int snap_verify_layers(const char *dir, const struct snap_dir_info *in, char *err,
		       size_t errlen)
{
	return snap_verify_layers_held(dir, in, NULL, NULL, err, errlen);
}

int snap_verify_layers_held(const char *dir, const struct snap_dir_info *in, const int *fds,
			    const bool *skip, char *err, size_t errlen)
{
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), ret = 0;
	uint8_t k[SNAP_KEY_LEN];
	bool keyed = false;

	if (dfd < 0) {
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return -errno;
	}
	for (int i = 1; !ret && i < in->nfiles; i++) {
		uint64_t size = 0;

		if (skip && skip[i])
			continue;
		/* The key only when a layer is read: none is, mostly. */
		if (!keyed && !(ret = snap_dir_key(in, k, err, errlen)))
			keyed = true;
		if (ret)
			break;
		if (!fds || fds[i] < 0) {
			ret = check_file(dfd, in, i, k, NULL, err, errlen);
			continue;
		}
		ret = matches(fds[i], -1, in, i, k, &size);
		if (ret == -EBADMSG)
			mismatch(in, i, size, err, errlen);
		else if (ret)
			snprintf(err, errlen, "snapshot file %s: %s", in->f[i].name, strerror(-ret));
	}
	explicit_bzero(k, sizeof(k));
	close(dfd);
	return ret;
}

int snap_copy_layers(const char *dir, const struct snap_dir_info *in, const char *dst,
		     char *err, size_t errlen)
{
	int sfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int dfd = open(dst, O_RDONLY | O_DIRECTORY | O_CLOEXEC), ret = 0;
	uint8_t k[SNAP_KEY_LEN];

	if (sfd < 0 || dfd < 0) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", sfd < 0 ? dir : dst, strerror(errno));
	}
	if (!ret)
		ret = snap_dir_key(in, k, err, errlen);
	for (int i = 1; !ret && i < in->nfiles; i++) {
		const struct snap_file *f = &in->f[i];
		int a = openat(sfd, f->name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		int b = openat(dfd, f->name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		uint64_t size = 0;

		/* -EBADMSG: changed since it was verified. */
		ret = a < 0 || b < 0 ? -errno : matches(a, b, in, i, k, &size);
		if (ret)
			snprintf(err, errlen, "copying disk layer %s: %s", f->name, strerror(-ret));
		if (a >= 0)
			close(a);
		if (b >= 0)
			close(b);
	}
	explicit_bzero(k, sizeof(k));
	if (sfd >= 0)
		close(sfd);
	if (dfd >= 0)
		close(dfd);
	return ret;
}

static int state_sealed(const char *dir, const uint8_t *buf, size_t len, char *err,
			size_t errlen)
{
	uint8_t sha[SHA256_DIGEST_SIZE];
	struct sha256_ctx c;
	struct snap_seal s;
	int ret = snap_seal_load(dir, NULL, &s, err, errlen);

	sha256_init(&c);
	sha256_update(&c, len, buf);
	sha256_digest(&c, sizeof(sha), sha);
	return ret ? ret : snap_seal_expect(&s, dir, SNAP_DIR_STATE, sha, err, errlen);
}

int snap_restore_state(struct vm *vm, const char *dir, char *err, size_t errlen)
{
	struct vm_snap_loaded *l = NULL;
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), ret;
	uint8_t *buf = NULL;
	size_t len = 0;

	ret = dfd < 0 ? -errno : read_state(dfd, &buf, &len);
	if (dfd >= 0)
		close(dfd);
	if (ret) {
		snprintf(err, errlen, "%s/%s: %s", dir, SNAP_DIR_STATE, strerror(-ret));
		return ret;
	}
	/* The CLI checked this directory's seal; these are the bytes loaded
	 * now, so they are checked again (still unconfined: the key is ours). */
	ret = state_sealed(dir, buf, len, err, errlen);
	if (ret) {
		free(buf);
		return ret;
	}
	ret = vm_snap_check(vm, buf, len, &l, err, errlen);
	start_trace("restore: checked");
	if (!ret)
		ret = vm_snap_apply(vm, l, false, err, errlen);
	start_trace("restore: applied");
	vm_snap_loaded_free(l);
	free(buf);
	return ret;
}

int snap_restore_pending(char *dir, size_t cap)
{
	FILE *fp = fopen(SNAP_RESTORE_FILE, "re");
	char *nl;

	if (!fp)
		return -ENOENT;
	if (!fgets(dir, (int)cap, fp) || dir[0] != '/') {
		fclose(fp);
		return -EINVAL;
	}
	fclose(fp);
	nl = strchr(dir, '\n');
	if (nl)
		*nl = 0;
	return 0;
}

/* Name of the next overlay: past every layer-N.qcow2 the snapshot holds. */
static unsigned next_layer(const struct snap_dir_info *in)
{
	unsigned next = 1, n;

	for (int i = 1; i < in->nfiles; i++)
		if (sscanf(in->f[i].name, "layer-%u.qcow2", &n) == 1 && n >= next)
			next = n + 1;
	return next;
}

int snap_new_top(const char *sdir, const struct snap_dir_info *in)
{
	const struct snap_file *top = &in->f[in->nfiles - 1];
	unsigned next = next_layer(in);
	char path[PATH_MAX + 80], below[PATH_MAX + 80];
	FILE *fp;
	int ret;

	snprintf(path, sizeof(path), "%s/layer-%u.qcow2", sdir, next);
	snprintf(below, sizeof(below), "%s", top->name);	/* relative: beside it */
	ret = qcow2_create_overlay(path, below, top->format, 0, 0);
	if (ret)
		return ret;
	snprintf(path, sizeof(path), "%s/" DISK_TOP_FILE, sdir);
	fp = fopen(path, "we");
	if (!fp)
		return -errno;
	fprintf(fp, "layer-%u.qcow2 qcow2 %u %d\n", next, next + 1, in->nfiles - 1);
	return fclose(fp) ? -EIO : 0;
}
