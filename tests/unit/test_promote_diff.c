/* The unified diff generator against GNU `diff -u` on the same pairs, and patch(1) round trips. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools/promote/diff_unified.h"

static char dir[64];

static void setup(void)
{
	strcpy(dir, "/tmp/mvm-diff-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	(void)!system(cmd);
}

TestSuite(promote_diff, .init = setup, .fini = teardown);

static void put(const char *name, const char *s, size_t n)
{
	char p[128];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	f = fopen(p, "w");
	cr_assert_not_null(f);
	cr_assert_eq(fwrite(s, 1, n, f), n);
	fclose(f);
}

/* Run the shell command @cmd and return its stdout. */
static char *run(const char *cmd, size_t *len)
{
	char *buf = NULL;
	size_t cap = 0, n = 0, r;
	FILE *p;

	p = popen(cmd, "r");
	cr_assert_not_null(p);
	do {
		if (n + 4096 > cap)
			buf = realloc(buf, cap = cap * 2 + 8192);
		r = fread(buf + n, 1, 4096, p);
		n += r;
	} while (r);
	pclose(p);
	buf[n] = 0;
	*len = n;
	return buf;
}

/* diff -u's output after its two header lines. */
static char *gnu_hunks(const char *opts)
{
	char cmd[256];
	size_t n;

	snprintf(cmd, sizeof(cmd), "diff %s %s/a %s/b | tail -n +3", opts, dir, dir);
	return run(cmd, &n);
}

static char *ours(const char *a, size_t an, const char *b, size_t bn)
{
	struct outbuf o = { 0 };

	put("a", a, an);
	put("b", b, bn);
	cr_assert_eq(du_hunks(&o, a, an, b, bn, 3), 0);
	return o.p ? o.p : strdup("");
}

static void same_as_gnu(const char *a, const char *b)
{
	char *mine = ours(a, strlen(a), b, strlen(b));
	char *gnu = gnu_hunks("-u");

	cr_expect_str_eq(mine, gnu, "a=<%s> b=<%s>", a, b);
	free(mine);
	free(gnu);
}

Test(promote_diff, equal_inputs_give_nothing)
{
	same_as_gnu("x\ny\n", "x\ny\n");
	same_as_gnu("", "");
}

Test(promote_diff, curated_pairs_match_gnu_diff)
{
	same_as_gnu("", "one\ntwo\n");
	same_as_gnu("one\ntwo\n", "");
	same_as_gnu("a\nb\nc\n", "a\nB\nc\n");
	same_as_gnu("a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\nm\nn\n", "a\nb\nC\nd\ne\nf\ng\nh\ni\nj\nk\nL\nm\nn\n");
	same_as_gnu("1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\n2\n3\n4\nX\n5\n6\n7\n8\n9\n");
	same_as_gnu("1\n2\n3\n4\n5\n6\n7\n8\n", "2\n3\n4\n5\n6\n7\n");
	/* Changes 6 equal lines apart share a hunk; 7 apart do not. */
	same_as_gnu("a\n1\n2\n3\n4\n5\n6\nb\n", "A\n1\n2\n3\n4\n5\n6\nB\n");
	same_as_gnu("a\n1\n2\n3\n4\n5\n6\n7\nb\n", "A\n1\n2\n3\n4\n5\n6\n7\nB\n");
}

Test(promote_diff, missing_final_newline_is_marked)
{
	same_as_gnu("a\nb", "a\nb\n");
	same_as_gnu("a\nb\n", "a\nb");
	same_as_gnu("a\nb", "a\nc");
	same_as_gnu("", "x");
}

/* Random files of short lines from a small alphabet: many matches, many ties. */
static size_t random_text(char *buf, size_t lines, unsigned *seed)
{
	size_t n = 0;

	for (size_t i = 0; i < lines; i++) {
		buf[n++] = (char)('a' + rand_r(seed) % 4);
		if (rand_r(seed) % 3 == 0)
			buf[n++] = (char)('a' + rand_r(seed) % 4);
		if (i + 1 < lines || rand_r(seed) % 4)
			buf[n++] = '\n';
	}
	buf[n] = 0;
	return n;
}

static void count_ops(const char *d, int *minus, int *plus)
{
	*minus = *plus = 0;
	for (const char *l = d; *l; l = strchr(l, '\n') + 1) {
		*minus += l[0] == '-';
		*plus += l[0] == '+';
		if (!strchr(l, '\n'))
			break;
	}
}

Test(promote_diff, random_pairs_are_minimal_and_apply_with_patch)
{
	static char a[4096], b[4096];
	unsigned seed = 20261202;

	for (int round = 0; round < 150; round++) {
		size_t an = random_text(a, (size_t)(rand_r(&seed) % 40), &seed);
		size_t bn = random_text(b, (size_t)(rand_r(&seed) % 40), &seed);
		char *mine = ours(a, an, b, bn), *gnu = gnu_hunks("-u --minimal"), *out, cmd[512];
		int m1, p1, m2, p2;
		size_t n;

		count_ops(mine, &m1, &p1);
		count_ops(gnu, &m2, &p2);
		cr_assert_eq(m1, m2, "round %d: %d deletions, diff --minimal has %d", round, m1, m2);
		cr_assert_eq(p1, p2, "round %d: %d insertions, diff --minimal has %d", round, p1, p2);
		/* Our hunks, under a ---/+++ header, turn a into b (patch(1) checks every line). */
		{
			char *patch = malloc(strlen(mine) + 32);

			n = (size_t)sprintf(patch, "--- a\n+++ b\n%s", mine);
			put("p", patch, n);
			free(patch);
		}
		snprintf(cmd, sizeof(cmd), "cd %s && cp a c && patch -s c p && cmp -s c b && echo same", dir);
		out = run(cmd, &n);
		cr_assert_str_eq(out, an == bn && !memcmp(a, b, an) ? "" : "same\n", "round %d:\n%s", round, mine);
		free(out);
		free(mine);
		free(gnu);
	}
}
