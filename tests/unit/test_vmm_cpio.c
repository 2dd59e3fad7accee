/* The /mvm/ run-spec archive, read back with an independent newc reader. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vmm/cpio.h"
#include "vmm/initrd.h"

#define MAX_ENTRIES 16

struct entry {
	char name[256];
	uint32_t mode, nlink;
	const uint8_t *data;
	size_t size;
};

static uint32_t hex8(const uint8_t *p)
{
	char s[9];
	char *end;
	unsigned long v;

	memcpy(s, p, 8);
	s[8] = 0;
	for (int i = 0; i < 8; i++)
		cr_assert(strchr("0123456789abcdefABCDEF", s[i]) && s[i], "bad hex field '%s'", s);
	v = strtoul(s, &end, 16);
	cr_assert_eq(*end, 0);
	return (uint32_t)v;
}

static size_t align4(size_t n)
{
	return (n + 3) & ~(size_t)3;
}

/*
 * Parse a newc archive starting at @off (which must be 4-aligned, as the
 * kernel requires for each archive in a concatenated initramfs). Returns the
 * entry count, excluding the trailer; checks everything the kernel would.
 */
static int parse_newc(const uint8_t *b, size_t len, size_t off, struct entry *out)
{
	int n = 0;

	for (;;) {
		uint32_t f[13];
		size_t namesize, name_off, data_off;

		cr_assert_eq(off % 4, 0, "header at unaligned offset %zu", off);
		cr_assert(off + 110 <= len, "truncated header at %zu", off);
		cr_assert_eq(memcmp(b + off, "070701", 6), 0, "bad magic at %zu", off);
		for (int i = 0; i < 13; i++)
			f[i] = hex8(b + off + 6 + 8 * i);
		namesize = f[11];
		name_off = off + 110;
		cr_assert(namesize >= 2 && name_off + namesize <= len);
		cr_assert_eq(b[name_off + namesize - 1], 0, "name not NUL-terminated");
		cr_assert_eq(strlen((const char *)b + name_off), namesize - 1, "NUL inside name");
		data_off = align4(name_off + namesize);
		cr_assert(data_off + f[6] <= len, "data runs past the archive");
		if (!strcmp((const char *)b + name_off, "TRAILER!!!")) {
			cr_assert_eq(f[6], 0);
			/* Only padding may follow the trailer. */
			for (size_t i = data_off; i < len; i++)
				cr_assert_eq(b[i], 0, "junk after the trailer");
			cr_assert(len - data_off < 4);
			return n;
		}
		cr_assert(n < MAX_ENTRIES);
		cr_assert(namesize - 1 < sizeof(out[n].name));
		memcpy(out[n].name, b + name_off, namesize);
		out[n].mode = f[1];
		out[n].nlink = f[4];
		out[n].data = b + data_off;
		out[n].size = f[6];
		/* Padding between name and data, and after data, is zeros. */
		for (size_t i = name_off + namesize; i < data_off; i++)
			cr_assert_eq(b[i], 0);
		off = align4(data_off + f[6]);
		for (size_t i = data_off + f[6]; i < off && i < len; i++)
			cr_assert_eq(b[i], 0);
		n++;
	}
}

static const struct entry *find(const struct entry *e, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(e[i].name, name))
			return &e[i];
	return NULL;
}

/* Split a NUL-terminated list back into strings; returns the count. */
static int split(const struct entry *e, char **out, int max)
{
	int n = 0;
	size_t i = 0;

	if (e->size)
		cr_assert_eq(e->data[e->size - 1], 0, "list not NUL-terminated");
	while (i < e->size) {
		cr_assert(n < max);
		out[n++] = (char *)e->data + i;
		i += strlen((const char *)e->data + i) + 1;
	}
	return n;
}

