/*
 * File trees over the agent protocol: ENTRY/DATA.../END streams. Shared by
 * the guest agent (put target, get source) and the host CLI (`mvm cp`).
 * The receiver trusts nothing in the stream: every path is checked with
 * ap_path_safe() and resolved beneath the destination one component at a
 * time with O_NOFOLLOW, so a symlink in the tree can never redirect a write.
 */
#ifndef MVM_AGENT_TREE_H
#define MVM_AGENT_TREE_H

#include <stdbool.h>
#include <stdint.h>

#include "guest/agent/proto.h"

struct tree_opts {
	uint64_t max_bytes;		/* total file bytes accepted/sent; 0: no limit */
	uint64_t max_entries;		/* receiver: entries accepted; 0: no limit */
	bool links_outside;		/* receiver: keep symlinks that leave the tree */
	bool keep_special_bits;		/* receiver: keep setuid/setgid/sticky */
	/*
	 * Sender: skip files larger than this. Receiver: a file entry larger
	 * than this fails the transfer (an honest sender never sends one). 0: no limit.
	 */
	uint64_t max_file;
	size_t max_path;		/* receiver: longest entry path in bytes; 0: AP_PATH_MAX - 1 */
	bool report_skips;		/* sender: skipped entries as AP_SKIPPED entries, not WARN */
	bool skip_hardlinks;		/* sender: skip regular files with more than one link */
	bool skip_git;			/* sender: skip entries named .git (any case) */
	/*
	 * Receiver: NULL accepts @e; a reason refuses it (a file's data is
	 * drained). Refusals go to skipped() unless the filter sets *quiet.
	 */
	const char *(*filter)(void *opaque, const struct ap_entry *e, bool *quiet);
	/* Receiver: an entry left out (by the sender, the filter or the link rule); NULL: warn(). */
	void (*skipped)(void *opaque, const char *path, const char *why);
	/* A non-fatal problem (skipped entry). @msg is a full sentence. */
	void (*warn)(void *opaque, const char *msg);
	void *opaque;
	char err[256];			/* why the transfer failed */
};

/*
 * Send the file or tree at @path (followed if it is a symlink; inside the
 * tree symlinks are sent as links, special files are skipped with a warning)
 * and an END frame. 0 or -errno with o->err set.
 */
int tree_send(int fd, const char *path, struct tree_opts *o);
/*
 * Receive one tree from @fd and create it as @name inside the directory
 * @parent_fd. WARN frames go to o->warn; an ERROR frame fails with its text.
 * 0 or -errno with o->err set.
 */
int tree_recv(int fd, int parent_fd, const char *name, struct tree_opts *o);
/* One entry of a directory walk; @fits is false when its path would not fit in the buffer. */
typedef int (*tree_child_fn)(void *ctx, int dfd, const char *name, bool fits);
/*
 * Call @child for each entry of the directory @dfd but "." and "..", with
 * @path (a buffer of @cap bytes) extended by "/name" during the call when
 * it fits. Stops at the first non-zero return: that, or 0. If the
 * directory cannot be read, *@open_err (else 0) and the return are -errno.
 */
int tree_walk_dir(int dfd, char *path, size_t cap, tree_child_fn child, void *ctx, int *open_err);
/*
 * Open the directory holding @path's last component beneath @root_fd, one
 * component at a time with O_NOFOLLOW (a symlink on the way fails with
 * ELOOP/ENOTDIR); *@leaf points into @path. fd or -errno.
 */
int tree_open_parent(int root_fd, const char *path, const char **leaf);
/*
 * Where `cp SRC DEST` puts SRC's copy: inside DEST if it is a directory,
 * else at DEST. Opens the parent directory (following the user's own path)
 * and gives the final name. 0 or -errno.
 */
int tree_dest(const char *dest, const char *src_name, int *parent_fd, char *name, size_t cap);

#endif
