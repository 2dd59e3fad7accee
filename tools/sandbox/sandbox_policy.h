/*
 * A sandbox's network policy file, policy.json in its state directory: the
 * JSON policy format of docs/network-policy.md. `mvm create` writes it from
 * --net/--policy/--allow; the VMM loads it at every start and rewrites its
 * mode and rules after each run-time change (`mvm net allow|deny|remove`),
 * so the rules a sandbox runs with survive stop/start.
 */
#ifndef MVM_SANDBOX_POLICY_H
#define MVM_SANDBOX_POLICY_H

#include <stddef.h>

#include "vmm/vm.h"

#define SB_POLICY_FILE "policy.json"

/* Check --policy and every --allow the way the VMM will load them (so create
 * fails before it boots anything). 0, or -errno with the bad option in @err. */
int sb_policy_validate(const struct vm_net *n, char *err, size_t errlen);

/*
 * Write NAME's policy.json from @n (mode, policy_path, allow; the file's
 * other settings are kept). Every rule is checked first: 0, or -errno with
 * a message naming the bad option in @err.
 */
int sb_policy_create(const char *name, const struct vm_net *n, char *err, size_t errlen);

/*
 * Replace mode/allow/deny of the policy file @path with @show (virtio_net_show's
 * {"mode":..,"allow":[..],"deny":[..]}), atomically. 0 or -errno.
 */
int sb_policy_persist(const char *path, const char *show);

/* `mvm net allow|deny|remove` on a stopped sandbox: @verb applied to its
 * stored policy. 0, or -errno with @err set. */
int sb_policy_edit(const char *name, const char *verb, const char *rule, char *err,
		   size_t errlen);

/* NAME's stored mode and rules as `mvm net show` prints them (malloc'd in
 * @json). 0 or -errno (@err set). */
int sb_policy_show(const char *name, char **json, char *err, size_t errlen);

/* Dry run of @dest ("host[:port][/proto]") against NAME's stored policy: 1
 * allowed, 0 denied, -errno; @why explains. */
int sb_policy_check(const char *name, const char *dest, char *why, size_t whylen);

#endif