Test(vmm_cpio, run_spec_round_trip)
{
	char *argv[] = { "sh", "-c", "echo 'a b' \"c\" $HOME\nsecond line", "", "tab\there",
			 "\xc3\xa9t\xc3\xa9", NULL };
	char *env[] = { "A=1", "B=with space", "C=", "MULTI=x\ny", NULL };
	struct run_spec rs = { .argv = argv, .env = env, .workdir = "/tmp/my dir" };
	struct buf b = { 0 };
	struct entry e[MAX_ENTRIES];
	char *got[16];
	int n;

	cr_assert_eq(initrd_run_spec(&b, &rs), 0);
	n = parse_newc(b.data, b.len, 0, e);
	cr_assert_eq(b.len % 4, 0);

	const struct entry *dir = find(e, n, "mvm");
	cr_assert_not_null(dir);
	cr_assert(S_ISDIR(dir->mode));
	cr_assert_eq(dir->size, 0);
	/* The directory comes before anything inside it. */
	cr_assert_eq(dir, &e[0]);

	const struct entry *a = find(e, n, "mvm/argv");
	cr_assert_not_null(a);
	cr_assert(S_ISREG(a->mode));
	cr_assert_eq(split(a, got, 16), 6);
	for (int i = 0; i < 6; i++)
		cr_assert_str_eq(got[i], argv[i], "argv[%d]", i);

	const struct entry *en = find(e, n, "mvm/env");
	cr_assert_not_null(en);
	cr_assert_eq(split(en, got, 16), 4);
	for (int i = 0; i < 4; i++)
		cr_assert_str_eq(got[i], env[i], "env[%d]", i);

	const struct entry *w = find(e, n, "mvm/workdir");
	cr_assert_not_null(w);
	cr_assert_eq(w->size, strlen("/tmp/my dir"));
	cr_assert_eq(memcmp(w->data, "/tmp/my dir", w->size), 0);

	cr_assert_null(find(e, n, "mvm/rootfs"), "rootfs marker without root_on_disk");
	buf_free(&b);
}

Test(vmm_cpio, minimal_spec_has_empty_env_and_rootfs_marker)
{
	char *argv[] = { "/bin/true", NULL };
	struct run_spec rs = { .argv = argv, .root_on_disk = true };
	struct buf b = { 0 };
	struct entry e[MAX_ENTRIES];
	int n;

	cr_assert_eq(initrd_run_spec(&b, &rs), 0);
	n = parse_newc(b.data, b.len, 0, e);
	const struct entry *en = find(e, n, "mvm/env");
	cr_assert_not_null(en);
	cr_assert_eq(en->size, 0);
	cr_assert_null(find(e, n, "mvm/workdir"));
	const struct entry *r = find(e, n, "mvm/rootfs");
	cr_assert_not_null(r);
	cr_assert_eq(r->size, strlen("/dev/vda"));
	cr_assert_eq(memcmp(r->data, "/dev/vda", r->size), 0);
	const struct entry *a = find(e, n, "mvm/argv");
	cr_assert_eq(a->size, sizeof("/bin/true"));
	buf_free(&b);
}

Test(vmm_cpio, names_and_sizes_of_every_alignment)
{
	/* Name and data lengths hitting each residue mod 4. */
	struct buf b = { 0 };
	struct entry e[MAX_ENTRIES];
	static const char *names[] = { "a", "ab", "abc", "abcd", "abcde" };
	static const char data[] = "0123456789";
	int n;

	for (int i = 0; i < 5; i++)
		cpio_add(&b, names[i], S_IFREG | 0644, data, (size_t)i + 1);
	cpio_finish(&b);
	cr_assert_eq(b.err, 0);
	n = parse_newc(b.data, b.len, 0, e);
	cr_assert_eq(n, 5);
	for (int i = 0; i < 5; i++) {
		cr_assert_str_eq(e[i].name, names[i]);
		cr_assert_eq(e[i].size, (size_t)i + 1);
		cr_assert_eq(memcmp(e[i].data, data, e[i].size), 0);
		cr_assert_eq(e[i].mode, S_IFREG | 0644);
		cr_assert(e[i].nlink >= 1);
	}
	buf_free(&b);
}

Test(vmm_cpio, empty_argv_rejected)
{
	char *none[] = { NULL };
	char *empty[] = { "", "x", NULL };
	struct run_spec rs = { 0 };
	struct buf b = { 0 };

	cr_assert_eq(initrd_run_spec(&b, &rs), -EINVAL);
	rs.argv = none;
	cr_assert_eq(initrd_run_spec(&b, &rs), -EINVAL);
	rs.argv = empty;
	cr_assert_eq(initrd_run_spec(&b, &rs), -EINVAL);
	buf_free(&b);
}

