/*
 * The agent's exec, GET and PUT for the MCP tools (tools/mcp/mcp_guest.h).
 * The guest is hostile: every wait has a deadline, every byte it sends
 * counts against a cap, and a stream that breaks the protocol ends the call.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tools/mcp/mcp_guest.h"
#include "tools/sandbox/agent_client.h"

#define FILE_OP_MS  120000	/* a whole file operation; a guest cannot stretch it with WARN or empty DATA frames */
#define EXEC_GRACE_MS 30000	/* past the command's own timeout */
#define TICK_MS     2000

static long now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000L + t.tv_nsec / 1000000L;
}

static int connect_agent(struct mcp_call *c, const char *name)
{
	int fd = agent_connect(name, agent_wait_ms());

	if (fd < 0)
		snprintf(c->err, sizeof(c->err), "cannot reach the agent of sandbox %s: %s (is it running?)",
			 name, strerror(-fd));
	return fd;
}

/* Wait for the next frame until @deadline (ms, monotonic), ticking progress. 1, or -1 with c->err. */
static int next_frame(struct mcp_call *c, int fd, long deadline, struct ap_hdr *h, uint8_t *buf,
		      const char *what)
{
	long start = now_ms();

	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		long left = deadline - now_ms();
		int r;

		if (left <= 0) {
			snprintf(c->err, sizeof(c->err), "%s: the guest agent did not answer in time", what);
			return -1;
		}
		r = poll(&p, 1, left < TICK_MS ? (int)left : TICK_MS);
		if (r == 0) {
			char msg[96];

			snprintf(msg, sizeof(msg), "%s: running for %ld s", what, (now_ms() - start) / 1000);
			mcp_progress(c, msg);
			continue;
		}
		if (r < 0 && errno == EINTR)
			continue;
		r = r < 0 ? -errno : ap_read_frame(fd, h, buf, AP_MAX_PAYLOAD);
		if (r == 1)
			return 1;
		snprintf(c->err, sizeof(c->err), "%s: lost the connection to the guest agent (%s)", what,
			 r == 0 ? "closed" : strerror(-r));
		return -1;
	}
}

/* An ERROR frame's text, bounded (made valid UTF-8 later with the rest of c->err). */
static int agent_error(struct mcp_call *c, const char *what, const uint8_t *p, uint32_t len)
{
	snprintf(c->err, sizeof(c->err), "%s: %.*s", what, (int)(len > 512 ? 512 : len), (const char *)p);
	return -1;
}

static int unexpected(struct mcp_call *c, const char *what)
{
	snprintf(c->err, sizeof(c->err), "%s: unexpected frame from the guest agent", what);
	return -1;
}

int mcp_guest_exec(struct mcp_call *c, const char *name, const struct ap_exec *e,
		   struct mcp_buf *out, struct mcp_buf *err, struct ap_exit *x)
{
	uint8_t *buf = malloc(AP_MAX_PAYLOAD + 1);
	long n, deadline = e->timeout_ms ? now_ms() + e->timeout_ms + EXEC_GRACE_MS : -1;
	int fd = -1, ret = -1;
	struct ap_hdr h;

	if (!buf) {
		snprintf(c->err, sizeof(c->err), "out of memory");
		return -1;
	}
	if (deadline < 0)
		deadline = now_ms() + 24L * 3600 * 1000;
	n = ap_exec_encode(e, buf, AP_MAX_PAYLOAD);
	if (n < 0) {
		snprintf(c->err, sizeof(c->err), "the command and environment exceed %u bytes", AP_MAX_PAYLOAD);
		goto out;
	}
	fd = connect_agent(c, name);
	if (fd < 0)
		goto out;
	if (ap_write_frame(fd, AP_EXEC, buf, (size_t)n)) {
		snprintf(c->err, sizeof(c->err), "sending the command to the guest agent failed");
		goto out;
	}
	while (next_frame(c, fd, deadline, &h, buf, "exec") == 1) {
		if (h.type == AP_STDOUT || h.type == AP_STDERR) {
			mcp_buf_add(h.type == AP_STDOUT ? out : err, buf, h.len);
		} else if (h.type == AP_EXIT) {
			ret = ap_exit_decode(buf, h.len, x) ? unexpected(c, "exec") : 0;
			break;
		} else if (h.type == AP_ERROR) {
			agent_error(c, "exec", buf, h.len);
			break;
		} else if (h.type != AP_WARN) {
			unexpected(c, "exec");
			break;
		}
	}
out:
	if (fd >= 0)
		close(fd);	/* a command still running is killed by the agent */
	free(buf);
	return ret;
}

