/* A tenant's quota counts its templates and checkpoints
 * (tools/serve/serve_quota.h): their bytes in its disk, how many it holds,
 * reserved before one is made (a template measured after), beside its
 * sandboxes, what else their state directories hold, and what is in
 * flight. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fs_util.h"
#include "snapshots/state_file.h"
#include "tools/sandbox/sandbox.h"
#include "tools/serve/serve.h"
#include "tools/serve/serve_quota.h"
#include "tools/serve/serve_tpl_scope.h"

#define MiB (1ull << 20)
#define GiB (1ull << 30)

static char root[64], state[96], store[96];

static void setup(void)
{
	snprintf(root, sizeof(root), "/tmp/mvm-serve-quota.XXXXXX");
	cr_assert_not_null(mkdtemp(root));
	snprintf(state, sizeof(state), "%s/state", root);
	snprintf(store, sizeof(store), "%s/templates", root);
	cr_assert_eq(mkdir(state, 0700), 0);
	cr_assert_eq(mkdir(store, 0700), 0);
	setenv("MVM_STATE_DIR", state, 1);
	setenv("MVM_TEMPLATE_DIR", store, 1);
}

static void teardown(void)
{
	rm_tree(root);
	unsetenv("MVM_STATE_DIR");
	unsetenv("MVM_TEMPLATE_DIR");
}

TestSuite(serve_quota_templates, .init = setup, .fini = teardown);

/* A sandbox @host (TENANT.NAME) with a @disk byte disk. */
static void sandbox(const char *host, uint64_t disk)
{
	struct sb_config c = { .cpus = 1, .mem = 256 * MiB, .disk_size = disk };
	char dir[256];

	snprintf(c.name, sizeof(c.name), "%s", host);
	snprintf(c.disk, sizeof(c.disk), "data.img");
	snprintf(dir, sizeof(dir), "%s/%s", state, host);
	cr_assert_eq(mkdir(dir, 0700), 0);
	cr_assert_eq(sb_config_save(&c), 0);
}

/* @len bytes of data (not a hole) in the new file @path. */
static void data_file(const char *path, size_t len)
{
	char *buf = malloc(len);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);

	cr_assert(buf && fd >= 0, "%s", path);
	memset(buf, 0x5a, len);
	cr_assert_eq(write(fd, buf, len), (ssize_t)len);
	close(fd);
	free(buf);
}

