/*
 * Results out (docs/api.md, "Diff and promote"): GET /diff answers the
 * workspace's patch, POST /promote the review bundle as a tar. Both run
 * the `mvm` verbs beside the server (the same code as the CLI: the guest
 * tree fetched under the state directory with every fetch filter, the
 * diff against the recorded baseline). The bundle goes to a directory the
 * server makes for itself and is deleted once read; a caller never names
 * a host path.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/fs_util.h"
#include "tools/sandbox/sandbox.h"
#include "tools/serve/serve.h"
#include "tools/serve/serve_tar.h"

#define ERR_CAP (16u << 10)

/* @fd's bytes (at most @cap) as @o's body of @type. 0, or -1 with @o set. */
static int body_from(struct sv_out *o, int fd, uint64_t cap, const char *type, const char *what)
{
	struct stat st;
	char *p;

	if (fstat(fd, &st) || lseek(fd, 0, SEEK_SET)) {
		sv_reply_error(o, 500, "%s: %s", what, strerror(errno));
		return -1;
	}
	if ((uint64_t)st.st_size > cap) {
		sv_reply_error(o, 413, "%s has %lld bytes, more than this server's %llu", what,
			       (long long)st.st_size, (unsigned long long)cap);
		return -1;
	}
	if (!(p = malloc((size_t)st.st_size + 1)) || read(fd, p, (size_t)st.st_size) != st.st_size) {
		free(p);
		sv_reply_error(o, 500, "%s: cannot read it back", what);
		return -1;
	}
	o->status = 200;
	o->body = p;
	o->len = (size_t)st.st_size;
	o->type = type;
	snprintf(o->outcome, sizeof(o->outcome), "ok");
	return 0;
}

void sv_op_diff(struct sv_call *c, struct sv_out *o)
{
	char max[32], *err = malloc(ERR_CAP);
	char *argv[] = { "mvm", "diff", "--max-output", max, c->host, (char *)c->query_path, NULL };
	int fd = memfd_create("mvm-serve-diff", MFD_CLOEXEC), st;

	if (!err || fd < 0) {
		sv_reply_error(o, 500, "out of memory");
		goto out;
	}
	if (c->query_path && !sv_guest_path_ok(c->query_path)) {
		sv_reply_error(o, 400, "?path= must be an absolute guest path (a workspace)");
		goto out;
	}
	if (sb_vmm_pid(c->host) <= 0) {
		sv_reply_error(o, 409, "sandbox %s is not running", c->r.name);
		goto out;
	}
	snprintf(max, sizeof(max), "%llu", (unsigned long long)c->s->o.max_file);
	st = sv_run_mvm_out(argv, -1, fd, err, ERR_CAP);
	if (st) {
		sv_reply_error(o, st == 2 ? 400 : 409, "diff: %s", st < 0 ? strerror(-st) : sv_child_reason(err));
		goto out;
	}
	body_from(o, fd, c->s->o.max_file, "text/x-diff", "the patch");
out:
	if (fd >= 0)
		close(fd);
	free(err);
}

struct tarbuf {
	uint8_t *p;
	size_t len, cap;
	uint64_t max;
};

static int tb_room(struct tarbuf *b, size_t more)
{
	if (b->len + more > b->max + 8 * SV_TAR_HDR_MAX)
		return -EFBIG;
	if (b->len + more > b->cap) {
		size_t nc = b->cap ? b->cap : 65536;
		uint8_t *np;

		while (nc < b->len + more)
			nc *= 2;
		if (!(np = realloc(b->p, nc)))
			return -ENOMEM;
		b->p = np;
		b->cap = nc;
	}
	return 0;
}

