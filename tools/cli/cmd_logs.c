/* `mvm logs NAME [-f]`: the guest console and the VMM's messages (console.log,
 * after its rotated older part console.log.1). */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/cli_util.h"
#include "tools/cli/cmd_sandbox.h"
#include "tools/cli/verb_args.h"
#include "tools/sandbox/sandbox.h"

static const char logs_usage[] =
	"usage: mvm logs [-f] NAME\n"
	"Print the sandbox's console log (kernel messages, agent, VMM errors).\n"
	"console.log is capped (MVM_LOG_MAX, default 8M with its older part\n"
	"console.log.1): a line 'mvm: console.log rotated ...' says how much\n"
	"older output was dropped.\n"
	"  -f, --follow   keep printing while the sandbox runs\n";

int logs_parse(int argc, char **argv, struct verb_args *a)
{
	static const struct option opts[] = { { "follow", no_argument, NULL, 'f' }, { 0 } };
	static const struct verb_spec spec = { .verb = "logs", .shortopts = "f", .longopts = opts,
					       .min_pos = 1, .max_pos = 1, .synopsis = "one sandbox NAME" };

	return verb_parse(&spec, NULL, argc, argv, a);
}

static int copy_out(int fd)
{
	char buf[65536];
	ssize_t n;
	int any = 0;

	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		if (write(STDOUT_FILENO, buf, (size_t)n) != n)
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

static void print_older(const char *path)
{
	char old[4096 + 2];
	int fd;

	snprintf(old, sizeof(old), "%s.1", path);
	fd = open(old, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		copy_out(fd);
		close(fd);
	}
}

int cmd_logs(int argc, char **argv)
{
	const struct timespec tick = { 0, 200 * 1000000L };
	struct verb_args a;
	const char *name;
	char p[4096];
	int fd, r;

	r = logs_parse(argc, argv, &a);
	if (r)
		return verb_parse_exit(r, logs_usage);
	name = a.pos[0];
	if (!verb_sandbox_ok("logs", name))
		return MVM_EXIT_ERROR;
	if (sb_path(name, "console.log", p, sizeof(p)))
		return MVM_EXIT_ERROR;
	print_older(p);
	if ((fd = open(p, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;	/* never started: no log yet */
	do {
		r = copy_out(fd);
		if (r < 0)
			break;
		if (a.flag && !r && rotated(fd, p)) {
			close(fd);
			if ((fd = open(p, O_RDONLY | O_CLOEXEC)) < 0)
				return 0;
			continue;
		}
		if (a.flag && !r)
			nanosleep(&tick, NULL);
	} while (a.flag && (r > 0 || sb_vmm_pid(name) > 0));
	close(fd);
	return 0;
}
