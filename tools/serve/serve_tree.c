/*
 * GET|PUT /v1/sandboxes/NAME/tree?path=P: a guest directory (or file) out
 * as a tar stream, a tar in as a tree (docs/api.md, "Trees"). Both ride
 * the agent's tree stream, as `mvm cp` does (docs/agent-protocol.md), so
 * the host writes nothing to its own disk:
 *  - out, the root entry is read here and the rest converted as the
 *    client reads (serve_tree_out.c: every entry checked, a guest that
 *    breaks a rule cuts the stream);
 *  - in, the whole archive is parsed and checked first (serve_tar.h):
 *    anything refused is a 400 before the guest sees a byte; then the
 *    agent extracts it beneath P (guest/agent/tree_recv.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "common/mono_time.h"
#include "tools/serve/serve.h"
#include "tools/serve/serve_agent.h"
#include "tools/serve/serve_tar.h"
#include "tools/serve/serve_tree.h"
#include "tools/serve/serve_tree_out.h"

/* The first frame: the root entry, a directory or a file within the cap. 0, or -1 with @o set. */
static int tree_root(struct sv_call *c, struct sv_out *o, int fd, struct ap_entry *root, uint8_t *buf)
{
	char err[400];
	struct ap_hdr h;

	if (!sv_agent_frame(fd, mono_now_ms() + SV_AGENT_OP_MS, &h, buf, NULL, err, sizeof(err))) {
		sv_reply_error(o, strstr(err, "No such file") ? 404 : 502, "%s: %s", c->query_path, err);
		return -1;
	}
	if (h.type != AP_ENTRY || ap_entry_decode(buf, h.len, root) || root->path[0] ||
	    (root->kind != AP_DIR && root->kind != AP_FILE)) {
		sv_reply_error(o, 502, "unexpected frame from the guest agent");
		return -1;
	}
	if (root->kind == AP_FILE && root->size > c->s->o.max_file) {
		sv_reply_error(o, 413, "%s has %llu bytes, more than this server's %llu", c->query_path,
			       (unsigned long long)root->size, (unsigned long long)c->s->o.max_file);
		return -1;
	}
	return 0;
}

void sv_op_tree_get(struct sv_call *c, struct sv_out *o)
{
	uint8_t req[AP_PATH_MAX + 32], *buf = malloc(AP_MAX_PAYLOAD + 1);
	struct ap_wr w = { .buf = req, .cap = sizeof(req) };
	struct ap_entry *root = calloc(1, sizeof(*root));
	const char *base;
	void *t = NULL;
	int fd = -1;

	if (!buf || !root) {
		sv_reply_error(o, 500, "out of memory");
		goto out;
	}
	if ((fd = sv_agent_open(c, o, false)) < 0)
		goto out;
	/* No per-file limit asked of the agent: it would leave a big file out
	 * with only a WARN, and the archive would look whole. The host counts
	 * every byte and cuts the stream past --max-file instead. */
	ap_put_str(&w, c->query_path);
	ap_put_u64(&w, 0);
	ap_put_u32(&w, 0);
	if (w.err || ap_write_frame(fd, AP_GET, req, w.len)) {
		sv_reply_error(o, 503, "lost the connection to the guest agent");
		goto out;
	}
	if (tree_root(c, o, fd, root, buf))
		goto out;
	base = strrchr(c->query_path, '/') + 1;
	if (!(t = sv_tree_out_new(fd, c->s->o.max_file, root, base[0] ? base : "file", time(NULL)))) {
		sv_reply_error(o, 500, "out of memory");
		goto out;
	}
	fd = -1;		/* the stream's now */
	o->status = 200;
	o->type = "application/x-tar";
	o->read = sv_tree_out_read;
	o->done = sv_tree_out_free;
	o->cls = t;
	snprintf(o->outcome, sizeof(o->outcome), "ok");
out:
	if (fd >= 0)
		close(fd);
	free(root);
	free(buf);
}

/*
 * The mode P's root entry must carry: P's own when it is a directory
 * already (the agent applies the root's mode, and /tmp must stay 1777),
 * else the archive's "." or 0755. 0 or -1 with @o set.
 */
