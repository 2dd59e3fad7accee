/*
 * The arm64 box's stand-in for vmm/confine/seccomp_filter.c: mvm's seccomp
 * programs are compiled from the x86_64 system-call tables only (aarch64
 * tables are not written yet: README, "not done on arm64"), so in the box
 * program arm64-boot a device thread that asks for its filter (virtio-blk's
 * I/O workers, devices/blk_io.c) runs without one, and says so once. Not
 * product code: only tests/nested/box-arm64.sh links it.
 */
#include <stdio.h>

#include "vmm/confine/seccomp_filter.h"

int confine_seccomp_thread(const struct sc_table *t)
{
	static int said;

	if (!__atomic_exchange_n(&said, 1, __ATOMIC_SEQ_CST))
		printf("arm64-boot: NOTE: no aarch64 seccomp tables yet: the %s threads run"
		       " unfiltered\n", t->thread);
	return 0;
}
