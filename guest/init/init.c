/*
 * mvm-init: PID 1 of every mvm guest. Mounts the basics, signals "booted" to
 * the VMM, runs the command the VMM packed under /mvm/ with stdout on hvc0
 * and stderr on hvc1, reports its wait status through the guest port, and
 * resets the machine. Static, no libraries beyond libc.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <net/route.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "guest/init/port.h"
#define SPEC_MAX              (1 << 20)
#define LIST_MAX              4096

static void say(const char *msg)
{
	int fd = open("/dev/console", O_WRONLY | O_NOCTTY);

	if (fd >= 0) {
		(void)!write(fd, "mvm-init: ", 10);
		(void)!write(fd, msg, strlen(msg));
		(void)!write(fd, "\n", 1);
		close(fd);
	}
}

static int have_port;

static void report_and_reset(uint32_t status)
{
	sync();
	/* Without port access (a kernel lacking IOPL) the VMM sees a plain reset. */
	if (have_port)
		port_exit(status);
	reboot(RB_AUTOBOOT);
	for (;;)
		pause();
}

static void mount_basics(const char *root)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/proc", root);
	mkdir(p, 0555);
	mount("proc", p, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
	snprintf(p, sizeof(p), "%s/sys", root);
	mkdir(p, 0555);
	mount("sysfs", p, "sysfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
	snprintf(p, sizeof(p), "%s/dev", root);
	mkdir(p, 0755);
	mount("devtmpfs", p, "devtmpfs", MS_NOSUID, NULL);
	snprintf(p, sizeof(p), "%s/dev/pts", root);
	mkdir(p, 0755);
	mount("devpts", p, "devpts", MS_NOSUID | MS_NOEXEC, "ptmxmode=0666");
	/* POSIX shared memory (shm_open; Chromium's renderers, X's clients). */
	snprintf(p, sizeof(p), "%s/dev/shm", root);
	mkdir(p, 01777);
	mount("tmpfs", p, "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777");
	snprintf(p, sizeof(p), "%s/tmp", root);
	mkdir(p, 01777);
	mount("tmpfs", p, "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777");
	snprintf(p, sizeof(p), "%s/run", root);
	mkdir(p, 0755);
	mount("tmpfs", p, "tmpfs", MS_NOSUID | MS_NODEV, "mode=755");
}

static void set_in(struct sockaddr *sa, const char *ip)
{
	struct sockaddr_in *in = (struct sockaddr_in *)sa;

	memset(in, 0, sizeof(*in));
	in->sin_family = AF_INET;
	inet_pton(AF_INET, ip, &in->sin_addr);
}

static void if_up(int s, const char *name)
{
	struct ifreq ifr = { 0 };

	snprintf(ifr.ifr_name, IFNAMSIZ, "%s", name);
	if (ioctl(s, SIOCGIFFLAGS, &ifr) == 0) {
		ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
		ioctl(s, SIOCSIFFLAGS, &ifr);
	}
}

/* lo up; eth0 (mvm's virtio-net on slirp): 10.0.2.15/24 via 10.0.2.2. IPv6
 * comes from slirp's router advertisements. Returns 1 when eth0 exists. */
static int net_up(void)
{
	struct ifreq ifr = { 0 };
	struct rtentry rt = { 0 };
	int s;

	/* Loopback always, --net none too: guest programs talk over it (the
	 * browser's DevTools and noVNC, which `mvm browser` reaches over vsock). */
	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s >= 0)
		if_up(s, "lo");
	if (access("/sys/class/net/eth0", F_OK)) {
		if (s >= 0)
			close(s);
		return 0;
	}
	if (s < 0)
		return 1;
	snprintf(ifr.ifr_name, IFNAMSIZ, "eth0");
	set_in(&ifr.ifr_addr, "10.0.2.15");
	ioctl(s, SIOCSIFADDR, &ifr);
	set_in(&ifr.ifr_netmask, "255.255.255.0");
	ioctl(s, SIOCSIFNETMASK, &ifr);
	if_up(s, "eth0");
	set_in(&rt.rt_dst, "0.0.0.0");
	set_in(&rt.rt_genmask, "0.0.0.0");
	set_in(&rt.rt_gateway, "10.0.2.2");
	rt.rt_flags = RTF_UP | RTF_GATEWAY;
	if (ioctl(s, SIOCADDRT, &rt))
		say("cannot add the default route");
	close(s);
	return 1;
}

