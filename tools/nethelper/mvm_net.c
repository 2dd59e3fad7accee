// SPDX-License-Identifier: MIT
/*
 * mvm-net: a sandbox's network back-end in its own process (issue 16).
 *
 * libslirp and glib parse what the guest sends; a bug there must not reach
 * guest memory or the KVM descriptors. So the VMM (devices/net_helper.c)
 * starts this program next to itself during set-up, and it holds only: one
 * SOCK_SEQPACKET socket to the VMM (fd 3), the host network, and
 * /etc/resolv.conf for libslirp. It sees only frames the VMM's policy
 * engine already allowed. Confined before it says hello: process hygiene,
 * Landlock (that one file), no capability, its own seccomp table
 * (vmm/confine/seccomp_nethelper.c). It dies with the VMM: parent-death
 * signal, and end-of-file on its socket.
 *
 *   mvm-net VMM_PID [--loopback] [--publish SPEC]... [--dns-server ADDR]
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fatal_signal.h"
#include "common/log.h"
#include "devices/net_relay.h"
#include "vmm/confine/caps.h"
#include "vmm/confine/hygiene.h"
#include "vmm/confine/landlock.h"
#include "vmm/confine/seccomp_filter.h"
#include "vmm/event_loop.h"

#define CHAN_FD 3
#define MAX_PUBLISH 64
#define STDERR_ROOM (1 << 20)	/* what it may add to console.log */

static int parse_args(int argc, char **argv, pid_t *vmm, struct net_relay_cfg *cfg,
		      const char **publish)
{
	char *end;

	if (argc < 2)
		return -EINVAL;
	/* 1: the VMM is pid 1 of its PID namespace, which ours is too (a
	 * helper whose VMM died there dies with the namespace, never orphaned). */
	*vmm = (pid_t)strtol(argv[1], &end, 10);
	if (*end || *vmm <= 0)
		return -EINVAL;
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--loopback"))
			cfg->host_loopback = true;
		else if (!strcmp(argv[i], "--publish") && i + 1 < argc &&
			 cfg->nr_publish < MAX_PUBLISH)
			publish[cfg->nr_publish++] = argv[++i];
		else if (!strcmp(argv[i], "--dns-server") && i + 1 < argc)
			cfg->dns_server = argv[++i];
		else
			return -EINVAL;
	}
	cfg->publish = publish;
	return 0;
}

/* Its stderr is the VMM's: console.log for a sandbox, which the VMM keeps
 * under MVM_LOG_MAX; the helper writes to it directly, so a compromised
 * helper could grow it without end. RLIMIT_FSIZE bounds what it can add
 * (a write beyond fails with EFBIG). */
static void bound_stderr(void)
{
	struct stat st;
	struct rlimit r;

	if (fstat(2, &st) || !S_ISREG(st.st_mode))
		return;
	signal(SIGXFSZ, SIG_IGN);
	r.rlim_cur = r.rlim_max = (rlim_t)st.st_size + STDERR_ROOM;
	if (setrlimit(RLIMIT_FSIZE, &r))
		log_warn("mvm-net: RLIMIT_FSIZE: %s", strerror(errno));
}

/* After set-up (slirp has read what it reads once: /dev/urandom for glib's
 * random numbers), before the first frame. Returns the Landlock ABI. */
static int confine(char *err, size_t errlen)
{
	static const char *const ro[] = { "/etc/resolv.conf", NULL }, *const rw[] = { NULL };
	int abi = confine_landlock(ro, rw), ret;

	if (abi < 0) {
		log_warn("mvm-net: landlock: %s", strerror(-abi));
		abi = 0;
	}
	/* It started with none (an exec by a user that is not root in the
	 * namespace, with no bounding set left: confine_caps_bound() in the
	 * VMM); this makes sure of it, before the filter forbids capset. */
	ret = confine_caps_drop();
	if (ret)
		log_info("mvm-net: capabilities: %s: some are kept", strerror(-ret));
	confine_seccomp_report_as("mvm-net: seccomp: the network helper");
	ret = confine_seccomp_thread(&sc_table_nethelper);
	if (ret) {
		snprintf(err, errlen, "network helper: seccomp: %s", strerror(-ret));
		return ret;
	}
	return abi;
}

int main(int argc, char **argv)
{
	const char *publish[MAX_PUBLISH];
	struct net_relay_cfg cfg = { 0 };
	struct net_relay *r = NULL;
	const int keep = CHAN_FD;
	struct ev_loop loop;
	char err[512] = "";
	pid_t vmm;
	int ret, abi;

	/* Dies with the VMM; it may have died before this line ran. */
	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	if (parse_args(argc, argv, &vmm, &cfg, publish)) {
		fprintf(stderr, "usage: mvm-net VMM_PID [--loopback] [--publish SPEC]... "
				"[--dns-server ADDR] (started by the VMM, socket on fd 3)\n");
		return 2;
	}
	if (getppid() != vmm)
		return 1;
	ret = confine_hygiene(&keep, 1);
	if (ret)
		log_warn("mvm-net: process hygiene: %s", strerror(-ret));
	bound_stderr();
	fatal_signal_report(2, "mvm-net");
	ret = ev_init(&loop);
	if (ret) {
		snprintf(err, sizeof(err), "network helper: event loop: %s", strerror(-ret));
		goto out;
	}
	ret = net_relay_create(&loop, CHAN_FD, &cfg, &r, err, sizeof(err));
	if (ret)
		goto out;
	abi = confine(err, sizeof(err));
	if (abi < 0) {
		ret = abi;
		goto out;
	}
	ret = net_relay_hello(CHAN_FD, 0, abi, NULL);
	if (!ret)
		ev_run(&loop);
out:
	if (ret)
		net_relay_hello(CHAN_FD, ret, 0, err);
	net_relay_destroy(r);
	return ret ? 1 : 0;
}
