/*
 * The line diff at large edit distances: minimal against a reference LCS, the
 * hunks turn the old text into the new one, and memory stays linear (the
 * greedy search with a walk back needed ~115 MiB for 3800 edits).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tools/promote/diff_unified.h"

struct text {
	const char **l;
	size_t *len, n;
};

static struct text lines(const char *p, size_t n)
{
	struct text t = { malloc((n + 1) * sizeof(char *)), malloc((n + 1) * sizeof(size_t)), 0 };

	for (size_t i = 0; i < n;) {
		const char *nl = memchr(p + i, '\n', n - i);
		size_t end = nl ? (size_t)(nl - p) + 1 : n;

		t.l[t.n] = p + i;
		t.len[t.n++] = end - i;
		i = end;
	}
	return t;
}

static void text_free(struct text *t)
{
	free(t->l);
	free(t->len);
}

static void append(char **out, size_t *n, const char *p, size_t len)
{
	*out = realloc(*out, *n + len + 1);
	memcpy(*out + *n, p, len);
	*n += len;
}

/*
 * patch(1) in miniature: apply @hunks (du_hunks' output) to @a, checking every
 * context and removed line against it. The result, or NULL if a line does not match.
 */
static char *apply(const char *a, size_t an, const char *hunks, size_t *outlen, int *minus, int *plus)
{
	struct text t = lines(a, an);
	const char *h = hunks;
	char *out = malloc(1);
	size_t n = 0, pos = 0;

	*minus = *plus = 0;
	while (*h) {
		unsigned long ol, oc = 1, nl, nc = 1;

		cr_assert(sscanf(h, "@@ -%lu,%lu +%lu", &ol, &oc, &nl) == 3 ||
			  sscanf(h, "@@ -%lu +%lu,%lu", &ol, &nl, &nc) >= 2, "bad hunk header: %.40s", h);
		if (sscanf(h, "@@ -%lu,%lu", &ol, &oc) < 2)
			oc = 1;
		for (size_t stop = oc ? ol - 1 : ol; pos < stop; pos++)
			append(&out, &n, t.l[pos], t.len[pos]);
		h = strchr(h, '\n') + 1;
		while (*h && *h != '@') {
			const char *e = strchr(h, '\n') + 1;
			size_t len = (size_t)(e - h) - 1;	/* without the op, with the '\n' */

			if (!strncmp(e, "\\ No newline at end of file\n", 28))
				len--;
			if (*h == '+') {
				append(&out, &n, h + 1, len);
				++*plus;
			} else {
				if (pos >= t.n || t.len[pos] != len || memcmp(t.l[pos], h + 1, len)) {
					free(out);
					text_free(&t);
					return NULL;
				}
				if (*h == ' ')
					append(&out, &n, h + 1, len);
				else
					++*minus;
				pos++;
			}
			h = e;
			if (!strncmp(h, "\\ No newline", 12))
				h = strchr(h, '\n') + 1;
		}
	}
	for (; pos < t.n; pos++)
		append(&out, &n, t.l[pos], t.len[pos]);
	text_free(&t);
	*outlen = n;
	return out;
}

/* Length of the longest common subsequence of lines, by dynamic programming. */
static size_t lcs_len(const char *a, size_t an, const char *b, size_t bn)
{
	struct text x = lines(a, an), y = lines(b, bn);
	size_t *row = calloc(y.n + 1, sizeof(size_t)), r;

	for (size_t i = 1; i <= x.n; i++) {
		size_t diag = 0;

		for (size_t j = 1; j <= y.n; j++) {
			size_t up = row[j];

			if (x.len[i - 1] == y.len[j - 1] && !memcmp(x.l[i - 1], y.l[j - 1], x.len[i - 1]))
				row[j] = diag + 1;
			else if (row[j - 1] > row[j])
				row[j] = row[j - 1];
			diag = up;
		}
	}
	r = row[y.n];
	free(row);
	text_free(&x);
	text_free(&y);
	return r;
}

/* Diff, apply, compare with @b; the counts of removed and added lines. */
static void round_trip(const char *a, size_t an, const char *b, size_t bn, int *minus, int *plus)
{
	struct outbuf o = { 0 };
	size_t n = 0;
	char *got;

	cr_assert_eq(du_hunks(&o, a, an, b, bn, 3), 0);
	got = apply(a, an, o.p ? o.p : "", &n, minus, plus);
	cr_assert_not_null(got, "a context or removed line does not match the old text");
	cr_assert(n == bn && !memcmp(got, b, n), "the hunks do not turn a into b");
	free(got);
	ob_free(&o);
}

