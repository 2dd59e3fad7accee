/* Unified hunks from a Myers line diff (tools/promote/diff_unified.h). */
#include <errno.h>
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

static void emit(struct script *s, char op)
{
	s->op[s->n++] = op;
}

/*
 * Myers' greedy forward search over a[lo_a, hi_a) and b[lo_b, hi_b), keeping
 * each step's furthest-reaching x per diagonal, then a walk back through
 * them. -E2BIG past DU_MAX_EDITS edits.
 */
static int myers(const struct side *a, size_t lo_a, size_t hi_a, const struct side *b,
		 size_t lo_b, size_t hi_b, struct script *s)
{
	long n = (long)(hi_a - lo_a), m = (long)(hi_b - lo_b), max = n + m, d, k, x, y;
	/* Edits and the work per edit step are both bounded: a hostile file costs seconds at most. */
	long dmax = max < DU_MAX_EDITS ? max : DU_MAX_EDITS;

	if (max && dmax > DU_MAX_WORK / max)
		dmax = DU_MAX_WORK / max;
	long *v, **trace, found = -1;
	size_t base = s->n;
	int ret = -ENOMEM;

	trace = calloc((size_t)dmax + 1, sizeof(*trace));
	v = calloc((size_t)(2 * dmax + 3), sizeof(*v));
	if (!trace || !v)
		goto out;
	for (d = 0; d <= dmax && found < 0; d++) {
		long *cur = v + dmax + 1;	/* cur[k] for k in [-d-1, d+1] */

		for (k = -d; k <= d; k += 2) {
			x = (k == -d || (k != d && cur[k - 1] < cur[k + 1])) ? cur[k + 1] : cur[k - 1] + 1;
			y = x - k;
			while (x < n && y < m && eq(a, lo_a + (size_t)x, b, lo_b + (size_t)y))
				x++, y++;
			cur[k] = x;
			if (x >= n && y >= m) {
				found = d;
				break;
			}
		}
		trace[d] = malloc((size_t)(2 * d + 1) * sizeof(long));
		if (!trace[d])
			goto out;
		memcpy(trace[d], cur - d, (size_t)(2 * d + 1) * sizeof(long));
	}
	if (found < 0) {
		ret = -E2BIG;
		goto out;
	}
	/* Walk back from (n, m), writing the ops backwards, then reverse them. */
	x = n, y = m;
	for (d = found; d >= 0; d--) {
		long px, py, pk;

		k = x - y;
		if (d == 0) {
			pk = k, px = 0;
		} else {
			long *p = trace[d - 1] + (d - 1);
			bool down = k == -d || (k != d && p[k - 1] < p[k + 1]);

			pk = down ? k + 1 : k - 1;
			px = p[pk];
		}
		py = px - pk;
		while (x > px && y > py) {
			x--, y--;
			emit(s, ' ');
		}
		if (d > 0) {
			if (x == px)
				emit(s, '+'), y--;
			else
				emit(s, '-'), x--;
		}
	}
	for (size_t i = base, j = s->n - 1; s->n > base && i < j; i++, j--) {
		char o = s->op[i];

		s->op[i] = s->op[j];
		s->op[j] = o;
	}
	ret = 0;
out:
	for (d = 0; trace && d <= dmax; d++)
		free(trace[d]);
	free(trace);
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
