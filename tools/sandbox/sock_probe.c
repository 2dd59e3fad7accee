/* Can a directory hold unix sockets? (sock_probe.h) */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "tools/sandbox/sock_probe.h"

int sock_probe_dir(const char *dir, char *err, size_t cap)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	const char *step = "open";
	int dfd, lfd = -1, cfd = -1, ret = 0;

	/* Through the directory's fd, as the clients do: sun_path holds only 108 bytes. */
	dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		ret = -errno;
		goto out;
	}
	snprintf(a.sun_path, sizeof(a.sun_path), "/proc/self/fd/%d/.mvm-sock-probe-%d", dfd, (int)getpid());
	unlink(a.sun_path);
	lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	step = "socket";
	if (lfd < 0 || cfd < 0) {
		ret = -errno;
		goto out;
	}
	step = "bind";
	if (bind(lfd, (struct sockaddr *)&a, sizeof(a))) {
		ret = -errno;
		goto out;
	}
	/* Some file systems take the bind but cannot find the socket again on connect. */
	step = "listen";
	if (listen(lfd, 1))
		ret = -errno;
	step = ret ? step : "connect";
	if (!ret && connect(cfd, (struct sockaddr *)&a, sizeof(a)))
		ret = -errno;
	unlink(a.sun_path);
out:
	if (ret)
		snprintf(err, cap, "%s cannot hold the unix sockets a sandbox needs (%s: %s; a 9p, network or "
			 "FUSE file system?): set MVM_STATE_DIR to a directory on a local file system",
			 dir, step, strerror(-ret));
	if (cfd >= 0)
		close(cfd);
	if (lfd >= 0)
		close(lfd);
	if (dfd >= 0)
		close(dfd);
	return ret;
}
