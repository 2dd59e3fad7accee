/*
 * libFuzzer target: the host side of a copy out (tools/sandbox/fetch.c on
 * guest/agent/tree_recv.c) fed a hostile ENTRY/DATA/WARN/END stream, with
 * the fetch filters (.git, symlinks into .git or out of the tree, control
 * characters) and every host limit small enough to be reached. Everything
 * it creates must stay in a private directory, which is emptied each run.
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

#include "tools/sandbox/fetch.h"

static char dir[] = "/dev/shm/mvm-fetch-fuzz-XXXXXX";
static bool made;

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	return f->level ? remove(p) : 0;	/* keep the root */
}

static void remove_root(void)
{
	rmdir(dir);	/* each input's tree is already gone */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct refusals ref = { 0 };
	struct fetch_opts o = { .max_file = 4096, .max_total = 64 << 10, .max_entries = 256,
				.refused = &ref, .idle_s = 1 };
	int big = 1 << 18, sv[2], dfd;

	/* A flag, not the template's tail: mkdtemp may itself end the name in 'X'. */
	if (!made && !mkdtemp(dir)) {
		memcpy(dir, "/tmp/mvm-fetch-fuzz-XXXXXX", sizeof("/tmp/mvm-fetch-fuzz-XXXXXX"));
		if (!mkdtemp(dir))
			abort();
	}
	if (!made)
		atexit(remove_root);
	made = true;
	if (size > (1 << 17) || socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		return 0;
	setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
	if (write(sv[0], data, size) != (ssize_t)size)
		abort();
	shutdown(sv[0], SHUT_WR);	/* a stream that ends early fails at once, no idle wait */
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	fetch_recv(sv[1], dfd, "t", &o);
	if (ref.n > REFUSALS_MAX || ref.bytes > REFUSALS_MAX_BYTES)
		abort();
	refusals_free(&ref);
	close(dfd);
	close(sv[0]);
	close(sv[1]);
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return 0;
}
