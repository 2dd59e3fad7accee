/* `mvm logs NAME [-f]`: the guest console and the VMM's messages (console.log). */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/cli_util.h"
#include "tools/cli/cmd_sandbox.h"
#include "tools/sandbox/sandbox.h"

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

int cmd_logs(int argc, char **argv)
{
	const struct timespec tick = { 0, 200 * 1000000L };
	const char *name = NULL;
	bool follow = false;
	char p[4096];
	int fd, r;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-f") || !strcmp(argv[i], "--follow")) {
			follow = true;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			fputs("usage: mvm logs NAME [-f]\n"
			      "Print the sandbox's console log (kernel messages, agent, VMM errors).\n"
			      "  -f, --follow   keep printing while the sandbox runs\n", stdout);
			return 0;
		} else if (!name) {
			name = argv[i];
		} else {
			cli_err("logs", "unexpected '%s'", argv[i]);
			return MVM_EXIT_USAGE;
		}
	}
	if (!name || !sb_name_ok(name) || !sb_exists(name)) {
		cli_err("logs", name ? "no sandbox named %s" : "expected a sandbox NAME%s", name ? name : "");
		return name ? MVM_EXIT_ERROR : MVM_EXIT_USAGE;
	}
	if (sb_path(name, "console.log", p, sizeof(p)) || (fd = open(p, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;	/* never started: no log yet */
	do {
		r = copy_out(fd);
		if (r < 0)
			break;
		if (follow && !r)
			nanosleep(&tick, NULL);
	} while (follow && (r > 0 || sb_vmm_pid(name) > 0));
	close(fd);
	return 0;
}
