/*
 * What a tenant's sandbox holds on the host (tools/serve/serve_quota.h,
 * sv_sandbox_held): every file of its state directory by the blocks it
 * takes, except the writable top of its disk, which the quota counts by
 * its configured size instead (the most it can grow to). So the frozen
 * disk layers and memory files of its checkpoints, the snapshot a fork
 * starts from and its logs count as what they are, however they grew.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "snapshots/checkpoint.h"
#include "snapshots/disk_layers.h"
#include "tools/sandbox/sandbox.h"
#include "tools/serve/serve_quota.h"

/* Directories below the state dir walked: checkpoints/, a fork's origin/ and what staging puts there. */
#define HELD_DEPTH 3

/* The disk file the VM writes now: disk-top's first word after a checkpoint, else @disk. */
static void top_file(int sfd, const char *disk, char *top, size_t cap)
{
	char buf[128] = "", name[DISK_LAYER_NAME];
	int fd = openat(sfd, DISK_TOP_FILE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;

	if (fd >= 0)
		close(fd);
	snprintf(top, cap, "%s", disk);
	/* Only a plain name in the directory (disk_layers_boot_top's rule). */
	if (n > 0 && sscanf(buf, "%63s", name) == 1 && !strchr(name, '/') && name[0] != '.')
		snprintf(top, cap, "%s", name);
}

/* Checkpoints taken in this boot (or the last, while stopped): their memory files. */
static int count_checkpoints(int sfd)
{
	int fd = openat(sfd, SNAP_CKPT_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), n = 0;
	struct dirent *e;
	size_t len;
	DIR *d;

	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	while ((e = readdir(d)))
		if ((len = strlen(e->d_name)) > 4 && !strcmp(e->d_name + len - 4, ".mem"))
			n++;
	closedir(d);
	return n;
}

int sv_sandbox_held(const char *host, const char *disk, struct sv_uses *u, int *checkpoints)
{
	char dir[PATH_MAX], top[DISK_LAYER_NAME];
	int sfd, ret;

	*checkpoints = 0;
	if (sb_path(host, NULL, dir, sizeof(dir)))
		return -EINVAL;
	sfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sfd < 0)
		return errno == ENOENT ? 0 : -errno;	/* removed meanwhile: holds nothing */
	top_file(sfd, disk, top, sizeof(top));
	ret = sv_uses_add_dir(u, sfd, HELD_DEPTH, top[0] ? top : NULL);
	*checkpoints = count_checkpoints(sfd);
	close(sfd);
	return ret;
}