static void write_resolv_conf(void)
{
	static const char conf[] = "nameserver 10.0.2.3\n";
	int fd = open("/etc/resolv.conf", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd >= 0) {
		(void)!write(fd, conf, sizeof(conf) - 1);
		close(fd);
	}
}

/* Read a NUL-separated list file into a NULL-terminated vector. */
static char **read_list(const char *path, size_t *count)
{
	static char data[SPEC_MAX + 1];
	char **v = calloc(LIST_MAX + 1, sizeof(char *));
	int fd = open(path, O_RDONLY);
	size_t len = 0, n = 0;
	ssize_t r;

	*count = 0;
	if (fd < 0 || !v)
		return v;
	while (len < SPEC_MAX && (r = read(fd, data + len, SPEC_MAX - len)) > 0)
		len += (size_t)r;
	close(fd);
	char *buf = malloc(len + 1);
	if (!buf)
		return v;
	memcpy(buf, data, len);
	buf[len] = 0;
	for (size_t i = 0; i < len && n < LIST_MAX; i += strlen(buf + i) + 1)
		v[n++] = buf + i;
	*count = n;
	return v;
}

static void read_text(const char *path, char *out, size_t cap)
{
	int fd = open(path, O_RDONLY);
	ssize_t n = fd >= 0 ? read(fd, out, cap - 1) : -1;

	out[n > 0 ? n : 0] = 0;
	if (fd >= 0)
		close(fd);
}

