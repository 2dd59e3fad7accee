/* `mvm template create|ls|inspect|rm`: named starting points for new sandboxes. */
#include <cjson/cJSON.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/cli_util.h"
#include "snapshots/template.h"
#include "tools/cli/cmd_snapshot.h"
#include "tools/sandbox/template.h"
#include "tools/sandbox/template_bundle.h"

static const char template_usage[] =
	"usage: mvm template create TPL --from SANDBOX\n"
	"       mvm template ls [--json]\n"
	"       mvm template inspect TPL [--json]\n"
	"       mvm template rm TPL [--force]\n"
	"       mvm template export TPL FILE\n"
	"       mvm template import FILE [--name NAME]\n"
	"A template is a read-only starting point taken from a running sandbox\n"
	"(memory, vCPUs, devices, disk; the source pauses briefly and runs on).\n"
	"'mvm create NAME --template TPL' and 'mvm run --template TPL -- CMD' start\n"
	"from it without booting: memory is shared copy-on-write, the disk is a new\n"
	"overlay on the template's layers, and the sandbox gets its own clock,\n"
	"entropy, hostname and network policy before any command runs.\n"
	"A sandbox made with --image IMG: the template references IMG in the image\n"
	"store (not copied); once IMG changes, starts from the template are refused.\n"
	"Templates live in ${MVM_TEMPLATE_DIR:-${XDG_DATA_HOME:-~/.local/share}/mvm/templates}.\n"
	"export writes one file (mode 0600: it holds the guest's memory) with the\n"
	"template, the image it references and a manifest of SHA-256 digests;\n"
	"import checks every digest, puts the image in this host's store (reused\n"
	"when one with the same contents is there), seals the template with this\n"
	"host's key and publishes it whole; a bundle already imported is a no-op.\n"
	"\n"
	"  --from SANDBOX   the running sandbox to take it from (create)\n"
	"  --json           machine-readable output (ls, inspect)\n"
	"  --name NAME      import under NAME instead of the bundle's own name\n"
	"  --force          rm even while sandboxes started from it exist (they keep\n"
	"                   their own links to its files and run on)\n";

struct tpl_args {
	const char *sub, *tpl, *from, *file, *name;
	bool json, force;
};

/* Options anywhere; positionals: SUB [TPL]. 0, 1 (--help) or -1 (message printed). */
static int parse(int argc, char **argv, struct tpl_args *a)
{
	static const struct option opts[] = {
		{ "from", required_argument, NULL, 'f' }, { "json", no_argument, NULL, 'j' },
		{ "force", no_argument, NULL, 'F' }, { "help", no_argument, NULL, 'h' },
		{ "name", required_argument, NULL, 'n' }, { 0 },
	};
	int c, npos = 0;

	memset(a, 0, sizeof(*a));
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "-h", opts, NULL)) != -1) {
		switch (c) {
		case 'h': return 1;
		case 'f': a->from = optarg; break;
		case 'j': a->json = true; break;
		case 'F': a->force = true; break;
		case 'n': a->name = optarg; break;
		case 1:
			if (npos == 0)
				a->sub = optarg;
			else if (npos == 1)
				a->tpl = optarg;
			else if (npos == 2)
				a->file = optarg;
			if (++npos <= 3)
				break;
			/* fall through */
		default:
			cli_err("template", "unexpected '%s' (see mvm template --help)", argv[optind - 1]);
			return -1;
		}
	}
	for (; optind < argc; optind++, npos++)	/* after "--" */
		if (npos == 1)
			a->tpl = argv[optind];
		else if (npos == 2)
			a->file = argv[optind];
	if (!a->sub || (strcmp(a->sub, "ls") && !a->tpl) || (!strcmp(a->sub, "ls") && a->tpl) ||
	    npos > (!strcmp(a->sub, "export") ? 3 : 2) || (!strcmp(a->sub, "export") && !a->file) ||
	    (a->name && strcmp(a->sub, "import"))) {
		cli_err("template", "expected a subcommand and its arguments (see mvm template --help)");
		return -1;
	}
	return 0;
}

