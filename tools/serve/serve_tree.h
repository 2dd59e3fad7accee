/*
 * What PUT tree and PUT workspace share (tools/serve/serve_tree.c): a
 * client's archive planned, the guest asked about P, the plan sent as the
 * agent's tree stream.
 */
#ifndef MVM_SERVE_TREE_H
#define MVM_SERVE_TREE_H

#include <stdbool.h>
#include <stdint.h>

#include "tools/serve/serve.h"
#include "tools/serve/serve_tar.h"

/* @c's body checked into @t (serve_tar.h), within --max-file. 0, or -1 with @o set (400, 413). */
int sv_tree_plan(struct sv_call *c, struct sv_out *o, struct sv_tar *t);

/*
 * Is ?path= a directory in the guest already (*@exists), and the mode the
 * tree's root must carry: P's own if so, else the archive's "." or 0755.
 * 0, or -1 with @o set.
 */
int sv_tree_root_mode(struct sv_call *c, struct sv_out *o, const struct sv_tar *t, uint32_t *mode, bool *exists);

/* @t as a tree stream on @fd: a root directory of @mode, every entry, END. @buf: AP_MAX_PAYLOAD bytes. 0 or -errno. */
int sv_tree_send(int fd, const struct sv_tar *t, uint32_t mode, uint8_t *buf);

#endif
