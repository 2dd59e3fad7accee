/* Unified hunks from a Myers line diff (tools/promote/diff_unified.h). */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tools/promote/diff_unified.h"

struct line {
	const char *p;
	size_t len;		/* including the '\n', if there is one */
	uint64_t hash;
};

struct side {
	struct line *l;
	size_t n;
};

/* One op per printed line: ' ' both sides, '-' old only, '+' new only; in file order. */
struct script {
	char *op;
	size_t n;
};

static int split(const char *p, size_t len, struct side *s)
{
	size_t n = 0, cap = 0;

	s->l = NULL;
	for (size_t i = 0; i < len;) {
		const char *nl = memchr(p + i, '\n', len - i);
		size_t end = nl ? (size_t)(nl - p) + 1 : len;
		uint64_t h = 1469598103934665603ull;

		if (n == cap) {
			struct line *l = realloc(s->l, (cap = cap ? cap * 2 : 256) * sizeof(*l));

			if (!l)
				return -ENOMEM;
			s->l = l;
		}
		for (size_t k = i; k < end; k++)
			h = (h ^ (unsigned char)p[k]) * 1099511628211ull;
		s->l[n++] = (struct line){ p + i, end - i, h };
		i = end;
	}
	s->n = n;
	return 0;
}

static bool eq(const struct side *a, size_t i, const struct side *b, size_t j)
{
	return a->l[i].hash == b->l[j].hash && a->l[i].len == b->l[j].len &&
	       !memcmp(a->l[i].p, b->l[j].p, a->l[i].len);
}

/*
 * Myers' diff in linear space (the paper's section 4b, as GNU diff and
 * libxdiff do it): find a middle snake by searching from both ends at once,
 * then solve the two halves the same way. Memory is two diagonal arrays of
 * n + m + 3 entries whatever the edit distance (the greedy search with a
 * walk back kept every step's array: ~128 MiB at DU_MAX_EDITS); the
 * recursion is about log2(edits) deep, since each half has half the edits.
 */
struct lcs {
	const struct side *a, *b;
	size_t lo_a, lo_b;	/* a[x] is a->l[lo_a + x] */
	long *kf, *kb;		/* furthest x per diagonal k = x - y, forward and backward */
	struct script *s;
};

static bool eq_at(const struct lcs *c, long x, long y)
{
	return eq(c->a, c->lo_a + (size_t)x, c->b, c->lo_b + (size_t)y);
}

/*
 * One more step: the diagonals [*lo, *hi] of the last step, one wider on
 * each side that stays inside [kmin, kmax] (one narrower where it cannot),
 * the new outer neighbours set to @none so they are never chosen.
 */
static void widen(long *v, long *lo, long *hi, long kmin, long kmax, long none)
{
	if (*lo > kmin)
		v[--*lo - 1] = none;
	else
		++*lo;
	if (*hi < kmax)
		v[++*hi + 1] = none;
	else
		--*hi;
}

/*
 * A point (*sx, *sy) on a shortest edit path through a[x0, x1) x b[y0, y1),
 * with edits on both sides of it. Both ranges are non-empty and their first
 * and last lines differ. Returns the edit distance, or -E2BIG when it
 * exceeds @dmax (searched no further).
 */
static long middle_snake(struct lcs *c, long x0, long x1, long y0, long y1, long dmax, long *sx,
			 long *sy)
{
	long fmid = x0 - y0, bmid = x1 - y1, kmin = x0 - y1, kmax = x1 - y0;
	long fmin = fmid, fmax = fmid, bmin = bmid, bmax = bmid, *kf = c->kf, *kb = c->kb;
	bool odd = (fmid - bmid) & 1;

	kf[fmid] = x0;
	kb[bmid] = x1;
	for (long e = 1;; e++) {
		/* Forward, step e: a path of e edits meeting one of e - 1 from the end. */
		if (2 * e - 1 > dmax)
			return -E2BIG;
		widen(kf, &fmin, &fmax, kmin, kmax, -1);
		for (long k = fmax; k >= fmin; k -= 2) {
			long x = kf[k - 1] >= kf[k + 1] ? kf[k - 1] + 1 : kf[k + 1], y = x - k;

			while (x < x1 && y < y1 && eq_at(c, x, y))
				x++, y++;
			kf[k] = x;
			if (odd && bmin <= k && k <= bmax && kb[k] <= x) {
				*sx = x, *sy = y;
				return 2 * e - 1;
			}
		}
		/* Backward, step e: e edits from the end meeting e from the start. */
		if (2 * e > dmax)
			return -E2BIG;
		widen(kb, &bmin, &bmax, kmin, kmax, LONG_MAX);
		for (long k = bmax; k >= bmin; k -= 2) {
			long x = kb[k - 1] < kb[k + 1] ? kb[k - 1] : kb[k + 1] - 1, y = x - k;

			while (x > x0 && y > y0 && eq_at(c, x - 1, y - 1))
				x--, y--;
			kb[k] = x;
			if (!odd && fmin <= k && k <= fmax && x <= kf[k]) {
				*sx = x, *sy = y;
				return 2 * e;
			}
		}
	}
}

