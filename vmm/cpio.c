/* cpio "newc" archives (Linux Documentation/driver-api/early-userspace/buffer-format.rst). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/cpio.h"

void buf_append(struct buf *b, const void *p, size_t n)
{
	if (b->err)
		return;
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		uint8_t *d;

		while (cap < b->len + n)
			cap *= 2;
		d = realloc(b->data, cap);
		if (!d) {
			b->err = -ENOMEM;
			return;
		}
		b->data = d;
		b->cap = cap;
	}
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

void buf_pad(struct buf *b, size_t align)
{
	static const uint8_t zeros[16];

	while (b->len % align && !b->err)
		buf_append(b, zeros, 1);
	(void)zeros;
}

void buf_free(struct buf *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}

void cpio_add(struct buf *b, const char *name, uint32_t mode, const void *data, size_t len)
{
	static unsigned ino = 0x4d564d00;	/* unique per archive is enough */
	char hdr[128];
	size_t namesize = strlen(name) + 1;

	/* newc sizes are 32-bit: an entry past 4 GiB cannot be expressed. */
	if (len > UINT32_MAX || namesize > 4096) {
		b->err = -E2BIG;
		return;
	}
	snprintf(hdr, sizeof(hdr),
		 "070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
		 ino++, mode, 0u, 0u, 1u, 0u, (unsigned)len, 0u, 0u, 0u, 0u,
		 (unsigned)namesize, 0u);
	buf_pad(b, 4);
	buf_append(b, hdr, 110);
	buf_append(b, name, namesize);
	buf_pad(b, 4);
	if (len)
		buf_append(b, data, len);
	buf_pad(b, 4);
}

void cpio_finish(struct buf *b)
{
	cpio_add(b, "TRAILER!!!", 0, NULL, 0);
}
