/* Keyed tags of snapshot files (state FILE section v3, snapshots/snap_mac.h):
 * a v3 snapshot directory verifies under the host key that tagged it, and
 * an edited memory byte, an edited layer byte, a swapped salt or tags made
 * under another host key are refused by name; the VMM's tags, computed
 * while it writes guest memory, are the readers'. (Issue 27, item 3: the
 * state's SHA-256s gave way to these tags; the old code reads no v3 list:
 * every test here fails there, at "missing or invalid file list".) */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "snapshots/mem_delta.h"
#include "snapshots/snap_mac.h"
#include "snapshots/snap_seal.h"
#include "snapshots/snapshot_dir.h"
#include "snapshots/state_file.h"
#include "tools/sandbox/snap_api.h"

#define RAM (64ULL << 20)

static char dir[64], keydir[64], err[512];

static void key_file(const char *name)
{
	char k[128];

	snprintf(k, sizeof(k), "%s/%s", keydir, name);
	setenv("MVM_HOST_KEY", k, 1);
}

static void put(const char *name, const void *p, size_t n, off_t at, off_t size)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT, 0600);
	cr_assert_geq(fd, 0);
	cr_assert_eq(pwrite(fd, p, n, at), (ssize_t)n);
	cr_assert_eq(ftruncate(fd, size), 0);
	close(fd);
}

static void tag_of(const char *name, const uint8_t k[SNAP_KEY_LEN], int i, struct snap_file *f)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDONLY);
	cr_assert_geq(fd, 0);
	cr_assert_eq(snap_file_tag(fd, k, (uint32_t)i, &f->size, f->tag), 0);
	close(fd);
}

/* The state listing memory, base.img and layer-1.qcow2 under @salt with
 * @f's tags. */
static void write_state(const struct snap_file *f, const uint8_t salt[SNAP_SALT_LEN])
{
	struct snap_header h = { .ram_size = RAM, .nr_regions = 1, .ncpus = 1 };
	struct snap_w w = { 0 };

	h.regions[0].size = RAM;
	strcpy(h.cpu_vendor, "AuthenticAMD");
	snap_state_begin(&w, &h);
	snap_files_section(&w, f, 3, salt);
	cr_assert_eq(snap_state_finish(&w), 0);
	put("state", w.p, w.len, 0, (off_t)w.len);
	snap_w_free(&w);
}

static struct snap_file files[3];
static uint8_t salt[SNAP_SALT_LEN];

/* A v3 snapshot: memory and two layers, tagged under the current host key. */
static void make_snapshot(void)
{
	uint8_t k[SNAP_KEY_LEN];

	memset(files, 0, sizeof(files));
	strcpy(files[0].name, "memory");
	strcpy(files[0].format, "memory");
	strcpy(files[1].name, "base.img");
	strcpy(files[1].format, "raw");
	strcpy(files[2].name, "layer-1.qcow2");
	strcpy(files[2].format, "qcow2");
	put("memory", "guest ram", 9, 8192, (off_t)RAM);
	put("base.img", "base layer", 10, 0, 1 << 20);
	put("layer-1.qcow2", "QFI\xfb top", 8, 0, 4096);
	cr_assert_eq(snap_mac_salt(salt), 0);
	cr_assert_eq(snap_mac_key(salt, k, err, sizeof(err)), 0, "%s", err);
	for (int i = 0; i < 3; i++)
		tag_of(files[i].name, k, i, &files[i]);
	write_state(files, salt);
}

