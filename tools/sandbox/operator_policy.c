/*
 * Operator policy (operator_policy.h): the policy object, owners and scope,
 * the --allow-max file, images and templates by name. The rule ceiling is
 * operator_ceiling.c, the output root operator_out.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/file_io.h"
#include "devices/netpolicy/net_filter.h"
#include "images/image_store.h"
#include "tools/sandbox/operator_policy.h"
#include "tools/sandbox/sandbox.h"

#define ALLOW_MAX_FILE_MAX (1u << 20)
#define OWNER_ID_MAX 100

void op_policy_init(struct op_policy *p)
{
	int n;

	memset(p, 0, sizeof(*p));
	net_rules_init(&p->allow_max, NET_MODE_ALLOWLIST);
	n = net_host_addrs_read(p->host_addrs, OP_HOST_ADDRS_MAX);
	p->n_host_addrs = n > 0 ? (size_t)n : 0;
}

void op_policy_free(struct op_policy *p)
{
	net_rules_free(&p->allow_max);
}

/* One line of the --allow-max file into @rs. 0 or -errno with @err. */
static int add_line(struct net_rules *rs, char *line, const char *path, int lineno, char *err, size_t cap)
{
	char why[NET_NAME_MAX + 64];
	size_t n;
	int ret;

	while (*line == ' ' || *line == '\t')
		line++;
	n = strlen(line);
	while (n && (line[n - 1] == ' ' || line[n - 1] == '\t' || line[n - 1] == '\r'))
		line[--n] = 0;
	if (!n || line[0] == '#')
		return 0;
	ret = net_rules_add(rs, NET_ALLOW, line, why, sizeof(why));
	if (ret == -ENOSPC)
		snprintf(why, sizeof(why), "more than %d rules", NET_RULES_MAX);
	if (ret)
		snprintf(err, cap, "--allow-max %.200s: line %d: %s", path, lineno, why);
	return ret;
}

int op_policy_load_allow_max(struct op_policy *p, const char *path, char *err, size_t cap)
{
	struct net_rules rs;
	char *text = file_read_text(path, ALLOW_MAX_FILE_MAX), *line;
	int ret = 0, lineno = 0;

	if (!text) {
		snprintf(err, cap, "--allow-max %.200s: cannot read it (%s; at most 1 MiB of text)", path,
			 strerror(errno ? errno : EINVAL));
		return -(errno ? errno : EINVAL);
	}
	net_rules_init(&rs, NET_MODE_ALLOWLIST);
	/* Line by line, empty ones counted, for the messages. */
	for (line = text; line && !ret; lineno++) {
		char *nl = strchr(line, '\n');

		if (nl)
			*nl = 0;
		ret = add_line(&rs, line, path, lineno + 1, err, cap);
		line = nl ? nl + 1 : NULL;
	}
	free(text);
	if (ret) {
		net_rules_free(&rs);
		return ret;
	}
	net_rules_free(&p->allow_max);
	p->allow_max = rs;
	return 0;
}

static bool id_ok(const char *id)
{
	size_t n = strlen(id);

	if (!n || n > OWNER_ID_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.@-", id[i]))
			return false;
	return true;
}

bool op_owner_ok(const char *owner)
{
	if (!owner)
		return false;
	if (!strncmp(owner, "mcp:", 4))
		return id_ok(owner + 4);
	if (!strncmp(owner, "tenant:", 7))
		return id_ok(owner + 7);
	return false;
}

int op_owner_make(const char *kind, const char *id, char *out, size_t cap)
{
	if ((strcmp(kind, "mcp") && strcmp(kind, "tenant")) || !id || !id_ok(id) ||
	    (size_t)snprintf(out, cap, "%s:%s", kind, id) >= cap)
		return -EINVAL;
	return 0;
}

bool op_may_access(const struct op_policy *p, const char *caller, const char *owner)
{
	if (p->all_sandboxes)
		return true;
	return caller && owner && owner[0] && op_owner_ok(caller) && !strcmp(caller, owner);
}

int op_sandbox_access(const struct op_policy *p, const char *caller, const char *name, char *err,
		      size_t cap)
{
	struct sb_config c;
	bool ok = false;

	if (name && sb_name_ok(name) && sb_exists(name)) {
		if (p->all_sandboxes)
			return 0;
		if (!sb_config_load(name, &c)) {
			ok = op_may_access(p, caller, c.owner);
			sb_config_free(&c);
		}
	}
	if (ok)
		return 0;
	/* %.64s: a malformed name from the caller is cut, never echoed whole. */
	snprintf(err, cap, "no sandbox named %.64s", name ? name : "(none)");
	return -ENOENT;
}

int op_image_resolve(const struct op_policy *p, const char *arg, char *out, size_t cap, char *err,
		     size_t errcap)
{
	static const char *const suffix[] = { "", ".ext4", ".img", ".raw" };
	char *dir;
	struct stat st;

	if (p->allow_host_paths) {
		if ((size_t)snprintf(out, cap, "%s", arg) >= cap)
			goto too_long;
		return 0;
	}
	if (!image_name_ok(arg)) {
		snprintf(err, errcap, "image '%.200s': give the name of an image in the store "
			 "('mvm image ls'); host paths are refused unless the operator allows them", arg);
		return -EPERM;
	}
	dir = image_store_dir();
	for (size_t i = 0; dir && i < sizeof(suffix) / sizeof(suffix[0]); i++) {
		if ((size_t)snprintf(out, cap, "%s/%s%s", dir, arg, suffix[i]) >= cap)
			break;
		/* A regular file, not a symlink planted in the store. */
		if (!lstat(out, &st) && S_ISREG(st.st_mode)) {
			free(dir);
			return 0;
		}
	}
	free(dir);
	snprintf(err, errcap, "no image named %s in the store ('mvm image ls')", arg);
	return -ENOENT;
too_long:
	snprintf(err, errcap, "image path too long");
	return -ENAMETOOLONG;
}

int op_check_template(const struct op_policy *p, const char *name, char *err, size_t cap)
{
	(void)p;
	if (name && sb_name_ok(name))
		return 0;
	snprintf(err, cap, "template '%.200s': give a template's name ('mvm template ls')",
		 name ? name : "");
	return -EPERM;
}
