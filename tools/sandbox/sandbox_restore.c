/*
 * Self-contained snapshots of a running sandbox and new sandboxes started
 * from them (`mvm snapshot`, `restore`, `fork`; snapshots/snapshot_dir.h).
 * Errors are printed under the caller's @verb.
 */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/cli_util.h"
#include "common/fs_util.h"
#include "images/image_overlay.h"
#include "images/qcow2.h"
#include "snapshots/disk_layers.h"
#include "snapshots/snap_seal.h"
#include "snapshots/snapshot_dir.h"
#include "tools/sandbox/agent_sync.h"
#include "tools/sandbox/sandbox.h"
#include "tools/sandbox/sandbox_restore.h"
#include "tools/sandbox/sb_seal.h"
#include "tools/sandbox/snap_client.h"
#include "tools/sandbox/snap_config.h"

static int copy_file(const char *src, const char *dst)
{
	char buf[65536];
	int in = open(src, O_RDONLY | O_NOFOLLOW | O_CLOEXEC), ret = 0;
	int out = in < 0 ? -1 : open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	ssize_t n;

	if (in < 0 || out < 0)
		ret = -errno;
	while (!ret && (n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			ret = -EIO;
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return ret;
}

/* Every file of the flat directory @from into @to (renamed, or copied
 * where @to is on another file system), then @from goes. 0 or -errno. */
static int move_files(const char *from, const char *to)
{
	DIR *d = opendir(from);
	struct dirent *e;
	int ret = d ? 0 : -errno;

	while (!ret && (e = readdir(d))) {
		char a[PATH_MAX], b[PATH_MAX];

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(a, sizeof(a), "%s/%s", from, e->d_name);
		snprintf(b, sizeof(b), "%s/%s", to, e->d_name);
		if (rename(a, b) && (errno != EXDEV || (ret = copy_file(a, b)) || unlink(a)))
			ret = ret ? ret : -errno;
	}
	if (d)
		closedir(d);
	rm_tree(from);
	return ret;
}

static void hex(const uint8_t *p, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		snprintf(out + 2 * i, 3, "%02x", p[i]);
}

/* The request for a snapshot into @stage, its files tagged under a key of
 * this snapshot alone (a fresh @salt's, snapshots/snap_mac.h): the VMM
 * never holds the host key. NULL with @err filled. */
static cJSON *snapshot_req(const char *stage, uint8_t salt[SNAP_SALT_LEN], char *err,
			   size_t errlen)
{
	uint8_t k[SNAP_KEY_LEN];
	char kh[2 * SNAP_KEY_LEN + 1], sh[2 * SNAP_SALT_LEN + 1];
	cJSON *req;

	if (snap_mac_salt(salt)) {
		snprintf(err, errlen, "no random bytes for the snapshot's salt");
		return NULL;
	}
	if (snap_mac_key(salt, k, err, errlen))
		return NULL;
	hex(k, sizeof(k), kh);
	hex(salt, SNAP_SALT_LEN, sh);
	explicit_bzero(k, sizeof(k));
	req = cJSON_CreateObject();
	cJSON_AddStringToObject(req, "op", "snapshot");
	cJSON_AddStringToObject(req, "dir", stage);
	cJSON_AddStringToObject(req, "key", kh);
	cJSON_AddStringToObject(req, "salt", sh);
	explicit_bzero(kh, sizeof(kh));
	return req;
}

/* The state the VMM wrote lists its files under the salt it was given: a
 * VMM that kept another snapshot's key cannot reuse it (and its nonces). */
static int check_salt(const char *dir, const uint8_t salt[SNAP_SALT_LEN], char *err,
		      size_t errlen)
{
	struct snap_dir_info *in = calloc(1, sizeof(*in));
	int ret = in ? snap_dir_info(dir, in, err, errlen) : -ENOMEM;

	if (!ret && (in->fver != 3 || memcmp(in->salt, salt, SNAP_SALT_LEN))) {
		snprintf(err, errlen, "%s: the VMM wrote a snapshot that is not tagged under the "
			 "key it was given: refusing it", dir);
		ret = -EBADMSG;
	}
	free(in);
	return ret;
}

/*
 * The VMM may write only in its own state directory (Landlock, and its
 * mount namespace hides the rest): it writes the snapshot into
 * snapshot.out there, and we move the files into @dir.
 */
int sb_snapshot_into(const char *verb, const char *name, const char *dir)
{
	char cfg[PATH_MAX], dst[PATH_MAX + 16], stage[PATH_MAX], err[512];
	uint8_t salt[SNAP_SALT_LEN];
	cJSON *req, *resp;
	int ret = sb_path(name, "snapshot.out", stage, sizeof(stage));

	if (ret)
		return ret;
	rm_tree(stage);		/* a killed snapshot's leftovers */
	if (mkdir(stage, 0700)) {
		cli_err(verb, "%s: %s", stage, strerror(errno));
		return -errno;
	}
	req = snapshot_req(stage, salt, err, sizeof(err));
	if (!req) {
		cli_err(verb, "%s", err);
		rm_tree(stage);
		return -EIO;
	}
	resp = sb_snap_call(verb, name, req);
	if (!resp) {
		rm_tree(stage);
		return -EIO;
	}
	cJSON_Delete(resp);
	ret = move_files(stage, dir);
	if (ret) {
		cli_err(verb, "moving the snapshot into %s: %s", dir, strerror(-ret));
		return ret;
	}
	if (check_salt(dir, salt, err, sizeof(err))) {
		cli_err(verb, "%s", err);
		return -EBADMSG;
	}
	snprintf(dst, sizeof(dst), "%s/config.json", dir);
	ret = sb_path(name, "config.json", cfg, sizeof(cfg));
	if (!ret)
		ret = copy_file(cfg, dst);
	if (ret) {
		cli_err(verb, "copying the configuration: %s", strerror(-ret));
		return ret;
	}
	/* The snapshot as it is now, under the host key: a restore or fork
	 * accepts it only unchanged (snapshots/snap_seal.h). */
	ret = snap_seal_write(dir, "snapshot", err, sizeof(err));
	if (ret)
		cli_err(verb, "%s", err);
	return ret;
}

static int write_restore_file(const char *sdir, const char *snapdir)
{
	char path[PATH_MAX + 32];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/" SNAP_RESTORE_FILE, sdir);
	fp = fopen(path, "we");
	if (!fp)
		return -errno;
	fprintf(fp, "%s\n", snapdir);
	return fclose(fp) ? -EIO : 0;
}

/* config.json from the snapshot, under the new name, checked against the state. */
static int take_config(const char *verb, const char *snapdir, const char *name,
		       const struct snap_dir_info *in)
{
	char src[PATH_MAX + 16], dst[PATH_MAX], err[512];
	struct sb_config c;
	struct timespec t;
	int ret;

	snprintf(src, sizeof(src), "%s/config.json", snapdir);
	ret = sb_path(name, "config.json", dst, sizeof(dst));
	if (!ret)
		ret = copy_file(src, dst);
	if (!ret && snap_seal_check_copy(snapdir, NULL, "config.json", dst, err, sizeof(err))) {
		cli_err(verb, "%s", err);
		return -EBADMSG;
	}
	if (!ret)
		ret = sb_config_load(name, &c);
	if (ret) {
		cli_err(verb, "snapshot configuration: %s", strerror(-ret));
		return ret;
	}
	if (sb_snap_config_ok(&c, in, err, sizeof(err))) {
		cli_err(verb, "snapshot %s", err);
		sb_config_free(&c);
		return -EINVAL;
	}
	/* No options of its own: no published port, the host's resolver, and
	 * (no policy.json) nothing leaves. */
	sb_snap_config_net(&c, NULL);
	/* Made by the CLI: no owner, whatever the snapshot's config.json claims
	 * (it is not trusted to put a sandbox in a remote caller's scope). */
	c.owner[0] = 0;
	clock_gettime(CLOCK_REALTIME, &t);
	c.created = (double)t.tv_sec;
	ret = sb_config_new_mac(&c);	/* a new machine, not the snapshot's twin */
	if (!ret)
		ret = sb_config_save(&c);
	sb_config_free(&c);
	return ret;
}

int sb_restore_into(const char *verb, const char *snapdir, const struct snap_dir_info *verified,
		    const char *name, const char *sdir)
{
	struct snap_dir_info in;
	char err[512] = "";
	int ret = 0;

	/* Once per restore: a memory file the seal cannot vouch for by its
	 * identity is read and hashed in full (snapshots/snap_seal.h). */
	if (verified)
		in = *verified;
	else
		ret = snap_verify_dir(snapdir, &in, err, sizeof(err));
	if (ret) {
		cli_err(verb, "%s: %s", snapdir, err);
		return ret;
	}
	ret = snap_seal_check_state(snapdir, NULL, &in, err, sizeof(err));
	if (ret) {
		cli_err(verb, "%s", err);
		return ret;
	}
	ret = take_config(verb, snapdir, name, &in);
	if (ret)
		return ret;
	ret = snap_copy_layers(snapdir, &in, sdir, err, sizeof(err));
	if (ret) {
		cli_err(verb, "%s", err);
		return ret;
	}
	ret = snap_new_top(sdir, &in);
	if (!ret)
		ret = write_restore_file(sdir, snapdir);
	if (!ret)
		ret = sb_seal(name, SNAP_RESTORE_FILE);
	if (ret) {
		cli_err(verb, "preparing the disk of %s: %s", name, strerror(-ret));
		return ret;
	}
	sb_event(name, "restored");
	ret = sb_start(name, sb_self_exe(), sb_start_timeout(), err, sizeof(err));
	if (ret) {
		/* Kept (stopped) so that `mvm logs` can say why; `mvm rm` removes it. */
		cli_err(verb, "%s did not start: %s", name, err);
		sb_stop(name, 5);
		return 1;
	}
	/* Clock, entropy, hostname and MAC: NAME's, not the snapshot's. */
	ret = agent_new_identity(name, 60 * 1000, err, sizeof(err));
	if (ret)
		cli_err(verb, "%s: %s", name, err);
	return ret ? 1 : 0;
}

int sb_new_state_dir(const char *verb, const char *name, char *dir, size_t cap)
{
	char err[512];
	int ret;

	if (!sb_name_ok(name)) {
		cli_err(verb, "bad name '%s': letters, digits, '.', '_', '-' (at most 63)", name);
		return -EINVAL;
	}
	if (sb_path(name, NULL, dir, cap))
		return -ENAMETOOLONG;
	/* As create does: a root that cannot hold the VMM's sockets is
	 * refused before anything is made there. */
	ret = sb_prepare_root(err, sizeof(err));
	if (ret) {
		cli_err(verb, "%s", err);
		return ret;
	}
	if (mkdir(dir, 0700)) {
		cli_err(verb, errno == EEXIST ? "a sandbox named %s already exists" :
			"cannot create the state directory of %s", name);
		return -EEXIST;
	}
	return 0;
}

int sb_snapshot_to(const char *name, const char *path)
{
	char dir[PATH_MAX], err[1024];
	bool made;

	if (sb_snap_source_ok(name, "snapshot", err, sizeof(err))) {
		cli_err("snapshot", "%s", err);
		return -1;
	}
	made = mkdir(path, 0700) == 0;
	if (!made && errno != EEXIST) {
		cli_err("snapshot", "%s: %s", path, strerror(errno));
		return -1;
	}
	if (!realpath(path, dir) || rmdir(dir) || mkdir(dir, 0700)) {
		/* rmdir + mkdir: only an empty directory is taken. */
		cli_err("snapshot", "%s must be a new or empty directory", path);
		return -1;
	}
	if (sb_snapshot_into("snapshot", name, dir)) {
		rm_tree(dir);
		return -1;
	}
	return 0;
}

int sb_restore_new(const char *path, const char *name)
{
	char snapdir[PATH_MAX], sdir[PATH_MAX], err[512];
	struct snap_dir_info in;
	int ret;

	if (!realpath(path, snapdir)) {
		cli_err("restore", "%s: %s", path, strerror(errno));
		return -1;
	}
	/* Verify before anything exists under the new name. */
	if (snap_verify_dir(snapdir, &in, err, sizeof(err))) {
		cli_err("restore", "%s: %s", path, err);
		return -1;
	}
	if (sb_new_state_dir("restore", name, sdir, sizeof(sdir)))
		return -1;
	ret = sb_restore_into("restore", snapdir, &in, name, sdir);
	if (ret < 0)
		rm_tree(sdir);
	return ret;
}

int sb_fork(const char *name, const char *newname)
{
	char sdir[PATH_MAX], snapdir[PATH_MAX + 16], err[1024];
	int ret;

	if (sb_snap_source_ok(name, "fork", err, sizeof(err))) {
		cli_err("fork", "%s", err);
		return -1;
	}
	if (sb_new_state_dir("fork", newname, sdir, sizeof(sdir)))
		return -1;
	/* The snapshot lives in the fork's own state dir: rm removes both. */
	snprintf(snapdir, sizeof(snapdir), "%s/origin", sdir);
	if (mkdir(snapdir, 0700) || sb_snapshot_into("fork", name, snapdir)) {
		rm_tree(sdir);
		return -1;
	}
	ret = sb_restore_into("fork", snapdir, NULL, newname, sdir);
	if (ret < 0)
		rm_tree(sdir);
	return ret;
}
