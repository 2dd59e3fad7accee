/*
 * Run inside the arm64 box (tests/nested/box-arm64.sh): the first arm64
 * guest boot with mvm's arm64 VMM code (vmm/arch/arm64/, kvm/arm64_vm.h).
 *
 *   arm64-boot KERNEL-IMAGE INITRD 'COMMAND LINE'
 *
 * Makes the VM (256 MiB, MVM_ARM64_BOOT_CPUS vCPUs, default 2, the vGIC)
 * and mvm's virtio-mmio devices of devices/ on it: virtio-rng when
 * MVM_ARM64_BOOT_RNG=1, virtio-blk over the raw file MVM_ARM64_BOOT_DISK
 * (read-only) when set, virtio-console (hvc0) writing into the file
 * MVM_ARM64_BOOT_HVC when set, whose lines are printed as "arm64-boot:
 * hvc0: ..." after the run, and virtio-vsock (guest CID 3) on the Unix
 * socket path MVM_ARM64_BOOT_VSOCK when set: a thread here listens on
 * PATH_5000, where the device connects the guest's connection to host
 * port 5000, reads one line, answers "pong: LINE" and prints the line. Loads the Image, the initrd and the device tree
 * (which names those devices), runs the exit loop, and prints the guest's UART
 * output line by line as "arm64-guest: ...". A hang guard ends the run:
 * SIGALRM after MVM_ARM64_BOOT_TIMEOUT seconds (default 300) interrupts
 * KVM_RUN, and at most 50 million exits. Exit 0 only when the guest
 * powered itself off (PSCI SYSTEM_OFF).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "devices/virtio_devices.h"
#include "images/blk_backend.h"
#include "vmm/arch/arm64/kvm/arm64_vm.h"

#define RAM_SIZE  (256ULL << 20)
#define MAX_EXITS 50000000ULL

static char err[512];
static struct arm64_vm vm;
static char line[512];
static size_t line_len;

static void flush_line(void)
{
	printf("arm64-guest: %.*s\n", (int)line_len, line);
	fflush(stdout);
	line_len = 0;
}

/* The UART's bytes, a line at a time behind a prefix the box log keeps. */
static void out(void *opaque, uint8_t b)
{
	(void)opaque;
	if (b == '\r')
		return;
	if (b == '\n' || line_len == sizeof(line)) {
		flush_line();
		if (b == '\n')
			return;
	}
	line[line_len++] = (b >= 0x20 && b < 0x7f) || b == '\t' ? (char)b : '?';
}

static uint8_t *slurp(const char *path, size_t *len)
{
	struct stat sb;
	uint8_t *buf = NULL;
	size_t got = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &sb) < 0 || !(buf = malloc(sb.st_size ? sb.st_size : 1)))
		goto out;
	while (got < (size_t)sb.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)sb.st_size - got);

		if (n <= 0)
			break;
		got += (size_t)n;
	}
	if (got != (size_t)sb.st_size) {
		free(buf);
		buf = NULL;
	}
	*len = got;
out:
	if (fd >= 0)
		close(fd);
	return buf;
}

static int hvc_fd = -1;
static int vsock_listen_fd = -1;
static pthread_t vsock_th;
static char vsock_line[128];

#define VSOCK_PORT 5000

/* Host side of the guest's vsock connection to port VSOCK_PORT: one line
 * in, "pong: LINE" out. */
static void *vsock_peer(void *arg)
{
	size_t got = 0;
	char reply[160];
	int fd = accept4(vsock_listen_fd, NULL, NULL, SOCK_CLOEXEC);

	(void)arg;
	if (fd < 0)
		return NULL;
	while (got < sizeof(vsock_line) - 1) {
		ssize_t n = read(fd, vsock_line + got, 1);

		if (n <= 0 || vsock_line[got] == '\n')
			break;
		got++;
	}
	vsock_line[got] = 0;
	snprintf(reply, sizeof(reply), "pong: %s\n", vsock_line);
	(void)!write(fd, reply, strlen(reply));
	close(fd);
	return NULL;
}

static int vsock_listen(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };

	snprintf(a.sun_path, sizeof(a.sun_path), "%s_%d", path, VSOCK_PORT);
	unlink(a.sun_path);
	vsock_listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (vsock_listen_fd < 0 || bind(vsock_listen_fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    listen(vsock_listen_fd, 1) < 0)
		return -errno;
	return -pthread_create(&vsock_th, NULL, vsock_peer, NULL);
}

/* What the guest wrote to hvc0, a line at a time. */
static void print_hvc(void)
{
	const char *hvc = getenv("MVM_ARM64_BOOT_HVC");
	char buf[256];
	FILE *f;

	if (!hvc || !*hvc || !(f = fopen(hvc, "r")))
		return;
	while (fgets(buf, sizeof(buf), f)) {
		buf[strcspn(buf, "\n")] = 0;
		printf("arm64-boot: hvc0: %s\n", buf);
	}
	fclose(f);
}

