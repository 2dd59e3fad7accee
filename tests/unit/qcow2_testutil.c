/* Helpers shared by the qcow2 unit tests. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/unit/qcow2_testutil.h"
#include "common/log.h"

char *qt_mkdtemp(void)
{
	const char *t = getenv("TMPDIR");
	char *d = NULL;

	cr_assert(asprintf(&d, "%s/mvm-qcow2-XXXXXX", t ? t : "/tmp") > 0);
	cr_assert_not_null(mkdtemp(d));
	return d;
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	return remove(p);
}

void qt_rmtree(char *dir)
{
	if (dir)
		nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(dir);
}

char *qt_path(const char *dir, const char *name)
{
	char *p = NULL;

	cr_assert(asprintf(&p, "%s/%s", dir, name) > 0);
	return p;
}

int qt_run(char **out, const char *fmt, ...)
{
	char *cmd = NULL, *buf = NULL, *full = NULL;
	size_t len = 0;
	va_list ap;
	FILE *p, *m;
	int st, c;

	va_start(ap, fmt);
	cr_assert(vasprintf(&cmd, fmt, ap) > 0);
	va_end(ap);
	cr_assert(asprintf(&full, "%s 2>&1", cmd) > 0);
	p = popen(full, "r");
	cr_assert_not_null(p);
	m = open_memstream(&buf, &len);
	while ((c = fgetc(p)) != EOF)
		fputc(c, m);
	fclose(m);
	st = pclose(p);
	free(cmd);
	free(full);
	if (out)
		*out = buf;
	else
		free(buf);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

uint64_t qt_rand(uint64_t *s)
{
	/* splitmix64: good enough, and seeds of 0 work */
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

void qt_fill(void *buf, size_t n, uint64_t seed)
{
	uint8_t *p = buf;

	for (size_t i = 0; i < n; i += 8) {
		uint64_t v = qt_rand(&seed);

		memcpy(p + i, &v, n - i < 8 ? n - i : 8);
	}
}

void qt_random_file(const char *path, uint64_t size, uint64_t seed)
{
	size_t chunk = 1 << 20;
	uint8_t *buf = malloc(chunk);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	cr_assert(fd >= 0 && buf);
	for (uint64_t off = 0; off < size; off += chunk) {
		size_t n = size - off < chunk ? size - off : chunk;

		qt_fill(buf, n, seed + off);
		cr_assert_eq(pwrite(fd, buf, n, (off_t)off), (ssize_t)n);
	}
	close(fd);
	free(buf);
}

uint8_t *qt_slurp(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY);
	off_t sz;
	uint8_t *buf;

	cr_assert(fd >= 0, "open %s", path);
	sz = lseek(fd, 0, SEEK_END);
	buf = malloc((size_t)sz + 1);
	cr_assert_not_null(buf);
	cr_assert_eq(pread(fd, buf, (size_t)sz, 0), sz);
	close(fd);
	*len = (size_t)sz;
	return buf;
}

FILE *qt_log_start(void)
{
	FILE *f = tmpfile();

	cr_assert_not_null(f);
	log_set_sink(f);
	return f;
}

char *qt_log_take(FILE *f)
{
	long n;
	char *s;

	log_set_sink(NULL);
	fflush(f);
	n = ftell(f);
	s = calloc(1, (size_t)n + 1);
	rewind(f);
	cr_assert_eq(fread(s, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	return s;
}

/* Offsets: mostly random, some cluster-straddling, some far and sparse. */
static void pick_range(uint64_t *rs, uint64_t size, uint64_t cs,
		       uint64_t *off, size_t *len)
{
	uint64_t r = qt_rand(rs) % 8;

	*len = 1 + qt_rand(rs) % (r < 4 ? 4096 : r < 7 ? 3 * cs : 256 << 10);
	if (r == 1)	/* straddle a cluster boundary */
		*off = (qt_rand(rs) % (size / cs - 1) + 1) * cs - *len / 2;
	else
		*off = qt_rand(rs) % size;
	if (qt_rand(rs) % 2) {	/* most guest I/O is sector aligned */
		*off &= ~511ULL;
		*len = (*len + 511) & ~(size_t)511;
	}
	if (*len > size - *off)
		*len = size - *off;
	if (*len == 0)
		*off = 0, *len = 1;
}

static void read_back(struct blk_backend *b, int ref, uint64_t off, size_t len)
{
	uint8_t *x = malloc(len), *y = malloc(len);

	cr_assert_eq(b->ops->read(b, x, off, len), 0);
	cr_assert_eq(pread(ref, y, len, (off_t)off), (ssize_t)len);
	cr_assert(!memcmp(x, y, len), "read-back mismatch at %lu+%zu",
		  (unsigned long)off, len);
	free(x);
	free(y);
}

static void discard_both(struct blk_backend *b, int ref, uint64_t off, size_t len,
			 uint64_t cs)
{
	uint64_t s = (off + cs - 1) & ~(cs - 1), e = (off + len) & ~(cs - 1);
	uint8_t *z = calloc(1, cs);

	cr_assert_eq(b->ops->discard(b, off, len), 0);
	for (uint64_t c = s; c < e; c += cs)	/* v3 discard reads as zero */
		cr_assert_eq(pwrite(ref, z, cs, (off_t)c), (ssize_t)cs);
	free(z);
}

void qt_random_ops(struct blk_backend *b, int ref, uint64_t seed, int nops,
		   unsigned cluster_bits, int discard)
{
	uint64_t rs = seed, cs = 1ULL << cluster_bits, off;
	uint8_t *buf = malloc((256 << 10) + 3 * cs + 1024);
	size_t len;

	cr_assert_not_null(buf);
	for (int i = 0; i < nops; i++) {
		uint64_t what = qt_rand(&rs) % 20;

		pick_range(&rs, b->size, cs, &off, &len);
		if (what == 0)
			cr_assert_eq(b->ops->flush(b), 0);
		else if (what == 1)
			read_back(b, ref, off, len);
		else if (what == 2 && discard)
			discard_both(b, ref, off, len, cs);
		else {
			qt_fill(buf, len, qt_rand(&rs));
			if (what == 3)	/* all-zero writes take the zero-flag path */
				memset(buf, 0, len);
			cr_assert_eq(b->ops->write(b, buf, off, len), 0, "write %lu+%zu",
				     (unsigned long)off, len);
			cr_assert_eq(pwrite(ref, buf, len, (off_t)off), (ssize_t)len);
		}
	}
	free(buf);
}
