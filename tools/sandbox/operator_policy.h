/*
 * Operator policy: the slice of the host a remote caller (an MCP client, a
 * tenant of `mvm serve`) may reach. The operator sets it with options when
 * starting the server; the caller's arguments are checked against it before
 * any runtime function sees them. Knows nothing of MCP or HTTP: a caller is
 * an owner string, a check returns 0 or -errno with a message in @err that
 * can be shown to the caller as is.
 *
 * Four parts (docs/security.md, "The control plane"):
 *  - scope: every sandbox a caller creates records its owner in config.json
 *    ("owner"); a caller sees and acts only on its own, every other name is
 *    "not found", unless the operator gave all_sandboxes;
 *  - allow-rule ceiling: an allow rule a caller adds must stay in public
 *    address space (no host-loopback, host addresses, private, CGNAT,
 *    link-local, loopback, multicast; no IPv4 prefix wider than /16, no IPv6
 *    prefix wider than /48, no "*.TLD") unless a rule of the operator's
 *    --allow-max file (rule syntax, one per line) covers it;
 *  - output root: anything written on the host goes beneath one directory,
 *    resolved with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS (operator_out.c);
 *  - images and templates by store name; host paths only if the operator
 *    opts in (allow_host_paths).
 */
#ifndef MVM_OPERATOR_POLICY_H
#define MVM_OPERATOR_POLICY_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "devices/netpolicy/net_rules.h"

#define OP_OWNER_MAX 128	/* "mcp:" or "tenant:" + an id; includes the NUL */
#define OP_HOST_ADDRS_MAX 64

struct op_policy {
	bool all_sandboxes;		/* see and act on every sandbox, owned or not */
	bool allow_host_paths;		/* images may be host paths, not only store names */
	struct net_rules allow_max;	/* the operator's extra ceiling (mode unused) */
	struct net_addr host_addrs[OP_HOST_ADDRS_MAX];	/* refused as rule targets */
	size_t n_host_addrs;
	char out_root[PATH_MAX];	/* absolute, no trailing '/'; "" = not set */
};

/* Empty policy (the defaults above); reads the host's addresses. */
void op_policy_init(struct op_policy *p);
void op_policy_free(struct op_policy *p);

/*
 * Load @path as the --allow-max ceiling: one allow rule per line (the
 * syntax of `--allow`), blank lines and lines starting with '#' ignored, at
 * most NET_RULES_MAX rules, the file at most 1 MiB. Nothing changes on
 * error. 0 or -errno with @err naming the file and line.
 */
int op_policy_load_allow_max(struct op_policy *p, const char *path, char *err, size_t cap);

/*
 * Owners. "mcp:ID" or "tenant:ID", ID of [A-Za-z0-9_.@-], 1..100 bytes.
 * op_owner_make() builds one from a kind ("mcp", "tenant") and an id into
 * @out (OP_OWNER_MAX bytes): 0, or -EINVAL for a bad id.
 */
bool op_owner_ok(const char *owner);
int op_owner_make(const char *kind, const char *id, char *out, size_t cap);

/*
 * May @caller see the sandbox whose recorded owner is @owner ("" or NULL:
 * none, e.g. made by the CLI)? Only its own, unless all_sandboxes. Pure.
 */
bool op_may_access(const struct op_policy *p, const char *caller, const char *owner);

/*
 * The sandbox @name exists and @caller may act on it: 0; else -ENOENT and
 * "no sandbox named NAME" in @err, the same words whether it does not exist,
 * is another owner's, or its name is malformed (a caller learns nothing of
 * other owners' sandboxes).
 */
int op_sandbox_access(const struct op_policy *p, const char *caller, const char *name, char *err,
		      size_t cap);

/*
 * The allow rule @rule (`--allow` syntax) is within the ceiling: 0; else
 * -EINVAL (not a rule) or -EPERM, with the reason in @err. Pure.
 */
int op_check_allow_rule(const struct op_policy *p, const char *rule, char *err, size_t cap);

/*
 * An image argument to what `mvm create --image` should get: with
 * allow_host_paths, @arg as is; otherwise @arg must be a store name
 * (image_name_ok) that exists in the image store, and @out is its absolute
 * path there (so nothing falls back to the current directory). 0, -ENOENT
 * (no such image) or -EPERM (a path), with @err.
 */
int op_image_resolve(const struct op_policy *p, const char *arg, char *out, size_t cap, char *err,
		     size_t errcap);
/* A template argument: a template name (never a path). 0 or -EPERM with @err. */
int op_check_template(const struct op_policy *p, const char *name, char *err, size_t cap);

/*
 * The output root: @dir, or NULL for the default
 * ${XDG_STATE_HOME:-~/.local/state}/mvm/@sub (e.g. "mcp-out"), made 0700 if
 * missing. It must be a directory (not a symlink) owned by this user and not
 * writable by group or others. Sets p->out_root (absolute). 0 or -errno
 * with @err.
 */
int op_out_root_set(struct op_policy *p, const char *dir, const char *sub, char *err, size_t cap);

/*
 * Resolve @rel for writing a new entry beneath the output root. @rel is
 * relative (or absolute but lexically beneath out_root), no "." / ".."
 * components, at most 32 levels. Missing parent directories are made 0700
 * one at a time, every step with openat2(RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS), so no symlink anywhere leads out. On success
 * *parent_fd is an O_PATH-free directory descriptor of the parent (the
 * caller closes it; not close-on-exec only if @inherit), @leaf (NAME_MAX+1
 * bytes) its last component, which must not exist yet, and @abs
 * (PATH_MAX bytes) the path shown to the caller. 0 or -errno with @err.
 */
int op_out_resolve(const struct op_policy *p, const char *rel, bool inherit, int *parent_fd,
		   char *leaf, char *abs, char *err, size_t cap);

#endif