Test(vmm_cpio, argv_size_limit)
{
	char *big = malloc(INITRD_ARGV_MAX + 1);
	char *argv[] = { big, NULL };
	struct run_spec rs = { .argv = argv };
	struct buf b = { 0 };

	/* INITRD_ARGV_MAX bytes including the terminating NUL: fits exactly. */
	memset(big, 'x', INITRD_ARGV_MAX);
	big[INITRD_ARGV_MAX - 1] = 0;
	cr_assert_eq(initrd_run_spec(&b, &rs), 0);
	buf_free(&b);
	/* One byte more does not. */
	big[INITRD_ARGV_MAX - 1] = 'x';
	big[INITRD_ARGV_MAX] = 0;
	cr_assert_eq(initrd_run_spec(&b, &rs), -E2BIG);
	buf_free(&b);
	free(big);
}

Test(vmm_cpio, argv_and_env_share_the_limit)
{
	const size_t half = INITRD_ARGV_MAX / 2;
	char *a = malloc(half + 1), *v = malloc(half + 1);
	char *argv[] = { a, NULL }, *env[] = { v, NULL };
	struct run_spec rs = { .argv = argv, .env = env };
	struct buf b = { 0 };

	memset(a, 'a', half);
	a[half - 1] = 0;		/* half bytes with NUL */
	memset(v, 'v', half);
	v[half - 1] = 0;
	v[0] = 'K';
	v[1] = '=';
	cr_assert_eq(initrd_run_spec(&b, &rs), 0, "exactly INITRD_ARGV_MAX in total");
	buf_free(&b);
	v[half - 1] = 'v';
	v[half] = 0;
	cr_assert_eq(initrd_run_spec(&b, &rs), -E2BIG);
	buf_free(&b);
	free(a);
	free(v);
}

Test(vmm_cpio, initrd_build_appends_aligned_after_base)
{
	char path[] = "/tmp/mvm-test-initrd-XXXXXX";
	int fd = mkstemp(path);
	char *argv[] = { "ls", "-l", NULL };
	struct run_spec rs = { .argv = argv };
	struct buf b = { 0 };
	struct entry e[MAX_ENTRIES];

	cr_assert(fd >= 0);
	cr_assert_eq(write(fd, "BASE!", 5), 5);
	close(fd);
	cr_assert_eq(initrd_build(path, &rs, &b), 0);
	unlink(path);
	cr_assert_eq(memcmp(b.data, "BASE!", 5), 0);
	for (int i = 5; i < 8; i++)
		cr_assert_eq(b.data[i], 0, "padding between archives");
	int n = parse_newc(b.data, b.len, 8, e);
	cr_assert_not_null(find(e, n, "mvm/argv"));
	buf_free(&b);

	cr_assert_eq(initrd_build(NULL, &rs, &b), 0);
	cr_assert_eq(memcmp(b.data, "070701", 6), 0);
	buf_free(&b);

	cr_assert_eq(initrd_build("/nonexistent/mvm-initramfs", &rs, &b), -ENOENT);
	buf_free(&b);
}

Test(vmm_cpio, inode_numbers_are_distinct)
{
	/* Entries sharing an inode and nlink > 1 would be hard-linked by the kernel. */
	char *argv[] = { "x", NULL };
	struct run_spec rs = { .argv = argv, .workdir = "/", .root_on_disk = true };
	struct buf b = { 0 };
	uint32_t ino[MAX_ENTRIES];
	size_t off = 0;
	int n = 0;

	cr_assert_eq(initrd_run_spec(&b, &rs), 0);
	while (off < b.len && n < MAX_ENTRIES) {
		uint32_t namesize = hex8(b.data + off + 6 + 8 * 11), size = hex8(b.data + off + 6 + 8 * 6);

		ino[n] = hex8(b.data + off + 6);
		for (int j = 0; j < n; j++)
			cr_assert_neq(ino[j], ino[n]);
		n++;
		off = align4(align4(off + 110 + namesize) + size);
	}
	cr_assert_eq(n, 6, "mvm, argv, env, workdir, rootfs, trailer");
	buf_free(&b);
}

Test(vmm_cpio, oversized_name_is_an_error)
{
	struct buf b = { 0 };
	char *name = malloc(5000);

	memset(name, 'n', 4999);
	name[4999] = 0;
	cpio_add(&b, name, S_IFREG | 0644, "x", 1);
	cr_assert_eq(b.err, -E2BIG);
	free(name);
	buf_free(&b);
}