static void emit_n(struct script *s, char op, long n)
{
	memset(s->op + s->n, op, (size_t)n);
	s->n += (size_t)n;
}

/* Ops for a[x0, x1) against b[y0, y1), in file order. -E2BIG past @dmax edits. */
static int compare(struct lcs *c, long x0, long x1, long y0, long y1, long dmax)
{
	long suf = 0, sx, sy, d;
	int ret = 0;

	for (d = 0; x0 + d < x1 && y0 + d < y1 && eq_at(c, x0 + d, y0 + d); d++)
		;
	emit_n(c->s, ' ', d);
	x0 += d, y0 += d;
	while (x0 < x1 - suf && y0 < y1 - suf && eq_at(c, x1 - 1 - suf, y1 - 1 - suf))
		suf++;
	x1 -= suf, y1 -= suf;
	if (x0 == x1) {
		emit_n(c->s, '+', y1 - y0);
	} else if (y0 == y1) {
		emit_n(c->s, '-', x1 - x0);
	} else {
		d = middle_snake(c, x0, x1, y0, y1, dmax, &sx, &sy);
		if (d < 0)
			return (int)d;
		/* Each half has fewer edits than the whole: no limit needed below. */
		ret = compare(c, x0, sx, y0, sy, LONG_MAX);
		if (!ret)
			ret = compare(c, sx, x1, sy, y1, LONG_MAX);
	}
	emit_n(c->s, ' ', suf);
	return ret;
}

