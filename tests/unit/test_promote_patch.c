/*
 * Manifests and patches end to end on real trees: scan a baseline (with its
 * blob store), change a copy, build the patch, and let git apply it to a
 * fresh copy of the baseline: the result must equal the changed copy.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tools/promote/changeset.h"
#include "tools/sandbox/manifest.h"
#include "tools/promote/patch_build.h"

static char dir[64];

static void sh(const char *cmd, const char *unused)
{
	char full[4200];

	(void)unused;
	snprintf(full, sizeof(full), "cd %s && { %s ; }", dir, cmd);
	cr_assert_eq(system(full), 0, "failed: %s", cmd);
}

static void setup(void)
{
	strcpy(dir, "/tmp/mvm-patch-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	sh("mkdir -p base/src base/docs blobs && printf 'int main(void)\\n{\\n\\treturn 0;\\n}\\n' > base/src/main.c &&"
	   "seq 1 40 > base/numbers && echo old > base/gone && echo same > base/moved &&"
	   "echo tool > base/tool.sh && ln -s numbers base/link && printf 'x\\n' > 'base/docs/with space' &&"
	   "echo q > 'base/docs/qu\"ote' && mkfifo base/fifo", NULL);
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "chmod -R u+rwx %s; rm -rf %s", dir, dir);
	(void)!system(cmd);
}

TestSuite(promote_patch, .init = setup, .fini = teardown);

static void scan(struct manifest *m, const char *sub, bool blobs)
{
	char root[128], bd[128];
	struct mf_scan_opts o = { .own_tree = !blobs };

	snprintf(root, sizeof(root), "%s/%s", dir, sub);
	snprintf(bd, sizeof(bd), "%s/blobs", dir);
	o.blob_dir = blobs ? bd : NULL;
	memset(m, 0, sizeof(*m));
	cr_assert_eq(mf_scan(m, root, &o), 0, "%s", o.err);
}

static char *patch_of(const struct manifest *b, const struct manifest *c, struct patch_stats *st)
{
	struct outbuf o = { 0 };
	char bd[128], cd[128], err[256] = "";

	snprintf(bd, sizeof(bd), "%s/blobs", dir);
	snprintf(cd, sizeof(cd), "%s/cur", dir);
	cr_assert_eq(patch_build(&o, b, bd, c, cd, "", NULL, st, err, sizeof(err)), 0, "%s", err);
	return o.p ? o.p : strdup("");
}

Test(promote_patch, scan_records_modes_hashes_links_and_skips_fifos)
{
	struct manifest m;
	const struct mf_entry *e;

	sh("chmod 755 base/tool.sh", NULL);
	scan(&m, "base", true);
	e = mf_find(&m, "src/main.c");
	cr_assert_not_null(e);
	cr_expect_eq(e->kind, MF_FILE);
	cr_expect_eq(e->size, 30);
	e = mf_find(&m, "tool.sh");
	cr_expect_eq(mf_git_mode(e), 0100755);
	e = mf_find(&m, "link");
	cr_expect_eq(e->kind, MF_LINK);
	cr_expect_str_eq(e->target, "numbers");
	cr_expect_eq(mf_git_mode(e), 0120000);
	cr_expect_null(mf_find(&m, "fifo"));
	cr_expect_eq(mf_find(&m, "")->kind, MF_DIR);
	/* Content lands in the blob store under its hash (sha256 of "same" and a newline). */
	e = mf_find(&m, "moved");
	cr_expect_str_eq(e->sha, "a6328afc76e9db71da297ebff4b0d3e7a7eb3b01d917c05a6573fef121b6ecb6");
	sh("cmp blobs/a6328afc76e9db71da297ebff4b0d3e7a7eb3b01d917c05a6573fef121b6ecb6 base/moved", NULL);
	mf_free(&m);
}

