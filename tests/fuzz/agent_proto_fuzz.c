/*
 * libFuzzer target: bytes a hostile peer sends over the agent protocol. The
 * payload decoders see the input directly; tree_recv sees it as a stream and
 * writes beneath a private directory, which must hold everything it creates.
 */
#include <fcntl.h>
#include <ftw.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "guest/agent/proto.h"
#include "guest/agent/tree.h"

static char dir[] = "/dev/shm/mvm-agent-fuzz-XXXXXX";
static bool made;

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	return f->level ? remove(p) : 0;	/* keep the root */
}

static void remove_root(void)
{
	rmdir(dir);	/* each input's tree is already gone */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tree_opts o = { .max_bytes = 1 << 20 };
	struct ap_entry *en = malloc(sizeof(*en));
	struct ap_exec e;
	struct ap_exit x;
	int sv[2], dfd;

	/* A flag, not the template's tail: mkdtemp may itself end the name in 'X'. */
	if (!made) {
		if (!mkdtemp(dir))
			abort();
		made = true;
		atexit(remove_root);
	}
	if (ap_exec_decode(data, size, &e) == 0)
		ap_exec_free(&e);
	ap_exit_decode(data, size, &x);
	ap_entry_decode(data, size, en);
	ap_frame_size(data, size);
	free(en);

	if (size > (1 << 16) || socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		return 0;
	int big = 1 << 18;
	setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
	if (write(sv[0], data, size) != (ssize_t)size)
		abort();
	shutdown(sv[0], SHUT_WR);
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	tree_recv(sv[1], dfd, "t", &o);
	close(dfd);
	close(sv[0]);
	close(sv[1]);
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return 0;
}