static int do_create(const struct tpl_args *a)
{
	char err[1024] = "";

	if (!a->from) {
		cli_err("template", "create needs --from SANDBOX");
		return MVM_EXIT_USAGE;
	}
	if (sb_template_create(a->tpl, a->from, err, sizeof(err))) {
		cli_err("template", "%s", err);
		return MVM_EXIT_ERROR;
	}
	printf("%s\n", a->tpl);
	return 0;
}

/* One template as JSON: its record, what it holds, its state, its users. */
static cJSON *describe(const char *tpl)
{
	struct snap_dir_info *in = calloc(1, sizeof(*in));
	struct tpl_meta *m = calloc(1, sizeof(*m));
	cJSON *o = cJSON_CreateObject(), *users = cJSON_CreateArray();
	char dir[4200], err[512] = "", **names = NULL;
	uint64_t bytes = 0;
	int n;

	cJSON_AddStringToObject(o, "name", tpl);
	if (!in || !m || tpl_dir(tpl, dir, sizeof(dir)) || tpl_check(dir, in, m, err, sizeof(err))) {
		cJSON_AddStringToObject(o, "status", "damaged");
		cJSON_AddStringToObject(o, "error", err[0] ? err : "cannot read it");
	} else {
		cJSON_AddStringToObject(o, "status", "intact");
		cJSON_AddStringToObject(o, "source", m->source);
		cJSON_AddNumberToObject(o, "created", m->created);
		cJSON_AddNumberToObject(o, "memory", (double)in->ram_size);
		cJSON_AddNumberToObject(o, "cpus", in->ncpus);
		for (int i = 0; i < m->nfiles; i++)
			bytes += m->f[i].size;
		cJSON_AddNumberToObject(o, "bytes", (double)bytes);
		cJSON_AddStringToObject(o, "path", dir);
		/* Not in "bytes": the image's base is referenced, not held. */
		if (m->has_base)
			cJSON_AddStringToObject(o, "image", m->base.path);
		if (m->bundle[0])
			cJSON_AddStringToObject(o, "bundle_sha256", m->bundle);
	}
	n = sb_template_users(tpl, &names);
	for (int i = 0; i < n; i++) {
		cJSON_AddItemToArray(users, cJSON_CreateString(names[i]));
		free(names[i]);
	}
	free(names);
	cJSON_AddItemToObject(o, "sandboxes", users);
	free(in);
	free(m);
	return o;
}

static void print_json(cJSON *j)
{
	char *s = cJSON_Print(j);

	if (s)
		printf("%s\n", s);
	free(s);
	cJSON_Delete(j);
}

static const char *str(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	return cJSON_IsString(v) ? v->valuestring : "";
}

static double num(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

static int do_ls(const struct tpl_args *a)
{
	char **names;
	cJSON *arr = cJSON_CreateArray(), *e;
	int n = tpl_list(&names);

	if (n < 0) {
		cli_err("template", "cannot read the template store");
		cJSON_Delete(arr);
		return MVM_EXIT_ERROR;
	}
	for (int i = 0; i < n; i++) {
		cJSON_AddItemToArray(arr, describe(names[i]));
		free(names[i]);
	}
	free(names);
	if (a->json) {
		print_json(arr);
		return 0;
	}
	printf("%-24s %-8s %-16s %6s %5s %s\n", "TEMPLATE", "STATUS", "SOURCE", "MEMORY", "CPUS",
	       "SANDBOXES");
	cJSON_ArrayForEach(e, arr)
		printf("%-24s %-8s %-16s %5.0fM %5.0f %d\n", str(e, "name"), str(e, "status"),
		       str(e, "source"), num(e, "memory") / (1 << 20), num(e, "cpus"),
		       cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(e, "sandboxes")));
	cJSON_Delete(arr);
	return 0;
}

