/*
 * `mvm snapshot NAME DIR`, `mvm restore DIR NEWNAME`, `mvm fork NAME NEWNAME`:
 * self-contained snapshots of a running sandbox, and new sandboxes started
 * from them (snapshots/snapshot_dir.h). A restore verifies the whole
 * snapshot (state checksum, memory size, every file's checksum) before it
 * creates anything.
 */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "images/qcow2.h"
#include "snapshots/disk_layers.h"
#include "snapshots/snapshot_dir.h"
#include "common/cli_util.h"
#include "tools/cli/cmd_sandbox.h"
#include "tools/cli/cmd_snapshot.h"
#include "tools/sandbox/sandbox.h"

static const char snapshot_usage[] =
	"usage: mvm snapshot NAME DIR\n"
	"Write a self-contained snapshot of the running sandbox NAME (memory,\n"
	"vCPUs, devices, disk layers, configuration) into DIR (new or empty).\n"
	"The sandbox pauses for the memory copy and then runs on.\n";
static const char restore_usage[] =
	"usage: mvm restore DIR NEWNAME\n"
	"Start the new sandbox NEWNAME from the snapshot in DIR, running exactly\n"
	"where the snapshot left off. DIR's memory file is mapped, not copied:\n"
	"keep DIR unchanged while NEWNAME exists. A damaged or tampered snapshot\n"
	"is refused and nothing is created.\n";
static const char fork_usage[] =
	"usage: mvm fork NAME NEWNAME\n"
	"Snapshot the running sandbox NAME and start NEWNAME from it; both run\n"
	"on independently (NEWNAME keeps the snapshot in its state directory).\n";

static bool want_help(int argc, char **argv, const char *usage)
{
	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		fputs(usage, stdout);
		return true;
	}
	return false;
}

/* Remove the files of a directory we created, then the directory. */
static void rm_tree(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		char p[PATH_MAX];

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		if (e->d_type == DT_DIR)
			rm_tree(p);
		else
			unlink(p);
	}
	closedir(d);
	rmdir(dir);
}

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

/*
 * Ask NAME's VMM to write the snapshot, then move it into @dir (existing,
 * empty, absolute). The VMM may write only in its own state directory
 * (Landlock, and its mount namespace hides the rest): it writes into
 * snapshot.out there, and we move the files.
 */
static int snapshot_into(const char *verb, const char *name, const char *dir)
{
	char cfg[PATH_MAX], dst[PATH_MAX + 16], stage[PATH_MAX];
	cJSON *req, *resp;
	int ret = sb_path(name, "snapshot.out", stage, sizeof(stage));

	if (ret)
		return ret;
	rm_tree(stage);		/* a killed snapshot's leftovers */
	if (mkdir(stage, 0700)) {
		cli_err(verb, "%s: %s", stage, strerror(errno));
		return -errno;
	}
	req = cJSON_CreateObject();
	cJSON_AddStringToObject(req, "op", "snapshot");
	cJSON_AddStringToObject(req, "dir", stage);
	resp = snap_cli_call(verb, name, req);
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
	snprintf(dst, sizeof(dst), "%s/config.json", dir);
	ret = sb_path(name, "config.json", cfg, sizeof(cfg));
	if (!ret)
		ret = copy_file(cfg, dst);
	if (ret)
		cli_err(verb, "copying the configuration: %s", strerror(-ret));
	return ret;
}

/* Two arguments, the first a sandbox (@sandbox) or not. false: return *rc. */
static bool args_ok(const char *verb, const char *usage, int argc, char **argv, bool sandbox,
		    int *rc)
{
	*rc = 0;
	if (want_help(argc, argv, usage))
		return false;
	*rc = MVM_EXIT_USAGE;
	if (argc != 3 || argv[1][0] == '-') {
		fputs(usage, stderr);
		return false;
	}
	*rc = MVM_EXIT_ERROR;
	if (sandbox && (!sb_name_ok(argv[1]) || !sb_exists(argv[1]))) {
		cli_err(verb, "no sandbox named %s", argv[1]);
		return false;
	}
	return true;
}

int cmd_snapshot(int argc, char **argv)
{
	char dir[PATH_MAX];
	bool made;
	int rc;

	if (!args_ok("snapshot", snapshot_usage, argc, argv, true, &rc))
		return rc;
	made = mkdir(argv[2], 0700) == 0;
	if (!made && errno != EEXIST) {
		cli_err("snapshot", "%s: %s", argv[2], strerror(errno));
		return MVM_EXIT_ERROR;
	}
	if (!realpath(argv[2], dir) || rmdir(dir) || mkdir(dir, 0700)) {
		/* rmdir + mkdir: only an empty directory is taken. */
		cli_err("snapshot", "%s must be a new or empty directory", argv[2]);
		return MVM_EXIT_ERROR;
	}
	if (snapshot_into("snapshot", argv[1], dir)) {
		rm_tree(dir);
		return MVM_EXIT_ERROR;
	}
	return 0;
}

/* Name of the next overlay: past every layer-N.qcow2 the snapshot holds. */
static unsigned next_layer(const struct snap_dir_info *in)
{
	unsigned next = 1, n;

	for (int i = 1; i < in->nfiles; i++)
		if (sscanf(in->f[i].name, "layer-%u.qcow2", &n) == 1 && n >= next)
			next = n + 1;
	return next;
}

