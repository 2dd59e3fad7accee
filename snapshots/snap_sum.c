/* One pass over a snapshot file's contents (snapshots/snap_sum.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/crc32c.h"
#include "snapshots/mem_delta.h"
#include "snapshots/snap_sum.h"

#define CHUNK (1u << 20)

static bool all_zero(const uint8_t *p, size_t n)
{
	if (n == MEM_PAGE)
		return !mem_page_nonzero(p);
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* The stream's blocks carry their offset as the host's off_t bytes (v1 and
 * v2 were written so; both hosts mvm runs on are little-endian), the tag's
 * as little-endian (snap_mac.c). */
static void feed(struct snap_sum *s, uint64_t off, const uint8_t *p, size_t n)
{
	off_t pos = (off_t)off;

	if (s->want_crc)
		s->crc = crc32c(crc32c(s->crc, &pos, sizeof(pos)), p, n);
	if (s->sha) {
		sha256_update(s->sha, sizeof(pos), (const uint8_t *)&pos);
		sha256_update(s->sha, n, p);
	}
	if (s->mac)
		snap_mac_block(s->mac, off, p, n);
}

void snap_sum_block(struct snap_sum *s, uint64_t off, const uint8_t *p, size_t n)
{
	if (!all_zero(p, n))
		feed(s, off, p, n);
}

static void start(struct snap_sum *s, uint64_t size)
{
	off_t end = (off_t)size;

	if (s->want_crc)
		s->crc = crc32c(0, &end, sizeof(end));
	if (s->sha) {
		sha256_init(s->sha);
		sha256_update(s->sha, sizeof(end), (const uint8_t *)&end);
	}
}

static int blocks(struct snap_sum *s, const uint8_t *buf, size_t n, off_t at, int out)
{
	int ret = 0;

	for (size_t o = 0; o < n; o += MEM_PAGE) {
		size_t k = n - o < MEM_PAGE ? n - o : MEM_PAGE;
		off_t pos = at + (off_t)o;

		if (all_zero(buf + o, k))
			continue;
		feed(s, (uint64_t)pos, buf + o, k);
		if (out >= 0 && pwrite(out, buf + o, k, pos) != (ssize_t)k)
			ret = -EIO;
	}
	return ret;
}

int snap_sum_size(int fd, uint64_t *size)
{
	struct stat st;

	if (fstat(fd, &st))
		return -errno;
	*size = (uint64_t)st.st_size;
	return 0;
}

int snap_sum_fd(int fd, int out, struct snap_sum *s, uint64_t *size)
{
	uint8_t *buf = aligned_alloc(MEM_PAGE, CHUNK);
	struct stat st;
	off_t data = 0, hole, end;
	int ret = 0;

	if (!buf || fstat(fd, &st)) {
		free(buf);
		return buf ? -errno : -ENOMEM;
	}
	end = st.st_size;
	start(s, (uint64_t)end);
	/* Holes cost nothing to skip. */
	while (!ret && (data = lseek(fd, data, SEEK_DATA)) >= 0 && data < end) {
		data &= ~(off_t)(MEM_PAGE - 1);		/* block-aligned, as the zero test */
		hole = lseek(fd, data, SEEK_HOLE);
		if (hole < 0 || hole > end)
			hole = end;
		while (!ret && data < hole) {
			size_t n = (size_t)(hole - data < CHUNK ? hole - data : CHUNK);
			ssize_t r = pread(fd, buf, n, data);

			if (r <= 0) {
				ret = r ? -errno : -EIO;
				break;
			}
			ret = blocks(s, buf, (size_t)r, data, out);
			data += r;
		}
	}
	if (!ret && out >= 0 && ftruncate(out, end))
		ret = -errno;
	free(buf);
	*size = (uint64_t)end;
	return ret;
}

int snap_file_crc(int fd, uint64_t *size, uint32_t *crc)
{
	struct snap_sum s = { .want_crc = true };
	int ret = snap_sum_fd(fd, -1, &s, size);

	*crc = s.crc;
	return ret;
}

int snap_file_digest(int fd, uint64_t *size, uint32_t *crc, uint8_t sha256[32])
{
	struct sha256_ctx sha;
	struct snap_sum s = { .want_crc = true, .sha = &sha };
	int ret;

	sha256_init(&sha);	/* finished below even when the file was never read */
	ret = snap_sum_fd(fd, -1, &s, size);

	*crc = s.crc;
	sha256_digest(&sha, SHA256_DIGEST_SIZE, sha256);
	return ret;
}

int snap_file_tag(int fd, const uint8_t k[SNAP_KEY_LEN], uint32_t index, uint64_t *size,
		  uint8_t tag[SNAP_TAG_LEN])
{
	struct snap_mac *m = malloc(sizeof(*m));
	struct snap_sum s = { .mac = m };
	int ret = m ? snap_sum_size(fd, size) : -ENOMEM;

	if (!ret) {
		snap_mac_start(m, k, index, *size);
		ret = snap_sum_fd(fd, -1, &s, size);
		snap_mac_end(m, tag);
	}
	free(m);
	return ret;
}

int snap_mem_write(int fd, const uint8_t *ram, uint64_t size, const uint64_t *present,
		   struct snap_mac *mac)
{
	uint64_t npages = size / MEM_PAGE;
	int ret = ftruncate(fd, (off_t)size) ? -errno : 0;

	for (uint64_t p = 0; !ret && p < npages;) {
		uint64_t run = 0;

		while (p + run < npages && run < 256 && (!present || mem_bit(present, p + run)) &&
		       mem_page_nonzero(ram + (p + run) * MEM_PAGE))
			run++;
		if (!run) {
			p++;
			continue;
		}
		if (pwrite(fd, ram + p * MEM_PAGE, run * MEM_PAGE, (off_t)(p * MEM_PAGE)) !=
		    (ssize_t)(run * MEM_PAGE))
			ret = -EIO;
		/* The pages just written, still in the cache: no second read of
		 * the file after the vCPUs resume. */
		for (uint64_t i = 0; mac && i < run; i++)
			snap_mac_block(mac, (p + i) * MEM_PAGE, ram + (p + i) * MEM_PAGE, MEM_PAGE);
		p += run;
	}
	return ret;
}
