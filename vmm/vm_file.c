/* A kernel file mapped read-only, for either architecture's parser. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vmm/vm_internal.h"

#define KERNEL_MAX_SIZE (512ULL << 20)

int vm_map_file(const char *path, const uint8_t **data, size_t *len, int *fdp,
		char *err, size_t errlen)
{
	struct stat st;
	void *p;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -errno;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
	    (uint64_t)st.st_size > KERNEL_MAX_SIZE) {
		snprintf(err, errlen, "%s: not a regular, non-empty file under 512 MiB", path);
		close(fd);
		return -EINVAL;
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED) {
		snprintf(err, errlen, "%s: mmap: %s", path, strerror(errno));
		close(fd);
		return -errno;
	}
	*data = p;
	*len = (size_t)st.st_size;
	*fdp = fd;
	return 0;
}
