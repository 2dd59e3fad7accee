/* After a rollback or restore: the guest's clock to the host's, fresh entropy. */
#ifndef MVM_AGENT_SYNC_H
#define MVM_AGENT_SYNC_H

#include <stddef.h>
#include <stdint.h>

/* SYNC to NAME's agent (docs/agent-protocol.md). 0 or -errno. */
int agent_sync(const char *name, int timeout_ms);
/* SYNC that also sets the guest's hostname to @hostname (NULL: left as is;
 * at most AP_SYNC_HOST_MAX bytes of [A-Za-z0-9.-]). 0 or -errno. */
int agent_sync_as(const char *name, const char *hostname, int timeout_ms);
/* MAC to NAME's agent: its NIC takes the 6-byte address @mac. 0 or -errno. */
int agent_set_mac(const char *name, const uint8_t *mac, int timeout_ms);
/*
 * A running guest that came from someone else's memory (a template, a
 * snapshot restored or forked under a new name) becomes NAME: SYNC with
 * the hostname NAME ('_' as '-') and, with a network device, the MAC that
 * NAME's config.json holds. 0, or -errno with @err saying which step failed.
 */
int agent_new_identity(const char *name, int timeout_ms, char *err, size_t errlen);

#endif
