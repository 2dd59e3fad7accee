/*
 * /init of the arm64 box's inner guest (tests/nested/arm64-boot.c boots
 * it): static for aarch64, no libc beyond glibc's static one. It says one
 * line through the console (the tty path: the UART's THRE interrupt),
 * naming the CPUs online (more than one: the secondaries came up through
 * PSCI CPU_ON), and one through /dev/kmsg (printk's polled console write),
 * then powers the machine off, which arm64 Linux does with PSCI SYSTEM_OFF.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

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

int main(void)
{
	char msg[160], cpus[32] = "?";
	ssize_t n;
	int fd;

	mkdir("/dev", 0755);
	mkdir("/sys", 0755);
	mount("devtmpfs", "/dev", "devtmpfs", 0, NULL);
	mount("sysfs", "/sys", "sysfs", 0, NULL);
	fd = open("/sys/devices/system/cpu/online", O_RDONLY);
	if (fd >= 0 && (n = read(fd, cpus, sizeof(cpus) - 1)) > 0)
		cpus[n - (cpus[n - 1] == '\n')] = 0;
	if (fd >= 0)
		close(fd);
	snprintf(msg, sizeof(msg),
		 "mvm-arm64-init: hello from the guest's userland (console), CPUs online %s\n",
		 cpus);
	say("/dev/console", msg);
	say("/dev/kmsg", "mvm-arm64-init: powering off (kmsg)\n");
	sync();
	reboot(RB_POWER_OFF);
	return 1;
}
