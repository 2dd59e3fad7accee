/* SHA-1 (FIPS 180-4), only for git's object ids in binary patches ("index A..B"). Pure. */
#ifndef MVM_SHA1_H
#define MVM_SHA1_H

#include <stddef.h>

/* git's blob id of @n bytes at @p: sha1("blob N\0" + bytes), 40 hex digits and a NUL. */
void git_blob_id(const void *p, size_t n, char hex[41]);

#endif