int sv_tree_root_mode(struct sv_call *c, struct sv_out *o, const struct sv_tar *t, uint32_t *mode, bool *exists)
{
	char *argv[] = { "sh", "-c", "if [ -d \"$1\" ]; then stat -c %a \"$1\" || echo unknown; else echo none; fi",
			 "sh", (char *)c->query_path, NULL };
	char out[32], err[400], *end;
	unsigned long m;
	int st = sv_agent_run(c, argv, out, sizeof(out), err, sizeof(err));

	if (st == 0 && !strcmp(out, "none\n")) {
		*mode = t->has_root ? t->root_mode : 0755;
		*exists = false;
		return 0;
	}
	m = strtoul(out, &end, 8);
	if (st == 0 && end != out && !strcmp(end, "\n") && m <= 07777) {
		*mode = (uint32_t)m;
		*exists = true;
		return 0;
	}
	sv_reply_error(o, 502, "cannot tell whether %s is a directory in the guest: %s", c->query_path,
		       st < 0 ? err : "unexpected answer");
	return -1;
}

int sv_tree_plan(struct sv_call *c, struct sv_out *o, struct sv_tar *t)
{
	char err[400];
	int st = sv_tar_parse((const uint8_t *)c->body, c->len, t, err, sizeof(err));

	if (st) {
		sv_reply_error(o, st, "the archive: %s", err);
		return -1;
	}
	if (t->bytes > c->s->o.max_file) {
		sv_reply_error(o, 413, "the archive holds %llu bytes of files (hard links copied), more than "
			       "this server's %llu", (unsigned long long)t->bytes,
			       (unsigned long long)c->s->o.max_file);
		sv_tar_free(t);
		return -1;
	}
	return 0;
}

/* ENTRY (+ DATA) of one planned entry. 0 or -errno. */
static int send_entry(int fd, const struct sv_tar_ent *p, struct ap_entry *e, uint8_t *buf)
{
	long len;
	int ret;

	memset(e, 0, sizeof(*e));
	e->kind = p->kind;
	e->mode = p->mode;
	e->size = p->size;
	memcpy(e->path, p->path, p->plen);
	if (p->target)
		snprintf(e->target, sizeof(e->target), "%s", p->target);
	len = ap_entry_encode(e, buf, AP_MAX_PAYLOAD);
	ret = len < 0 ? (int)len : ap_write_frame(fd, AP_ENTRY, buf, (size_t)len);
	for (uint64_t off = 0; !ret && off < p->size; off += AP_CHUNK)
		ret = ap_write_frame(fd, AP_DATA, p->data + off, p->size - off < AP_CHUNK ? p->size - off : AP_CHUNK);
	return ret;
}

/* The root directory, every entry, END. 0 or -errno. */
int sv_tree_send(int fd, const struct sv_tar *t, uint32_t mode, uint8_t *buf)
{
	struct sv_tar_ent root = { .kind = AP_DIR, .mode = mode, .path = "", .plen = 0 };
	struct ap_entry *e = malloc(sizeof(*e));
	int ret = e ? send_entry(fd, &root, e, buf) : -ENOMEM;

	for (size_t i = 0; !ret && i < t->n; i++)
		ret = send_entry(fd, &t->e[i], e, buf);
	free(e);
	return ret ? ret : ap_write_frame(fd, AP_END, NULL, 0);
}

/* The agent's answer: OK, or @status with its reason. 0 or -1 with @o set. */
void sv_op_tree_put(struct sv_call *c, struct sv_out *o)
{
	const struct timeval idle = { .tv_sec = SV_AGENT_OP_MS / 1000 };
	uint8_t *buf = malloc(AP_MAX_PAYLOAD + 1);
	struct sv_tar t = { 0 };
	bool exists, ok;
	uint32_t mode;
	int fd = -1, st;

	if (!buf) {
		sv_reply_error(o, 500, "out of memory");
		return;
	}
	if (sv_tree_plan(c, o, &t) || (fd = sv_agent_open(c, o, true)) < 0 ||
	    sv_tree_root_mode(c, o, &t, &mode, &exists))
		goto out;
	/* An agent that stops reading fails the upload instead of holding this thread. */
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &idle, sizeof(idle));
	ok = !sv_agent_put(c, fd) && !sv_agent_ok(c, o, fd, mono_now_ms() + SV_AGENT_OP_MS, buf, 409);
	if (ok) {
		/* A refusing agent drains what is sent: its reason comes after, even if a write failed. */
		st = sv_tree_send(fd, &t, mode, buf);
		ok = !sv_agent_ok(c, o, fd, mono_now_ms() + SV_AGENT_OP_MS, buf, 409) && !st;
	}
	sv_agent_written(c, o, ok, 200, (long)t.n, t.bytes);
out:
	if (fd >= 0)
		close(fd);
	sv_tar_free(&t);
	free(buf);
}
