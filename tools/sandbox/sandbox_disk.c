/* A sandbox's fresh ext4 data disk (root images get an overlay: images/image_overlay.c). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tools/sandbox/sandbox_disk.h"

int sb_disk_create(const char *dst, uint64_t size, char *err, size_t errlen)
{
	int fd = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600), st;
	pid_t pid;

	if (fd < 0 || ftruncate(fd, (off_t)size)) {
		snprintf(err, errlen, "%s: %s", dst, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -errno;
	}
	close(fd);
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		signal(SIGPIPE, SIG_DFL);
		dup2(null, 1);
		execlp("mkfs.ext4", "mkfs.ext4", "-q", "-F", "-L", "mvm-data",
		       "-E", "root_owner=0:0", dst, (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st)) {
		snprintf(err, errlen, "mkfs.ext4 %s failed (is e2fsprogs installed?)", dst);
		return -EIO;
	}
	return 0;
}
