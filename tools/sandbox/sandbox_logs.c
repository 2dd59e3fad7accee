/* Reading a sandbox's console.log and events.jsonl with their rotated parts (sandbox_logs.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tools/sandbox/sandbox.h"
#include "tools/sandbox/sandbox_logs.h"

/* 1 if anything was copied, 0 at EOF, -1 if @out failed. */
static int copy_out(int fd, int out)
{
	char buf[65536];
	ssize_t n;
	int any = 0;

	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		if (write(out, buf, (size_t)n) != n)
			return -1;
		any = 1;
	}
	return any;
}

/* Whether @path now names another file than @fd (the VMM rotated it). */
static bool rotated(int fd, const char *path)
{
	struct stat a, b;

	return !fstat(fd, &a) && !stat(path, &b) && (a.st_ino != b.st_ino || a.st_dev != b.st_dev);
}

static void copy_older(const char *path, int out)
{
	char old[4096 + 2];
	int fd;

	snprintf(old, sizeof(old), "%s.1", path);
	fd = open(old, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		copy_out(fd, out);
		close(fd);
	}
}

int sb_logs_copy(const char *name, bool follow, int out_fd)
{
	const struct timespec tick = { 0, 200 * 1000000L };
	char p[4096];
	int fd, r = sb_path(name, "console.log", p, sizeof(p));

	if (r)
		return r;
	copy_older(p, out_fd);
	if ((fd = open(p, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;	/* never started: no log yet */
	do {
		r = copy_out(fd, out_fd);
		if (r < 0)
			break;
		if (follow && !r && rotated(fd, p)) {
			close(fd);
			if ((fd = open(p, O_RDONLY | O_CLOEXEC)) < 0)
				return 0;
			continue;
		}
		if (follow && !r)
			nanosleep(&tick, NULL);
	} while (follow && (r > 0 || sb_vmm_pid(name) > 0));
	close(fd);
	return 0;
}

static void each_line(const char *p, void (*line)(const char *, void *), void *ctx)
{
	char buf[8192];
	FILE *f = fopen(p, "re");

	if (!f)
		return;
	while (fgets(buf, sizeof(buf), f))
		line(buf, ctx);
	fclose(f);
}

int sb_events_each(const char *name, void (*line)(const char *text, void *ctx), void *ctx)
{
	char p[4096], old[4096 + 2];
	int ret = sb_path(name, "events.jsonl", p, sizeof(p));

	if (ret)
		return ret;
	snprintf(old, sizeof(old), "%s.1", p);
	each_line(old, line, ctx);
	each_line(p, line, ctx);
	return 0;
}
