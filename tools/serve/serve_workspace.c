/*
 * PUT /v1/sandboxes/NAME/workspace?path=P: a tar becomes a new directory P
 * in the guest and the baseline that diff and promote compare with
 * (docs/api.md, "Workspaces"), as `mvm create --copy` records one. The
 * archive is checked first (serve_tar.h); the checked plan goes through
 * the agent's tree receiver into a private staging directory under the
 * sandbox's state directory (tree_recv: beneath it, no link followed, no
 * set-id bits, links that leave the tree dropped), from which
 * baseline_copy_in() records the manifest and blobs and copies it in.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/fs_util.h"
#include "guest/agent/tree.h"
#include "tools/sandbox/baseline.h"
#include "tools/sandbox/sandbox.h"
#include "tools/serve/serve.h"
#include "tools/serve/serve_agent.h"
#include "tools/serve/serve_tree.h"

/* cp.c's agent conversation keeps a static buffer: one workspace at a time per server. */
static pthread_mutex_t one_at_a_time = PTHREAD_MUTEX_INITIALIZER;

/* The plan as a tree under @stage/@leaf. 0, or -1 with @o set. */
static int stage_tree(struct sv_call *c, struct sv_out *o, const struct sv_tar *t, uint32_t mode,
		      const char *stage, const char *leaf)
{
	struct tree_opts to = { .max_bytes = c->s->o.max_file, .max_entries = SV_TAR_MAX_ENTRIES + 1 };
	uint8_t *buf = malloc(AP_MAX_PAYLOAD + 1);
	int mfd = memfd_create("mvm-serve-workspace", MFD_CLOEXEC), dfd = -1, ret = -ENOMEM;

	if (buf && mfd >= 0)
		ret = sv_tree_send(mfd, t, mode, buf);
	if (!ret && lseek(mfd, 0, SEEK_SET))
		ret = -errno;
	if (!ret && (dfd = open(stage, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		ret = -errno;
	if (!ret)
		ret = tree_recv(mfd, dfd, leaf, &to);
	if (ret)
		sv_reply_error(o, 500, "cannot stage the workspace: %s", to.err[0] ? to.err : strerror(-ret));
	if (dfd >= 0)
		close(dfd);
	if (mfd >= 0)
		close(mfd);
	free(buf);
	return ret ? -1 : 0;
}

/* A private staging directory beside the sandbox's diffs (mvm rm removes tmp-diff-*). 0 or -1 with @o. */
static int make_stage(struct sv_call *c, struct sv_out *o, char *stage, size_t cap)
{
	if (sb_path(c->host, "tmp-diff-wsXXXXXX", stage, cap) || !mkdtemp(stage)) {
		sv_reply_error(o, 500, "cannot make a staging directory: %s", strerror(errno));
		return -1;
	}
	return 0;
}

void sv_op_workspace_put(struct sv_call *c, struct sv_out *o)
{
	char stage[PATH_MAX], src[PATH_MAX + 300], dst[SV_PATH_MAX + 1];
	const char *slash;
	struct sv_tar t = { 0 };
	bool exists = false, staged = false;
	uint32_t mode;
	int fd;

	if (sv_tree_plan(c, o, &t))
		return;
	if ((fd = sv_agent_open(c, o, true)) < 0)
		goto out;
	close(fd);
	if (sv_tree_root_mode(c, o, &t, &mode, &exists))
		goto out;
	if (exists) {
		sv_reply_error(o, 409, "%s exists: a workspace is a new directory (PUT tree adds to one)",
			       c->query_path);
		goto out;
	}
	if (make_stage(c, o, stage, sizeof(stage)))
		goto out;
	staged = true;
	slash = strrchr(c->query_path, '/');
	snprintf(src, sizeof(src), "%s/%s", stage, slash + 1);
	snprintf(dst, sizeof(dst), "%.*s/", (int)(slash - c->query_path), c->query_path);
	if (stage_tree(c, o, &t, mode, stage, slash + 1))
		goto out;
	/* Records manifest + blobs, then copies in (lands at P: dst ends in '/'). */
	pthread_mutex_lock(&one_at_a_time);
	fd = baseline_copy_in(c->host, src, dst);
	pthread_mutex_unlock(&one_at_a_time);
	if (fd) {
		sv_reply_error(o, 409, "%s: the workspace was not recorded or not copied in (its parent must "
			       "exist; the server's log says more)", c->query_path);
		goto out;
	}
	sv_agent_written(c, o, true, 201, (long)t.n, t.bytes);
out:
	if (staged)
		rm_tree(stage);
	sv_tar_free(&t);
}
