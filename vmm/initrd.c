/* Assemble the guest initrd: base initramfs + the run spec under /mvm/. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vmm/initrd.h"

/* NUL-separated list: argv and env keep any byte but NUL, no quoting needed. */
static int add_list(struct buf *b, const char *name, char *const *list, size_t *total)
{
	struct buf l = { 0 };
	int err;

	for (; list && *list; list++)
		buf_append(&l, *list, strlen(*list) + 1);
	*total += l.len;
	if (l.err || *total > INITRD_ARGV_MAX) {
		/* buf_free() zeroes l: take the error first (ENOMEM is not E2BIG). */
		err = l.err ? l.err : -E2BIG;
		buf_free(&l);
		return err;
	}
	cpio_add(b, name, S_IFREG | 0444, l.data, l.len);
	buf_free(&l);
	return 0;
}

int initrd_run_spec(struct buf *b, const struct run_spec *rs)
{
	size_t total = 0;
	int ret;

	if (!rs->argv || !rs->argv[0] || !rs->argv[0][0])
		return -EINVAL;
	cpio_add(b, "mvm", S_IFDIR | 0755, NULL, 0);
	ret = add_list(b, "mvm/argv", rs->argv, &total);
	if (!ret)
		ret = add_list(b, "mvm/env", rs->env, &total);
	if (ret)
		return ret;
	if (rs->workdir)
		cpio_add(b, "mvm/workdir", S_IFREG | 0444, rs->workdir, strlen(rs->workdir));
	if (rs->root_on_disk)
		cpio_add(b, "mvm/rootfs", S_IFREG | 0444, "/dev/vda", 8);
	cpio_finish(b);
	return b->err;
}

/* The same bytes load_initrd() puts in guest RAM, in a buffer (--save-initrd, tests). */
int initrd_build(const char *base_path, const struct run_spec *rs, struct buf *out)
{
	uint64_t size;
	uint8_t *base;
	int ret = initrd_base_size(base_path, &size);

	if (ret || !size)
		return ret ? ret : initrd_run_spec(out, rs);
	base = malloc(size);
	if (!base)
		return -ENOMEM;
	ret = initrd_read_base(base_path, base, size);
	if (!ret)
		buf_append(out, base, size);
	free(base);
	return ret ? ret : initrd_run_spec(out, rs);
}

int initrd_base_size(const char *base_path, uint64_t *size)
{
	struct stat st;

	*size = 0;
	if (!base_path)
		return 0;
	if (stat(base_path, &st))
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	*size = ((uint64_t)st.st_size + 3) & ~3ULL;
	return 0;
}

int initrd_read_base(const char *base_path, uint8_t *dst, uint64_t size)
{
	uint64_t done = 0;
	int fd;

	if (!base_path)
		return 0;
	fd = open(base_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (done < size) {
		ssize_t n = read(fd, dst + done, size - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		done += (uint64_t)n;
	}
	close(fd);
	/* The file may have shrunk since stat: never leave stale bytes. */
	memset(dst + done, 0, size - done);
	return 0;
}
