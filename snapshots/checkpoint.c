/* Checkpoints in place: pause, save state + changed pages + a disk layer; roll back. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/mono_time.h"
#include "snapshots/checkpoint.h"
#include "snapshots/disk_layers.h"
#include "snapshots/mem_delta.h"
#include "snapshots/vm_snap.h"
#include "common/log.h"
#include "vmm/vm.h"
#include "vmm/vm_state.h"

struct ckpt {
	struct snap_ckpt_info info;
	int parent;			/* index; -1 for the root */
	struct mem_delta mem;
	struct disk_layer layer;	/* frozen disk layer */
	int layer_depth;
	uint8_t *state;
	size_t state_len;
};

struct snap_mgr {
	struct ckpt ck[SNAP_MAX_CKPTS];
	int n;
	int head;			/* -1: none yet (dirty tracking off) */
	unsigned seq;
	uint64_t npages;
	uint64_t *vmm_dirty;		/* installed as vm->mem.dirty */
	struct disk_layers disk;
	int pagemap_fd;			/* opened before confinement (Landlock) */
};

static void clean_dir(void)
{
	DIR *d;
	struct dirent *e;

	mkdir(SNAP_CKPT_DIR, 0700);
	d = opendir(SNAP_CKPT_DIR);
	if (!d)
		return;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			unlinkat(dirfd(d), e->d_name, 0);
	closedir(d);
}

int snap_mgr_init(struct vm *vm, const char *disk, const char *format, const char *base_file)
{
	struct snap_mgr *m = calloc(1, sizeof(*m));

	if (!m)
		return -ENOMEM;
	m->head = -1;
	m->npages = vm->mem.ram_size / MEM_PAGE;
	m->vmm_dirty = calloc(mem_words(m->npages) + 1, 8);
	if (!m->vmm_dirty) {
		free(m);
		return -ENOMEM;
	}
	disk_layers_init(&m->disk, disk, format, base_file);
	/* Read at each checkpoint, when the VMM may no longer open it. */
	m->pagemap_fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	clean_dir();
	vm->snap = m;
	return 0;
}

void snap_mgr_free(struct vm *vm)
{
	struct snap_mgr *m = vm->snap;

	if (!m)
		return;
	vm->mem.dirty = NULL;
	for (int i = 0; i < m->n; i++) {
		mem_delta_free(&m->ck[i].mem);
		free(m->ck[i].state);
	}
	free(m->vmm_dirty);
	if (m->pagemap_fd >= 0)
		close(m->pagemap_fd);
	free(m);
	vm->snap = NULL;
}

