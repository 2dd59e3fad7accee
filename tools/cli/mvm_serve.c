/*
 * mvm-serve: `mvm serve` (cmd_serve.c, tools/serve/) as a program of its
 * own, the only one linked with libmicrohttpd and GnuTLS, so that mvm, which
 * is also every sandbox's VMM, maps neither. mvm's `serve` verb execs it
 * (cmd_beside.h); the sandboxes it creates, starts and forks are run by the
 * mvm beside it (sb_self_exe_beside), never by this program.
 */
#include <signal.h>
#include <string.h>

#include "common/cli_util.h"
#include "tools/cli/cmd_sandbox.h"
#include "tools/sandbox/sandbox.h"

int main(int argc, char **argv)
{
	int ret;

	/* As mvm's main: a client that hangs up is an error to report. */
	signal(SIGPIPE, SIG_IGN);
	ret = sb_self_exe_beside();
	if (ret) {
		cli_err("serve", "no mvm beside this program (%s): mvm-serve runs sandboxes through it",
			strerror(-ret));
		return MVM_EXIT_ERROR;
	}
	return cmd_serve(argc, argv);
}
