/* qcow2 image inspection for `mvm image info`: header facts and the chain. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "images/qcow2_int.h"

static int walk_chain(const struct qcow2 *q, struct qcow2_info *out)
{
	while (q->backing && out->chain_len < QCOW2_MAX_CHAIN) {
		struct qcow2_chain_elem *e = &out->chain[out->chain_len];

		e->path = strdup(q->backing_path);
		if (!e->path)
			return -ENOMEM;
		snprintf(e->format, sizeof(e->format), "%s", q->backing_fmt);
		e->virtual_size = q->backing->size;
		out->chain_len++;
		if (strcmp(q->backing_fmt, "qcow2"))
			break;
		q = q->backing->priv;
	}
	return 0;
}

int qcow2_info_get(const char *path, const struct qcow2_open_opts *opts,
		   struct qcow2_info *out)
{
	struct blk_backend *b;
	struct qcow2 *q;
	struct stat st;
	int err;

	memset(out, 0, sizeof(*out));
	err = blk_open_qcow2(path, true, opts, &b);
	if (err)
		return err;
	q = b->priv;
	snprintf(out->format, sizeof(out->format), "qcow2");
	out->version = q->h.version;
	out->cluster_size = (uint32_t)q->cs;
	out->virtual_size = q->h.size;
	if (!fstat(q->fd, &st))
		out->allocated_bytes = (uint64_t)st.st_blocks * 512;
	err = walk_chain(q, out);
	blk_close(b);
	if (err)
		qcow2_info_free(out);
	return err;
}

void qcow2_info_free(struct qcow2_info *info)
{
	for (unsigned i = 0; i < info->chain_len; i++) {
		free(info->chain[i].path);
		info->chain[i].path = NULL;
	}
	info->chain_len = 0;
}
