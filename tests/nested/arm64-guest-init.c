/*
 * /init of the arm64 box's inner guest (tests/nested/arm64-boot.c boots
 * it): static for aarch64, no libc beyond glibc's static one. It says one
 * line through the console (the tty path: the UART's THRE interrupt),
 * naming the CPUs online (more than one: the secondaries came up through
 * PSCI CPU_ON). Then it reads mvm's virtio-mmio devices, which the guest
 * kernel found in the device tree: it loads Debian's virtio_mmio,
 * virtio-rng, virtio_blk and virtio_console modules from /mod (in that
 * order; any that is missing is said and skipped), reads /dev/hwrng and
 * says which RNG answered, reads all of /dev/vda and says its size and
 * POSIX cksum (the box compares them with the disk file's on the host),
 * writes a line to /dev/hvc0 (the host prints it after the run), and
 * (after Debian's vsock modules) connects over vsock to the host's port
 * 5000, sends a line and prints the host's answer. Then one line
 * through /dev/kmsg (printk's polled console write), and it powers the
 * machine off, which arm64 Linux does with PSCI SYSTEM_OFF.
 */
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>
#include <linux/vm_sockets.h>

#define RNG_BYTES 64

static void say(const char *path, const char *msg)
{
	int fd = open(path, O_WRONLY | O_NOCTTY);

	if (fd >= 0) {
		(void)!write(fd, msg, strlen(msg));
		/* The tty sends on the UART's interrupts, after write returns:
		 * wait until it has, or the kmsg line lands inside this one. */
		tcdrain(fd);
		close(fd);
	}
}

__attribute__((format(printf, 1, 2)))
static void sayf(const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	say("/dev/console", msg);
}

/* The first line of @path, without its newline, in @buf ("?" if none). */
static void read_line(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY);
	ssize_t n = fd >= 0 ? read(fd, buf, cap - 1) : -1;

	if (n <= 0) {
		snprintf(buf, cap, "?");
	} else {
		buf[n] = 0;
		buf[strcspn(buf, "\n")] = 0;
	}
	if (fd >= 0)
		close(fd);
}

static void load_module(const char *name)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/mod/%s.ko", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || syscall(SYS_finit_module, fd, "", 0) != 0)
		sayf("mvm-arm64-init: module %s: not loaded (%m)\n", name);
	if (fd >= 0)
		close(fd);
}

static void read_rng(void)
{
	uint8_t buf[RNG_BYTES];
	char cur[64];
	int fd, seen[256] = { 0 }, distinct = 0;
	ssize_t n;

	read_line("/sys/class/misc/hw_random/rng_current", cur, sizeof(cur));
	fd = open("/dev/hwrng", O_RDONLY);
	n = fd >= 0 ? read(fd, buf, sizeof(buf)) : -1;
	for (ssize_t i = 0; i < n; i++)
		distinct += !seen[buf[i]]++;
	sayf("mvm-arm64-init: rng: %zd bytes from %s, %d distinct values\n", n, cur, distinct);
	if (fd >= 0)
		close(fd);
}

/* POSIX cksum (CRC-32, polynomial 0x04c11db7, MSB first, the length
 * appended), so the box compares with the host's `cksum` of the file. */
static uint32_t crc_table[256];

static void crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i << 24;

		for (int k = 0; k < 8; k++)
			c = c & 0x80000000u ? c << 1 ^ 0x04c11db7u : c << 1;
		crc_table[i] = c;
	}
}

static uint32_t crc_add(uint32_t crc, uint8_t b)
{
	return crc << 8 ^ crc_table[(crc >> 24 ^ b) & 0xff];
}

static void read_disk(void)
{
	static uint8_t buf[65536];
	uint64_t total = 0;
	uint32_t crc = 0;
	ssize_t n;
	int fd = open("/dev/vda", O_RDONLY);

	if (fd < 0) {
		sayf("mvm-arm64-init: blk: /dev/vda: %m\n");
		return;
	}
	crc_init();
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		for (ssize_t i = 0; i < n; i++)
			crc = crc_add(crc, buf[i]);
		total += (uint64_t)n;
	}
	close(fd);
	for (uint64_t len = total; len; len >>= 8)
		crc = crc_add(crc, (uint8_t)len);
	sayf("mvm-arm64-init: blk: /dev/vda cksum %u %llu%s\n", ~crc, (unsigned long long)total,
	     n < 0 ? " (read error)" : "");
}

static void talk_vsock(void)
{
	struct sockaddr_vm a = { .svm_family = AF_VSOCK, .svm_cid = VMADDR_CID_HOST,
				 .svm_port = 5000 };
	static const char hello[] = "hello over vsock\n";
	char buf[128];
	ssize_t n = -1;
	size_t got = 0;
	int fd = socket(AF_VSOCK, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    write(fd, hello, sizeof(hello) - 1) != (ssize_t)sizeof(hello) - 1) {
		sayf("mvm-arm64-init: vsock: %m\n");
		goto out;
	}
	while (got < sizeof(buf) - 1 && (n = read(fd, buf + got, sizeof(buf) - 1 - got)) > 0)
		got += (size_t)n;
	buf[got] = 0;
	buf[strcspn(buf, "\n")] = 0;
	sayf("mvm-arm64-init: vsock: the host answered \"%s\"\n", buf);
out:
	if (fd >= 0)
		close(fd);
}

int main(void)
{
	char cpus[32];
	struct stat sb;

	mkdir("/dev", 0755);
	mkdir("/sys", 0755);
	mount("devtmpfs", "/dev", "devtmpfs", 0, NULL);
	mount("sysfs", "/sys", "sysfs", 0, NULL);
	read_line("/sys/devices/system/cpu/online", cpus, sizeof(cpus));
	sayf("mvm-arm64-init: hello from the guest's userland (console), CPUs online %s\n", cpus);
	if (stat("/mod", &sb) == 0) {
		load_module("virtio_mmio");
		load_module("virtio-rng");
		load_module("virtio_blk");
		load_module("virtio_console");
		load_module("vsock");
		load_module("vmw_vsock_virtio_transport_common");
		load_module("vmw_vsock_virtio_transport");
		if (stat("/dev/hwrng", &sb) == 0)
			read_rng();
		if (stat("/dev/vda", &sb) == 0)
			read_disk();
		else
			sayf("mvm-arm64-init: blk: no /dev/vda\n");
		say("/dev/hvc0", "mvm-arm64-init: hello through virtio-console\n");
		talk_vsock();
	}
	say("/dev/kmsg", "mvm-arm64-init: powering off (kmsg)\n");
	sync();
	reboot(RB_POWER_OFF);
	return 1;
}
