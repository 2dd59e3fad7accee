/*
 * mvm-agent: the guest side of `mvm exec` and `mvm cp`. Listens on vsock
 * port 1024 and serves each connection in its own process, so execs run side
 * by side and one crash takes only its own operation. Started (and restarted)
 * by mvm-init when the sandbox's run spec names it. Static, libc only.
 *
 *   mvm-agent [--port N] [--mount DEV:DIR]   in the guest
 *   mvm-agent --unix PATH [--hybrid]         host tests: a Unix socket instead
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
/* After sys/socket.h: aarch64's linux/vm_sockets.h needs struct sockaddr. */
#include <linux/vm_sockets.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "guest/agent/agent.h"

struct opts {
	unsigned port;
	const char *unix_path;
	bool hybrid;
	char *mount;
};

static int listen_vsock(unsigned port)
{
	struct sockaddr_vm a = { .svm_family = AF_VSOCK, .svm_cid = VMADDR_CID_ANY, .svm_port = port };
	int fd = socket(AF_VSOCK, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 64))
		return -1;
	return fd;
}

static int listen_unix(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (strlen(path) >= sizeof(a.sun_path))
		return -1;
	strcpy(a.sun_path, path);
	unlink(path);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 64))
		return -1;
	return fd;
}

/* Test mode only: answer the hybrid-vsock "CONNECT <port>" line as the VMM would. */
static int fake_handshake(int fd)
{
	char c;
	int n = 0;

	while (n++ < 32 && read(fd, &c, 1) == 1)
		if (c == '\n')
			return ap_write_all(fd, "OK 1\n", 5);
	return -1;
}

/* The sandbox's data disk: mounted once, before the first client. */
static void mount_data(char *spec)
{
	char *colon = strchr(spec, ':');

	if (!colon)
		return;
	*colon = 0;
	mkdir(colon + 1, 0755);
	/* noinit_itable: as for the root disk (guest/init/init.c). */
	if (mount(spec, colon + 1, "ext4", 0, "noinit_itable"))
		fprintf(stderr, "mvm-agent: cannot mount %s on %s: %s\n", spec, colon + 1, strerror(errno));
}

static int parse(struct opts *o, int argc, char **argv)
{
	o->port = AP_PORT;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--port") && i + 1 < argc)
			o->port = (unsigned)strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--unix") && i + 1 < argc)
			o->unix_path = argv[++i];
		else if (!strcmp(argv[i], "--hybrid"))
			o->hybrid = true;
		else if (!strcmp(argv[i], "--mount") && i + 1 < argc)
			o->mount = argv[++i];
		else
			return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct sigaction reap = { .sa_handler = SIG_DFL, .sa_flags = SA_NOCLDWAIT };
	struct opts o = { 0 };
	struct agent_cfg cfg = { 0 };
	int lfd;

	if (parse(&o, argc, argv)) {
		fprintf(stderr, "usage: mvm-agent [--port N] [--mount DEV:DIR] | --unix PATH [--hybrid]\n");
		return 2;
	}
	cfg.test_mode = o.unix_path != NULL;
	if (o.mount)
		mount_data(o.mount);
	signal(SIGPIPE, SIG_IGN);
	/* Connection handlers are reaped by the kernel. */
	sigaction(SIGCHLD, &reap, NULL);
	lfd = o.unix_path ? listen_unix(o.unix_path) : listen_vsock(o.port);
	if (lfd < 0) {
		fprintf(stderr, "mvm-agent: cannot listen: %s\n", strerror(errno));
		return 1;
	}
	for (;;) {
		struct sockaddr_vm peer;
		socklen_t plen = sizeof(peer);
		int c = accept4(lfd, (struct sockaddr *)&peer, &plen, SOCK_CLOEXEC);
		pid_t pid;

		if (c < 0)
			continue;
		/* Only the host may drive the agent, not a process inside the guest. */
		if (!o.unix_path && (plen < sizeof(peer) || peer.svm_cid != VMADDR_CID_HOST)) {
			close(c);
			continue;
		}
		pid = fork();
		if (pid == 0) {
			struct sigaction dfl = { .sa_handler = SIG_DFL };

			sigaction(SIGCHLD, &dfl, NULL);
			close(lfd);
			if (!o.hybrid || !fake_handshake(c))
				agent_session(c, &cfg);
			_exit(0);
		}
		close(c);
	}
}
