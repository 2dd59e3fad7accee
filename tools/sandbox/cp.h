/* `mvm cp` transfers, shared with `mvm create --copy`. */
#ifndef MVM_CP_H
#define MVM_CP_H

#include <stddef.h>
#include <stdint.h>

#define CP_DEFAULT_MAX (16ull << 30)
#define CP_MAX_ENTRIES 1000000		/* files, directories, links per copy out */

/* Host file or tree @src to @dst inside sandbox @name. 0 or -errno (message printed). */
int cp_put(const char *name, const char *src, const char *dst);
/* cp_put, and where the copy landed in the guest (absolute; "" if the agent did not say). */
int cp_put_at(const char *name, const char *src, const char *dst, char *where, size_t cap);
/* @src inside sandbox @name to host @dst, at most @max bytes. 0 or -errno (message printed). */
int cp_get(const char *name, const char *src, const char *dst, uint64_t max);

#endif
