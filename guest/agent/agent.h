/* mvm-agent internals: one process per connection, one operation per connection. */
#ifndef MVM_AGENT_H
#define MVM_AGENT_H

#include <stdbool.h>
#include <stdint.h>

#include "guest/agent/proto.h"

#define AGENT_PUT_MAX (64ull << 30)	/* bytes one `cp` into the guest may write */

struct agent_cfg {
	bool test_mode;		/* --unix: a host test; never reboot anything */
};

/* Serve the one operation a client opened @conn for; closes nothing. */
void agent_session(int conn, const struct agent_cfg *cfg);
/* SHUTDOWN (shutdown.c): sync, answer OK, wait (bounded) until the host
 * has closed its end, so the OK cannot be lost to the reset; then reset the
 * guest (in test mode: say so on stderr instead). */
void agent_stop_guest(int conn, const struct agent_cfg *cfg);
/* Run @e, stream its output on @conn, send its EXIT frame. 0 or -errno. */
int agent_exec(int conn, struct ap_exec *e);
/* In the forked child: wire stdio, drop to e->uid, chdir, exec. Never returns. */
void agent_exec_child(const struct ap_exec *e, int in, int out, int err, bool pty)
	__attribute__((noreturn));
/* SYNC (snap_sync.c): after a rollback or restore, step the clock to the
 * host's and mix the host's entropy into the kernel RNG; answers OK/ERROR. */
void agent_sync(int conn, const uint8_t *p, size_t len);
/* IDENTITY (snap_sync.c): a template's new sandbox becomes itself in one
 * round trip: SYNC's clock and entropy, then its hostname, then (unless the
 * 6 bytes are zero) its MAC; everything checked before anything is set. */
void agent_identity(int conn, const uint8_t *p, size_t len);
/* The NIC address @mac (6 bytes) on every Ethernet interface (net_mac.c):
 * how many took it, or -errno. */
int agent_mac_apply(const uint8_t *mac);
/* A unicast, non-zero address (what MAC and IDENTITY accept). */
bool agent_mac_ok(const uint8_t *mac);
/* TCP (tcp_pipe.c): connect to guest 127.0.0.1:PORT and, after OK, relay raw
 * bytes between @conn and that socket until both directions end. */
void agent_tcp(int conn, const uint8_t *p, size_t len);
/* MAC: give the Ethernet interfaces (one NIC per sandbox) the 6-byte unicast
 * address in @p, while they run; OK, or ERROR with why (net_mac.c). */
void agent_set_mac(int conn, const uint8_t *p, size_t len);
/* Send an ERROR frame with a printf-style message. */
void agent_error(int conn, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
