/* Start-up step timestamps (common/start_trace.h). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "common/mono_time.h"
#include "common/start_trace.h"

static int held = -1;
static int held_pid;

void start_trace_hold(void)
{
	const char *path = getenv("MVM_START_TRACE");

	if (!path || !path[0] || held >= 0)
		return;
	held = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	held_pid = (int)getpid();
}

void start_trace(const char *step)
{
	const char *path = getenv("MVM_START_TRACE");
	char line[160];
	int fd, n;

	if (!path || !path[0])
		return;
	fd = held >= 0 ? held : open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	n = snprintf(line, sizeof(line), "%lld %d %s\n", (long long)(mono_now_ns() / 1000),
		     held >= 0 ? held_pid : (int)getpid(), step);
	/* pwrite: allowed to every VMM thread; O_APPEND still appends. */
	(void)!pwrite(fd, line, (size_t)n, 0);
	if (fd != held)
		close(fd);
}
