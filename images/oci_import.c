/* `mvm image import`: an OCI image into the store (oci_import.h). */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/file_io.h"
#include "common/fs_util.h"
#include "common/mono_time.h"
#include "images/image_hash.h"
#include "images/image_store.h"
#include "images/oci_import.h"
#include "images/oci_unpack.h"

struct work {
	char *dir;			/* STORE/.import.XXXXXX */
	char path[4200];		/* scratch: a file in it */
};

static const char *at(struct work *w, const char *name)
{
	snprintf(w->path, sizeof(w->path), "%s/%s", w->dir, name);
	return w->path;
}

/* Run @argv, stdout to /dev/null, stderr into @log; its exit status, or -1. */
static int run_tool(char *const argv[], const char *log)
{
	int st, fd, null;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		null = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (fd < 0 || null < 0 || dup2(null, 1) < 0 || dup2(fd, 2) < 0)
			_exit(126);
		execvp(argv[0], argv);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* The first line of @log other than debugfs's banner, into @err. */
static int log_complaint(const char *log, char *err, size_t errlen)
{
	char line[512];
	FILE *f = fopen(log, "r");
	int found = 0;

	while (f && !found && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		if (line[0] && strncmp(line, "debugfs ", 8)) {
			snprintf(err, errlen, "%s", line);
			found = 1;
		}
	}
	if (f)
		fclose(f);
	return found;
}

/* mkfs.ext4 -d from the stage, then the owners and modes through debugfs
 * (the script the unpacker wrote). */
static int make_ext4(struct work *w, const struct oci_staged *st, uint64_t *size, char *err,
		     size_t errlen)
{
	char img[4200], script[4200], stage[4200], log[4200];
	FILE *f;
	int ret, fd;

	snprintf(img, sizeof(img), "%s", at(w, "img"));
	snprintf(script, sizeof(script), "%s", at(w, "owners"));
	snprintf(stage, sizeof(stage), "%s", at(w, "root"));
	snprintf(log, sizeof(log), "%s", at(w, "tool.log"));
	/* mkfs.ext4 makes a lost+found the image did not have: the root then
	 * holds exactly the layers' merge. */
	if (!st->has_lost_found) {
		if (!(f = fopen(script, "ae")))
			return -errno;
		fputs("rmdir /lost+found\n", f);
		if (fclose(f))
			return -EIO;
	}
	if (!*size)
		*size = ((st->content * 3 / 2 + (256ULL << 20)) + (64ULL << 20) - 1) & ~((64ULL << 20) - 1);
	fd = open(img, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0 || ftruncate(fd, (off_t)*size)) {
		ret = -errno;
		if (fd >= 0)
			close(fd);
		snprintf(err, errlen, "%s: %s", img, strerror(-ret));
		return ret;
	}
	close(fd);
	char *mkfs[] = { "mkfs.ext4", "-q", "-F", "-L", "mvm-root", "-E", "root_owner=0:0",
			 "-d", stage, img, NULL };
	char *dbg[] = { "debugfs", "-w", "-f", script, img, NULL };

	if ((ret = run_tool(mkfs, log))) {
		if (!log_complaint(log, err, errlen))
			snprintf(err, errlen, "mkfs.ext4 failed (status %d)", ret);
		return -EIO;
	}
	/* debugfs exits 0 whatever its commands did: its stderr says. */
	if (run_tool(dbg, log) || log_complaint(log, err, errlen)) {
		if (!err[0])
			snprintf(err, errlen, "debugfs failed");
		return -EIO;
	}
	return 0;
}

static cJSON *metadata(const struct oci_import *im, const struct oci_staged *st, uint64_t size,
		       double seconds)
{
	cJSON *j = cJSON_CreateObject(), *oci = cJSON_CreateObject();
	cJSON *defaults = cJSON_Parse(st->defaults);
	char when[32], digest[80];
	time_t now = time(NULL);
	struct tm tm;

	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
	snprintf(digest, sizeof(digest), "%s%s", st->digest[0] ? "sha256:" : "", st->digest);
	if (!j || !oci || !cJSON_IsObject(defaults)) {
		cJSON_Delete(j);
		cJSON_Delete(oci);
		cJSON_Delete(defaults);
		return NULL;
	}
	cJSON_AddStringToObject(j, "name", im->name);
	cJSON_AddStringToObject(j, "format", "raw");
	cJSON_AddStringToObject(j, "filesystem", "ext4");
	cJSON_AddNumberToObject(j, "size", (double)size);
	cJSON_AddNumberToObject(j, "content_bytes", (double)st->content);
	cJSON_AddStringToObject(j, "created", when);
	cJSON_AddNumberToObject(j, "build_seconds", seconds);
	cJSON_AddStringToObject(j, "source", "oci import");
	cJSON_AddStringToObject(oci, "source", im->source);
	cJSON_AddStringToObject(oci, "kind", st->docker ? "docker-archive" : "oci");
	cJSON_AddStringToObject(oci, st->docker ? "config_digest" : "manifest_digest", digest);
	cJSON_AddNumberToObject(oci, "layers", st->layers);
	cJSON_AddItemToObject(oci, "config", defaults);
	if (st->has_user) {
		cJSON *u = cJSON_AddObjectToObject(oci, "user");

		cJSON_AddNumberToObject(u, "uid", st->uid);
		cJSON_AddNumberToObject(u, "gid", st->gid);
	}
	cJSON_AddItemToObject(j, "oci", oci);
	return j;
}

static int write_meta(struct work *w, cJSON *j)
{
	char *text = j ? cJSON_Print(j) : NULL;
	/* Readers of NAME.json take at most 64 KiB (image_hash.c, image_defaults.c). */
	int ret = !text ? -ENOMEM : strlen(text) >= 65536 ? -EFBIG : file_write_atomic(at(w, "json"), text);

	cJSON_free(text);
	if (!ret && chmod(w->path, 0644))
		ret = -errno;
	return ret;
}

/* Image first, then NAME.json (image_build's order). Without --force the
 * image never replaces one that appeared meanwhile (link(2) refuses). */
static int publish(struct work *w, const char *out, const char *meta, bool force, char *err,
		   size_t errlen)
{
	char img[4200];
	int ret = 0;

	snprintf(img, sizeof(img), "%s", at(w, "img"));
	if (force && unlink(meta) && errno != ENOENT)
		ret = -errno;
	else if (force ? rename(img, out) : link(img, out))
		ret = -errno;
	if (ret) {
		snprintf(err, errlen, "%s: %s", out, ret == -EEXIST ? "exists (--force replaces it)"
								   : strerror(-ret));
		return ret;
	}
	if (!force)
		unlink(img);
	if (rename(at(w, "json"), meta)) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", meta, strerror(-ret));
		unlink(out);
	}
	return ret;
}

