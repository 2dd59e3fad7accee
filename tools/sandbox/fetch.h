/*
 * Bring a guest tree to the host through the agent (GET with a per-file
 * limit, skipped entries reported) into a directory mvm just created, and
 * list everything left out and why. The one way guest files reach the host
 * for `mvm diff`, `mvm export` and `mvm promote`: written beneath the
 * destination with O_NOFOLLOW at every step (guest/agent/tree_recv.c),
 * never mounted, parsed as a filesystem or executed.
 */
#ifndef MVM_FETCH_H
#define MVM_FETCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define REFUSALS_MAX 10000		/* listed one by one; beyond, only counted */
#define REFUSALS_MAX_BYTES (1u << 20)	/* text kept for all of them together; beyond, only counted */
#define REFUSAL_WHY_MAX 512		/* a reason (e.g. a guest WARN) is cut to this */
#define FETCH_IDLE_S 120		/* a stream silent this long fails the fetch */

struct refusal {
	char *path;
	char *why;
};

struct refusals {
	struct refusal *r;
	size_t n, cap;
	size_t dropped;			/* refusals beyond REFUSALS_MAX or REFUSALS_MAX_BYTES */
	size_t bytes;			/* text kept */
};

/* List @path and @why (cut to REFUSAL_WHY_MAX); past the count or byte cap, only counted. */
void refusals_add(struct refusals *l, const char *path, const char *why);
void refusals_free(struct refusals *l);
/* "mvm VERB: WHAT PATH: WHY" on stderr for each entry, control characters
 * escaped, then "and N more" for those only counted. */
void refusals_print(const char *verb, const char *what, const struct refusals *l);

struct fetch_opts {
	uint64_t max_file;		/* per file: larger files are left out (the agent does not send them) */
	uint64_t max_total;		/* all files together: over it the fetch fails */
	uint64_t max_entries;		/* files, directories and links: over it the fetch fails */
	struct refusals *refused;	/* where left-out entries are listed */
	unsigned idle_s;		/* silence that fails the fetch; 0: FETCH_IDLE_S */
	bool keep_hardlinks;		/* `mvm cp`: files with several links are copied (each its own file) */
	char err[512];			/* escaped: safe to print */
};

/*
 * Fetch @gpath of sandbox @name as @leaf inside the host directory
 * @parent_fd. Left out and listed: git metadata (.git), names the path
 * sanitiser refuses (control characters, too long...), symlinks that leave
 * the tree or into git metadata, hard links, FIFOs, sockets, device nodes,
 * files over max_file. The host enforces max_file, max_total, max_entries
 * and path length itself, whatever the agent claims.
 * 0, or -errno with o->err set (the partial tree is the caller's to remove).
 */
int fetch_tree(const char *name, const char *gpath, int parent_fd, const char *leaf,
	       struct fetch_opts *o);
/* The receiving half of fetch_tree: one GET stream on @fd (for tests: any tree_send stream). */
int fetch_recv(int fd, int parent_fd, const char *leaf, struct fetch_opts *o);
/*
 * A fresh directory beside @dst, which must not exist (-EEXIST):
 * "DIR/.NAME.mvm-XXXXXX". A copy lands there and is renamed into place
 * only when complete. 0 or -errno.
 */
int fetch_staging(const char *dst, char *stage, size_t cap);

#endif
