/* Guest tree -> fresh host directory, with a list of what was left out (tools/sandbox/fetch.h). */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "guest/agent/tree.h"
#include "tools/sandbox/agent_client.h"
#include "tools/sandbox/fetch.h"
#include "tools/sandbox/path_sanitize.h"

void refusals_add(struct refusals *l, const char *path, const char *why)
{
	size_t plen = strlen(path), wlen = strnlen(why, REFUSAL_WHY_MAX);

	if (l->n == REFUSALS_MAX || plen + wlen + 2 > REFUSALS_MAX_BYTES - l->bytes) {
		l->dropped++;
		return;
	}
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		struct refusal *r = realloc(l->r, cap * sizeof(*r));

		if (!r) {
			l->dropped++;
			return;
		}
		l->r = r;
		l->cap = cap;
	}
	l->r[l->n].path = strdup(path);
	l->r[l->n].why = strndup(why, wlen);
	if (!l->r[l->n].path || !l->r[l->n].why) {
		free(l->r[l->n].path);
		free(l->r[l->n].why);
		l->dropped++;
		return;
	}
	l->bytes += plen + wlen + 2;
	l->n++;
}

void refusals_free(struct refusals *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->r[i].path);
		free(l->r[i].why);
	}
	free(l->r);
	memset(l, 0, sizeof(*l));
}

void refusals_print(const char *verb, const char *what, const struct refusals *l)
{
	char p[1024], why[512];

	for (size_t i = 0; i < l->n; i++) {
		ps_escape(l->r[i].path, p, sizeof(p));
		ps_escape(l->r[i].why, why, sizeof(why));
		fprintf(stderr, "mvm %s: %s %s: %s\n", verb, what, p[0] ? p : ".", why);
	}
	if (l->dropped)
		fprintf(stderr, "mvm %s: and %zu more\n", verb, l->dropped);
}

struct fetch {
	struct fetch_opts *o;
	char refused_dir[AP_PATH_MAX];	/* the last directory refused: its subtree goes quietly */
};

static const char *filter(void *opaque, const struct ap_entry *e, bool *quiet)
{
	struct fetch *f = opaque;
	size_t n = strlen(f->refused_dir);
	const char *why;

	if (n && !strncmp(e->path, f->refused_dir, n) && e->path[n] == '/') {
		*quiet = true;
		return "inside a refused directory";
	}
	if (ps_is_git_meta(e->path))
		why = "git metadata: never copied out (its hooks and config would run on the host)";
	else if (e->kind == AP_SYMLINK && ps_is_git_meta(e->target))
		why = "symlink into git metadata: refused like .git itself";
	else
		why = ps_path_refusal(e->path, 0);
	if (why && e->kind == AP_DIR)
		snprintf(f->refused_dir, sizeof(f->refused_dir), "%s", e->path);
	return why;
}

static void skipped(void *opaque, const char *path, const char *why)
{
	struct fetch *f = opaque;

	refusals_add(f->o->refused, path, why);
}

/* The agent's own WARNs (an old agent, a path too long) are listed too. */
static void warned(void *opaque, const char *msg)
{
	struct fetch *f = opaque;

	refusals_add(f->o->refused, "", msg);
}

int fetch_recv(int fd, int parent_fd, const char *leaf, struct fetch_opts *o)
{
	struct fetch f = { .o = o };
	struct tree_opts t = { .max_bytes = o->max_total, .max_entries = o->max_entries,
			       .max_file = o->max_file, .max_path = PS_PATH_MAX,
			       .filter = filter, .skipped = skipped, .warn = warned, .opaque = &f };
	const struct timeval idle = { .tv_sec = o->idle_s ? o->idle_s : FETCH_IDLE_S };
	int ret;

	/* A guest that stops sending mid-tree must not hang the host's diff or export. */
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &idle, sizeof(idle));
	ret = tree_recv(fd, parent_fd, leaf, &t);
	if (ret == -EAGAIN || ret == -EWOULDBLOCK)
		snprintf(o->err, sizeof(o->err), "the guest sent nothing for %ld s", (long)idle.tv_sec);
	else if (ret)
		ps_escape(t.err[0] ? t.err : strerror(-ret), o->err, sizeof(o->err));	/* guest text */
	return ret;
}

int fetch_tree(const char *name, const char *gpath, int parent_fd, const char *leaf,
	       struct fetch_opts *o)
{
	uint8_t req[AP_PATH_MAX + 32];
	struct ap_wr w = { .buf = req, .cap = sizeof(req) };
	int fd, ret;

	o->err[0] = 0;
	fd = agent_connect(name, agent_wait_ms());
	if (fd < 0) {
		snprintf(o->err, sizeof(o->err), "cannot reach the agent of %s: %s (is it running?)",
			 name, strerror(-fd));
		return fd;
	}
	ap_put_str(&w, gpath);
	ap_put_u64(&w, o->max_file);
	/* .git is refused here too; the agent leaving it out saves sending its objects. */
	ap_put_u32(&w, AP_GET_REPORT | AP_GET_NO_GIT | (o->keep_hardlinks ? 0 : AP_GET_NO_HARDLINKS));
	ret = w.err ? -ENAMETOOLONG : ap_write_frame(fd, AP_GET, req, w.len);
	if (ret)
		snprintf(o->err, sizeof(o->err), "sending the request: %s", strerror(-ret));
	else
		ret = fetch_recv(fd, parent_fd, leaf, o);
	close(fd);
	return ret;
}

int fetch_staging(const char *dst, char *stage, size_t cap)
{
	char a[PATH_MAX], b[PATH_MAX];
	struct stat st;

	if (strlen(dst) >= sizeof(a))
		return -ENAMETOOLONG;
	if (!lstat(dst, &st))
		return -EEXIST;
	snprintf(a, sizeof(a), "%s", dst);
	snprintf(b, sizeof(b), "%s", dst);
	if (snprintf(stage, cap, "%s/.%s.mvm-XXXXXX", dirname(a), basename(b)) >= (int)cap)
		return -ENAMETOOLONG;
	return mkdtemp(stage) ? 0 : -errno;
}
