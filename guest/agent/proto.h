/*
 * The mvm agent wire protocol (docs/agent-protocol.md): length-prefixed
 * frames over one vsock stream per operation. Compiled into both the guest
 * agent and the host (libmvm), so both sides agree byte for byte. Pure: no
 * I/O except ap_read_frame()/ap_write_frame(), no allocation except in the
 * exec decoder. Every decoder treats its input as hostile.
 */
#ifndef MVM_AGENT_PROTO_H
#define MVM_AGENT_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AP_PORT          1024		/* the agent's vsock port */
#define AP_VERSION       1
#define AP_HDR_SIZE      8
#define AP_MAX_PAYLOAD   (1u << 20)	/* no frame is larger, either way */
#define AP_CHUNK         (64u << 10)	/* data frames are at most this */
#define AP_PATH_MAX      4096
#define AP_MAX_ARGS      4096
#define AP_MAX_STR       (128u << 10)

enum ap_type {
	AP_EXEC = 1,		/* c→a: start a command (struct ap_exec) */
	AP_STDIN = 2,		/* c→a: bytes for stdin; empty = EOF */
	AP_STDOUT = 3,		/* a→c: bytes */
	AP_STDERR = 4,		/* a→c: bytes */
	AP_EXIT = 5,		/* a→c: struct ap_exit; last frame */
	AP_KILL = 6,		/* c→a: u32 signal for the command's process group */
	AP_ERROR = 7,		/* either way: UTF-8 message; ends the operation */
	AP_RESIZE = 8,		/* c→a: u16 rows, u16 cols (PTY mode) */
	AP_WARN = 9,		/* a→c or c→a: message; the operation goes on */
	AP_PUT = 16,		/* c→a: str dest, str name; then ENTRY/DATA... END */
	AP_GET = 17,		/* c→a: str path; agent answers ENTRY/DATA... END */
	AP_ENTRY = 18,		/* struct ap_entry; a file's DATA frames follow */
	AP_DATA = 19,		/* file bytes */
	AP_END = 20,		/* end of a tree */
	AP_OK = 21,		/* a→c: the operation succeeded */
	AP_SHUTDOWN = 22,	/* c→a: sync the disks and power off */
	AP_PING = 23,		/* c→a: answered with OK (readiness probe) */
	AP_SYNC = 24,		/* c→a: u64 sec, u32 nsec, 64 bytes entropy; after a rollback/restore */
	AP_TCP = 25,		/* c→a: u16 port; OK, then raw bytes to/from guest 127.0.0.1:port */
	AP_MAC = 26,		/* c→a: 6 bytes; the NIC's new address (a template's new sandbox) */
	AP_IDENTITY = 27,	/* c→a: SYNC's fields, 6 bytes MAC (0: keep), hostname; one round trip */
	AP_TYPE_MAX = 27,
};

#define AP_SYNC_SEED  64		/* entropy bytes in a SYNC frame */
#define AP_SYNC_LEN   (8 + 4 + AP_SYNC_SEED)
#define AP_SYNC_HOST_MAX 63		/* optional hostname after the seed */
#define AP_IDENTITY_LEN (AP_SYNC_LEN + 6)	/* then the hostname, 1 to AP_SYNC_HOST_MAX bytes */

#define AP_EXEC_PTY   0x1u	/* run on a pseudo-terminal; stderr joins stdout */
#define AP_EXEC_STDIN 0x2u	/* STDIN frames follow; otherwise stdin is /dev/null */
#define AP_EXEC_FLAGS (AP_EXEC_PTY | AP_EXEC_STDIN)

struct ap_hdr {
	uint32_t len;		/* payload bytes after the header */
	uint16_t type;
	uint16_t flags;		/* reserved: must be 0 */
};

struct ap_exec {
	uint32_t flags;
	uint32_t uid;		/* the command's uid and gid */
	uint32_t timeout_ms;	/* 0: none */
	uint16_t rows, cols;	/* PTY size */
	char *cwd;		/* "" = / */
	int argc, envc;
	char **argv, **env;	/* NULL-terminated */
	char *arena;		/* decoder-owned storage */
};

enum ap_exit_kind { AP_EXITED = 0, AP_SIGNALED = 1 };

struct ap_exit {
	uint32_t kind;		/* enum ap_exit_kind */
	uint32_t code;		/* exit status or signal number */
	uint32_t timed_out;	/* 1: killed because the timeout expired */
};

/* AP_SKIPPED: an entry the sender left out (GET with AP_GET_REPORT); target = why, size = its size. */
enum ap_entry_kind { AP_FILE = 1, AP_DIR = 2, AP_SYMLINK = 3, AP_SKIPPED = 4 };

/* GET options (u32 after the path and the u64 per-file limit; both optional). */
#define AP_GET_REPORT       0x1u	/* skipped entries as AP_SKIPPED entries, not WARN */
#define AP_GET_NO_HARDLINKS 0x2u	/* skip regular files with more than one link */
#define AP_GET_NO_GIT       0x4u	/* skip directories and files named .git (any case) */
#define AP_GET_FLAGS        (AP_GET_REPORT | AP_GET_NO_HARDLINKS | AP_GET_NO_GIT)

