/* Building a root image into the store with its builder script (image_build.h). */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "common/cli_util.h"
#include "common/file_io.h"
#include "common/fs_util.h"
#include "common/self_exe.h"
#include "common/log.h"
#include "common/mono_time.h"
#include "images/image_build.h"
#include "images/image_hash.h"
#include "images/image_store.h"

/* images/build-NAME.sh beside the binary's checkout (build/mvm -> images/),
 * or under $MVM_IMAGE_BUILDERS. */
static int builder_path(const char *name, char *out, size_t cap)
{
	const char *env = getenv("MVM_IMAGE_BUILDERS");
	char dir[PATH_MAX], *slash;

	if (env && *env) {
		snprintf(out, cap, "%s/build-%s.sh", env, name);
		return access(out, R_OK) ? -ENOENT : 0;
	}
	if (self_exe_dir(dir, sizeof(dir)))
		return -ENOENT;
	/* The binary's directory and up to two above it (build/mvm, a checkout). */
	for (int up = 0; up < 3; up++) {
		snprintf(out, cap, "%s/images/build-%s.sh", dir, name);
		if (!access(out, R_OK))
			return 0;
		if (!(slash = strrchr(dir, '/')))
			break;
		*slash = 0;
	}
	return -ENOENT;
}

/* The builder's exit status (128 + N for signal N), or -1 if it could not run. */
static int run_builder(const char *script, const char *out, uint64_t size)
{
	const char *guest = cli_guest_dir();
	char sz[32];
	int st;
	pid_t pid;

	snprintf(sz, sizeof(sz), "%llu", (unsigned long long)size);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		signal(SIGPIPE, SIG_DFL);
		setenv("MVM_IMAGE_OUT", out, 1);
		setenv("MVM_IMAGE_SIZE", sz, 1);
		if (guest)
			setenv("MVM_GUEST_DIR", guest, 1);
		execl("/bin/sh", "sh", script, (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/*
 * One build of NAME at a time in a store: two at once (two checkouts'
 * `make test`, a user's second terminal) wrote the same stage and output,
 * and debootstrap failed in both. The lock is the store's .NAME.lock, held
 * until image_build returns; a second builder waits (*@waited), then finds
 * the image the first one made. An fd (>= 0), or -errno.
 */
static int build_lock(const char *dir, const char *name, bool *waited)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/.%s.lock", dir, name);
	fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX | LOCK_NB) == 0)
		return fd;
	if (errno == EWOULDBLOCK) {
		*waited = true;
		printf("image: another build of %s is running; waiting for it\n", name);
		fflush(stdout);
		if (flock(fd, LOCK_EX) == 0)
			return fd;
	}
	close(fd);
	return -errno;
}

/*
 * A --force build that waited for the lock may find the image just made
 * from the very inputs it was asked for (make passes their hash as
 * MVM_IMAGE_INPUTS): then there is nothing left to rebuild.
 */
static bool built_from_inputs(const char *meta)
{
	const char *want = getenv("MVM_IMAGE_INPUTS");
	char *text;
	cJSON *j, *in;
	bool same;

	if (!want || !*want || !(text = file_read_text(meta, 1 << 16)))
		return false;
	j = cJSON_Parse(text);
	in = cJSON_GetObjectItemCaseSensitive(j, "inputs");
	same = cJSON_IsString(in) && !strcmp(in->valuestring, want);
	cJSON_Delete(j);
	free(text);
	return same;
}

int image_build(struct image_build *b, char *err, size_t errlen)
{
	char script[PATH_MAX], *dir = NULL, *meta = NULL;
	int ret, rc, lock = -1;
	bool waited = false;
	double t0;

	err[0] = 0;
	b->out = NULL;
	if (builder_path(b->name, script, sizeof(script))) {
		snprintf(err, errlen,
			 "no builder for '%s' (images/build-%s.sh); known: minimal, debian, "
			 "browser, dev",
			 b->name, b->name);
		return -ENOENT;
	}
	ret = -ENOMEM;
	dir = image_store_dir();
	if (!dir || asprintf(&b->out, "%s/%s.ext4", dir, b->name) < 0 ||
	    asprintf(&meta, "%s/%s.json", dir, b->name) < 0)
		goto out;
	if ((ret = mkdir_p(dir, 0755))) {
		snprintf(err, errlen, "%s: %s", dir, strerror(-ret));
		goto out;
	}
	if ((lock = build_lock(dir, b->name, &waited)) < 0) {
		ret = lock;
		snprintf(err, errlen, "%s/.%s.lock: %s", dir, b->name, strerror(-ret));
		goto out;
	}
	/* NAME.json is written last: its presence marks a finished build. */
	ret = 0;
	b->reused = !access(b->out, R_OK) && !access(meta, R_OK) &&
		    (!b->force || (waited && built_from_inputs(meta)));
	if (b->reused) {
		/* Built before images recorded their checksum: record it now. */
		if (image_record_sha256(b->out, meta, err, errlen))
			log_warn("image %s: checksum not recorded: %s", b->name, err);
		err[0] = 0;
		goto out;
	}
	t0 = mono_now_s();
	rc = run_builder(script, b->out, b->size);
	b->seconds = mono_now_s() - t0;
	if (rc) {
		snprintf(err, errlen, "%s failed (status %d)", b->name, rc);
		ret = -EIO;
	} else {
		ret = image_record_sha256(b->out, meta, err, errlen);
	}
out:
	if (lock >= 0)
		close(lock); /* the lock goes with its descriptor */
	free(meta);
	free(dir);
	return ret;
}

void image_build_free(struct image_build *b)
{
	free(b->out);
	b->out = NULL;
}
