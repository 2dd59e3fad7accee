/*
 * libFuzzer target: the input is a qcow2 image a guest wrote. Open it
 * read-only and read a few clusters, then writable and write, discard and
 * flush. Backing files may only resolve inside a private empty directory,
 * so the input itself is the only file a chain can name (loop detection).
 * The header parser also sees the input directly (backing name offset and
 * size, the extension walk bounded by it): the seed overlay.qcow2 in
 * tests/fuzz/corpus/qcow2_fuzz has a backing name.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "images/qcow2.h"
#include "images/qcow2_int.h"
#include "common/log.h"

/* tmpfs when available: fdatasync there is free, so the fuzzer stays fast. */
static char dir[] = "/dev/shm/mvm-qcow2-fuzz-XXXXXX";
static char path[64];

static void cleanup(void)
{
	unlink(path);
	rmdir(dir);
}

static void setup_once(void)
{
	static FILE *null;

	if (path[0])
		return;
	if (!mkdtemp(dir)) {
		memcpy(dir, "/tmp/mvm-qcow2-fuzz-XXXXXX", sizeof("/tmp/mvm-qcow2-fuzz-XXXXXX"));
		if (!mkdtemp(dir))
			abort();
	}
	snprintf(path, sizeof(path), "%s/img.qcow2", dir);
	atexit(cleanup);
	null = fopen("/dev/null", "w");
	log_set_sink(null);	/* refusals are expected: keep the fuzzer fast */
}

static void exercise(bool ro)
{
	static uint8_t buf[4096];
	struct blk_backend *b;
	uint64_t offs[4];

	if (blk_open_qcow2(path, ro, NULL, &b))
		return;
	/* Start, a cluster-straddling span, the middle, the end of the disk. */
	offs[0] = 0, offs[1] = 65536 - 512, offs[2] = b->size / 2, offs[3] = b->size - 512;

	for (size_t i = 0; i < sizeof(offs) / sizeof(offs[0]); i++) {
		size_t n = b->size - offs[i] < 4096 ? b->size - offs[i] : 4096;

		if (offs[i] >= b->size)
			continue;
		if (ro) {
			b->ops->read(b, buf, offs[i], n);
		} else {
			memset(buf, (int)i + 1, n);
			b->ops->write(b, buf, offs[i], n);
		}
	}
	if (!ro) {
		b->ops->discard(b, 0, b->size < (2 << 20) ? b->size : (2 << 20));
		b->ops->flush(b);
	}
	blk_close(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd;

	setup_once();
	{
		struct qcow2_hdr *h = malloc(sizeof(*h));

		if (h)
			qcow2_hdr_parse(data, size, size, "fuzz", h);
		free(h);
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	close(fd);
	exercise(true);
	exercise(false);
	return 0;
}