static size_t random_text(char *buf, size_t lines_n, int alphabet, unsigned *seed)
{
	size_t n = 0;

	for (size_t i = 0; i < lines_n; i++) {
		n += (size_t)sprintf(buf + n, "%c", 'a' + rand_r(seed) % alphabet);
		if (rand_r(seed) % 3 == 0)
			buf[n++] = (char)('a' + rand_r(seed) % alphabet);
		if (i + 1 < lines_n || rand_r(seed) % 4)
			buf[n++] = '\n';
	}
	buf[n] = 0;
	return n;
}

/* Many rounds, up to 150 lines a side and ~150 edits, against the reference. */
Test(promote_diff_big, random_pairs_are_minimal_against_a_reference_lcs)
{
	static char a[1024], b[1024];
	unsigned seed = 14;

	for (int round = 0; round < 400; round++) {
		int alphabet = 2 + round % 7, minus, plus;
		size_t an = random_text(a, (size_t)(rand_r(&seed) % 150), alphabet, &seed);
		size_t bn = random_text(b, (size_t)(rand_r(&seed) % 150), alphabet, &seed);
		size_t l = lcs_len(a, an, b, bn);
		struct text ta = lines(a, an), tb = lines(b, bn);

		round_trip(a, an, b, bn, &minus, &plus);
		cr_assert_eq((size_t)minus, ta.n - l, "round %d: %d removed, minimal is %zu", round, minus, ta.n - l);
		cr_assert_eq((size_t)plus, tb.n - l, "round %d: %d added, minimal is %zu", round, plus, tb.n - l);
		text_free(&ta);
		text_free(&tb);
	}
}

/* @n distinct lines; @changes of them (spread out) replaced by other distinct lines in @b. */
static void big_pair(size_t n, size_t changes, char **a, size_t *an, char **b, size_t *bn)
{
	*a = malloc(n * 24);
	*b = malloc(n * 24);
	*an = *bn = 0;
	for (size_t i = 0; i < n; i++) {
		*an += (size_t)sprintf(*a + *an, "line %zu\n", i);
		if (i % (n / changes) == 1 && i / (n / changes) < changes)
			*bn += (size_t)sprintf(*b + *bn, "changed %zu\n", i);
		else
			*bn += (size_t)sprintf(*b + *bn, "line %zu\n", i);
	}
}

Test(promote_diff_big, thousands_of_edits_stay_minimal)
{
	char *a, *b;
	size_t an, bn;
	int minus, plus;

	big_pair(10000, 1900, &a, &an, &b, &bn);	/* 3800 edits, under DU_MAX_EDITS */
	round_trip(a, an, b, bn, &minus, &plus);
	cr_expect_eq(minus, 1900);
	cr_expect_eq(plus, 1900);
	free(a);
	free(b);
}

Test(promote_diff_big, past_the_edit_cap_the_middle_is_replaced)
{
	char *a, *b;
	size_t an, bn;
	int minus, plus;

	big_pair(10000, 2500, &a, &an, &b, &bn);	/* 5000 edits > DU_MAX_EDITS */
	round_trip(a, an, b, bn, &minus, &plus);
	cr_expect_gt(minus, 2500, "not minimal: the changed middle goes whole");
	cr_expect_eq(minus, plus);
	free(a);
	free(b);
}

static long vm_bytes(void)
{
	long pages = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	cr_assert_not_null(f);
	cr_assert_eq(fscanf(f, "%ld", &pages), 1);
	fclose(f);
	return pages * sysconf(_SC_PAGESIZE);
}

/* 3800 edits under an address-space limit of what is mapped now + 24 MiB. */
Test(promote_diff_big, memory_is_linear_in_the_lines)
{
	char *a, *b;
	size_t an, bn;
	int status;
	pid_t pid;

	big_pair(10000, 1900, &a, &an, &b, &bn);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		struct rlimit rl;
		struct outbuf o = { 0 };

		rl.rlim_cur = rl.rlim_max = (rlim_t)vm_bytes() + (24 << 20);
		if (setrlimit(RLIMIT_AS, &rl))
			_exit(3);
		_exit(du_hunks(&o, a, an, b, bn, 3) == 0 && !o.nomem ? 0 : 1);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "du_hunks failed under the limit (status %#x)", status);
	free(a);
	free(b);
}
