/*
 * mvm-oci: `mvm image import` (cmd_image_import.c, images/oci_*.c) as a
 * program of its own, the only one linked with libarchive (and the
 * compression and XML libraries it brings), so that mvm, which is also
 * every sandbox's VMM, maps none of them. mvm's `image import` execs it
 * (cmd_beside.h). The layers are still unpacked by a confined child
 * (images/oci_unpack.h: Landlock, no new privileges).
 */
#include <signal.h>

#include "tools/cli/cmd_image.h"

int main(int argc, char **argv)
{
	/* As mvm's main: a pipe that closes is an error to report. */
	signal(SIGPIPE, SIG_IGN);
	return cmd_image_import(argc, argv);
}
