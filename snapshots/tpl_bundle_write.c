/* The template bundle's entry writer (snapshots/tpl_bundle.h): extents of non-zero blocks. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/le_bytes.h"
#include "common/file_io.h"
#include "snapshots/mem_delta.h"
#include "snapshots/tpl_bundle.h"

#define CHUNK (1u << 20)

void tb_enc_begin(struct tb_enc *e, int out, uint64_t pos, uint64_t size)
{
	memset(e, 0, sizeof(*e));
	e->out = out;
	e->pos = e->start = pos;
	e->size = size;
	tb_stream_start(&e->sha, &e->crc, size);
}

/* The extent being written ends: its header, written as a placeholder, now
 * gets its length. */
static int close_run(struct tb_enc *e)
{
	uint8_t h[16];

	if (!e->in_run)
		return 0;
	e->in_run = false;
	le_put64(h, e->run_off);
	le_put64(h + 8, e->run_len);
	return file_pwrite(e->out, h, sizeof(h), e->run_hdr);
}

static int block(struct tb_enc *e, const uint8_t *p, size_t n, uint64_t off)
{
	bool zero = n == TB_BLOCK ? !mem_page_nonzero(p) : true;
	int ret;

	for (size_t i = 0; zero && n != TB_BLOCK && i < n; i++)
		zero = !p[i];
	if (zero)
		return close_run(e);
	tb_stream_block(&e->sha, &e->crc, off, p, n);
	if (e->mac)
		snap_mac_block(e->mac, off, p, n);
	if (e->in_run && e->run_off + e->run_len != off && (ret = close_run(e)))
		return ret;
	if (!e->in_run) {
		static const uint8_t hole[16];

		e->in_run = true;
		e->run_off = off;
		e->run_len = 0;
		e->run_hdr = e->pos;
		if ((ret = file_pwrite(e->out, hole, sizeof(hole), e->pos)))
			return ret;
		e->pos += 16;
	}
	ret = file_pwrite(e->out, p, n, e->pos);
	e->pos += n;
	e->run_len += n;
	return ret;
}

int tb_enc_data(struct tb_enc *e, const uint8_t *p, size_t n, uint64_t off)
{
	int ret = 0;

	if (off % TB_BLOCK || off > e->size || n > e->size - off)
		return -EINVAL;
	for (size_t o = 0; !ret && o < n; o += TB_BLOCK)
		ret = block(e, p + o, n - o < TB_BLOCK ? n - o : TB_BLOCK, off + o);
	return ret;
}

int tb_enc_fd(struct tb_enc *e, int fd)
{
	uint8_t *buf = aligned_alloc(TB_BLOCK, CHUNK);
	off_t data = 0, hole, end = (off_t)e->size, done = 0;
	struct stat st;
	int ret = buf ? 0 : -ENOMEM;

	if (!ret && (fstat(fd, &st) || st.st_size != end))
		ret = -EBADMSG;
	while (!ret && (data = lseek(fd, data, SEEK_DATA)) >= 0 && data < end) {
		data &= ~(off_t)(TB_BLOCK - 1);
		if (data < done)
			data = done;	/* a region that began inside a block already read */
		hole = lseek(fd, data, SEEK_HOLE);
		if (hole < 0 || hole > end)
			hole = end;
		while (!ret && data < hole) {
			size_t n = (size_t)(hole - data < CHUNK ? hole - data : CHUNK);
			ssize_t r = pread(fd, buf, n, data);

			if (r != (ssize_t)n) {
				ret = r < 0 ? -errno : -EBADMSG;	/* shrank meanwhile */
				break;
			}
			ret = tb_enc_data(e, buf, n, (uint64_t)data);
			data += r;
		}
		done = data;
	}
	if (!ret && data < 0 && errno != ENXIO)
		ret = -errno;
	free(buf);
	return ret;
}

int tb_enc_end(struct tb_enc *e, uint64_t *stored, uint8_t sha256[32], uint32_t *crc)
{
	int ret = close_run(e);

	*stored = e->pos - e->start;
	sha256_digest(&e->sha, 32, sha256);
	*crc = e->crc;
	return ret;
}
