/* mvm: the command-line front end. One table of verbs; each lives in tools/cmd_*.c. */
#include <stdio.h>
#include <string.h>

#include "tools/cli.h"
#if __has_include("tools/cmd_image.h")
#include "tools/cmd_image.h"
#define HAVE_CMD_IMAGE 1
#endif

struct verb {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

static const struct verb verbs[] = {
	{ "run", cmd_run, "boot a fresh sandbox, run one command, throw it away" },
#ifdef HAVE_CMD_IMAGE
	{ "image", cmd_image, "create and inspect disk images (create, info, ls)" },
#endif
};

static void usage(FILE *f)
{
	fprintf(f, "usage: mvm COMMAND [OPTIONS] [ARGS...]\n\n"
		   "mvm runs untrusted work in throw-away KVM microVMs.\n\nCommands:\n");
	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		fprintf(f, "  %-8s %s\n", verbs[i].name, verbs[i].summary);
	fprintf(f, "  help     this text; 'mvm COMMAND --help' for one command\n");
}

int main(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "help") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "-h")) {
		if (argc >= 3 && strcmp(argv[1], "help") == 0) {
			char *sub[] = { argv[2], "--help", NULL };

			for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
				if (!strcmp(verbs[i].name, argv[2]))
					return verbs[i].fn(2, sub);
		}
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? MVM_EXIT_USAGE : 0;
	}
	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		if (!strcmp(verbs[i].name, argv[1]))
			return verbs[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "mvm: unknown command '%s' (see 'mvm help')\n", argv[1]);
	return MVM_EXIT_USAGE;
}