Test(promote_patch, manifest_round_trips_through_json)
{
	struct manifest m, l;
	char p[128], err[256];

	scan(&m, "base", true);
	m.guest_root = strdup("/work/repo");
	m.host_src = strdup("/home/u/repo");
	snprintf(p, sizeof(p), "%s/m.json", dir);
	cr_assert_eq(mf_save(&m, p), 0);
	cr_assert_eq(mf_load(&l, p, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(l.n, m.n);
	cr_expect_str_eq(l.guest_root, "/work/repo");
	for (size_t i = 0; i < m.n; i++) {
		cr_expect_str_eq(l.e[i].path, m.e[i].path);
		cr_expect_eq(l.e[i].kind, m.e[i].kind);
		cr_expect_eq(l.e[i].mode, m.e[i].mode);
		cr_expect_eq(l.e[i].size, m.e[i].size);
		cr_expect_str_eq(l.e[i].sha, m.e[i].sha);
	}
	mf_free(&m);
	mf_free(&l);
}

Test(promote_patch, tampered_manifests_are_refused)
{
	static const char *bad[] = {
		"{\"guest_root\":\"/w\",\"host_src\":\"\",\"entries\":[{\"path\":\"../x\",\"kind\":\"dir\",\"mode\":493}]}",
		"{\"guest_root\":\"/w\",\"host_src\":\"\",\"entries\":[{\"path\":\"/etc\",\"kind\":\"dir\",\"mode\":493}]}",
		"{\"guest_root\":\"/w\",\"host_src\":\"\",\"entries\":[{\"path\":\"f\",\"kind\":\"file\",\"mode\":420,\"size\":1,\"sha256\":\"zz\"}]}",
		"{\"guest_root\":\"/w\",\"host_src\":\"\",\"entries\":[{\"path\":\"f\",\"kind\":\"fifo\",\"mode\":420}]}",
		"{\"guest_root\":\"/w\",\"host_src\":\"\",\"entries\":[{\"path\":\"d\",\"kind\":\"dir\",\"mode\":493},{\"path\":\"d\",\"kind\":\"dir\",\"mode\":493}]}",
		"{\"guest_root\":\"/w\",\"entries\":[]}",
		"not json",
	};
	char p[128], err[256];

	snprintf(p, sizeof(p), "%s/bad.json", dir);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct manifest m;
		FILE *f = fopen(p, "w");

		fputs(bad[i], f);
		fclose(f);
		cr_expect_neq(mf_load(&m, p, err, sizeof(err)), 0, "accepted: %s", bad[i]);
	}
}

Test(promote_patch, git_applies_the_patch_to_the_original)
{
	struct manifest b, c;
	struct patch_stats st;
	char *patch;
	FILE *f;
	char p[128];

	scan(&b, "base", true);
	sh("cp -a base cur && rm cur/fifo && cd cur && sed -i 's/return 0/return 1/' src/main.c &&"
	   "seq 1 40 | sed -e 's/^5$/five/' -e 's/^33$/thirty-three/' > numbers && printf 'tail' >> numbers &&"
	   "rm gone && mkdir -p new/dir && echo hello > new/dir/file && mv moved renamed &&"
	   "chmod +x tool.sh && ln -sfn src/main.c link && ln -s numbers newlink && : > empty &&"
	   "echo y >> 'docs/with space' && echo r > 'docs/qu\"ote' &&"
	   "mkdir -p .git/hooks && echo 'touch /tmp/pwned' > .git/hooks/post-checkout", NULL);
	scan(&c, "cur", false);
	patch = patch_of(&b, &c, &st);
	cr_expect(strstr(patch, "deleted file mode 100644\n"), "%s", patch);
	cr_expect(strstr(patch, "new file mode 100644\n"));
	cr_expect(strstr(patch, "rename from moved\nrename to renamed\n"));
	cr_expect(strstr(patch, "old mode 100644\nnew mode 100755\n"));
	cr_expect(strstr(patch, "diff --git \"a/docs/qu\\\"ote\" \"b/docs/qu\\\"ote\"\n"));
	cr_expect_null(strstr(patch, ".git/"), "git metadata in the patch");
	cr_expect_eq(st.renamed, 1);
	cr_expect_eq(st.deleted, 1);
	cr_expect_eq(st.added, 3);
	snprintf(p, sizeof(p), "%s/changes.patch", dir);
	f = fopen(p, "w");
	fputs(patch, f);
	fclose(f);
	sh("cp -a base repo && rm repo/fifo && cd repo && git init -q && git apply --check ../changes.patch &&"
	   "git apply ../changes.patch && rm -rf .git && cd .. && rm -rf cur/.git && diff -r repo cur &&"
	   "test -x repo/tool.sh && test \"$(readlink repo/link)\" = src/main.c", NULL);
	free(patch);
	mf_free(&b);
	mf_free(&c);
}

Test(promote_patch, binary_type_and_subtree_changes)
{
	struct manifest b, c;
	struct changeset cs;
	struct patch_stats st;
	char *patch;

	sh("printf 'a\\0b' > base/bin", NULL);
	scan(&b, "base", true);
	sh("cp -a base cur && cd cur && printf 'a\\0c' > bin && rm link && echo file > link &&"
	   "rm -r docs && echo now-a-file > docs", NULL);
	scan(&c, "cur", false);
	patch = patch_of(&b, &c, &st);
	cr_expect(strstr(patch, "GIT binary patch\nliteral 3\n"), "%s", patch);
	cr_expect_eq(st.binary, 1);
	/* A link that became a file: deleted as a link, added as a file. */
	cr_expect(strstr(patch, "deleted file mode 120000\n"));
	cr_expect(strstr(patch, "diff --git a/docs b/docs\nnew file mode 100644\n"));
	cr_expect(strstr(patch, "diff --git \"a/docs/qu\\\"ote\" \"b/docs/qu\\\"ote\"\ndeleted file mode"));
	/* Below a prefix only. */
	cr_assert_eq(changes_compute(&b, &c, "src", &cs), 0);
	cr_expect_eq(cs.n, 0);
	changes_free(&cs);
	cr_assert_eq(changes_compute(&b, &c, "docs", &cs), 0);
	cr_expect_eq(cs.n, 3);
	changes_free(&cs);
	free(patch);
	mf_free(&b);
	mf_free(&c);
}

Test(promote_patch, binary_changes_apply_with_git)
{
	struct manifest b, c;
	struct patch_stats st;
	char *patch, p[128];
	FILE *f;

	sh("printf 'a\\0b' > base/bin && head -c 200000 /dev/urandom > base/gone.bin", NULL);
	scan(&b, "base", true);
	sh("cp -a base cur && rm cur/fifo && cd cur && printf 'a\\0c' > bin && rm gone.bin &&"
	   "head -c 100000 /dev/urandom > new.bin && printf '\\0' > tiny.bin", NULL);
	scan(&c, "cur", false);
	patch = patch_of(&b, &c, &st);
	cr_expect_eq(st.binary, 4);
	cr_expect(strstr(patch, "index 0000000000000000000000000000000000000000.."), "%s", patch);
	snprintf(p, sizeof(p), "%s/changes.patch", dir);
	f = fopen(p, "w");
	fputs(patch, f);
	fclose(f);
	sh("cp -a base repo && rm repo/fifo && cd repo && git init -q && git apply --check ../changes.patch &&"
	   "git apply ../changes.patch && rm -rf .git && cd .. && diff -r repo cur", NULL);
	free(patch);
	mf_free(&b);
	mf_free(&c);
}

static void note(void *opaque, const char *path, const char *what)
{
	strcat(opaque, path);
	strcat(opaque, ": ");
	strcat(opaque, what);
}

Test(promote_patch, binaries_over_the_limit_are_only_marked)
{
	struct manifest b, c;
	struct patch_stats st;
	struct outbuf o = { 0 };
	char bd[128], cd[128], err[256] = "", notes[512] = "";
	struct patch_note pn = { note, notes };

	scan(&b, "base", true);
	sh("cp -a base cur && head -c 9000000 /dev/urandom > cur/huge.bin", NULL);
	scan(&c, "cur", false);
	snprintf(bd, sizeof(bd), "%s/blobs", dir);
	snprintf(cd, sizeof(cd), "%s/cur", dir);
	cr_assert_eq(patch_build(&o, &b, bd, &c, cd, "", &pn, &st, err, sizeof(err)), 0, "%s", err);
	cr_expect(strstr(o.p, "Binary files /dev/null and b/huge.bin differ\n"), "%s", o.p);
	cr_expect(strstr(notes, "huge.bin: binary, over 8 MiB"), "%s", notes);
	ob_free(&o);
	mf_free(&b);
	mf_free(&c);
}

/* A file @name (any bytes but '/' and NUL) under @sub, holding @text. */
static void put_named(const char *sub, const char *name, const char *text)
{
	char p[512];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s/%s", dir, sub, name);
	f = fopen(p, "w");
	cr_assert_not_null(f, "%s", p);
	fputs(text, f);
	fclose(f);
}

/* Whether the path at *@s (bare or git-quoted) holds a byte a shell would act on; *@s moves past it. */
static bool shell_active(const char **s, const char *end)
{
	const char *p = *s;

	if (*p == '"') {
		for (p++; p < end && *p != '"'; p++) {
			if (*p == '$' || *p == '`')
				return true;
			p += *p == '\\';
		}
		*s = p + 1;
		return p >= end;	/* unterminated */
	}
	for (; p < end && *p != ' '; p++)
		if (strchr(";|&$`<>(){}#\t'\"*?[]~!\\", *p))
			return true;
	*s = p;
	return false;
}

/* Every path of every header line of @patch: none may be shell-active. */
static void expect_quoted(const char *patch)
{
	static const char *const keys[] = { "diff --git ", "rename from ", "rename to ", "--- ", "+++ " };

	for (const char *l = patch, *end; *l; l = end + 1) {
		end = strchr(l, '\n');
		for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
			const char *s = l + strlen(keys[k]);

			if (strncmp(l, keys[k], strlen(keys[k])))
				continue;
			cr_expect(!shell_active(&s, end), "unquoted: %.*s", (int)(end - l), l);
			/* diff --git: the second path; the others end the line. */
			if (!k && *s++ == ' ')
				cr_expect(!shell_active(&s, end), "unquoted: %.*s", (int)(end - l), l);
			cr_expect(s == end, "a path holds a space unquoted: %.*s", (int)(end - l), l);
		}
	}
}