/* One entry (a file read from @dfd/@rel with no link followed, or a directory). 0 or -errno. */
static int tb_add(struct tarbuf *b, int dfd, const char *rel, bool dir, time_t now)
{
	struct ap_entry *e = calloc(1, sizeof(*e));
	int fd = -1, ret = e ? 0 : -ENOMEM;
	struct stat st;
	long n;

	if (!ret && !dir && ((fd = openat(dfd, rel, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
			     fstat(fd, &st) || !S_ISREG(st.st_mode)))
		ret = fd < 0 ? -errno : -EINVAL;
	if (!ret) {
		e->kind = dir ? AP_DIR : AP_FILE;
		e->mode = dir ? 0755 : 0644;
		e->size = dir ? 0 : (uint64_t)st.st_size;
		ret = e->size > b->max ? -EFBIG : tb_room(b, SV_TAR_HDR_MAX + e->size + SV_TAR_BLOCK);
	}
	if (!ret && (n = sv_tar_header(e, rel, now, b->p + b->len, b->cap - b->len)) < 0)
		ret = -EINVAL;
	if (!ret) {
		b->len += (size_t)n;
		if (!dir && pread(fd, b->p + b->len, e->size, 0) != (ssize_t)e->size)
			ret = -EIO;
	}
	if (!ret) {
		memset(b->p + b->len + e->size, 0, sv_tar_pad(e->size));
		b->len += e->size + sv_tar_pad(e->size);
	}
	if (fd >= 0)
		close(fd);
	free(e);
	return ret;
}

/* The bundle mvm promote wrote in @dir, as one archive in @o. 0, or -1 with @o set. */
static int bundle_tar(struct sv_call *c, struct sv_out *o, const char *dir, int nchecks)
{
	struct tarbuf b = { .max = c->s->o.max_file };
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), ret = dfd < 0 ? -errno : 0;
	time_t now = time(NULL);
	char rel[32];

	if (!ret)
		ret = tb_add(&b, dfd, "changes.patch", false, now);
	if (!ret)
		ret = tb_add(&b, dfd, "report.json", false, now);
	if (!ret && nchecks)
		ret = tb_add(&b, dfd, "checks", true, now);
	for (int i = 1; !ret && i <= nchecks; i++) {
		snprintf(rel, sizeof(rel), "checks/%d.log", i);
		ret = tb_add(&b, dfd, rel, false, now);
	}
	if (!ret && !(ret = tb_room(&b, 2 * SV_TAR_BLOCK))) {
		memset(b.p + b.len, 0, 2 * SV_TAR_BLOCK);
		b.len += 2 * SV_TAR_BLOCK;
	}
	if (dfd >= 0)
		close(dfd);
	if (ret) {
		free(b.p);
		sv_reply_error(o, ret == -EFBIG ? 413 : 500, "the bundle: %s%s", strerror(-ret),
			       ret == -EFBIG ? " (over --max-file)" : "");
		return -1;
	}
	o->status = 200;
	o->body = (char *)b.p;
	o->len = b.len;
	o->type = "application/x-tar";
	return 0;
}

/* A new private directory for one bundle: beside the request log, mode 0700. 0 or -errno. */
static int bundle_home(char *dir, size_t cap)
{
	char log[PATH_MAX];
	int ret = sv_log_default_path(log, sizeof(log));

	if (ret)
		return ret;
	if (snprintf(dir, cap, "%s/bundles", dirname(log)) >= (int)cap)
		return -ENAMETOOLONG;
	if (mkdir(dir, 0700) && errno != EEXIST)
		return -errno;
	strncat(dir, "/XXXXXX", cap - strlen(dir) - 1);
	return mkdtemp(dir) ? 0 : -errno;
}

static int promote_argv(char **v, int cap, struct sv_call *c, struct sv_promote *p, char *out, char *tmo)
{
	int n = 0;

	if (4 + 2 * p->nchecks + 4 + 2 > cap)
		return -E2BIG;
	v[n++] = "mvm";
	v[n++] = "promote";
	v[n++] = "--out";
	v[n++] = out;
	for (int i = 0; i < p->nchecks; i++) {
		v[n++] = "--check";
		v[n++] = p->checks[i];
	}
	if (p->workspace[0]) {
		v[n++] = "--workspace";
		v[n++] = p->workspace;
	}
	if (p->check_timeout) {
		v[n++] = "--check-timeout";
		v[n++] = tmo;
	}
	v[n++] = c->host;
	v[n] = NULL;
	return n;
}

void sv_op_promote(struct sv_call *c, struct sv_out *o)
{
	char home[PATH_MAX], out[PATH_MAX + 16], tmo[16], msg[256], *err = malloc(ERR_CAP);
	char *argv[4 + 2 * SV_MAX_CHECKS + 8];
	struct sv_promote p;
	bool made = false;
	int st = sv_promote_parse(c->body, c->len, &p, msg, sizeof(msg));

	if (st || !err) {
		sv_reply_error(o, err ? st : 500, "%s", err ? msg : "out of memory");
		goto out;
	}
	if (sb_vmm_pid(c->host) <= 0) {
		sv_reply_error(o, 409, "sandbox %s is not running", c->r.name);
		goto out;
	}
	if ((st = bundle_home(home, sizeof(home)))) {
		sv_reply_error(o, 500, "no directory for the bundle: %s", strerror(-st));
		goto out;
	}
	made = true;
	snprintf(out, sizeof(out), "%s/bundle", home);
	snprintf(tmo, sizeof(tmo), "%u", p.check_timeout);
	promote_argv(argv, sizeof(argv) / sizeof(argv[0]), c, &p, out, tmo);
	/* 1: a check failed; the bundle is written all the same (report.json says which). */
	st = sv_run_mvm(argv, -1, err, ERR_CAP);
	if (st != 0 && st != 1) {
		sv_reply_error(o, st == 2 ? 400 : 409, "promote: %s", st < 0 ? strerror(-st) : sv_child_reason(err));
		goto out;
	}
	if (!bundle_tar(c, o, out, p.nchecks))
		snprintf(o->outcome, sizeof(o->outcome), "ok, checks %s", st ? "failed" : "passed");
out:
	if (made)
		rm_tree(home);
	sv_promote_free(&p);
	free(err);
}
