/* After a rollback or restore: the guest's clock to the host's, fresh entropy. */
#ifndef MVM_AGENT_SYNC_H
#define MVM_AGENT_SYNC_H

/* SYNC to NAME's agent (docs/agent-protocol.md). 0 or -errno. */
int agent_sync(const char *name, int timeout_ms);

#endif
