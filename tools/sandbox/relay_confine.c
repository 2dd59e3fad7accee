/*
 * Confinement of the relay process (relay.h). It parses nothing, but it is
 * fed by the guest, so it gets what the VMM gets where it applies: process
 * hygiene, Landlock (nothing to open: only the state directory to read),
 * and a seccomp table of its own (vmm/confine/seccomp_relay.c). It stays
 * in the host's network namespace: listening on host loopback is its job.
 * A forbidden call ends the relay with SIGSYS and a line in relay.log.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "tools/sandbox/relay.h"
#include "vmm/confine/hygiene.h"
#include "vmm/confine/landlock.h"
#include "vmm/confine/seccomp_filter.h"

int relay_confine(const int *keep, int nkeep, const char *dir)
{
	const char *ro[] = { dir, NULL }, *rw[] = { NULL };
	int ret = confine_hygiene(keep, nkeep), abi;

	if (ret)
		return ret;
	abi = confine_landlock(ro, rw);
	if (abi < 0)
		fprintf(stderr, "mvm relay: landlock: %s\n", strerror(-abi));
	return confine_seccomp_thread(&sc_table_relay);
}
