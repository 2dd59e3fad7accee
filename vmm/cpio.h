/* A growable buffer and the cpio "newc" writer the guest's initramfs uses. */
#ifndef MVM_CPIO_H
#define MVM_CPIO_H

#include <stddef.h>
#include <stdint.h>

struct buf {
	uint8_t *data;
	size_t len, cap;
	int err;		/* sticky -ENOMEM */
};

void buf_append(struct buf *b, const void *p, size_t n);
void buf_pad(struct buf *b, size_t align);
void buf_free(struct buf *b);

/* Append one entry (a file or, with @mode S_IFDIR, a directory). */
void cpio_add(struct buf *b, const char *name, uint32_t mode, const void *data, size_t len);
/* Append the trailer; the archive may follow another one (initrds concatenate). */
void cpio_finish(struct buf *b);

#endif
