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

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define RELAY_MAX_FWD   4
#define RELAY_MAX_CONNS 32		/* open connections at once; more are closed at accept
					 * (the VMM has 48 vsock connections in all: exec and cp keep 16) */
#define RELAY_FWD_RESERVE 8		/* slots each forward keeps that the others' clients
					 * cannot take (noVNC's page cannot starve CDP) */
#define RELAY_BUF       (64u << 10)	/* bytes held per direction per connection */
#define RELAY_SETUP_MS  15000		/* vsock handshake + agent answer, per connection */
#define RELAY_HEAD_MAX  8192		/* bytes of a checked forward's first request head */
#define RELAY_IDLE_S    600		/* a piped connection with no event this long is closed
					 * (MVM_RELAY_IDLE: seconds, 1..86400) */

struct relay_fwd {
	uint16_t guest;			/* port on the guest's 127.0.0.1 */
	uint16_t host;			/* port on the host's 127.0.0.1 */
	bool local_web;			/* only requests relay_http_check passes (else 403) */
};

struct relay_info {
	pid_t pid;
	int nfwd;
	struct relay_fwd fwd[RELAY_MAX_FWD];
};

/*
 * The relay process itself (`mvm relay NAME GPORT[/web]...`, started by
 * relay_ensure): descriptors 3, 4, ... are the listening sockets for the
 * forwards in @fwd (guest and local_web used), in order. Serves until the
 * VMM of NAME exits. Returns an exit status.
 */
int relay_main(const char *name, const struct relay_fwd *fwd, int n);

/*
 * A relay for NAME with every forward in @want (guest port and local_web;
 * host is ignored): the running one if it has them (relay.json), else a new
 * one (a stale one is stopped). Fills @out with its host ports. 0, or
 * -errno with @err set.
 */
int relay_ensure(const char *name, const char *self_exe, const struct relay_fwd *want, int n,
		 struct relay_info *out, char *err, size_t errlen);

/*
 * The check of a local_web forward, on the first request head a client
 * sent to host port @port (@b, @n bytes so far). A connection carries no
 * second request: after a head that is no WebSocket handshake
 * (relay_http_upgrade) the relay passes that head alone and ends the
 * stream to the guest; after a handshake only WebSocket frames follow.
 * 1: no end of head yet, read more. 0: passes, with *head_len its length:
 * exactly one Host, 127.0.0.1:PORT or localhost:PORT, and at most one
 * Origin, http://127.0.0.1:PORT or http://localhost:PORT. -EACCES: refused
 * (also a head longer than RELAY_HEAD_MAX, a NUL, a bare LF, a folded or
 * malformed header line), *why saying why. Pure.
 */
int relay_http_check(const char *b, size_t n, uint16_t port, size_t *head_len, const char **why);

/* Whether the passed head @b (@n bytes, relay_http_check said 0) asks for
 * a WebSocket: an Upgrade header naming websocket. Pure. */
bool relay_http_upgrade(const char *b, size_t n);

/*
 * Who may use the relay: the uid that owns the client's end of an accepted
 * loopback connection (relay_peer.c, NETLINK_SOCK_DIAG). relay_peer_open:
 * the netlink socket (open it before confinement), fd or -errno.
 * relay_peer_req: the exact-lookup request for the client socket @peer
 * connected to @local (as accept and the listener name them) into @buf,
 * its length (0: @cap too small). relay_peer_parse: the kernel's answer
 * (@n bytes) to request @seq: 0 with *uid, -ENOENT (no such socket),
 * -ESRCH (a socket that is not that connection's live client end: other
 * addresses, TIME_WAIT, a listener), or the kernel's -errno. Both pure.
 * relay_peer_uid: ask and parse. 0 or -errno.
 */
struct sockaddr_in;
int relay_peer_open(void);
size_t relay_peer_req(void *buf, size_t cap, const struct sockaddr_in *peer,
		      const struct sockaddr_in *local, uint32_t seq);
int relay_peer_parse(const void *buf, size_t n, uint32_t seq, const struct sockaddr_in *peer,
		     const struct sockaddr_in *local, uint32_t *uid);
int relay_peer_uid(int nl, const struct sockaddr_in *peer, const struct sockaddr_in *local,
		   uint32_t *uid);

/* The host port that forwards to @guest in @ri, or 0. */
uint16_t relay_host_port(const struct relay_info *ri, uint16_t guest);

/* Stop NAME's relay if one runs and forget it. Best effort; 0 or -errno. */
int relay_stop(const char *name);

/*
 * Confine the calling relay process, whose current directory is its
 * sandbox's state directory @dir: keep only @keep (hygiene); new user, mount,
 * IPC and network namespaces in which that directory, read-only, is the
 * whole file system (so no other Unix socket, by path or abstract, can be
 * reached; the sockets it already holds stay in the host's network);
 * Landlock to read it only; no capability left; then the relay's own
 * seccomp table. Where user namespaces are refused, the rest still
 * applies and *@ns is false. 0 or -errno; a message in @err.
 */
int relay_confine(const int *keep, int nkeep, const char *dir, bool *ns, char *err,
		  size_t errlen);

#endif
