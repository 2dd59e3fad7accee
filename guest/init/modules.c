/* Kernel modules the guest kernel needs before anything else (port.h). */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "guest/init/port.h"

#define MOD_DIR "/lib/modules/mvm"

void load_modules(void (*say)(const char *msg))
{
	char list[4096], msg[160];
	int fd = open(MOD_DIR "/order", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return;
	n = read(fd, list, sizeof(list) - 1);
	close(fd);
	if (n <= 0)
		return;
	list[n] = 0;
	for (char *save = NULL, *name = strtok_r(list, "\n", &save); name;
	     name = strtok_r(NULL, "\n", &save)) {
		char path[256];
		int mfd;

		/* A plain file name in MOD_DIR: nothing else is loaded. */
		if (!name[0] || strchr(name, '/') ||
		    snprintf(path, sizeof(path), MOD_DIR "/%s", name) >= (int)sizeof(path))
			continue;
		mfd = open(path, O_RDONLY | O_CLOEXEC);
		if (mfd < 0 || syscall(SYS_finit_module, mfd, "", 0)) {
			snprintf(msg, sizeof(msg), "cannot load module %s", name);
			say(msg);
		}
		if (mfd >= 0)
			close(mfd);
	}
}
