/* Landlock (confine/landlock.h), through the raw system calls (glibc has no wrappers). */
#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "vmm/confine/landlock.h"

#define FS(x) LANDLOCK_ACCESS_FS_##x
/* Rights a rule on a file (not a directory) may carry. */
#define FILE_RIGHTS (FS(EXECUTE) | FS(WRITE_FILE) | FS(READ_FILE) | (1ULL << 14) /* TRUNCATE */)
#define READ_RIGHTS (FS(READ_FILE) | FS(READ_DIR))

/* Everything the running kernel's ABI can deny, up to ABI 3 (files only:
 * the device-ioctl right of ABI 5 would also govern /dev/kvm's ioctls). */
static __u64 handled_for(int abi)
{
	__u64 all = (FS(MAKE_SYM) << 1) - 1;	/* ABI 1: EXECUTE .. MAKE_SYM */

	if (abi >= 2)
		all |= FS(REFER);
	if (abi >= 3)
		all |= 1ULL << 14;		/* LANDLOCK_ACCESS_FS_TRUNCATE */
	return all;
}

static int add_path(int rfd, const char *path, __u64 rights)
{
	struct landlock_path_beneath_attr pb = { .allowed_access = rights };
	struct stat st;
	int ret = 0;

	pb.parent_fd = open(path, O_PATH | O_CLOEXEC);
	if (pb.parent_fd < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!fstat(pb.parent_fd, &st) && !S_ISDIR(st.st_mode))
		pb.allowed_access &= FILE_RIGHTS;
	if (syscall(SYS_landlock_add_rule, rfd, LANDLOCK_RULE_PATH_BENEATH, &pb, 0))
		ret = -errno;
	close(pb.parent_fd);
	return ret;
}

static int apply(const char *const *ro, const char *const *rw, __u64 rw_denied)
{
	struct landlock_ruleset_attr attr;
	int abi = (int)syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	int rfd, ret = 0;

	if (abi < 0)
		return errno == ENOSYS || errno == EOPNOTSUPP ? 0 : -errno;
	attr.handled_access_fs = handled_for(abi);
	rfd = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof(attr), 0);
	if (rfd < 0)
		return -errno;
	for (int i = 0; ro && ro[i] && !ret; i++)
		ret = add_path(rfd, ro[i], READ_RIGHTS & attr.handled_access_fs);
	for (int i = 0; rw && rw[i] && !ret; i++)
		ret = add_path(rfd, rw[i], attr.handled_access_fs & ~(FS(EXECUTE) | rw_denied));
	if (!ret && syscall(SYS_landlock_restrict_self, rfd, 0))
		ret = -errno;
	close(rfd);
	return ret ? ret : abi;
}

/* No symlinks either: one in a state directory, named like a disk the next
 * start opens, would lead that start to any host file. */
int confine_landlock(const char *const *ro, const char *const *rw)
{
	return apply(ro, rw, FS(MAKE_SYM));
}

int confine_landlock_symlinks(const char *const *ro, const char *const *rw)
{
	return apply(ro, rw, 0);
}
