/* After a rollback or restore: the guest's clock to the host's, fresh entropy. */
#ifndef MVM_AGENT_SYNC_H
#define MVM_AGENT_SYNC_H

/* SYNC to NAME's agent (docs/agent-protocol.md). 0 or -errno. */
int agent_sync(const char *name, int timeout_ms);
/* SYNC that also sets the guest's hostname to @hostname (NULL: left as is;
 * at most AP_SYNC_HOST_MAX bytes of [A-Za-z0-9.-]). 0 or -errno. */
int agent_sync_as(const char *name, const char *hostname, int timeout_ms);

#endif
