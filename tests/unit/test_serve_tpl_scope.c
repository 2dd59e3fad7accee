/* Whose template is it (tools/serve/serve_tpl_scope.h): a tenant sees the
 * operator's templates and its own (stored TENANT.NAME), never another's. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fs_util.h"
#include "tools/serve/serve_tpl_scope.h"

static char root[64];

static void tpl(const char *name, const char *owner)
{
	char p[256];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", root, name);
	cr_assert_eq(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/%s/config.json", root, name);
	f = fopen(p, "w");
	cr_assert_not_null(f);
	if (owner)
		fprintf(f, "{\"name\":\"x\",\"owner\":\"%s\"}", owner);
	else
		fprintf(f, "{\"name\":\"x\"}");
	fclose(f);
}

static void store(void)
{
	snprintf(root, sizeof(root), "/tmp/mvm-tpl-scope.XXXXXX");
	cr_assert_not_null(mkdtemp(root));
	setenv("MVM_TEMPLATE_DIR", root, 1);
	tpl("base", NULL);			/* the operator's */
	tpl("alice.py", "tenant:alice");	/* alice's "py" */
	tpl("bob.py", "tenant:bob");
	tpl("alice.forged", "tenant:bob");	/* named like alice's, owned by bob */
	tpl("cli", "mcp:s1");			/* not a tenant's: the operator's */
}

static void unstore(void)
{
	rm_tree(root);
	unsetenv("MVM_TEMPLATE_DIR");
}

TestSuite(serve_tpl_scope, .init = store, .fini = unstore);

static int resolve(const char *tenant, const char *name, char *out)
{
	struct op_policy pol;
	char err[256];
	int st;

	op_policy_init(&pol);
	st = sv_tpl_resolve(&pol, tenant, name, out, 128, err, sizeof(err));
	op_policy_free(&pol);
	if (st)
		cr_assert(strstr(err, name), "%s", err);
	return st;
}

Test(serve_tpl_scope, own_first_then_the_operators_never_another_tenants)
{
	char out[128];

	cr_assert_eq(resolve("alice", "py", out), 0);
	cr_assert_str_eq(out, "alice.py");
	cr_assert_eq(resolve("bob", "py", out), 0);
	cr_assert_str_eq(out, "bob.py");
	cr_assert_eq(resolve("alice", "base", out), 0);
	cr_assert_str_eq(out, "base");
	cr_assert_eq(resolve("alice", "bob.py", out), -ENOENT);	/* bob's, by its store name */
	cr_assert_eq(resolve("carol", "py", out), -ENOENT);
	cr_assert_eq(resolve("alice", "forged", out), -ENOENT);	/* the name is not the owner */
	cr_assert_eq(resolve("alice", "alice.forged", out), -ENOENT);
	cr_assert_eq(resolve("bob", "alice.forged", out), 0);	/* bob's, under whatever name */
	cr_assert_eq(resolve("alice", "/etc", out), -EPERM);
}

static int count(const char *tenant)
{
	uint64_t bytes;
	int n;

	cr_assert_eq(sv_tpl_usage(tenant, &n, &bytes), 0);
	return n;
}

Test(serve_tpl_scope, listing_shows_own_names_and_counts_own_only)
{
	char shown[128];

	cr_assert(sv_tpl_visible("alice", "alice.py", shown, sizeof(shown)));
	cr_assert_str_eq(shown, "py");
	cr_assert(sv_tpl_visible("alice", "cli", shown, sizeof(shown)));
	cr_assert_str_eq(shown, "cli");
	cr_assert_not(sv_tpl_visible("alice", "bob.py", shown, sizeof(shown)));
	cr_assert_not(sv_tpl_visible("alice", "alice.forged", shown, sizeof(shown)));
	cr_assert_eq(count("alice"), 1);
	cr_assert_eq(count("bob"), 2);
	cr_assert_eq(count("carol"), 0);
}