/* A template @name owned by @owner whose memory file holds @len bytes. */
static void tpl(const char *name, const char *owner, size_t len)
{
	char p[256];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", store, name);
	cr_assert_eq(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/%s/config.json", store, name);
	cr_assert_not_null(f = fopen(p, "w"));
	fprintf(f, "{\"name\":\"x\",\"owner\":\"%s\"}", owner);
	fclose(f);
	snprintf(p, sizeof(p), "%s/%s/memory", store, name);
	data_file(p, len);
}

Test(serve_quota_templates, a_tenants_templates_bytes_count_in_its_disk)
{
	struct sv_quota use;

	sandbox("alice.w1", 1 * GiB);
	tpl("alice.t1", "tenant:alice", 2 * MiB);
	tpl("bob.t1", "tenant:bob", 3 * MiB);
	cr_assert_eq(sv_quota_usage("alice", &use), 0);
	cr_assert_eq(use.sandboxes, 1);
	cr_assert_eq(use.templates, 1);
	cr_assert_geq(use.disk, 1 * GiB + 2 * MiB, "the template's bytes are not in the disk: %llu",
		      (unsigned long long)use.disk);
	cr_assert_lt(use.disk, 1 * GiB + 3 * MiB, "bob's template counted for alice: %llu",
		     (unsigned long long)use.disk);
	cr_assert_eq(sv_quota_usage("bob", &use), 0);
	cr_assert_eq(use.sandboxes, 0);
	cr_assert_eq(use.templates, 1);
	cr_assert_geq(use.disk, 3 * MiB);
}

Test(serve_quota_templates, a_file_linked_into_two_templates_counts_once_and_holes_not_at_all)
{
	char a[256], b[256];
	uint64_t bytes;
	int n, fd;

	tpl("alice.t1", "tenant:alice", 2 * MiB);
	tpl("alice.t2", "tenant:alice", 1 * MiB);
	snprintf(a, sizeof(a), "%s/alice.t1/memory", store);
	snprintf(b, sizeof(b), "%s/alice.t2/layer0", store);
	cr_assert_eq(link(a, b), 0);
	/* A sparse file: 1 GiB long, one page of data. */
	snprintf(b, sizeof(b), "%s/alice.t2/sparse", store);
	cr_assert((fd = open(b, O_WRONLY | O_CREAT | O_EXCL, 0600)) >= 0);
	cr_assert_eq(ftruncate(fd, (off_t)GiB), 0);
	cr_assert_eq(pwrite(fd, "x", 1, 0), 1);
	close(fd);
	cr_assert_eq(sv_tpl_usage("alice", &n, &bytes), 0);
	cr_assert_eq(n, 2);
	cr_assert_geq(bytes, 3 * MiB);
	cr_assert_lt(bytes, 4 * MiB, "linked twice counted twice, or the hole counted: %llu", (unsigned long long)bytes);
	cr_assert_eq(sv_tpl_usage("carol", &n, &bytes), 0);
	cr_assert_eq(n, 0);
	cr_assert_eq(bytes, 0);
}

static struct sv_server *server(void)
{
	struct sv_server *s = calloc(1, sizeof(*s));

	cr_assert_not_null(s);
	pthread_mutex_init(&s->lock, NULL);
	return s;
}

Test(serve_quota_templates, a_template_past_the_disk_is_refused_before_it_is_made)
{
	struct sv_quota q = { 4, 8, 8 * GiB, 1 * GiB + 4 * MiB, 4, 0 };
	struct sv_quota big = { .templates = 1, .disk = 2 * MiB }, small = { .templates = 1, .disk = 1 * MiB };
	struct sv_quota box = { 1, 1, 256 * MiB, 1 * MiB, 0, 0 };
	struct sv_server *s = server();
	char why[256];
	int slot;

	sandbox("alice.w1", 1 * GiB);
	tpl("alice.t1", "tenant:alice", 2 * MiB);
	/* 1 GiB + 2 MiB held: a template that may hold 2 MiB more does not fit. */
	cr_assert_eq(sv_quota_reserve(s, "alice", NULL, &q, &big, why, sizeof(why)), -1);
	cr_assert(strstr(why, "disk") && strstr(why, "templates"), "%s", why);
	slot = sv_quota_reserve(s, "alice", NULL, &q, &small, why, sizeof(why));
	cr_assert_geq(slot, 0, "%s", why);
	/* While it is made, its bound is held: a sandbox needing the rest is refused. */
	cr_assert_eq(sv_quota_reserve(s, "alice", "alice.w2", &q, &box, why, sizeof(why)), -1);
	cr_assert(strstr(why, "disk"), "%s", why);
	cr_assert_eq(sv_quota_reserve(s, "bob", "bob.w1", &q, &box, why, sizeof(why)) >= 0, 1, "bob is not alice: %s",
		     why);
	sv_quota_release(s, slot);
	free(s);
}

Test(serve_quota_templates, the_template_count_refuses_templates_only)
{
	struct sv_quota q = { 4, 8, 8 * GiB, 64 * GiB, 2, 0 };
	struct sv_quota one = { .templates = 1, .disk = 1 * MiB }, box = { 1, 1, 256 * MiB, 1 * GiB, 0, 0 };
	struct sv_server *s = server();
	char why[256];
	int a, b;

	tpl("alice.t1", "tenant:alice", 4096);
	a = sv_quota_reserve(s, "alice", NULL, &q, &one, why, sizeof(why));
	cr_assert_geq(a, 0, "%s", why);
	/* One held, one in flight: a third is refused, with the way out named. */
	cr_assert_eq(sv_quota_reserve(s, "alice", NULL, &q, &one, why, sizeof(why)), -1);
	cr_assert(strstr(why, "at most 2 templates") && strstr(why, "DELETE /v1/templates/"), "%s", why);
	sv_quota_release(s, a);
	/* An operator lowered the count below what alice holds: no new
	 * template, but her sandboxes are not refused for it. */
	q.templates = 0;
	cr_assert_eq(sv_quota_reserve(s, "alice", NULL, &q, &one, why, sizeof(why)), -1);
	b = sv_quota_reserve(s, "alice", "alice.w1", &q, &box, why, sizeof(why));
	cr_assert_geq(b, 0, "%s", why);
	sv_quota_release(s, b);
	free(s);
}

Test(serve_quota_templates, a_template_larger_than_its_bound_is_caught_after)
{
	struct sv_quota q = { 4, 8, 8 * GiB, 1 * GiB + 4 * MiB, 4, 0 };
	char why[256];

	sandbox("alice.w1", 1 * GiB);
	tpl("alice.t1", "tenant:alice", 2 * MiB);
	cr_assert_eq(sv_quota_disk_recheck("alice", &q, why, sizeof(why)), 0, "%s", why);
	tpl("alice.t2", "tenant:alice", 3 * MiB);
	cr_assert_eq(sv_quota_disk_recheck("alice", &q, why, sizeof(why)), -1);
	cr_assert(strstr(why, "disk"), "%s", why);
	/* Only the disk: sandboxes past a lowered count do not remove a template. */
	q = (struct sv_quota){ 0, 0, 0, 2 * GiB, 0, 0 };
	cr_assert_eq(sv_quota_disk_recheck("alice", &q, why, sizeof(why)), 0, "%s", why);
}

Test(serve_quota_templates, the_bound_is_the_memory_and_the_whole_disk)
{
	cr_assert_eq(sv_quota_tpl_bound(256 * MiB, 1 * GiB), 256 * MiB + 1 * GiB);
	cr_assert_eq(sv_quota_tpl_bound(UINT64_MAX, 1), UINT64_MAX, "a sum that wraps would pass any check");
}

/* @len bytes of data in the file @file of sandbox @host's state dir (@sub "" or a directory, made). */
static void state_file(const char *host, const char *sub, const char *file, size_t len)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/%s/%s", state, host, sub);
	if (sub[0])
		mkdir(p, 0700);
	snprintf(p, sizeof(p), "%s/%s/%s%s%s", state, host, sub, sub[0] ? "/" : "", file);
	data_file(p, len);
}