static int do_inspect(const struct tpl_args *a)
{
	char dir[4200];
	cJSON *o, *u;

	if (tpl_dir(a->tpl, dir, sizeof(dir)) || !tpl_exists(a->tpl)) {
		cli_err("template", "no template named %s", a->tpl);
		return MVM_EXIT_ERROR;
	}
	o = describe(a->tpl);
	if (a->json) {
		print_json(o);
		return 0;
	}
	printf("name:      %s\nstatus:    %s\n", str(o, "name"), str(o, "status"));
	if (str(o, "error")[0])
		printf("error:     %s\n", str(o, "error"));
	printf("source:    %s\nmemory:    %.0f MiB\ncpus:      %.0f\nsize:      %.1f MiB\n"
	       "path:      %s\n", str(o, "source"), num(o, "memory") / (1 << 20),
	       num(o, "cpus"), num(o, "bytes") / (1 << 20), str(o, "path"));
	if (str(o, "image")[0])
		printf("image:     %s (referenced, not copied)\n", str(o, "image"));
	if (str(o, "bundle_sha256")[0])
		printf("imported:  from bundle sha256 %s\n", str(o, "bundle_sha256"));
	printf("sandboxes:");
	cJSON_ArrayForEach(u, cJSON_GetObjectItemCaseSensitive(o, "sandboxes"))
		printf(" %s", u->valuestring);
	printf("\n");
	cJSON_Delete(o);
	return 0;
}

static int do_rm(const struct tpl_args *a)
{
	char err[512] = "", **names = NULL;
	int n = sb_template_users(a->tpl, &names);

	if (n > 0 && !a->force) {
		cli_err("template", "%s is in use by %d sandbox(es), e.g. %s: remove them first, "
			"or pass --force (they keep running on their own links)", a->tpl, n, names[0]);
	}
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
	if (n > 0 && !a->force)
		return MVM_EXIT_ERROR;
	if (sb_template_remove(a->tpl, err, sizeof(err))) {
		cli_err("template", "%s", err);
		return MVM_EXIT_ERROR;
	}
	return 0;
}

static int do_export(const struct tpl_args *a)
{
	char err[1024] = "", digest[SHA256_HEX];
	uint64_t bytes = 0;

	if (sb_template_export(a->tpl, a->file, digest, &bytes, err, sizeof(err))) {
		cli_err("template", "%s", err);
		return MVM_EXIT_ERROR;
	}
	printf("exported template %s to %s (%.1f MiB, sha256 %s)\n", a->tpl, a->file,
	       (double)bytes / (1 << 20), digest);
	return 0;
}

static int do_import(const struct tpl_args *a)
{
	struct sb_import r;
	char err[1024] = "";

	if (sb_template_import(a->tpl, a->name, &r, err, sizeof(err))) {
		cli_err("template", "%s", err);
		return MVM_EXIT_ERROR;
	}
	if (r.noop) {
		printf("template %s: this bundle (sha256 %s) is already imported; nothing to do\n",
		       r.name, r.digest);
		return 0;
	}
	printf("imported template %s (sha256 %s)\n", r.name, r.digest);
	if (r.image[0])
		printf("image: %s (%s)\n", r.image, r.image_reused ?
		       "already in the store: reused" : "added to the store");
	return 0;
}

int cmd_template(int argc, char **argv)
{
	struct tpl_args a;

	switch (parse(argc, argv, &a)) {
	case 1:
		fputs(template_usage, stdout);
		return 0;
	case -1:
		return MVM_EXIT_USAGE;
	}
	if (!strcmp(a.sub, "create"))
		return do_create(&a);
	if (!strcmp(a.sub, "ls"))
		return do_ls(&a);
	if (!strcmp(a.sub, "inspect"))
		return do_inspect(&a);
	if (!strcmp(a.sub, "rm"))
		return do_rm(&a);
	if (!strcmp(a.sub, "export"))
		return do_export(&a);
	if (!strcmp(a.sub, "import"))
		return do_import(&a);
	cli_err("template", "unknown subcommand '%s' (create, ls, inspect, rm, export, import)",
		a.sub);
	return MVM_EXIT_USAGE;
}
