/* Templates at run time (tools/sandbox/template.h). */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/dir_publish.h"
#include "common/start_trace.h"
#include "images/image_store.h"
#include "snapshots/snap_seal.h"
#include "snapshots/snapshot_dir.h"
#include "common/fs_util.h"
#include "guest/agent/proto.h"
#include "snapshots/template.h"
#include "snapshots/tpl_ledger.h"
#include "tools/sandbox/agent_sync.h"
#include "tools/sandbox/sandbox.h"
#include "tools/sandbox/sandbox_policy.h"
#include "tools/sandbox/sandbox_restore.h"
#include "tools/sandbox/snap_config.h"
#include "tools/sandbox/template.h"
#include "tools/sandbox/sb_seal.h"

#define TPL_SYNC_TIMEOUT_MS (60 * 1000)

/* Remove a directory this code made (sealed ones too): one level of files. */
static int remove_dir(const char *dir)
{
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), ret = 0;
	struct dirent *e;
	DIR *d;

	if (dfd < 0)
		return errno == ENOENT ? 0 : -errno;
	fchmod(dfd, 0700);
	d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return -errno;
	}
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
		    unlinkat(dirfd(d), e->d_name, 0) && !ret)
			ret = -errno;
	closedir(d);
	return rmdir(dir) && !ret ? -errno : ret;
}

/* A whole small file (config.json) from @src to a new @dst. */
static int copy_small(const char *src, const char *dst)
{
	char buf[65536];
	int in = open(src, O_RDONLY | O_NOFOLLOW | O_CLOEXEC), out = -1, ret = 0;
	ssize_t n = in < 0 ? -1 : read(in, buf, sizeof(buf));

	if (n < 0 || n == (ssize_t)sizeof(buf))
		ret = in < 0 || n < 0 ? -errno : -EFBIG;
	if (!ret && (out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) < 0)
		ret = -errno;
	if (!ret && write(out, buf, (size_t)n) != n)
		ret = -EIO;
	if (in >= 0)
		close(in);
	if (out >= 0 && close(out) && !ret)
		ret = -EIO;
	return ret;
}

/* Template @tpl's ledger (snapshots/tpl_ledger.h): in the state root, which
 * no VMM reaches, never in the store. "" when the name is too long. */
static void ledger_path(const char *tpl, char *out, size_t cap)
{
	char root[PATH_MAX];

	if (sb_root(root, sizeof(root)) || snprintf(out, cap, "%s/.template-%s.seen", root, tpl) >=
	    (int)cap)
		out[0] = 0;
}

/* The sealed template's layers into its ledger (snapshots/tpl_ledger.h),
 * so that its first start does not read them again: held, read once more
 * through the held descriptors (a write before the leases were taken would
 * otherwise go unseen), recorded. Best effort: without it, that start
 * reads them. */
static void record_layers(const char *stage, const char *tpl)
{
	char ledger[PATH_MAX];

	struct snap_dir_info *in = calloc(1, sizeof(*in));
	struct tpl_meta *m = calloc(1, sizeof(*m));
	struct tpl_hold *hold = malloc(sizeof(*hold));
	char why[512];

	ledger_path(tpl, ledger, sizeof(ledger));
	if (hold)
		tpl_hold_init(hold, ledger);
	if (in && m && hold && !tpl_check_held(stage, in, m, hold, why, sizeof(why)))
		tpl_hold_commit(hold);
	if (hold)
		tpl_hold_release(hold);
	free(hold);
	free(in);
	free(m);
}

/* In the staging directory @stage: snapshot, configuration, verify, seal. */
static int fill_stage(const char *tpl, const char *from, const char *stage, char *err,
		      size_t errlen)
{
	struct snap_dir_info in;
	int ret = sb_snapshot_into("template", from, stage);

	if (ret) {
		snprintf(err, errlen, "no template written");
		return ret;
	}
	/* Verified once, here: starts only compare identities later. */
	ret = snap_verify_dir(stage, &in, err, errlen);
	/* An image's base: referenced, and its checksum taken once, here. */
	if (!ret && in.has_base && (ret = snap_base_sha256(&in.base)))
		snprintf(err, errlen, "checksum of the base image %s: %s", in.base.path,
			 strerror(-ret));
	if (!ret)
		ret = tpl_seal(stage, tpl, from, &in, err, errlen);
	if (!ret)
		record_layers(stage, tpl);
	return ret;
}