/* The sandbox agent lives in the initramfs: keep a copy visible after the root switch. */
static void copy_agent(const char *dst)
{
	char buf[65536];
	int in = open("/sbin/mvm-agent", O_RDONLY | O_CLOEXEC), out;
	ssize_t n;

	if (in < 0)
		return;
	out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	while (out >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			break;
	if (out >= 0)
		close(out);
	close(in);
}

/* Switch to the root disk: the command then sees the image's userland. */
static int enter_rootfs(const char *dev)
{
	mkdir("/newroot", 0755);
	/* noinit_itable: images are made by `mkfs.ext4 -d` with lazily
	 * initialised inode tables, which the kernel would zero in the
	 * background after mounting: megabytes of zeros written into every
	 * sandbox's overlay (and its checkpoints) over its first minutes.
	 * Unused inodes are known from the group descriptors either way. */
	if (mount(dev, "/newroot", "ext4", 0, "noinit_itable")) {
		say("cannot mount the root disk");
		return -1;
	}
	mount_basics("/newroot");
	copy_agent("/newroot/run/mvm-agent");
	/* Move the disk over / before chroot (what switch_root does): a plain
	 * chroot leaves the root differing from the mount namespace's, and the
	 * kernel refuses CLONE_NEWUSER to a chrooted process (Chromium's sandbox
	 * needs it). */
	if (chdir("/newroot") || mount(".", "/", NULL, MS_MOVE, NULL) ||
	    chroot(".") || chdir("/")) {
		say("cannot enter the root disk");
		return -1;
	}
	return 0;
}

/* hvc ports are ttys: without this, every "\n" the command writes arrives as "\r\n". */
static void raw_output(int fd)
{
	struct termios t;

	if (tcgetattr(fd, &t) == 0) {
		t.c_oflag &= ~(tcflag_t)OPOST;
		tcsetattr(fd, TCSANOW, &t);
	}
}

static void child(char **argv, char **env, const char *workdir)
{
	int in = open("/dev/null", O_RDONLY);
	int out = open("/dev/hvc0", O_WRONLY | O_NOCTTY);
	int err = open("/dev/hvc1", O_WRONLY | O_NOCTTY);

	if (in < 0 || out < 0 || err < 0)
		_exit(125);
	raw_output(out);
	raw_output(err);
	dup2(in, 0);
	dup2(out, 1);
	dup2(err, 2);
	setsid();
	if (workdir[0] && chdir(workdir)) {
		dprintf(2, "mvm: cannot enter working directory %s: %s\n", workdir, strerror(errno));
		_exit(125);
	}
	/* execvp searches the PATH of the environment it runs in: switch first. */
	environ = env;
	execvp(argv[0], argv);
	dprintf(2, "mvm: %s: %s\n", argv[0], strerror(errno));
	_exit(errno == ENOENT ? 127 : 126);
}

/* Output is complete only once both consoles drained to the host. */
static void drain(void)
{
	const char *ttys[] = { "/dev/hvc0", "/dev/hvc1" };

	for (int i = 0; i < 2; i++) {
		int fd = open(ttys[i], O_WRONLY | O_NOCTTY);

		if (fd >= 0) {
			tcdrain(fd);
			close(fd);
		}
	}
}

static char **build_env(char **user, size_t n)
{
	static char *defaults[] = {
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"HOME=/root", "TERM=linux", "LANG=C.UTF-8",
	};
	char **env = calloc(n + 5, sizeof(char *));
	size_t k = 0;

	if (!env)
		return user;
	for (size_t i = 0; i < 4; i++) {
		size_t klen = strchr(defaults[i], '=') - defaults[i] + 1;
		int overridden = 0;

		for (size_t j = 0; j < n; j++)
			overridden |= !strncmp(user[j], defaults[i], klen);
		if (!overridden)
			env[k++] = defaults[i];
	}
	for (size_t j = 0; j < n; j++)
		env[k++] = user[j];
	return env;
}

/*
 * Sandbox mode (argv[0] == "mvm-agent"): run the agent, restart it if it
 * dies, reap orphans. No exit status is ever reported: the VM lives until
 * the host stops it or the agent powers it off.
 */
static void run_agent(char **argv)
{
	const char *bin = access("/run/mvm-agent", X_OK) == 0 ? "/run/mvm-agent" : "/sbin/mvm-agent";

	if (sethostname("mvm", 3))
		say("cannot set the hostname");
	for (;;) {
		pid_t pid = fork(), w;

		if (pid == 0) {
			int out = open("/dev/hvc0", O_WRONLY | O_NOCTTY);
			int err = open("/dev/hvc1", O_WRONLY | O_NOCTTY);

			if (out >= 0 && err >= 0) {
				raw_output(out);
				raw_output(err);
				dup2(out, 1);
				dup2(err, 2);
			}
			setsid();
			environ = build_env(NULL, 0);
			execv(bin, argv);
			_exit(127);
		}
		while (pid > 0 && (w = wait(NULL)) != pid)
			if (w < 0 && errno == ECHILD)
				break;
		say("the agent exited; restarting it");
		sleep(1);
	}
}

int main(void)
{
	char workdir[4096], rootdev[64];
	size_t argc, envc;
	char **argv, **env;
	pid_t pid;
	int st, have_net;

	have_port = port_open() == 0;
	if (have_port)
		port_boot();
	else
		say(port_missing);
	if (sethostname("mvm", 3))
		say("cannot set the hostname");
	mount_basics("");
	load_modules(say);
	argv = read_list("/mvm/argv", &argc);
	env = read_list("/mvm/env", &envc);
	read_text("/mvm/workdir", workdir, sizeof(workdir));
	read_text("/mvm/rootfs", rootdev, sizeof(rootdev));
	if (!argc) {
		say("no command in /mvm/argv");
		report_and_reset(125 << 8);
	}
	have_net = net_up();
	if (rootdev[0] && enter_rootfs(rootdev))
		report_and_reset(125 << 8);
	if (have_net)
		write_resolv_conf();
	if (!strcmp(argv[0], "mvm-agent"))
		run_agent(argv);
	pid = fork();
	if (pid == 0)
		child(argv, build_env(env, envc), workdir);
	if (pid < 0)
		report_and_reset(125 << 8);
	/* PID 1 reaps every orphan; only the command's status matters. */
	for (;;) {
		pid_t w = wait(&st);

		if (w == pid)
			break;
		if (w < 0 && errno == ECHILD)
			report_and_reset(125 << 8);
	}
	drain();
	report_and_reset((uint32_t)st);
	return 0;
}
