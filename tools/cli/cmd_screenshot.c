/* `mvm screenshot NAME FILE.png`: the sandbox's display as a PNG. */
#include <stdio.h>

#include "common/cli_util.h"
#include "tools/cli/cmd_sandbox.h"
#include "tools/cli/verb_args.h"
#include "tools/sandbox/browser.h"
#include "tools/sandbox/sandbox.h"

static const char screenshot_usage[] =
	"usage: mvm screenshot NAME FILE.png\n"
	"Write the whole display of the sandbox NAME (a `browser` image) to\n"
	"FILE.png. The PNG is checked (signature, header, size at most\n"
	"16384x16384 and 32 MiB) and written atomically: on any failure no\n"
	"FILE.png is left behind.\n";

int screenshot_parse(int argc, char **argv, struct verb_args *a)
{
	static const struct verb_spec spec = { .verb = "screenshot", .min_pos = 2, .max_pos = 2,
					       .synopsis = "NAME FILE.png" };

	return verb_parse(&spec, NULL, argc, argv, a);
}

int cmd_screenshot(int argc, char **argv)
{
	struct verb_args a;
	char err[1024] = "";
	uint32_t w, h;
	int r = screenshot_parse(argc, argv, &a);

	if (r)
		return verb_parse_exit(r, screenshot_usage);
	if (!verb_sandbox_running("screenshot", a.pos[0]))
		return MVM_EXIT_ERROR;
	if (browser_screenshot(a.pos[0], a.pos[1], &w, &h, err, sizeof(err))) {
		cli_err("screenshot", "%s", err);
		return MVM_EXIT_ERROR;
	}
	return 0;
}