/* After GET: the root ENTRY, which must be a regular file. 0 or -1. */
static int read_entry(struct mcp_call *c, int fd, long deadline, uint8_t *buf, struct ap_entry *en,
		      const char *path)
{
	struct ap_hdr h;

	for (;;) {
		if (next_frame(c, fd, deadline, &h, buf, "file_read") != 1)
			return -1;
		if (h.type == AP_WARN)
			continue;
		if (h.type == AP_ERROR)
			return agent_error(c, "file_read", buf, h.len);
		if (h.type != AP_ENTRY || ap_entry_decode(buf, h.len, en) || en->path[0])
			return unexpected(c, "file_read");
		if (en->kind != AP_FILE) {
			snprintf(c->err, sizeof(c->err), "file_read: %s is not a regular file", path);
			return -1;
		}
		return 0;
	}
}

int mcp_guest_read(struct mcp_call *c, const char *name, const char *path, struct mcp_buf *data)
{
	uint8_t *buf = malloc(AP_MAX_PAYLOAD + 1);
	uint8_t req[AP_PATH_MAX + 8];
	struct ap_wr w = { .buf = req, .cap = sizeof(req) };
	struct ap_entry *en = calloc(1, sizeof(*en));
	long deadline = now_ms() + FILE_OP_MS;
	int fd = -1, ret = -1;
	struct ap_hdr h;

	if (!buf || !en) {
		snprintf(c->err, sizeof(c->err), "out of memory");
		goto out;
	}
	ap_put_str(&w, path);
	fd = connect_agent(c, name);
	if (fd < 0)
		goto out;
	if (ap_write_frame(fd, AP_GET, req, w.len)) {
		snprintf(c->err, sizeof(c->err), "file_read: lost the connection to the guest agent");
		goto out;
	}
	if (read_entry(c, fd, deadline, buf, en, path))
		goto out;
	/* Stop reading at the cap: closing the connection ends the agent's side. */
	while (data->total < en->size && data->len < data->cap) {
		if (next_frame(c, fd, deadline, &h, buf, "file_read") != 1)
			goto out;
		if (h.type != AP_DATA || data->total + h.len > en->size) {
			unexpected(c, "file_read");
			goto out;
		}
		mcp_buf_add(data, buf, h.len);
	}
	data->total = en->size;
	ret = 0;
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	free(en);
	return ret;
}

/* Wait for OK (ready or done). 0 or -1. */
static int expect_ok(struct mcp_call *c, int fd, long deadline, uint8_t *buf)
{
	struct ap_hdr h;

	for (;;) {
		if (next_frame(c, fd, deadline, &h, buf, "file_write") != 1)
			return -1;
		if (h.type == AP_OK)
			return 0;
		if (h.type == AP_ERROR)
			return agent_error(c, "file_write", buf, h.len);
		if (h.type != AP_WARN)
			return unexpected(c, "file_write");
	}
}

static int send_file(int fd, const uint8_t *p, size_t n, uint32_t mode, uint8_t *buf)
{
	struct ap_entry en = { .kind = AP_FILE, .mode = mode & 07777, .size = n };
	long len = ap_entry_encode(&en, buf, AP_MAX_PAYLOAD);
	int ret = len < 0 ? (int)len : ap_write_frame(fd, AP_ENTRY, buf, (size_t)len);

	for (size_t off = 0; !ret && off < n; off += AP_CHUNK)
		ret = ap_write_frame(fd, AP_DATA, p + off, n - off < AP_CHUNK ? n - off : AP_CHUNK);
	return ret ? ret : ap_write_frame(fd, AP_END, NULL, 0);
}

int mcp_guest_write(struct mcp_call *c, const char *name, const char *path,
		    const uint8_t *p, size_t n, uint32_t mode)
{
	uint8_t *buf = malloc(AP_MAX_PAYLOAD + 1);
	uint8_t req[2 * AP_PATH_MAX + 16];
	struct ap_wr w = { .buf = req, .cap = sizeof(req) };
	const char *slash = strrchr(path, '/');
	long deadline = now_ms() + FILE_OP_MS;
	char dir[AP_PATH_MAX];
	int fd = -1, ret = -1;

	if (!buf) {
		snprintf(c->err, sizeof(c->err), "out of memory");
		return -1;
	}
	/* PUT DIR NAME lands at DIR/NAME (docs/agent-protocol.md). */
	snprintf(dir, sizeof(dir), "%.*s", slash == path ? 1 : (int)(slash - path), path);
	ap_put_str(&w, dir);
	ap_put_str(&w, slash + 1);
	fd = connect_agent(c, name);
	if (fd < 0)
		goto out;
	if (ap_write_frame(fd, AP_PUT, req, w.len)) {
		snprintf(c->err, sizeof(c->err), "file_write: lost the connection to the guest agent");
		goto out;
	}
	if (expect_ok(c, fd, deadline, buf))
		goto out;
	if (send_file(fd, p, n, mode, buf)) {
		snprintf(c->err, sizeof(c->err), "file_write: lost the connection to the guest agent");
		goto out;
	}
	ret = expect_ok(c, fd, deadline, buf);
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	return ret;
}