static void disk_top(const char *host, const char *line)
{
	char p[256];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s/disk-top", state, host);
	cr_assert_not_null(f = fopen(p, "w"));
	fputs(line, f);
	fclose(f);
}

TestSuite(serve_quota_checkpoints, .init = setup, .fini = teardown);

Test(serve_quota_checkpoints, a_sandboxes_checkpoints_count_and_their_bytes_are_in_its_disk)
{
	struct sv_quota use;

	sandbox("alice.w1", 1 * GiB);
	/* Before a checkpoint: its disk counts its size, not the bytes written to it. */
	state_file("alice.w1", "", "data.img", 3 * MiB);
	cr_assert_eq(sv_quota_usage("alice", &use), 0);
	cr_assert_eq(use.checkpoints, 0);
	cr_assert_lt(use.disk, 1 * GiB + 1 * MiB, "the writable disk counted twice: %llu", (unsigned long long)use.disk);
	/* One checkpoint: data.img frozen under layer-1 (the new top), a memory and a state file. */
	state_file("alice.w1", "checkpoints", "0.mem", 2 * MiB);
	state_file("alice.w1", "checkpoints", "0.state", 64 << 10);
	state_file("alice.w1", "", "layer-1.qcow2", 5 * MiB);
	disk_top("alice.w1", "layer-1.qcow2 qcow2 2 1\n");
	sandbox("bob.w1", 1 * GiB);
	state_file("bob.w1", "checkpoints", "0.mem", 7 * MiB);
	cr_assert_eq(sv_quota_usage("alice", &use), 0);
	cr_assert_eq(use.checkpoints, 1, "the checkpoint is not counted");
	cr_assert_geq(use.disk, 1 * GiB + 5 * MiB, "the frozen layer and memory file are not in the disk: %llu",
		      (unsigned long long)use.disk);
	cr_assert_lt(use.disk, 1 * GiB + 6 * MiB, "the new top counted beside its reservation, or bob's: %llu",
		     (unsigned long long)use.disk);
}