static void setup(void)
{
	strcpy(dir, "/tmp/mvm-snapmac-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	strcpy(keydir, "/tmp/mvm-snapmackey-XXXXXX");
	cr_assert_not_null(mkdtemp(keydir));
	key_file("a.key");
}

static void teardown(void)
{
	char cmd[192];

	snprintf(cmd, sizeof(cmd), "chmod -R u+w %s && rm -rf %s %s", dir, dir, keydir);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(snap_mac, .init = setup, .fini = teardown);

Test(snap_mac, tagged_snapshot_verifies_and_seals)
{
	struct snap_dir_info in;

	make_snapshot();
	cr_assert_eq(snap_verify_dir(dir, &in, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(in.fver, 3);
	cr_assert_eq(memcmp(in.salt, salt, sizeof(salt)), 0);
	cr_assert_eq(snap_verify_layers(dir, &in, err, sizeof(err)), 0, "%s", err);
	put("config.json", "{}", 2, 0, 2);
	cr_assert_eq(snap_seal_write(dir, "snapshot", err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(snap_seal_check_state(dir, NULL, &in, err, sizeof(err)), 0, "%s", err);
}

Test(snap_mac, edited_memory_byte_is_refused)
{
	struct snap_dir_info in;

	make_snapshot();
	put("memory", "G", 1, 8192, (off_t)RAM);
	cr_assert_eq(snap_verify_dir(dir, &in, err, sizeof(err)), -EBADMSG);
	cr_assert(strstr(err, "snapshot file memory") && strstr(err, "keyed tag"), "%s", err);
}

Test(snap_mac, edited_layer_byte_is_refused)
{
	struct snap_dir_info in;
	char dst[128];

	make_snapshot();
	put("base.img", "B", 1, 0, 1 << 20);
	cr_assert_eq(snap_verify_dir(dir, &in, err, sizeof(err)), -EBADMSG);
	cr_assert(strstr(err, "snapshot file base.img") && strstr(err, "keyed tag"), "%s", err);
	cr_assert_eq(snap_dir_info(dir, &in, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(snap_verify_layers(dir, &in, err, sizeof(err)), -EBADMSG);
	snprintf(dst, sizeof(dst), "%s/copy", keydir);
	cr_assert_eq(mkdir(dst, 0700), 0);
	cr_assert_eq(snap_copy_layers(dir, &in, dst, err, sizeof(err)), -EBADMSG);
	cr_assert(strstr(err, "base.img"), "%s", err);
}

/* Same tags, another salt in the state (as a forger who cannot compute
 * tags would try): the key derived from it is another. */
Test(snap_mac, swapped_salt_is_refused)
{
	struct snap_dir_info in;
	uint8_t other[SNAP_SALT_LEN];

	make_snapshot();
	memcpy(other, salt, sizeof(other));
	other[0] ^= 1;
	write_state(files, other);
	cr_assert_eq(snap_verify_dir(dir, &in, err, sizeof(err)), -EBADMSG);
	cr_assert(strstr(err, "keyed tag"), "%s", err);
}

/* Tagged under host key a, checked under host key b: refused. */
Test(snap_mac, tags_of_another_host_key_are_refused)
{
	struct snap_dir_info in;

	make_snapshot();
	key_file("b.key");
	cr_assert_eq(snap_verify_dir(dir, &in, err, sizeof(err)), -EBADMSG);
	cr_assert(strstr(err, "snapshot file memory") && strstr(err, "keyed tag"), "%s", err);
	key_file("a.key");
	cr_assert_eq(snap_verify_dir(dir, &in, err, sizeof(err)), 0, "%s", err);
}

/* Each file has its own nonce (its index): a layer's tag moved to another
 * file of the same contents does not verify there. */
Test(snap_mac, a_tag_moved_to_another_index_is_refused)
{
	struct snap_dir_info in;
	struct snap_file f[3];
	uint8_t k[SNAP_KEY_LEN];

	make_snapshot();
	put("layer-1.qcow2", "base layer", 10, 0, 1 << 20);	/* base.img's bytes */
	memcpy(f, files, sizeof(f));
	f[2] = files[1];
	strcpy(f[2].name, "layer-1.qcow2");
	strcpy(f[2].format, "qcow2");
	write_state(f, salt);
	cr_assert_eq(snap_verify_dir(dir, &in, err, sizeof(err)), -EBADMSG);
	cr_assert(strstr(err, "layer-1.qcow2") && strstr(err, "keyed tag"), "%s", err);
	/* Tagged as file 2, it verifies. */
	cr_assert_eq(snap_mac_key(salt, k, err, sizeof(err)), 0, "%s", err);
	tag_of("layer-1.qcow2", k, 2, &f[2]);
	write_state(f, salt);
	cr_assert_eq(snap_verify_dir(dir, &in, err, sizeof(err)), 0, "%s", err);
}

/* The key is the host key's, per salt: the CLI's derivation is the pure one. */
Test(snap_mac, key_is_derived_from_host_key_and_salt)
{
	uint8_t host[HOST_KEY_LEN], k1[SNAP_KEY_LEN], k2[SNAP_KEY_LEN], k3[SNAP_KEY_LEN];
	uint8_t s[SNAP_SALT_LEN] = { 1 };

	cr_assert_eq(host_key_get(host, NULL, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(snap_mac_key(s, k1, err, sizeof(err)), 0, "%s", err);
	snap_mac_key_with(host, s, k2);
	cr_assert_eq(memcmp(k1, k2, sizeof(k1)), 0);
	s[0] = 2;
	snap_mac_key_with(host, s, k3);
	cr_assert_neq(memcmp(k1, k3, sizeof(k1)), 0);
}

/* The VMM tags guest memory while it writes it (snap_mem_write, paused):
 * the same tag a reader computes from the file, pages skipped by the
 * present-page hint or all zero left out of both. */
Test(snap_mac, tag_taken_while_writing_is_the_readers)
{
	uint64_t size = 4ULL << 20, npages = size / MEM_PAGE, got;
	uint8_t *ram = aligned_alloc(MEM_PAGE, size), k[SNAP_KEY_LEN] = { 7 };
	uint64_t *present = calloc((npages + 63) / 64, sizeof(uint64_t));
	uint8_t t_write[SNAP_TAG_LEN], t_read[SNAP_TAG_LEN];
	struct snap_mac m;
	char path[128];
	int fd;

	cr_assert_not_null(ram);
	memset(ram, 0, size);
	for (uint64_t p = 0; p < npages; p += 3) {
		ram[p * MEM_PAGE + (p % 4096)] = (uint8_t)(p | 1);
		present[p / 64] |= 1ULL << (p % 64);
	}
	ram[5 * MEM_PAGE] = 9;	/* non-zero but not present: not written */
	snprintf(path, sizeof(path), "%s/memory", dir);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	cr_assert_geq(fd, 0);
	snap_mac_start(&m, k, 0, size);
	cr_assert_eq(snap_mem_write(fd, ram, size, present, &m), 0);
	snap_mac_end(&m, t_write);
	cr_assert_eq(snap_file_tag(fd, k, 0, &got, t_read), 0);
	cr_assert_eq(got, size);
	cr_assert_eq(memcmp(t_write, t_read, SNAP_TAG_LEN), 0);
	close(fd);
	free(present);
	free(ram);
}

/* The VMM takes a snapshot only with the key and salt the CLI derived for
 * it (it cannot derive them: it never holds the host key). Before the tags,
 * the request had neither and the VMM went on to write the snapshot. */
Test(snap_mac, snapshot_request_without_key_is_refused)
{
	static const char *const bad[] = {
		"{\"op\":\"snapshot\",\"dir\":\"/nonexistent\"}",
		"{\"op\":\"snapshot\",\"dir\":\"/nonexistent\",\"salt\":\"00112233445566778899aabbccddeeff\"}",
		"{\"op\":\"snapshot\",\"dir\":\"/nonexistent\",\"key\":\"00112233445566778899aabbccddeeff\","
		"\"salt\":\"00112233445566778899AABBCCDDEEFF\"}",
		"{\"op\":\"snapshot\",\"dir\":\"/nonexistent\",\"key\":\"0011\","
		"\"salt\":\"00112233445566778899aabbccddeeff\"}",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cJSON *req = cJSON_Parse(bad[i]);
		const char *e = NULL;

		cr_assert_not_null(req);
		cr_assert_null(snap_api_op(NULL, "sb", "snapshot", req, &e, err, sizeof(err)));
		cr_assert(e && strstr(e, "\"key\":HEX32"), "%s: %s", bad[i], e ? e : "(none)");
		cJSON_Delete(req);
	}
}