/*
 * Guest-chosen names with a shell's metacharacters (issue 27 item 8): every
 * path in changes.patch is quoted as git quotes it, so the patch fed to sh
 * runs nothing named in it, and git apply still applies it exactly.
 */
Test(promote_patch, shell_metacharacters_in_paths_are_quoted_and_git_applies_them)
{
	static const char *const names[] = {
		"a;touch PWNED1", "b|touch PWNED2", "c&touch PWNED3", "$(touch PWNED4)", "`touch PWNED5`",
		"d<e>f", "(g){h}", "#i", "j k", "caf\xc3\xa9", "tab\there", "ctl\001x", "q'uote", "glob*?[x]",
		"~tilde", "back\\slash",
	};
	struct manifest b, c;
	struct patch_stats st;
	char *patch, p[128];
	FILE *f;

	put_named("base", "old;touch PWNED6", "moved\n");
	put_named("base", "mod $(touch PWNED7)", "one\n");
	scan(&b, "base", true);
	sh("cp -a base cur && rm cur/fifo", NULL);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		put_named("cur", names[i], "new\n");
	sh("cd cur && mv 'old;touch PWNED6' 'new;touch PWNED8' && echo two >> 'mod $(touch PWNED7)'", NULL);
	scan(&c, "cur", false);
	patch = patch_of(&b, &c, &st);
	cr_expect_eq(st.renamed, 1);
	cr_expect_eq(st.added, sizeof(names) / sizeof(names[0]));
	cr_expect(strstr(patch, "rename from \"old;touch PWNED6\"\nrename to \"new;touch PWNED8\"\n"), "%s", patch);
	cr_expect(strstr(patch, "+++ \"b/\\044(touch PWNED4)\"\n"), "%s", patch);
	cr_expect(strstr(patch, "+++ \"b/\\140touch PWNED5\\140\"\n"), "%s", patch);
	cr_expect(strstr(patch, "+++ \"b/caf\\303\\251\"\n"), "%s", patch);
	cr_expect(strstr(patch, "+++ \"b/tab\\there\"\n"), "%s", patch);
	expect_quoted(patch);
	snprintf(p, sizeof(p), "%s/changes.patch", dir);
	f = fopen(p, "w");
	fputs(patch, f);
	fclose(f);
	/* Run as a script with only `touch` on PATH: no PWNED file may appear. */
	sh("mkdir bin run && ln -s \"$(command -v touch)\" bin/touch && cd run &&"
	   "{ env -i PATH=\"$PWD/../bin\" timeout 20 sh ../changes.patch </dev/null >/dev/null 2>&1; true; } &&"
	   "test -z \"$(find .. -name 'PWNED*' ! -path '../base/*' ! -path '../cur/*')\"", NULL);
	sh("cp -a base repo && rm repo/fifo && cd repo && git init -q && git apply --check ../changes.patch &&"
	   "git apply ../changes.patch && rm -rf .git && cd .. && diff -r repo cur", NULL);
	free(patch);
	mf_free(&b);
	mf_free(&c);
}
