/* The CLI side of the guest agent: connect through the hybrid vsock socket, run operations. */
#ifndef MVM_AGENT_CLIENT_H
#define MVM_AGENT_CLIENT_H

#include <stdbool.h>
#include <stdint.h>

#include "guest/agent/proto.h"

/* How long a verb waits for the agent's stream to open: 10 s, or
 * MVM_AGENT_TIMEOUT seconds (a host far slower than hardware KVM, such as
 * an emulated CPU, needs longer). */
int agent_wait_ms(void);
/* A stream to the agent of sandbox NAME ("CONNECT 1024" on vsock.sock). fd or -errno. */
int agent_connect(const char *name, int timeout_ms);
/* Send one frame on @fd (from agent_connect), wait up to @timeout_ms for
 * the OK (or ERROR) frame back, close @fd. 0 or -errno. */
int agent_request(int fd, uint16_t type, const void *payload, uint32_t len, int timeout_ms);
/* The agent answers a PING within @timeout_ms. 0 or -errno. */
int agent_ping(const char *name, int timeout_ms);
/* Ask the guest to sync its disks and power off. 0 or -errno. */
int agent_shutdown(const char *name, int timeout_ms);

struct exec_io {
	int in_fd;		/* -1: no stdin */
	int out_fd, err_fd;
	bool tty;		/* local terminal in raw mode, window size forwarded */
	uint64_t out_max;	/* 0: unbounded; else stdout and stderr each at most this
				 * many bytes, more ends the exec with -EFBIG */
};

/*
 * Run @e on @conn: stream stdin/stdout/stderr, forward SIGINT/SIGTERM/SIGHUP
 * as KILL and SIGWINCH as RESIZE. 0 with @x filled, or -errno with @err set.
 */
int agent_exec_run(int conn, const struct ap_exec *e, const struct exec_io *io,
		   struct ap_exit *x, char *err, size_t errlen);
/*
 * `mvm exec`: connect to NAME's agent and agent_exec_run(); with io->tty,
 * @e starts with the terminal's window size (stdin's). 0 with @x filled,
 * or -errno with @err set ("cannot reach the agent of NAME: ..." if the
 * connection failed).
 */
int agent_exec_named(const char *name, struct ap_exec *e, const struct exec_io *io,
		     struct ap_exit *x, char *err, size_t errlen);

#endif
