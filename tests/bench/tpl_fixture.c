/*
 * tpl_fixture DIR STATE: a sealed template in DIR (made, must not exist) as
 * `mvm template create` leaves one of a `--net none --memory 256M
 * --disk-size 128M` sandbox, without KVM: a RAM-sized sparse memory file, the
 * raw data disk (128 MiB, a few KiB written) and the qcow2 overlay the
 * snapshot froze, a state whose FILE section lists them (this tree's
 * format: keyed tags under the host key, or CRC-32Cs before them), and the
 * sandbox's config.json as `mvm create` writes it (in STATE, a scratch state
 * root). The CPU and device state is absent: the CLI's side of `mvm create
 * --template` never reads it (the VMM does, and fails on it). For counting
 * the CLI's instructions of a template start on a host without usable KVM
 * (make bench-tstart), on this tree and on an older one alike.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "images/qcow2.h"
#include "snapshots/snapshot_dir.h"
#include "snapshots/state_file.h"
#include "snapshots/template.h"
#if __has_include("snapshots/tpl_ledger.h")
#include "snapshots/tpl_ledger.h"
#endif
#include "tools/sandbox/sandbox.h"
#include "tools/sandbox/sandbox_disk.h"

#define RAM (256ULL << 20)
#define DISK (128ULL << 20)

static char dir[4096], root[4096];	/* the template; the start's state root */

static int put(const char *name, const void *p, size_t n, off_t at, off_t size)
{
	char path[4200];
	int fd, ret = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT, 0600);
	if (fd < 0)
		return -errno;
	if (pwrite(fd, p, n, at) != (ssize_t)n || ftruncate(fd, size))
		ret = -EIO;
	close(fd);
	return ret;
}