/* The devices of the environment's choice on the VM's device host. */
static int add_devices(void)
{
	const char *rng = getenv("MVM_ARM64_BOOT_RNG");
	const char *disk = getenv("MVM_ARM64_BOOT_DISK");
	const char *hvc = getenv("MVM_ARM64_BOOT_HVC");
	const char *vsock = getenv("MVM_ARM64_BOOT_VSOCK");
	struct blk_backend *b = NULL;
	int ret;

	if (rng && !strcmp(rng, "1")) {
		ret = virtio_rng_create(&vm.dev);
		if (ret) {
			printf("arm64-boot: FAIL virtio-rng: %s\n", strerror(-ret));
			return ret;
		}
	}
	if (disk && *disk) {
		ret = blk_open_raw(disk, true, &b);
		if (!ret)
			ret = virtio_blk_create(&vm.dev, b, "mvm-arm64-disk");
		if (ret) {
			printf("arm64-boot: FAIL virtio-blk on %s: %s\n", disk, strerror(-ret));
			return ret;
		}
	}
	if (hvc && *hvc) {
		hvc_fd = open(hvc, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		ret = hvc_fd < 0 ? -errno : virtio_console_create(&vm.dev, hvc_fd, NULL);
		if (ret) {
			printf("arm64-boot: FAIL virtio-console into %s: %s\n", hvc, strerror(-ret));
			return ret;
		}
	}
	if (vsock && *vsock) {
		ret = virtio_vsock_create(&vm.dev, 3, vsock);
		if (!ret)
			ret = vsock_listen(vsock);
		if (ret) {
			printf("arm64-boot: FAIL virtio-vsock on %s: %s\n", vsock, strerror(-ret));
			return ret;
		}
	}
	for (int i = 0; i < vm.slots.n; i++)
		printf("arm64-boot: virtio-mmio slot %d at 0x%llx, SPI %u\n", i,
		       (unsigned long long)vm.slots.dev[i].base, vm.slots.dev[i].spi);
	return 0;
}

static void on_alarm(int sig)
{
	(void)sig;
	arm64_vm_interrupt(&vm);	/* and the signal itself ends a KVM_RUN */
}

int main(int argc, char **argv)
{
	static const char *stops[] = { "power off (PSCI SYSTEM_OFF)", "reset (PSCI SYSTEM_RESET)",
				       "crash", "exit limit", "hang guard (timeout)" };
	struct sigaction sa = { .sa_handler = on_alarm };	/* no SA_RESTART */
	const char *t = getenv("MVM_ARM64_BOOT_TIMEOUT");
	const char *n = getenv("MVM_ARM64_BOOT_CPUS");
	struct arm64_run_stats st;
	uint8_t *kernel, *initrd;
	size_t klen = 0, ilen = 0;
	int ret;

	if (argc != 4) {
		fprintf(stderr, "usage: arm64-boot KERNEL INITRD CMDLINE\n");
		return 2;
	}
	kernel = slurp(argv[1], &klen);
	initrd = slurp(argv[2], &ilen);
	if (!kernel || !initrd) {
		printf("arm64-boot: FAIL reading %s: %s\n", kernel ? argv[2] : argv[1],
		       strerror(errno));
		return 1;
	}
	if (arm64_vm_create(&vm, RAM_SIZE, n ? atoi(n) : 2, out, NULL, err, sizeof(err))) {
		printf("arm64-boot: FAIL %s\n", err);
		return 1;
	}
	if (add_devices()) {
		arm64_vm_destroy(&vm);
		return 1;
	}
	if (arm64_vm_load(&vm, kernel, klen, initrd, ilen, argv[3], err, sizeof(err))) {
		printf("arm64-boot: FAIL %s\n", err);
		return 1;
	}
	printf("arm64-boot: VM with %llu MiB, %d vCPUs, vGICv%d; Image %zu bytes at 0x%llx,"
	       " initrd %zu bytes at 0x%llx, device tree at 0x%llx\n",
	       RAM_SIZE >> 20, vm.ncpus, (int)vm.gic.version, klen,
	       (unsigned long long)vm.place.kernel, ilen, (unsigned long long)vm.place.initrd,
	       (unsigned long long)vm.place.fdt);
	fflush(stdout);
	sigaction(SIGALRM, &sa, NULL);
	alarm(t ? (unsigned)atoi(t) : 300);
	ret = arm64_vm_run(&vm, MAX_EXITS, &st, err, sizeof(err));
	alarm(0);
	if (line_len)
		flush_line();
	if (ret < 0 || ret > ARM64_STOP_SIGNAL)
		printf("arm64-boot: FAIL %s\n", err);
	else
		printf("arm64-boot: stopped: %s\n", stops[ret]);
	printf("arm64-boot: %llu exits, %llu UART accesses, %llu virtio-mmio register accesses,"
	       " %llu to no device (last 0x%llx)\n",
	       (unsigned long long)st.exits, (unsigned long long)st.mmio_uart,
	       (unsigned long long)st.mmio_virtio,
	       (unsigned long long)st.mmio_other, (unsigned long long)st.last_other_addr);
	arm64_vm_destroy(&vm);
	if (hvc_fd >= 0)
		close(hvc_fd);
	print_hvc();
	if (vsock_listen_fd >= 0) {
		/* The peer is done or never called: end its accept either way. */
		shutdown(vsock_listen_fd, SHUT_RDWR);
		pthread_join(vsock_th, NULL);
		close(vsock_listen_fd);
		printf("arm64-boot: vsock: port %d got \"%s\"\n", VSOCK_PORT, vsock_line);
	}
	free(kernel);
	free(initrd);
	return ret == ARM64_STOP_POWER_OFF ? 0 : 1;
}