struct ap_entry {
	uint32_t kind;
	uint32_t mode;		/* permission bits only (07777 masked by the reader) */
	uint64_t size;		/* AP_FILE: bytes in the DATA frames that follow */
	char path[AP_PATH_MAX];	/* relative to the tree root; "" is the root itself */
	char target[AP_PATH_MAX]; /* AP_SYMLINK; AP_SKIPPED: the reason */
};

/* Encoder: fills @buf up to @cap; err is set (and nothing more written) on overflow. */
struct ap_wr {
	uint8_t *buf;
	size_t cap, len;
	bool err;
};

/* Decoder over one payload. */
struct ap_rd {
	const uint8_t *p;
	size_t len, off;
	bool err;
};

void ap_put_u16(struct ap_wr *w, uint16_t v);
void ap_put_u32(struct ap_wr *w, uint32_t v);
void ap_put_u64(struct ap_wr *w, uint64_t v);
void ap_put_str(struct ap_wr *w, const char *s);
uint16_t ap_get_u16(struct ap_rd *r);
uint32_t ap_get_u32(struct ap_rd *r);
uint64_t ap_get_u64(struct ap_rd *r);
/* Copies a string of at most @cap-1 bytes with no NUL inside; err otherwise. */
void ap_get_str(struct ap_rd *r, char *out, size_t cap);

/* Header codec. ap_hdr_decode: 0, -EAGAIN (fewer than 8 bytes), -EMSGSIZE, -EPROTO. */
void ap_hdr_encode(uint8_t out[AP_HDR_SIZE], uint16_t type, uint32_t len);
int ap_hdr_decode(const uint8_t *b, size_t n, struct ap_hdr *h);
/* Bytes of the first complete frame in @b, 0 if more are needed, -errno if bad. */
long ap_frame_size(const uint8_t *b, size_t n);

/* Payload codecs: encode returns the payload length or -ENOSPC; decode 0 or -EPROTO. */
long ap_exec_encode(const struct ap_exec *e, uint8_t *buf, size_t cap);
int ap_exec_decode(const uint8_t *p, size_t len, struct ap_exec *e);
void ap_exec_free(struct ap_exec *e);
long ap_exit_encode(const struct ap_exit *x, uint8_t *buf, size_t cap);
int ap_exit_decode(const uint8_t *p, size_t len, struct ap_exit *x);
long ap_entry_encode(const struct ap_entry *en, uint8_t *buf, size_t cap);
int ap_entry_decode(const uint8_t *p, size_t len, struct ap_entry *en);

/*
 * A relative path safe to resolve beneath a directory: not absolute, no
 * empty, "." or ".." component, no NUL, at most AP_PATH_MAX-1 bytes. "" is
 * allowed (the root itself).
 */
bool ap_path_safe(const char *path);
/*
 * A symlink target that stays inside the tree when found at @linkpath,
 * whatever the tree's other links point to: relative, ".." only as leading
 * components and never above the root ("s/../x" is refused: if s -> ".",
 * it climbs out).
 */
bool ap_link_inside(const char *linkpath, const char *target);

/* Blocking frame I/O on a stream fd (EINTR retried).
 * ap_read_frame: 1 frame read (payload NUL-terminated in @buf, which must
 * hold @cap+1 bytes), 0 clean EOF before a header, -EIO truncated frame,
 * -EMSGSIZE payload larger than @cap, -EPROTO bad header, other -errno. */
int ap_read_frame(int fd, struct ap_hdr *h, uint8_t *buf, size_t cap);
int ap_write_frame(int fd, uint16_t type, const void *payload, size_t len);
int ap_write_all(int fd, const void *p, size_t n);

/*
 * One direction of a byte pipe between two non-blocking stream sockets
 * (TCP: guest/agent/tcp_pipe.c and the host's tools/sandbox/relay.c):
 * bytes are moved, never parsed. At most @cap bytes are held; a side is
 * read only when the buffer is empty, which is the back-pressure.
 */
struct ap_half {
	int from, to;
	uint8_t *buf;
	size_t cap, off, len;
	bool eof;		/* @from ended; @to gets SHUT_WR once drained */
	bool done;		/* @to is shut down for writing */
};
/* A TCP stream to 127.0.0.1:@port (blocking connect). fd or -errno. */
int ap_connect_loopback(uint16_t port);
/* Whether @h wants to read @from now (buffer empty, no EOF yet). */
bool ap_half_wants_read(const struct ap_half *h);
/* Read @from if @readable and the buffer is empty, then write what is held
 * to @to (EAGAIN leaves it held); SHUT_WR @to once @from ended and all is
 * written. 0, or -errno when either socket failed (the pipe is over). */
int ap_half_step(struct ap_half *h, bool readable);

#endif
