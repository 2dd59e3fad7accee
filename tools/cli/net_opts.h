/*
 * The network options shared by `mvm run` and `mvm create` (same names, same
 * syntax; docs/network-policy.md): --net, --allow, --policy, --dns-server,
 * --publish. `mvm run` adds --events FILE.
 */
#ifndef MVM_NET_OPTS_H
#define MVM_NET_OPTS_H

#include <getopt.h>

#include "vmm/vm.h"

enum { NET_OPT_NET = 0x1000, NET_OPT_ALLOW, NET_OPT_POLICY, NET_OPT_DNS_SERVER,
       NET_OPT_PUBLISH, NET_OPT_EVENTS };

#define NET_OPTS_LONGOPTS \
	{ "net", required_argument, NULL, NET_OPT_NET }, \
	{ "allow", required_argument, NULL, NET_OPT_ALLOW }, \
	{ "policy", required_argument, NULL, NET_OPT_POLICY }, \
	{ "dns-server", required_argument, NULL, NET_OPT_DNS_SERVER }, \
	{ "publish", required_argument, NULL, NET_OPT_PUBLISH }

#define NET_OPTS_HELP \
	"  --net MODE          allowlist (default: only --allow rules), open, or none (no\n" \
	"                      network device at all); see docs/network-policy.md\n" \
	"  --allow RULE        allow HOST[:PORTS][/tcp|/udp] (name, *.name, IP[/LEN],\n" \
	"                      [IPv6], host-loopback); repeatable\n" \
	"  --policy FILE       JSON network policy\n" \
	"  --dns-server ADDR   upstream DNS for allowed names (default: the host's)\n" \
	"  --publish [IP:]HOST_PORT:GUEST_PORT  forward a host TCP port (default IP\n" \
	"                      127.0.0.1) to the guest; repeatable\n"

/* @opt with @arg into @n; @verb names the command in errors. 0, or -1 after
 * printing a usage error; 1 if @opt is not a network option. */
int net_opt_parse(struct vm_net *n, const char *verb, int opt, char *arg);

#endif
