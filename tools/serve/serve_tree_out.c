/*
 * A guest's tree stream turned into tar as it is read (GET .../tree;
 * tools/serve/serve_tree_out.h). Each ENTRY is checked before it becomes a
 * header: a safe relative path without control characters, symlinks that
 * stay inside the tree; others are left out. File bytes pass through,
 * counted against the cap. Anything else the agent does wrong (a frame out
 * of place, a DATA frame over AP_CHUNK, bytes past the cap, silence) ends
 * the stream with an error, so the client's archive is never short and
 * whole-looking.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/mono_time.h"
#include "tools/sandbox/path_sanitize.h"
#include "tools/serve/serve_agent.h"
#include "tools/serve/serve_tar.h"
#include "tools/serve/serve_tree_out.h"

#define PEND_CAP (SV_TAR_HDR_MAX + AP_CHUNK + 3 * SV_TAR_BLOCK)

struct tree_out {
	int fd;
	uint64_t cap, total, left;	/* --max-file; file bytes so far; of the current file */
	bool drop;			/* the current file's bytes are read and not sent */
	bool root_file, ended;
	char root_name[256];
	uint8_t *frame, *pend;
	size_t plen, poff;
	unsigned warns, dropped;
	time_t now;
	struct ap_entry e;
};

void sv_tree_out_free(void *cls)
{
	struct tree_out *t = cls;

	if (t->fd >= 0)
		close(t->fd);
	free(t->frame);
	free(t->pend);
	free(t);
}

/* Why the guest's entry is left out of the tar, or NULL. */
static const char *entry_refusal(const struct ap_entry *e)
{
	const char *why = ps_path_refusal(e->path, 0);

	if (why)
		return why;
	if (e->kind == AP_SYMLINK && !ap_link_inside(e->path, e->target))
		return "a symlink that leaves the tree";
	return e->kind == AP_SKIPPED ? "skipped by the guest" : NULL;
}

/* One decoded ENTRY: its header queued, its data expected. 0, or -1 to cut the stream. */
static int on_entry(struct tree_out *t)
{
	long n;

	if (t->root_file || !t->e.path[0])
		return -1;		/* a second root, or a file root with children */
	if (t->e.kind == AP_FILE && t->e.size > t->cap - t->total)
		return -1;		/* past --max-file: the client sees a cut stream */
	t->left = t->e.kind == AP_FILE ? t->e.size : 0;
	t->total += t->left;
	t->drop = entry_refusal(&t->e) != NULL;
	if (t->drop) {
		t->dropped++;
		return 0;
	}
	n = sv_tar_header(&t->e, t->e.path, t->now, t->pend + t->plen, PEND_CAP - t->plen);
	if (n < 0)
		return -1;
	t->plen += (size_t)n;
	return 0;
}

/* Read one frame and queue what it becomes. 0, or -1 to cut the stream. */
static int produce(struct tree_out *t)
{
	uint64_t deadline = mono_now_ms() + SV_AGENT_OP_MS;
	char err[400];
	struct ap_hdr h;

	if (!sv_agent_frame(t->fd, deadline, &h, t->frame, &t->warns, err, sizeof(err)))
		return -1;
	if (t->left) {
		/* DATA frames carry at most AP_CHUNK (a hostile agent's larger one would not fit). */
		if (h.type != AP_DATA || h.len > t->left || h.len > AP_CHUNK)
			return -1;
		t->left -= h.len;
		if (!t->drop) {
			memcpy(t->pend + t->plen, t->frame, h.len);
			t->plen += h.len;
			if (!t->left) {
				memset(t->pend + t->plen, 0, sv_tar_pad(t->e.size));
				t->plen += sv_tar_pad(t->e.size);
			}
		}
		return 0;
	}
	if (h.type == AP_END) {
		memset(t->pend + t->plen, 0, 2 * SV_TAR_BLOCK);
		t->plen += 2 * SV_TAR_BLOCK;
		t->ended = true;
		return 0;
	}
	if (h.type != AP_ENTRY || ap_entry_decode(t->frame, h.len, &t->e))
		return -1;
	return on_entry(t);
}

/* The HTTP stream's reader: queued bytes first, then the next frame's. */
ssize_t sv_tree_out_read(void *cls, char *buf, size_t max)
{
	struct tree_out *t = cls;
	size_t n;

	while (t->poff == t->plen) {
		if (t->ended)
			return 0;
		t->plen = t->poff = 0;
		if (produce(t))
			return -1;
	}
	n = t->plen - t->poff < max ? t->plen - t->poff : max;
	memcpy(buf, t->pend + t->poff, n);
	t->poff += n;
	return (ssize_t)n;
}


void *sv_tree_out_new(int fd, uint64_t cap, const struct ap_entry *root, const char *root_name, time_t now)
{
	struct tree_out *t = calloc(1, sizeof(*t));
	long n;

	if (!t || !(t->frame = malloc(AP_MAX_PAYLOAD + 1)) || !(t->pend = malloc(PEND_CAP)))
		goto fail;
	t->fd = fd;
	t->cap = cap;
	t->now = now;
	if (root->kind != AP_FILE)
		return t;
	/* A file: one entry named after it; its DATA frames follow. */
	t->e = *root;
	t->root_file = true;
	t->left = t->total = root->size;
	n = sv_tar_header(root, root_name, now, t->pend, PEND_CAP);
	if (n < 0 || root->size > cap)
		goto fail;
	t->plen = (size_t)n;
	return t;
fail:
	if (t) {
		t->fd = -1;
		sv_tree_out_free(t);
	}
	return NULL;
}