bool snap_tag_ok(const char *t)
{
	size_t n = strlen(t);

	if (!n || n >= SNAP_TAG_MAX || t[0] == '.' || t[0] == '-' || t[0] == '_')
		return false;
	return strspn(t, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == n;
}

static int find(struct snap_mgr *m, const char *tag)
{
	for (int i = 0; i < m->n; i++)
		if (!strcmp(m->ck[i].info.tag, tag))
			return i;
	return -1;
}

static uint8_t *ram(struct vm *vm)
{
	return vm->mem.regions[0].host;
}

/* Pages the guest (KVM's log) or the VMM wrote since the last fetch, into @bm. */
static int fetch_dirty(struct vm *vm, struct snap_mgr *m, uint64_t *bm)
{
	uint64_t words = mem_words(m->npages);

	for (int i = 0; i < vm->mem.nr_regions; i++) {
		const struct gm_region *r = &vm->mem.regions[i];
		uint64_t first = (uint64_t)(r->host - ram(vm)) / MEM_PAGE, n = r->size / MEM_PAGE;
		uint64_t *tmp = calloc(mem_words(n) + 1, 8);
		int ret;

		if (!tmp)
			return -ENOMEM;
		ret = kvm_dirty_log_get(&vm->kvm, (uint32_t)i, tmp);
		/* Regions start on 64-page boundaries (the hole is at 3 GiB). */
		for (uint64_t w = 0; !ret && w < mem_words(n); w++)
			bm[first / 64 + w] |= tmp[w];
		free(tmp);
		if (ret)
			return ret;
	}
	for (uint64_t w = 0; w < words; w++)
		bm[w] |= __atomic_exchange_n(&m->vmm_dirty[w], 0, __ATOMIC_SEQ_CST);
	return 0;
}

/* Pages that may hold data (present or swapped), from /proc/self/pagemap. */
uint64_t *snap_present_pages(struct vm *vm, uint64_t npages)
{
	uint64_t *bm = calloc(mem_words(npages) + 1, 8), buf[512];
	struct snap_mgr *m = vm->snap;
	int fd = m && m->pagemap_fd >= 0 ? dup(m->pagemap_fd) :
		 open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	uint64_t base = (uint64_t)(uintptr_t)ram(vm) / MEM_PAGE;

	if (!bm || fd < 0) {
		if (fd >= 0)
			close(fd);
		free(bm);
		return NULL;	/* unknown: every page is read */
	}
	for (uint64_t p = 0; p < npages; p += 512) {
		uint64_t n = npages - p < 512 ? npages - p : 512;

		if (pread(fd, buf, n * 8, (off_t)((base + p) * 8)) != (ssize_t)(n * 8)) {
			free(bm);
			bm = NULL;
			break;
		}
		for (uint64_t i = 0; i < n; i++)
			if (buf[i] & (3ULL << 62))
				mem_set(bm, p + i);
	}
	close(fd);
	return bm;
}

/* The first checkpoint: every page, and dirty tracking from now on. */
static int start_tracking(struct vm *vm, struct snap_mgr *m, uint64_t *covered, uint64_t **hint)
{
	for (uint64_t w = 0; w < mem_words(m->npages); w++)
		covered[w] = ~0ULL;
	if (m->npages % 64)
		covered[m->npages / 64] = (1ULL << (m->npages % 64)) - 1;
	for (int i = 0; i < vm->mem.nr_regions; i++) {
		const struct gm_region *r = &vm->mem.regions[i];
		int ret = kvm_dirty_log_enable(&vm->kvm, (uint32_t)i, r->gpa, r->size, r->host);

		if (ret)
			return ret;
	}
	vm->mem.dirty = m->vmm_dirty;
	*hint = vm->mem.file_backed ? NULL : snap_present_pages(vm, m->npages);
	return 0;
}

static int write_state_file(int id, const uint8_t *p, size_t n)
{
	char path[64];
	int fd, ret = 0;

	snprintf(path, sizeof(path), SNAP_CKPT_DIR "/%d.state", id);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (write(fd, p, n) != (ssize_t)n)
		ret = -EIO;
	close(fd);
	return ret;
}

/* Memory of the new checkpoint @c: all pages the first time, else the dirty ones. */
static int save_memory(struct vm *vm, struct snap_mgr *m, struct ckpt *c, unsigned id,
		       char *err, size_t errlen)
{
	uint64_t *covered = calloc(mem_words(m->npages) + 1, 8), *hint = NULL;
	char path[64];
	int fd = -1, ret = covered ? 0 : -ENOMEM;

	if (!ret)
		ret = m->head < 0 ? start_tracking(vm, m, covered, &hint) : fetch_dirty(vm, m, covered);
	snprintf(path, sizeof(path), SNAP_CKPT_DIR "/%u.mem", id);
	if (!ret) {
		fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		ret = fd < 0 ? -errno : 0;
	}
	if (!ret) {
		ret = mem_delta_write(fd, ram(vm), m->npages, covered, hint, &c->mem);
		covered = NULL;		/* c->mem owns it now */
		if (ret) {
			/* Keep those pages dirty for the next try. */
			for (uint64_t w = 0; c->mem.covered && w < mem_words(m->npages); w++)
				m->vmm_dirty[w] |= c->mem.covered[w];
			mem_delta_free(&c->mem);
			close(fd);
			unlink(path);
		}
	}
	free(covered);
	free(hint);
	if (ret)
		snprintf(err, errlen, "saving guest memory: %s", strerror(-ret));
	return ret;
}

static void fill_info(struct snap_mgr *m, struct ckpt *c, const char *tag, double t0)
{
	snprintf(c->info.tag, sizeof(c->info.tag), "%s", tag);
	snprintf(c->info.parent, sizeof(c->info.parent), "%s",
		 m->head >= 0 ? m->ck[m->head].info.tag : "");
	c->parent = m->head;
	c->info.time = wall_now_s();
	c->info.pages_stored = c->mem.ndata;
	for (uint64_t w = 0; w < mem_words(m->npages); w++)
		c->info.pages_covered += (uint64_t)__builtin_popcountll(c->mem.covered[w]);
	c->info.seconds = mono_now_s() - t0;
}

static int pick_tag(struct snap_mgr *m, const char *tag, char *out, size_t cap, char *err, size_t errlen)
{
	if (m->n == SNAP_MAX_CKPTS) {
		snprintf(err, errlen, "at most %d checkpoints per boot", SNAP_MAX_CKPTS);
		return -ENOSPC;
	}
	if (tag && tag[0]) {
		if (!snap_tag_ok(tag)) {
			snprintf(err, errlen, "bad tag '%s': letters, digits, '.', '_', '-' (at most %d)",
				 tag, SNAP_TAG_MAX - 1);
			return -EINVAL;
		}
		if (find(m, tag) >= 0) {
			snprintf(err, errlen, "a checkpoint named %s exists", tag);
			return -EEXIST;
		}
		snprintf(out, cap, "%s", tag);
		return 0;
	}
	do
		snprintf(out, cap, "cp%u", ++m->seq);
	while (find(m, out) >= 0);
	return 0;
}

static int checkpoint_paused(struct vm *vm, struct snap_mgr *m, const char *tag, double t0,
			     char *err, size_t errlen)
{
	struct ckpt *c = &m->ck[m->n];
	struct snap_w w = { 0 };
	int ret;

	memset(c, 0, sizeof(*c));
	c->mem.fd = -1;
	ret = vm_snap_capture(vm, &w, err, errlen);
	if (!ret && (ret = snap_state_finish(&w)))
		snprintf(err, errlen, "state file: %s", strerror(-ret));
	if (!ret)
		ret = save_memory(vm, m, c, (unsigned)m->n, err, errlen);
	if (ret)
		goto out;
	ret = disk_layers_freeze(vm, &m->disk, &c->layer, &c->layer_depth, err, errlen);
	if (!ret && write_state_file(m->n, w.p, w.len))
		log_warn("checkpoint %s: could not write its state file", tag);
	if (ret) {
		for (uint64_t x = 0; x < mem_words(m->npages); x++)
			m->vmm_dirty[x] |= c->mem.covered[x];
		mem_delta_free(&c->mem);
		goto out;
	}
	c->state = w.p;
	c->state_len = w.len;
	w.p = NULL;
	fill_info(m, c, tag, t0);
	m->head = m->n++;
out:
	snap_w_free(&w);
	return ret;
}

/* Pause unless the user already did; resume only what we paused. Then
 * drain the disk: a checkpoint, rollback or snapshot must not save or
 * swap out from under a request the workers still serve. */
bool snap_pause(struct vm *vm, bool *was_paused)
{
	*was_paused = vm_is_paused(vm);
	if (!*was_paused && vm_pause(vm))
		return false;
	vm_quiesce(vm);
	return true;
}

void snap_resume(struct vm *vm, bool was_paused)
{
	if (!was_paused)
		vm_resume(vm);
}

int snap_checkpoint(struct vm *vm, const char *tag, char *out, size_t outcap,
		    char *err, size_t errlen)
{
	struct snap_mgr *m = vm->snap;
	double t0 = mono_now_s();
	bool was;
	int ret;

	if (!m) {
		snprintf(err, errlen, "checkpoints are not available in this VM");
		return -ENOTSUP;
	}
	ret = pick_tag(m, tag, out, outcap, err, errlen);
	if (ret)
		return ret;
	if (!snap_pause(vm, &was)) {
		snprintf(err, errlen, "cannot pause the vCPUs");
		return -ETIMEDOUT;
	}
	ret = checkpoint_paused(vm, m, out, t0, err, errlen);
	snap_resume(vm, was);
	return ret;
}

/* Pages that differ between now and checkpoint @t: dirty since the head, and
 * every delta on the paths from the head and from @t to their common ancestor. */
static int diff_pages(struct vm *vm, struct snap_mgr *m, int t, uint64_t *pages)
{
	bool on_head_path[SNAP_MAX_CKPTS] = { false };
	uint64_t words = mem_words(m->npages);
	int lca, ret = fetch_dirty(vm, m, pages);

	if (ret)
		return ret;
	for (int i = m->head; i >= 0; i = m->ck[i].parent)
		on_head_path[i] = true;
	for (lca = t; lca >= 0 && !on_head_path[lca]; lca = m->ck[lca].parent)
		for (uint64_t w = 0; w < words; w++)
			pages[w] |= m->ck[lca].mem.covered[w];
	for (int i = m->head; i >= 0 && i != lca; i = m->ck[i].parent)
		for (uint64_t w = 0; w < words; w++)
			pages[w] |= m->ck[i].mem.covered[w];
	return 0;
}

static int revert_memory(struct vm *vm, struct snap_mgr *m, int t, char *err, size_t errlen)
{
	struct mem_delta *chain[SNAP_MAX_CKPTS];
	uint64_t *pages = calloc(mem_words(m->npages) + 1, 8);
	int n = 0, ret = pages ? 0 : -ENOMEM;

	for (int i = t; i >= 0; i = m->ck[i].parent)
		chain[n++] = &m->ck[i].mem;
	if (!ret)
		ret = diff_pages(vm, m, t, pages);
	if (!ret)
		ret = mem_delta_revert(ram(vm), m->npages, pages, chain, n);
	free(pages);
	if (ret)
		snprintf(err, errlen, "reverting guest memory: %s", strerror(-ret));
	return ret;
}

static int rollback_paused(struct vm *vm, struct snap_mgr *m, int t, char *err, size_t errlen)
{
	struct vm_snap_loaded *l = NULL;
	int ret = vm_snap_check(vm, m->ck[t].state, m->ck[t].state_len, &l, err, errlen);

	if (ret)
		return ret;	/* nothing changed yet */
	ret = revert_memory(vm, m, t, err, errlen);
	/* The disk before the devices: loading re-notifies virtio-blk, whose
	 * pending requests must reach the checkpoint's disk. */
	if (!ret)
		ret = disk_layers_reset(vm, &m->disk, &m->ck[t].layer, m->ck[t].layer_depth, err, errlen);
	if (!ret)
		ret = vm_snap_apply(vm, l, true, err, errlen);
	vm_snap_loaded_free(l);
	if (ret) {
		/* Half-reverted memory or state: the guest cannot go on. */
		vm_request_stop(vm, VM_ERROR, 0, err);
		return ret;
	}
	m->head = t;
	return 0;
}

int snap_rollback(struct vm *vm, const char *tag, double *seconds, char *err, size_t errlen)
{
	struct snap_mgr *m = vm->snap;
	double t0 = mono_now_s();
	bool was;
	int t, ret;

	if (!m || (t = find(m, tag)) < 0) {
		snprintf(err, errlen, "no checkpoint named %s", tag);
		return -ENOENT;
	}
	if (!snap_pause(vm, &was)) {
		snprintf(err, errlen, "cannot pause the vCPUs");
		return -ETIMEDOUT;
	}
	ret = rollback_paused(vm, m, t, err, errlen);
	snap_resume(vm, was);
	if (seconds)
		*seconds = mono_now_s() - t0;
	return ret;
}

int snap_count(struct vm *vm)
{
	return vm->snap ? ((struct snap_mgr *)vm->snap)->n : 0;
}

int snap_info(struct vm *vm, int i, struct snap_ckpt_info *out)
{
	struct snap_mgr *m = vm->snap;

	if (!m || i < 0 || i >= m->n)
		return -ENOENT;
	*out = m->ck[i].info;
	out->current = false;
	for (int k = m->head; k >= 0; k = m->ck[k].parent)
		if (k == i)
			out->current = true;
	return 0;
}

struct disk_layers *snap_mgr_disk(struct vm *vm)
{
	return vm->snap ? &((struct snap_mgr *)vm->snap)->disk : NULL;
}