/* Ops for a[lo_a, hi_a) against b[lo_b, hi_b). -E2BIG past DU_MAX_EDITS edits (or DU_MAX_WORK). */
static int myers(const struct side *a, size_t lo_a, size_t hi_a, const struct side *b,
		 size_t lo_b, size_t hi_b, struct script *s)
{
	long n = (long)(hi_a - lo_a), m = (long)(hi_b - lo_b), max = n + m;
	/* Edits and the work per edit step are both bounded: a hostile file costs seconds at most. */
	long dmax = max < DU_MAX_EDITS ? max : DU_MAX_EDITS;
	struct lcs c = { a, b, lo_a, lo_b, NULL, NULL, s };
	long *v;
	int ret;

	if (max && dmax > DU_MAX_WORK / max)
		dmax = DU_MAX_WORK / max;
	/* Diagonals -m-1 .. n+1, for each direction. */
	v = malloc(2 * (size_t)(max + 3) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	c.kf = v + m + 1;
	c.kb = v + (max + 3) + m + 1;
	ret = compare(&c, 0, n, 0, m, dmax);
	free(v);
	return ret;
}

/* Within each run of changes, every '-' before every '+', as diff -u prints them. */
static void order_changes(struct script *s)
{
	for (size_t i = 0; i < s->n;) {
		size_t j = i, minus = 0;

		if (s->op[i] == ' ') {
			i++;
			continue;
		}
		for (; j < s->n && s->op[j] != ' '; j++)
			minus += s->op[j] == '-';
		memset(s->op + i, '-', minus);
		memset(s->op + i + minus, '+', j - i - minus);
		i = j;
	}
}

static void print_line(struct outbuf *o, char op, const struct line *l)
{
	ob_put(o, &op, 1);
	ob_put(o, l->p, l->len);
	if (!l->len || l->p[l->len - 1] != '\n')
		ob_put(o, "\n\\ No newline at end of file\n", 29);
}

/* "-l,n": a count of 1 is left out; an empty range names the line before it. */
static void range(struct outbuf *o, char sign, size_t start, size_t count)
{
	if (count == 1)
		ob_printf(o, "%c%zu", sign, start + 1);
	else
		ob_printf(o, "%c%zu,%zu", sign, count ? start + 1 : start, count);
}

/* Print ops [from, to) as one hunk; @apos/@bpos are the line numbers (0-based) at @from. */
static void hunk(struct outbuf *o, const struct script *s, size_t from, size_t to,
		 const struct side *a, size_t apos, const struct side *b, size_t bpos)
{
	size_t na = 0, nb = 0;

	for (size_t i = from; i < to; i++) {
		na += s->op[i] != '+';
		nb += s->op[i] != '-';
	}
	ob_put(o, "@@ ", 3);
	range(o, '-', apos, na);
	ob_put(o, " ", 1);
	range(o, '+', bpos, nb);
	ob_put(o, " @@\n", 4);
	for (size_t i = from; i < to; i++) {
		if (s->op[i] == '+')
			print_line(o, '+', &b->l[bpos++]);
		else
			print_line(o, s->op[i], &a->l[apos++]);
		if (s->op[i] == ' ')
			bpos++;
	}
}

/* Group changes closer than 2*context equal lines into hunks and print them. */
static void hunks(struct outbuf *o, const struct script *s, const struct side *a,
		  const struct side *b, size_t ctx)
{
	size_t i = 0, apos = 0, bpos = 0;

	while (i < s->n) {
		size_t start, end, gap, ha, hb;

		for (; i < s->n && s->op[i] == ' '; i++)
			apos++, bpos++;
		if (i == s->n)
			break;
		/* The hunk opens up to @ctx equal lines before its first change. */
		start = i >= ctx ? i - ctx : 0;
		ha = apos - (i - start);
		hb = bpos - (i - start);
		end = i;
		for (;;) {
			for (; end < s->n && s->op[end] != ' '; end++)
				;
			for (gap = 0; end + gap < s->n && s->op[end + gap] == ' '; gap++)
				;
			if (end + gap == s->n || gap > 2 * ctx) {
				end += gap < ctx ? gap : ctx;
				break;
			}
			end += gap;
		}
		hunk(o, s, start, end, a, ha, b, hb);
		for (; i < end; i++) {
			apos += s->op[i] != '+';
			bpos += s->op[i] != '-';
		}
	}
}

int du_hunks(struct outbuf *o, const char *a, size_t alen, const char *b, size_t blen, int context)
{
	struct side sa = { 0 }, sb = { 0 };
	struct script s = { 0 };
	size_t pre = 0, suf = 0;
	int ret = -ENOMEM;

	if (split(a, alen, &sa) || split(b, blen, &sb))
		goto out;
	s.op = malloc(sa.n + sb.n + 1);
	if (!s.op)
		goto out;
	while (pre < sa.n && pre < sb.n && eq(&sa, pre, &sb, pre))
		pre++;
	while (suf < sa.n - pre && suf < sb.n - pre && eq(&sa, sa.n - 1 - suf, &sb, sb.n - 1 - suf))
		suf++;
	memset(s.op, ' ', pre);
	s.n = pre;
	ret = myers(&sa, pre, sa.n - suf, &sb, pre, sb.n - suf, &s);
	if (ret == -E2BIG) {
		/* Too costly to be minimal: replace the whole middle. */
		s.n = pre;
		memset(s.op + s.n, '-', sa.n - suf - pre);
		s.n += sa.n - suf - pre;
		memset(s.op + s.n, '+', sb.n - suf - pre);
		s.n += sb.n - suf - pre;
		ret = 0;
	}
	if (ret)
		goto out;
	memset(s.op + s.n, ' ', suf);
	s.n += suf;
	order_changes(&s);
	hunks(o, &s, &sa, &sb, context < 0 ? 0 : (size_t)context);
	ret = o->nomem ? -ENOMEM : 0;
out:
	free(s.op);
	free(sa.l);
	free(sb.l);
	return ret;
}
