/* Control-API calls for checkpoints (docs/api.md): checkpoint, checkpoints,
 * rollback. Run on the VMM's event loop by tools/sandbox/sandbox_api.c. */
#ifndef MVM_SNAP_API_H
#define MVM_SNAP_API_H

#include <stdbool.h>
#include <stddef.h>

struct vm;
struct cJSON;

bool snap_api_handles(const char *op);
/* The reply object, or NULL with *err set (@ebuf holds the message). */
struct cJSON *snap_api_op(struct vm *vm, const char *name, const char *op, const struct cJSON *req,
			  const char **err, char *ebuf, size_t elen);

/* The "checkpoint" or "rollback" event (@type) of @tag, or NULL. */
struct cJSON *snap_api_event(const char *type, const char *tag);

#endif
