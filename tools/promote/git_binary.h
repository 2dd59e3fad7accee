/*
 * git's "GIT binary patch" body: the new content then the old as "literal"
 * blocks, each zlib data (stored blocks: no compressor needed) in git's
 * base85 lines. With the full "index A..B" line git apply needs, a binary
 * change applies and is checked against the pre-image's hash. Pure.
 */
#ifndef MVM_GIT_BINARY_H
#define MVM_GIT_BINARY_H

#include <stddef.h>

#include "tools/promote/outbuf.h"

#define GB_MAX (8u << 20)	/* larger binaries stay a "Binary files differ" marker */

/* "GIT binary patch\nliteral N\n...\n\nliteral M\n...\n\n". */
void gb_write(struct outbuf *o, const char *new, size_t new_len, const char *old, size_t old_len);

#endif
