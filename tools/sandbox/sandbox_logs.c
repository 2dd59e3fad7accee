/* Reading a sandbox's console.log and events.jsonl with their rotated parts (sandbox_logs.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
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

void sb_logs_tail(const char *name, size_t max, char *out, size_t cap)
{
	char p[4096], *nl;
	off_t end;
	ssize_t n = 0;
	int fd;

	out[0] = 0;
	if (!cap || sb_path(name, "console.log", p, sizeof(p)) || (fd = open(p, O_RDONLY | O_CLOEXEC)) < 0)
		return;
	max = max < cap - 1 ? max : cap - 1;
	end = lseek(fd, 0, SEEK_END);
	if (end > 0)
		n = pread(fd, out, max, end > (off_t)max ? end - (off_t)max : 0);
	close(fd);
	if (n <= 0)
		return;
	out[n] = 0;
	/* A cut first line is dropped, unless it is the only one. */
	nl = end > (off_t)max ? strchr(out, '\n') : NULL;
	if (nl && nl[1])
		memmove(out, nl + 1, strlen(nl + 1) + 1);
	for (char *c = out; *c; c++)
		if ((unsigned char)*c < 0x20 && *c != '\n' && *c != '\t')
			*c = '?';
		else if ((unsigned char)*c == 0x7f)
			*c = '?';
}