static int paths(struct oci_import *im, struct work *w, char **meta, char *err, size_t errlen)
{
	char *store = image_store_dir();
	int ret = -ENOMEM;

	if (!store)
		return ret;
	if ((ret = mkdir_p(store, 0755))) {
		snprintf(err, errlen, "%s: %s", store, strerror(-ret));
		goto out;
	}
	ret = -ENOMEM;
	if (asprintf(&im->out, "%s/%s.ext4", store, im->name) < 0 ||
	    asprintf(meta, "%s/%s.json", store, im->name) < 0 ||
	    asprintf(&w->dir, "%s/.import.XXXXXX", store) < 0)
		goto out;
	ret = 0;
	if (!im->force && (!access(im->out, F_OK) || !access(*meta, F_OK))) {
		snprintf(err, errlen, "image '%s' exists (--force replaces it)", im->name);
		ret = -EEXIST;
	} else if (!mkdtemp(w->dir)) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", store, strerror(-ret));
		free(w->dir);
		w->dir = NULL;
	}
out:
	free(store);
	return ret;
}

static int import_in(struct oci_import *im, struct work *w, const char *meta, char *err,
		     size_t errlen)
{
	const struct oci_limits *lim = im->lim ? im->lim : &oci_limits_default;
	struct oci_staged *st = calloc(1, sizeof(*st));
	uint64_t size = im->size;
	double t0 = mono_now_s();
	cJSON *j = NULL;
	int ret = -ENOMEM;

	if (!st)
		return ret;
	if ((ret = oci_unpack(im->source, w->dir, lim, st, err, errlen)) ||
	    (ret = make_ext4(w, st, &size, err, errlen)))
		goto out;
	im->layers = st->layers;
	im->seconds = mono_now_s() - t0;
	j = metadata(im, st, size, im->seconds);
	if ((ret = write_meta(w, j))) {
		snprintf(err, errlen, "NAME.json: %s", ret == -EFBIG ? "over 64 KiB" : strerror(-ret));
		goto out;
	}
	if ((ret = publish(w, im->out, meta, im->force, err, errlen)))
		goto out;
	if (image_record_sha256(im->out, meta, err, errlen))
		err[0] = 0;	/* recorded later, on first use (image_build.c) */
out:
	cJSON_Delete(j);
	free(st);
	return ret;
}

int oci_import(struct oci_import *im, char *err, size_t errlen)
{
	struct work w = { 0 };
	char *meta = NULL;
	int ret;

	err[0] = 0;
	im->out = NULL;
	if (!image_name_ok(im->name)) {
		snprintf(err, errlen, "--name: [A-Za-z0-9._-], at most 64, not starting with '.' or '-'");
		return -EINVAL;
	}
	if (!(ret = paths(im, &w, &meta, err, errlen)))
		ret = import_in(im, &w, meta, err, errlen);
	/* The work directory goes whatever happened: nothing half-written stays. */
	if (w.dir)
		rm_tree(w.dir);
	free(w.dir);
	free(meta);
	return ret;
}

void oci_import_free(struct oci_import *im)
{
	free(im->out);
	im->out = NULL;
}
