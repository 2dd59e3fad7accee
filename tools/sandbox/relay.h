/*
 * The host end of `mvm browser`: a small per-sandbox process that listens on
 * host 127.0.0.1 (ephemeral ports) and carries each accepted connection over
 * its own vsock stream to a port on the guest's loopback (agent TCP
 * request, docs/agent-protocol.md). It runs beside the VMM, not inside it,
 * confined (hygiene, a seccomp table of its own, Landlock), and exits when
 * the VMM does. State: relay.json in the sandbox's directory.
 */
#ifndef MVM_RELAY_H
#define MVM_RELAY_H

#include <stdint.h>
#include <sys/types.h>

#define RELAY_MAX_FWD   4
#define RELAY_MAX_CONNS 32		/* open connections at once; more are closed at accept
					 * (the VMM has 48 vsock connections in all: exec and cp keep 16) */
#define RELAY_BUF       (64u << 10)	/* bytes held per direction per connection */
#define RELAY_SETUP_MS  15000		/* vsock handshake + agent answer, per connection */

struct relay_fwd {
	uint16_t guest;			/* port on the guest's 127.0.0.1 */
	uint16_t host;			/* port on the host's 127.0.0.1 */
};

struct relay_info {
	pid_t pid;
	int nfwd;
	struct relay_fwd fwd[RELAY_MAX_FWD];
};

/*
 * The relay process itself (`mvm relay NAME GPORT...`, started by
 * relay_ensure): descriptors 3, 4, ... are the listening sockets for the
 * guest ports in @gports, in order. Serves until the VMM of NAME exits.
 * Returns an exit status.
 */
int relay_main(const char *name, const uint16_t *gports, int n);

/*
 * A relay for NAME that forwards every guest port in @gports: the running
 * one if it does (relay.json), else a new one (a stale one is stopped).
 * Fills @out with its host ports. 0, or -errno with @err set.
 */
int relay_ensure(const char *name, const char *self_exe, const uint16_t *gports, int n,
		 struct relay_info *out, char *err, size_t errlen);

/* The host port that forwards to @guest in @ri, or 0. */
uint16_t relay_host_port(const struct relay_info *ri, uint16_t guest);

/* Stop NAME's relay if one runs and forget it. Best effort; 0 or -errno. */
int relay_stop(const char *name);

/* Confine the calling relay process: keep only @keep (hygiene), Landlock
 * to read @dir only, then the relay's own seccomp table. 0 or -errno. */
int relay_confine(const int *keep, int nkeep, const char *dir);

#endif