int sb_template_create(const char *tpl, const char *from, char *err, size_t errlen)
{
	char root[PATH_MAX], stage[PATH_MAX], dst[PATH_MAX];
	int ret;

	if (tpl_dir(tpl, dst, sizeof(dst)) || tpl_root(root, sizeof(root))) {
		snprintf(err, errlen, "bad template name '%s': letters, digits, '.', '_', '-' "
			 "(at most %d)", tpl, TPL_NAME_MAX);
		return -EINVAL;
	}
	if (!sb_name_ok(from) || !sb_exists(from)) {
		snprintf(err, errlen, "no sandbox named %s", from);
		return -ENOENT;
	}
	if (access(dst, F_OK) == 0) {
		snprintf(err, errlen, "a template named %s already exists (mvm template rm %s)", tpl, tpl);
		return -EEXIST;
	}
	/* Before the source is paused at all. */
	ret = sb_snap_source_ok(from, "make a template of", err, errlen);
	if (ret)
		return ret;
	ret = mkdir_p(root, 0700);
	snprintf(stage, sizeof(stage), "%s/.%s.XXXXXX", root, tpl);
	if (ret || !mkdtemp(stage)) {
		snprintf(err, errlen, "cannot create the template store %s: %s", root,
			 strerror(ret ? -ret : errno));
		return ret ? ret : -errno;
	}
	ret = fill_stage(tpl, from, stage, err, errlen);
	/* Into place only when complete, never over another template. */
	if (!ret) {
		char why[PATH_MAX + 160];

		ret = dir_publish(stage, dst, why, sizeof(why));
		if (ret == -EEXIST)
			snprintf(err, errlen, "a template named %s appeared meanwhile", tpl);
		else if (ret)
			snprintf(err, errlen, "cannot move the template into place: %s", why);
	}
	if (ret)
		remove_dir(stage);
	return ret;
}

int sb_template_users(const char *tpl, char ***names)
{
	char **all = NULL;
	int n = sb_list(&all), k = 0;

	*names = NULL;
	if (n <= 0)
		return n;
	for (int i = 0; i < n; i++) {
		struct sb_config c;
		bool uses = false;

		if (!sb_config_load(all[i], &c)) {
			uses = !strcmp(c.template_name, tpl);
			sb_config_free(&c);
		}
		if (uses)
			all[k++] = all[i];
		else
			free(all[i]);
	}
	if (k)
		*names = all;
	else
		free(all);
	return k;
}

int sb_template_remove(const char *tpl, char *err, size_t errlen)
{
	char dir[PATH_MAX];
	int ret = tpl_dir(tpl, dir, sizeof(dir));

	if (!ret && access(dir, F_OK))
		ret = -ENOENT;
	if (!ret)
		ret = remove_dir(dir);
	if (!ret) {
		char ledger[PATH_MAX];

		ledger_path(tpl, ledger, sizeof(ledger));
		if (ledger[0])
			unlink(ledger);
	}
	if (ret == -ENOENT)
		snprintf(err, errlen, "no template named %s", tpl);
	else if (ret)
		snprintf(err, errlen, "removing template %s: %s", tpl, strerror(-ret));
	return ret;
}

/* The template's disk layers into the state dir: hard links (no copy, one
 * page cache), or verified copies when the store is on another file system.
 * A link made of a layer @hold holds is that very inode, or nothing is. */
