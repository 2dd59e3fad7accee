/* What a compromised VMM would try (tools/sandbox/test_attack.h). */
#include "tools/sandbox/test_attack.h"

#ifndef MVM_TEST_HOOKS
void sb_test_attack_arm(struct vm *vm, int report_fd)
{
	(void)vm;
	(void)report_fd;
}
#else
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

static int out_fd = 2, timer_fd = -1;

static int try_connect(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), ret;

	if (fd < 0)
		return -errno;
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	ret = connect(fd, (struct sockaddr *)&a, sizeof(a)) ? -errno : 0;
	close(fd);
	return ret;
}

/* fchmod(@path, 0644): what would make a frozen, shared layer writable. */
static int try_chmod(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret;

	if (fd < 0)
		return -errno;
	ret = fchmod(fd, 0644) ? -errno : 0;
	close(fd);
	return ret;
}

/* config.json rewritten (a new file renamed over it, as any writer of the
 * state directory could) to attach @host as a writable disk at the next start. */
static int rewrite_config(const char *host)
{
	char buf[65536], *end;
	int fd = open("config.json", O_RDONLY | O_CLOEXEC), ret = 0;
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return fd < 0 ? -errno : -EIO;
	buf[n] = 0;
	end = strrchr(buf, '}');
	if (!end)
		return -EINVAL;
	*end = 0;
	fd = open("config.new", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (dprintf(fd, "%s, \"disks\": [{\"path\": \"%s\", \"format\": \"raw\", "
		    "\"read_only\": false, \"data\": true}]}\n", buf, host) < 0)
		ret = -EIO;
	close(fd);
	if (!ret && rename("config.new", "config.json"))
		ret = -errno;
	return ret;
}

static int step(const char *kind, const char *arg)
{
	int fd;

	if (!strcmp(kind, "read") || !strcmp(kind, "write")) {
		fd = !strcmp(kind, "read") ? open(arg, O_RDONLY | O_CLOEXEC) :
		     open(arg, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
		if (fd < 0)
			return -errno;
		close(fd);
		return 0;
	}
	if (!strcmp(kind, "chmod"))
		return try_chmod(arg);
	if (!strcmp(kind, "config-disk"))
		return rewrite_config(arg);
	if (!strcmp(kind, "connect"))
		return try_connect(arg);
	if (!strcmp(kind, "exec")) {
		execl(arg, arg, "-c", "true", (char *)NULL);
		return -errno;
	}
	if (!strcmp(kind, "ptrace"))
		return ptrace(PTRACE_ATTACH, (pid_t)atoi(arg), 0, 0) ? -errno : 0;
	if (!strcmp(kind, "kill"))
		return kill((pid_t)atoi(arg), SIGKILL) ? -errno : 0;
	return -EINVAL;
}

static void attack(void *opaque, uint32_t events)
{
	struct vm *vm = opaque;
	char *plan = strdup(getenv("MVM_TEST_ATTACK")), *save = NULL;

	(void)events;
	ev_del(&vm->loop, timer_fd);
	close(timer_fd);
	for (char *s = plan ? strtok_r(plan, ",", &save) : NULL; s; s = strtok_r(NULL, ",", &save)) {
		char *arg = strchr(s, ':');
		int ret;

		if (!arg)
			continue;
		*arg++ = 0;
		struct stat st;

		if (!stat(arg, &st))	/* what the step meets: for the test's messages */
			dprintf(out_fd, "mvm test-attack: %s: mode %o, %lu links, euid %d\n", arg,
				(unsigned)(st.st_mode & 07777), (unsigned long)st.st_nlink,
				(int)geteuid());
		dprintf(out_fd, "mvm test-attack: %s %s: trying\n", s, arg);
		ret = step(s, arg);
		dprintf(out_fd, "mvm test-attack: %s %s: %s\n", s, arg,
			ret ? strerror(-ret) : "SUCCEEDED");
	}
	free(plan);
}

void sb_test_attack_arm(struct vm *vm, int report_fd)
{
	if (!getenv("MVM_TEST_ATTACK"))
		return;
	out_fd = report_fd >= 0 ? report_fd : STDERR_FILENO;	/* stderr follows console.log */
	timer_fd = ev_timer(&vm->loop, 500, 0, attack, vm);
}
#endif
