/* Checkpoint calls to a sandbox's VMM (`mvm checkpoint`, `rollback`, `snapshot`...). */
#ifndef MVM_SNAP_CLIENT_H
#define MVM_SNAP_CLIENT_H

struct cJSON;

/* One control-API call to NAME's VMM (@req is consumed): the reply when it
 * says "ok", else NULL after printing the error under @verb. */
struct cJSON *sb_snap_call(const char *verb, const char *name, struct cJSON *req);

/* After a rollback or restore: the guest's clock to the host's and fresh
 * entropy into its RNG, before anything else runs there. 0 or -errno. */
int sb_snap_sync(const char *verb, const char *name);

#endif
