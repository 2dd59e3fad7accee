/* Network options of `mvm run` and `mvm create`; see net_opts.h. */
#include <string.h>

#include "common/cli_util.h"
#include "tools/cli/net_opts.h"

int net_opt_parse(struct vm_net *n, const char *verb, int opt, char *arg)
{
	switch (opt) {
	case NET_OPT_NET:
		if (strcmp(arg, "none") && strcmp(arg, "allowlist") && strcmp(arg, "open")) {
			cli_err(verb, "--net: expected none, allowlist or open, got '%s'", arg);
			return -1;
		}
		n->enabled = strcmp(arg, "none") != 0;
		n->mode = arg;
		return 0;
	case NET_OPT_ALLOW:
		if (n->nr_allow == VM_MAX_NET_RULES) {
			cli_err(verb, "at most %d --allow rules (use --policy FILE)", VM_MAX_NET_RULES);
			return -1;
		}
		n->allow[n->nr_allow++] = arg;
		return 0;
	case NET_OPT_POLICY: n->policy_path = arg; return 0;
	case NET_OPT_DNS_SERVER: n->dns_server = arg; return 0;
	case NET_OPT_PUBLISH:
		if (n->nr_publish == VM_MAX_PUBLISH) {
			cli_err(verb, "at most %d --publish", VM_MAX_PUBLISH);
			return -1;
		}
		n->publish[n->nr_publish++] = arg;
		return 0;
	case NET_OPT_EVENTS: n->events_path = arg; return 0;
	}
	return 1;
}