/* In the new state dir: a fresh overlay over the snapshot's top layer. */
static int new_top(const char *sdir, const struct snap_dir_info *in)
{
	const struct snap_file *top = &in->f[in->nfiles - 1];
	unsigned next = next_layer(in);
	char path[PATH_MAX + 80], below[PATH_MAX + 80];
	FILE *fp;
	int ret;

	snprintf(path, sizeof(path), "%s/layer-%u.qcow2", sdir, next);
	snprintf(below, sizeof(below), "%s", top->name);	/* relative: beside it */
	ret = qcow2_create_overlay(path, below, top->format, 0, 0);
	if (ret)
		return ret;
	snprintf(path, sizeof(path), "%s/" DISK_TOP_FILE, sdir);
	fp = fopen(path, "we");
	if (!fp)
		return -errno;
	fprintf(fp, "layer-%u.qcow2 qcow2 %u %d\n", next, next + 1, in->nfiles - 1);
	return fclose(fp) ? -EIO : 0;
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
	char src[PATH_MAX + 16], dst[PATH_MAX];
	struct sb_config c;
	struct timespec t;
	int ret;

	snprintf(src, sizeof(src), "%s/config.json", snapdir);
	ret = sb_path(name, "config.json", dst, sizeof(dst));
	if (!ret)
		ret = copy_file(src, dst);
	if (!ret)
		ret = sb_config_load(name, &c);
	if (ret) {
		cli_err(verb, "snapshot configuration: %s", strerror(-ret));
		return ret;
	}
	if (c.mem != in->ram_size || c.cpus != in->ncpus) {
		cli_err(verb, "snapshot configuration does not match its state (memory or vCPUs)");
		sb_config_free(&c);
		return -EINVAL;
	}
	clock_gettime(CLOCK_REALTIME, &t);
	c.created = (double)t.tv_sec;
	ret = sb_config_save(&c);
	sb_config_free(&c);
	return ret;
}

/* @sdir exists. <0: failed before anything ran (the caller removes @sdir);
 * 1: the VMM did not start (the sandbox stays, stopped, for `mvm logs`). */
static int restore_into(const char *verb, const char *snapdir, const char *name, const char *sdir)
{
	struct snap_dir_info in;
	char err[512] = "";
	int ret = snap_verify_dir(snapdir, &in, err, sizeof(err));

	if (ret) {
		cli_err(verb, "%s: %s", snapdir, err);
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
	ret = new_top(sdir, &in);
	if (!ret)
		ret = write_restore_file(sdir, snapdir);
	if (ret) {
		cli_err(verb, "preparing the disk of %s: %s", name, strerror(-ret));
		return ret;
	}
	sb_event(name, "restored", "");
	ret = sb_start(name, sb_self_exe(), sb_start_timeout(), err, sizeof(err));
	if (ret) {
		/* Kept (stopped) so that `mvm logs` can say why; `mvm rm` removes it. */
		cli_err(verb, "%s did not start: %s", name, err);
		sb_stop(name, 5);
		return 1;
	}
	return snap_cli_sync(verb, name) ? 1 : 0;
}

static int new_state_dir(const char *verb, const char *name, char *dir, size_t cap)
{
	char root[PATH_MAX];

	if (!sb_name_ok(name)) {
		cli_err(verb, "bad name '%s': letters, digits, '.', '_', '-' (at most 63)", name);
		return -EINVAL;
	}
	if (sb_root(root, sizeof(root)) || sb_path(name, NULL, dir, cap))
		return -ENAMETOOLONG;
	for (char *p = strchr(root + 1, '/');; p = strchr(p + 1, '/')) {	/* mkdir -p */
		if (p)
			*p = 0;
		mkdir(root, 0700);
		if (!p)
			break;
		*p = '/';
	}
	if (mkdir(dir, 0700)) {
		cli_err(verb, errno == EEXIST ? "a sandbox named %s already exists" :
			"cannot create the state directory of %s", name);
		return -EEXIST;
	}
	return 0;
}

int cmd_restore(int argc, char **argv)
{
	char snapdir[PATH_MAX], sdir[PATH_MAX];
	struct snap_dir_info in;
	char err[512];
	int ret;

	if (!args_ok("restore", restore_usage, argc, argv, false, &ret))
		return ret;
	if (!realpath(argv[1], snapdir)) {
		cli_err("restore", "%s: %s", argv[1], strerror(errno));
		return MVM_EXIT_ERROR;
	}
	/* Verify before anything exists under the new name. */
	if (snap_verify_dir(snapdir, &in, err, sizeof(err))) {
		cli_err("restore", "%s: %s", argv[1], err);
		return MVM_EXIT_ERROR;
	}
	if (new_state_dir("restore", argv[2], sdir, sizeof(sdir)))
		return MVM_EXIT_ERROR;
	ret = restore_into("restore", snapdir, argv[2], sdir);
	if (ret < 0)
		rm_tree(sdir);
	if (ret)
		return MVM_EXIT_ERROR;
	printf("%s\n", argv[2]);
	return 0;
}

int cmd_fork(int argc, char **argv)
{
	char sdir[PATH_MAX], snapdir[PATH_MAX + 16];
	int ret;

	if (!args_ok("fork", fork_usage, argc, argv, true, &ret))
		return ret;
	if (new_state_dir("fork", argv[2], sdir, sizeof(sdir)))
		return MVM_EXIT_ERROR;
	/* The snapshot lives in the fork's own state dir: rm removes both. */
	snprintf(snapdir, sizeof(snapdir), "%s/origin", sdir);
	if (mkdir(snapdir, 0700) || snapshot_into("fork", argv[1], snapdir)) {
		rm_tree(sdir);
		return MVM_EXIT_ERROR;
	}
	ret = restore_into("fork", snapdir, argv[2], sdir);
	if (ret < 0)
		rm_tree(sdir);
	if (ret)
		return MVM_EXIT_ERROR;
	printf("%s\n", argv[2]);
	return 0;
}