static int take_layers(const char *tdir, const struct snap_dir_info *in, const char *sdir,
		       const struct tpl_hold *hold, char *err, size_t errlen)
{
	int tfd = open(tdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int sfd = open(sdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), ret = 0;

	if (tfd < 0 || sfd < 0)
		ret = -errno;
	for (int i = 1; !ret && i < in->nfiles; i++) {
		struct stat st;

		if (linkat(tfd, in->f[i].name, sfd, in->f[i].name, 0))
			ret = -errno;
		else if (hold->fd[i] >= 0 && (fstatat(sfd, in->f[i].name, &st, AT_SYMLINK_NOFOLLOW) ||
					       !tpl_hold_is(hold, i, &st)))
			ret = -EBADMSG, snprintf(err, errlen, "template file %s was replaced while "
						 "it was linked: refusing it", in->f[i].name);
	}
	if (tfd >= 0)
		close(tfd);
	if (sfd >= 0)
		close(sfd);
	if (ret == -EXDEV || ret == -EPERM || ret == -EMLINK) {
		for (int i = 1; i < in->nfiles; i++) {
			char p[PATH_MAX + 80];

			snprintf(p, sizeof(p), "%s/%s", sdir, in->f[i].name);
			unlink(p);
		}
		return snap_copy_layers(tdir, in, sdir, err, errlen);
	}
	if (ret && ret != -EBADMSG)
		snprintf(err, errlen, "linking the template's disk layers: %s", strerror(-ret));
	return ret;
}

/* The template's configuration under the new name, with this sandbox's own
 * environment additions and network options; the machine stays the template's. */
static int take_config(const struct sb_template_start *o, const char *tdir,
		       const struct snap_dir_info *in, const struct tpl_meta *m, char *err,
		       size_t errlen)
{
	char src[PATH_MAX + 16], dst[PATH_MAX], why[512];
	uint8_t sha[32];
	struct sb_config c;
	struct timespec t;
	int ret;

	snprintf(src, sizeof(src), "%s/config.json", tdir);
	ret = sb_path(o->name, "config.json", dst, sizeof(dst));
	if (!ret)
		ret = copy_small(src, dst);
	/* The copy is what the seal tpl_check verified names: a swap of the
	 * template's file after the check changes nothing. */
	if (!ret && (ret = snap_seal_digest_file(dst, 1 << 20, sha)) == 0 &&
	    snap_seal_expect(&m->seal, tdir, "config.json", sha, err, errlen))
		return -EBADMSG;
	if (!ret)
		ret = sb_config_load(o->name, &c);
	if (ret) {
		snprintf(err, errlen, "template configuration: %s", strerror(-ret));
		return ret;
	}
	ret = sb_snap_config_ok(&c, in, why, sizeof(why));
	if (ret)
		snprintf(err, errlen, "template %s: %s", o->tpl, why);
	/* `--net none` agrees with a template without a network device (what
	 * mvm serve passes for a create without allow rules). */
	else if (c.net_off && (o->net->nr_allow || o->net->nr_publish || (o->net->mode && o->net->enabled)))
		ret = -EINVAL, snprintf(err, errlen, "template %s has no network device: "
					 "network options do not apply", o->tpl);
	else if (!c.net_off && !o->net->enabled)
		ret = -EINVAL, snprintf(err, errlen, "template %s has a network device: leave out "
					 "--net none (no rule: nothing leaves)", o->tpl);
	for (int i = 0; !ret && i < o->nenv && c.nenv < SB_MAX_ENV; i++)
		c.env[c.nenv++] = strdup(o->env[i]);
	sb_snap_config_net(&c, o->net);
	c.cpu_quota = o->cpu_quota;
	c.expires = o->expires;
	snprintf(c.name, sizeof(c.name), "%s", o->name);
	snprintf(c.template_name, sizeof(c.template_name), "%s", o->tpl);
	snprintf(c.owner, sizeof(c.owner), "%s", o->owner ? o->owner : "");
	clock_gettime(CLOCK_REALTIME, &t);
	c.created = (double)t.tv_sec;
	if (!ret && (ret = sb_config_new_mac(&c)))
		snprintf(err, errlen, "a MAC address: %s", strerror(-ret));
	if (!ret && (ret = sb_config_save(&c)))
		snprintf(err, errlen, "writing config.json: %s", strerror(-ret));
	if (!ret && !c.net_off)
		ret = sb_policy_create(o->name, o->net, err, errlen);
	sb_config_free(&c);
	return ret;
}

/* Everything before the VMM starts; on failure the caller removes @sdir.
 * The layers first: the longer before the ledger is written, the likelier
 * the clock has passed their links' change time (tpl_hold_commit). */
static int prepare(const struct sb_template_start *o, const char *tdir,
		   const struct snap_dir_info *in, const struct tpl_meta *m,
		   const struct tpl_hold *hold, const char *sdir, char *err, size_t errlen)
{
	char p[PATH_MAX + 32];
	FILE *fp;
	int ret = take_layers(tdir, in, sdir, hold, err, errlen);

	if (!ret)
		ret = take_config(o, tdir, in, m, err, errlen);
	if (!ret && (ret = snap_new_top(sdir, in)))
		snprintf(err, errlen, "the new disk overlay: %s", strerror(-ret));
	if (ret)
		return ret;
	/* The VMM maps the template's memory and loads its state (vmm_serve.c). */
	snprintf(p, sizeof(p), "%s/" SNAP_RESTORE_FILE, sdir);
	fp = fopen(p, "we");
	if (!fp || fprintf(fp, "%s\n", tdir) < 0 || fclose(fp)) {
		snprintf(err, errlen, "writing %s: %s", p, strerror(errno));
		return -EIO;
	}
	ret = sb_seal(o->name, SNAP_RESTORE_FILE);
	if (ret)
		snprintf(err, errlen, "sealing %s: %s", p, strerror(-ret));
	return ret;
}

int sb_template_prepare(const struct sb_template_start *o, const char *sdir, char *err,
			size_t errlen)
{
	struct snap_dir_info *in = calloc(1, sizeof(*in));
	struct tpl_meta *m = calloc(1, sizeof(*m));
	struct tpl_hold *hold = malloc(sizeof(*hold));
	char tdir[PATH_MAX], ledger[PATH_MAX];
	int ret = !in || !m || !hold ? -ENOMEM : 0;

	ledger_path(o->tpl, ledger, sizeof(ledger));
	if (hold)
		tpl_hold_init(hold, ledger);
	if (!ret && tpl_dir(o->tpl, tdir, sizeof(tdir))) {
		snprintf(err, errlen, "bad template name '%s'", o->tpl);
		ret = -EINVAL;
	} else if (!ret && access(tdir, F_OK)) {
		snprintf(err, errlen, "no template named %s (mvm template ls)", o->tpl);
		ret = -ENOENT;
	}
	/* The cheap check: a stat per file, the state parsed; the layers read
	 * only when they changed since the last start (snapshots/tpl_ledger.h). */
	if (!ret)
		ret = tpl_check_held(tdir, in, m, hold, err, errlen);
	start_trace("tpl: checked");
	if (!ret)
		ret = prepare(o, tdir, in, m, hold, sdir, err, errlen);
	/* Every held layer was read or found unchanged, and linked: recorded
	 * as it is now, its change time that of this start's link. */
	if (!ret)
		tpl_hold_commit(hold);
	start_trace("tpl: prepared");
	if (hold)
		tpl_hold_release(hold);
	free(hold);
	free(in);
	free(m);
	return ret;
}

void sb_template_unlink(const char *name)
{
	char tdir[PATH_MAX], sdir[PATH_MAX], ledger[PATH_MAX];
	struct sb_config c;
	bool from_tpl;

	if (sb_config_load(name, &c))
		return;
	from_tpl = c.template_name[0] && !tpl_dir(c.template_name, tdir, sizeof(tdir)) &&
		   !access(tdir, F_OK);
	ledger_path(c.template_name, ledger, sizeof(ledger));
	sb_config_free(&c);
	if (from_tpl && ledger[0] && !sb_path(name, NULL, sdir, sizeof(sdir)))
		tpl_unlink_layers(tdir, ledger, sdir);
}

int sb_template_identity(const char *name, char *err, size_t errlen)
{
	return agent_new_identity(name, TPL_SYNC_TIMEOUT_MS, err, errlen);
}

/* Templates and images are separate stores: say so when TPL names an image. */
static void not_found(const char *tpl, char *err, size_t errlen)
{
	char img[PATH_MAX], *store = image_store_dir();
	bool image = store && image_store_resolve(tpl, img, sizeof(img)) == 0 &&
		     !strncmp(img, store, strlen(store));	/* not a file in the cwd */

	free(store);
	if (image)
		snprintf(err, errlen, "no template named %s (mvm template ls); %s is an image: "
			 "--image %s boots it, a template is made from a running sandbox "
			 "(mvm template create)", tpl, tpl, tpl);
	else
		snprintf(err, errlen, "no template named %s (mvm template ls)", tpl);
}

int sb_template_start(const struct sb_template_start *o, char *err, size_t errlen)
{
	char sdir[PATH_MAX];
	int ret;

	if (!tpl_exists(o->tpl)) {
		not_found(o->tpl, err, errlen);
		return -ENOENT;
	}
	ret = sb_mkdir(o->name, sdir, sizeof(sdir));
	if (ret == -EEXIST)
		snprintf(err, errlen, "a sandbox named %s already exists", o->name);
	else if (ret)
		snprintf(err, errlen, "cannot create the state directory of %s", o->name);
	if (ret)
		return ret;
	ret = sb_template_prepare(o, sdir, err, errlen);
	if (ret) {
		sb_remove_state(o->name);	/* nothing is left behind */
		return ret;
	}
	sb_event(o->name, "created");
	/* No ping first: the guest's agent listened when the template was
	 * taken, so the identity request is the first contact (one round trip
	 * less), and create returns only once it is answered. */
	ret = sb_start_serving(o->name, sb_self_exe(), sb_start_timeout(), err, errlen);
	start_trace("tpl: started");
	if (!ret)
		ret = sb_template_identity(o->name, err, errlen);
	start_trace("tpl: identity");
	if (ret) {
		sb_stop(o->name, 5);
		return 1;
	}
	return 0;
}