Test(serve_quota_checkpoints, a_forks_snapshot_is_in_its_disk)
{
	struct sv_quota use;

	sandbox("alice.f1", 1 * GiB);
	state_file("alice.f1", "origin", "memory", 4 * MiB);
	state_file("alice.f1", "origin", "data.img", 2 * MiB);
	cr_assert_eq(sv_quota_usage("alice", &use), 0);
	cr_assert_geq(use.disk, 1 * GiB + 6 * MiB, "the fork's snapshot is not counted: %llu",
		      (unsigned long long)use.disk);
	cr_assert_eq(use.checkpoints, 0);
}

Test(serve_quota_checkpoints, the_count_and_the_disk_refuse_a_checkpoint_before_it_is_taken)
{
	struct sv_quota q = SV_QUOTA_DEFAULT;
	struct sv_quota box = { .sandboxes = 1, .cpus = 1, .memory = 256 * MiB, .disk = 1 * MiB };
	struct sv_server *s = server();
	char why[256];
	int a, b;

	sandbox("alice.w1", 1 * GiB);
	state_file("alice.w1", "checkpoints", "0.mem", 1 * MiB);
	q.checkpoints = 2;
	a = sv_quota_ckpt_reserve(s, "alice", "alice.w1", &q, why, sizeof(why));
	cr_assert_geq(a, 0, "%s", why);
	/* One held, one in flight: a third is refused; a sandbox is not. */
	cr_assert_eq(sv_quota_ckpt_reserve(s, "alice", "alice.w1", &q, why, sizeof(why)), -1);
	cr_assert(strstr(why, "at most 2 checkpoints") && strstr(why, "2 held"), "%s", why);
	b = sv_quota_reserve(s, "alice", "alice.w2", &q, &box, why, sizeof(why));
	cr_assert_geq(b, 0, "%s", why);
	sv_quota_release(s, b);
	cr_assert_geq(b = sv_quota_ckpt_reserve(s, "bob", "alice.w1", &q, why, sizeof(why)), 0, "bob is not alice: %s",
		      why);
	sv_quota_release(s, b);
	sv_quota_release(s, a);
	/* Room for less than the most one checkpoint can add (its memory and whole disk): refused. */
	q.disk = 1 * GiB + 2 * MiB + 1 * GiB;
	cr_assert_eq(sv_quota_ckpt_reserve(s, "alice", "alice.w1", &q, why, sizeof(why)), -1);
	cr_assert(strstr(why, "disk"), "%s", why);
	q.disk = 64 * GiB;
	cr_assert_eq(sv_quota_ckpt_reserve(s, "alice", "alice.nope", &q, why, sizeof(why)), -2, "no config: %s", why);
	free(s);
}

Test(serve_quota_checkpoints, the_bound_covers_memory_disk_tables_and_state)
{
	uint64_t b = sv_quota_ckpt_bound(256 * MiB, 1 * GiB);

	cr_assert_geq(b, 256 * MiB + 1 * GiB + SNAP_STATE_MAX + (1 * GiB) / 400, "%llu", (unsigned long long)b);
	cr_assert_lt(b, 256 * MiB + 1 * GiB + 64 * MiB, "%llu", (unsigned long long)b);
	cr_assert_eq(sv_quota_ckpt_bound(UINT64_MAX, 1), UINT64_MAX, "a sum that wraps would pass any check");
}