/* @f's size and digests, as this tree's VMM lists them. */
static int digest(struct snap_file *f, uint32_t index, const uint8_t *k)
{
	char path[4200];
	int fd, ret;

	snprintf(path, sizeof(path), "%s/%s", dir, f->name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
#ifdef SNAP_TAG_LEN
	ret = snap_file_tag(fd, k, index, &f->size, f->tag);
#else
	(void)index, (void)k;
	ret = snap_file_crc(fd, &f->size, &f->crc);
#endif
	close(fd);
	return ret;
}

static int state(struct snap_file *f, int n)
{
	struct snap_header h = { .ram_size = RAM, .nr_regions = 1, .ncpus = 1 };
	struct snap_w w = { 0 };
	uint8_t k[32] = { 0 };
	int ret = 0;
#ifdef SNAP_TAG_LEN
	uint8_t salt[SNAP_SALT_LEN];
	char err[512];

	if (snap_mac_salt(salt) || snap_mac_key(salt, k, err, sizeof(err))) {
		fprintf(stderr, "tpl_fixture: the snapshot key: %s\n", err);
		return -EIO;
	}
#endif
	for (int i = 0; !ret && i < n; i++)
		ret = digest(&f[i], (uint32_t)i, k);
	if (ret)
		return ret;
	h.regions[0].size = RAM;
	strcpy(h.cpu_vendor, "GenuineIntel");
	snap_state_begin(&w, &h);
	{	/* the vCPU and device state a real one carries (20 KiB in the
		 * box's): parsed and digested by the CLI, loaded by the VMM */
		static uint8_t cpu[20 << 10];

		memset(cpu, 0x11, sizeof(cpu));
		snap_state_section(&w, 0x55504356u, 0, 1, cpu, sizeof(cpu));	/* "VCPU" */
	}
#ifdef SNAP_TAG_LEN
	snap_files_section(&w, f, n, salt);
#else
	{
		struct snap_w s = { 0 };

		snap_w_u32(&s, (uint32_t)n);
		for (int i = 0; i < n; i++) {
			snap_w_blob(&s, f[i].name, (uint32_t)strlen(f[i].name));
			snap_w_blob(&s, f[i].format, (uint32_t)strlen(f[i].format));
			snap_w_u64(&s, f[i].size);
			snap_w_u32(&s, f[i].crc);
		}
		snap_state_section(&w, SNAP_SEC_FILE, 0, 1, s.p, s.len);
		snap_w_free(&s);
	}
#endif
	ret = snap_state_finish(&w);
	if (!ret)
		ret = put(SNAP_DIR_STATE, w.p, w.len, 0, (off_t)w.len);
	snap_w_free(&w);
	return ret;
}

/* config.json of a `--net none --memory 256M --disk-size 128M` sandbox. */
static int config(const char *root)
{
	struct sb_config c;
	char sdir[4096], src[4200], dst[4200], buf[65536];
	ssize_t n;
	int in, ret;

	memset(&c, 0, sizeof(c));
	setenv("MVM_STATE_DIR", root, 1);
	snprintf(c.name, sizeof(c.name), "b");
	snprintf(c.disk, sizeof(c.disk), "data.img");
	snprintf(c.disk_format, sizeof(c.disk_format), "raw");
	c.cpus = 1;
	c.mem = RAM;
	c.disk_size = DISK;
	c.cid = 3;
	c.created = 1.8e9;
	c.net_off = true;
	ret = sb_mkdir(c.name, sdir, sizeof(sdir));
	if (!ret)
		ret = sb_config_new_mac(&c);
	if (!ret)
		ret = sb_config_save(&c);
	if (ret)
		return ret;
	snprintf(src, sizeof(src), "%s/config.json", sdir);
	in = open(src, O_RDONLY | O_CLOEXEC);
	n = in < 0 ? -1 : read(in, buf, sizeof(buf));
	if (in >= 0)
		close(in);
	snprintf(dst, sizeof(dst), "%s/config.json", dir);
	return n <= 0 ? -EIO : put("config.json", buf, (size_t)n, 0, (off_t)n);
}

/* @src into @name in DIR as a snapshot copies a layer: its non-zero pages
 * only, the rest holes (snapshots/snap_sum.c). */
static int sparse_copy(const char *src, const char *name)
{
	char path[4200], page[4096];
	int in = open(src, O_RDONLY | O_CLOEXEC), out, ret = 0;
	static const char zero[4096];
	off_t at = 0;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	out = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (in < 0 || out < 0)
		ret = -errno;
	while (!ret && (n = pread(in, page, sizeof(page), at)) > 0) {
		if (memcmp(page, zero, (size_t)n) && pwrite(out, page, (size_t)n, at) != n)
			ret = -EIO;
		at += n;
	}
	if (!ret && ftruncate(out, at))
		ret = -errno;
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return ret;
}

int main(int argc, char **argv)
{
	struct snap_file f[4] = { { .name = SNAP_DIR_MEMORY, .format = "memory" },
				  { .name = "data.img", .format = "raw" },
				  { .name = "layer-1.qcow2", .format = "qcow2" },
				  { .name = "layer-2.qcow2", .format = "qcow2" } };
	struct snap_dir_info in;
	char err[1024] = "", page[4096], scratch[4200], a[4300], b[4300];
	int ret;

	if (argc != 3) {
		fprintf(stderr, "usage: %s DIR STATE_ROOT\n", argv[0]);
		return 2;
	}
	snprintf(dir, sizeof(dir), "%s", argv[1]);
	snprintf(root, sizeof(root), "%s", getenv("MVM_STATE_DIR") ? getenv("MVM_STATE_DIR") : "");
	snprintf(scratch, sizeof(scratch), "%s/fixture", argv[2]);
	if (mkdir(dir, 0700) || mkdir(argv[2], 0700) || mkdir(scratch, 0700)) {
		perror(dir);
		return 1;
	}
	memset(page, 0x5a, sizeof(page));
	/* A few pages of guest RAM (never read at a start: kept by identity). */
	ret = put(SNAP_DIR_MEMORY, page, sizeof(page), 1 << 20, (off_t)RAM);
	/* The data disk as `mvm create` makes it (mkfs.ext4), and the two
	 * overlays a checkpoint and the template's snapshot froze on it
	 * (bench-builds takes both before `mvm template create`). */
	snprintf(a, sizeof(a), "%s/data.img", scratch);
	if (!ret)
		ret = sb_disk_create(a, DISK, err, sizeof(err));
	if (!ret)
		ret = sparse_copy(a, "data.img");
	snprintf(a, sizeof(a), "%s/layer-1.qcow2", scratch);
	if (!ret)
		ret = qcow2_create_overlay(a, "data.img", "raw", 0, 0);
	if (!ret)
		ret = sparse_copy(a, "layer-1.qcow2");
	snprintf(b, sizeof(b), "%s/layer-2.qcow2", scratch);
	if (!ret)
		ret = qcow2_create_overlay(b, "layer-1.qcow2", "qcow2", DISK, 0);
	if (!ret)
		ret = sparse_copy(b, "layer-2.qcow2");
	if (!ret)
		ret = config(argv[2]);
	if (!ret)
		ret = state(f, 4);
	if (ret) {
		fprintf(stderr, "tpl_fixture: %s %s\n", strerror(-ret), err);
		return 1;
	}
	if (snap_verify_dir(dir, &in, err, sizeof(err)) ||
	    tpl_seal(dir, "tpl", "b", &in, err, sizeof(err))) {
		fprintf(stderr, "tpl_fixture: %s\n", err);
		return 1;
	}
#ifdef MVM_TPL_LEDGER_H
	{	/* what `mvm template create` records after sealing: the ledger
		 * in the state root the start uses */
		static struct tpl_hold hold;
		static struct tpl_meta m;
		char ledger[4200];

		snprintf(ledger, sizeof(ledger), "%s/.template-tpl.seen", root);
		tpl_hold_init(&hold, ledger);
		if (tpl_check_held(dir, &in, &m, &hold, err, sizeof(err))) {
			fprintf(stderr, "tpl_fixture: %s\n", err);
			return 1;
		}
		tpl_hold_commit(&hold);
		tpl_hold_release(&hold);
	}
#endif
	return 0;
}
