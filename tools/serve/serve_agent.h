/*
 * `mvm serve`'s short conversations with a guest agent (docs/agent-protocol.md)
 * for files and trees: frames read against a deadline, a running sandbox
 * reached, and one small command's output. The guest is hostile: every
 * wait has a deadline and every byte a cap.
 */
#ifndef MVM_SERVE_AGENT_H
#define MVM_SERVE_AGENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "guest/agent/proto.h"

struct sv_call;
struct sv_out;

#define SV_AGENT_OP_MS 120000	/* a silent agent fails a file or tree operation after this */

/*
 * The next frame from @fd before @deadline (mono_now_ms) that is not a
 * WARN (@warns counts them when not NULL). 1, or 0 with @err set (an
 * ERROR frame's text, a timeout, a lost connection).
 */
int sv_agent_frame(int fd, uint64_t deadline, struct ap_hdr *h, uint8_t *buf, unsigned *warns, char *err,
		   size_t cap);

/*
 * ?path= of @c is an absolute guest path (@put: not "/" nor ending in
 * '/' either) and the sandbox runs; then its agent's stream. fd, or -1
 * with @o set (400, 409, 503).
 */
int sv_agent_open(struct sv_call *c, struct sv_out *o, bool put);

/*
 * The agent's OK to what was sent, before @deadline: 0, or -1 with @o set
 * (404 when it says the path is missing, @status for another refusal, 502
 * for any other frame). @buf: AP_MAX_PAYLOAD + 1 bytes.
 */
int sv_agent_ok(struct sv_call *c, struct sv_out *o, int fd, uint64_t deadline, uint8_t *buf, int status);

/*
 * The PUT for ?path=DIR/NAME (sv_agent_open checked it): sent as DIR/ and
 * NAME, so it lands at the path and fails when DIR is not a directory
 * (without the trailing '/' the agent would write at DIR). 0 or -errno.
 */
int sv_agent_put(struct sv_call *c, int fd);

/*
 * The end of a write to ?path=: worked (@o unset): @status with
 * {"path", "entries" (when @entries >= 0), "bytes"}; else @o as set, or
 * 503 when the exchange failed with nothing said (the agent went away).
 */
void sv_agent_written(struct sv_call *c, struct sv_out *o, bool ok, int status, long entries, uint64_t bytes);

/*
 * Run argv[] (no shell unless argv says so) in @c's guest, stdin empty;
 * its stdout (at most @cap - 1 bytes, NUL-terminated) in @out. The exit
 * status (0-255), or -1 with @err set (could not run, signalled, timed
 * out, more output than @cap).
 */
int sv_agent_run(struct sv_call *c, char *const argv[], char *out, size_t cap, char *err, size_t errcap);

#endif
