/*
 * A client's tar, read and checked before the guest sees a byte of it
 * (tools/serve/serve_tar.h). Headers are parsed one block at a time;
 * every size is checked against what is left of the buffer; the entries
 * are then sorted component by component, which puts each directory
 * before everything beneath it and makes duplicates neighbours.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/sandbox/path_sanitize.h"
#include "tools/serve/serve_tar.h"

#define KIND_HARDLINK 100	/* resolved to AP_FILE once every entry is known */

struct rd {
	const uint8_t *p;
	size_t n, off;
	struct sv_tar *t;
	size_t capn;
	char *lpath, *llink;		/* pending pax/GNU long names for the next entry */
	bool has_psize;
	uint64_t psize;
	char *err;
	size_t cap;
};

static int refuse(struct rd *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int refuse(struct rd *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->err, r->cap, fmt, ap);
	va_end(ap);
	return 400;
}

/* An octal field (spaces/NULs around), or GNU base-256 (high bit set). */
static bool number(const uint8_t *f, size_t w, uint64_t *out)
{
	uint64_t v = 0;
	size_t i = 0;

	if (f[0] & 0x80) {
		if (f[0] != 0x80)
			return false;	/* negative, or too large */
		for (i = 1; i < w; i++) {
			if (v >> 55)
				return false;
			v = v << 8 | f[i];
		}
		*out = v;
		return true;
	}
	while (i < w && f[i] == ' ')
		i++;
	for (; i < w && f[i] >= '0' && f[i] <= '7'; i++) {
		if (v >> 60)
			return false;
		v = v << 3 | (uint64_t)(f[i] - '0');
	}
	for (; i < w; i++)
		if (f[i] != ' ' && f[i] != '\0')
			return false;
	*out = v;
	return true;
}

static bool zero_block(const uint8_t *h)
{
	for (int i = 0; i < SV_TAR_BLOCK; i++)
		if (h[i])
			return false;
	return true;
}

/* The stored checksum matches the unsigned (or the historic signed) sum. */
static bool sum_ok(const uint8_t *h)
{
	uint64_t want;
	long us = 0, ss = 0;

	if (!number(h + 148, 8, &want))
		return false;
	for (int i = 0; i < SV_TAR_BLOCK; i++) {
		uint8_t b = i >= 148 && i < 156 ? ' ' : h[i];

		us += b;
		ss += (signed char)b;
	}
	return (uint64_t)us == want || (ss >= 0 && (uint64_t)ss == want);
}

static char *dup_n(const void *p, size_t n)
{
	char *s = malloc(n + 1);

	if (s) {
		memcpy(s, p, n);
		s[n] = 0;
	}
	return s;
}

/* One "LEN key=value\n" pax record at @p (@n left): its length, or 0 if malformed. */
static size_t pax_one(struct rd *r, const uint8_t *p, size_t n)
{
	size_t len = 0, i = 0, klen;
	const uint8_t *key, *eq, *val;

	for (; i < n && i < 8 && p[i] >= '0' && p[i] <= '9'; i++)
		len = len * 10 + (size_t)(p[i] - '0');
	if (!i || i >= n || p[i] != ' ' || len <= i + 1 || len > n || p[len - 1] != '\n')
		return 0;
	key = p + i + 1;
	if (!(eq = memchr(key, '=', len - i - 2)))
		return 0;
	klen = (size_t)(eq - key);
	val = eq + 1;
	n = (size_t)(p + len - 1 - val);	/* the value's bytes */
	if (memchr(val, '\0', n))
		return 0;
	if (klen == 4 && !memcmp(key, "path", 4)) {
		free(r->lpath);
		r->lpath = dup_n(val, n);
	} else if (klen == 8 && !memcmp(key, "linkpath", 8)) {
		free(r->llink);
		r->llink = dup_n(val, n);
	} else if (klen == 4 && !memcmp(key, "size", 4)) {
		uint64_t v = 0;

		for (size_t j = 0; j < n; j++) {
			if (val[j] < '0' || val[j] > '9' || v > UINT64_MAX / 10 - 10)
				return 0;
			v = v * 10 + (uint64_t)(val[j] - '0');
		}
		r->has_psize = n > 0;
		r->psize = v;
	}
	return len;
}

static int pax_records(struct rd *r, const uint8_t *p, size_t n)
{
	while (n) {
		size_t len = pax_one(r, p, n);

		if (!len)
			return refuse(r, "malformed pax header at byte %zu", r->off);
		p += len;
		n -= len;
	}
	return 0;
}

/* A GNU long name: the data up to its first NUL. */
static int gnu_long(struct rd *r, char **slot, const uint8_t *p, size_t n)
{
	size_t len = strnlen((const char *)p, n);

	free(*slot);
	if (!(*slot = dup_n(p, len)))
		return refuse(r, "out of memory");
	return 0;
}

/*
 * @in as a path beneath the destination: "./" prefixes and trailing '/'
 * dropped, "" for the root. Malloc'd into *out, or 400.
 */
static int norm_path(struct rd *r, const char *in, char **out)
{
	const char *why;
	size_t n;

	if (in[0] == '/')
		return refuse(r, "%.200s: absolute paths are refused (make the archive relative)", in);
	while (in[0] == '.' && in[1] == '/')
		for (in += 2; in[0] == '/'; in++)
			;
	if (!strcmp(in, "."))
		in = "";
	n = strlen(in);
	while (n && in[n - 1] == '/')
		n--;
	if (!(*out = dup_n(in, n)))
		return refuse(r, "out of memory");
	if ((why = ps_path_refusal(*out, AP_PATH_MAX - 1))) {
		refuse(r, "%.200s: %s", in, why);
		free(*out);
		*out = NULL;
		return 400;
	}
	return 0;
}

static uint32_t kind_of(char type)
{
	switch (type) {
	case '0': case '\0': case '7':
		return AP_FILE;
	case '5':
		return AP_DIR;
	case '2':
		return AP_SYMLINK;
	case '1':
		return KIND_HARDLINK;
	default:
		return 0;
	}
}

static struct sv_tar_ent *push(struct rd *r)
{
	if (r->t->n == r->capn) {
		size_t nc = r->capn ? r->capn * 2 : 64;
		struct sv_tar_ent *e = realloc(r->t->e, nc * sizeof(*e));

		if (!e)
			return NULL;
		r->t->e = e;
		r->capn = nc;
	}
	memset(&r->t->e[r->t->n], 0, sizeof(r->t->e[0]));
	return &r->t->e[r->t->n++];
}

/* The name of the entry whose header is @h: pending long name, else ustar prefix/name. */
static char *raw_name(struct rd *r, const uint8_t *h, bool posix)
{
	char *s;

	if (r->lpath) {
		s = r->lpath;
		r->lpath = NULL;
		return s;
	}
	if (posix && h[345]) {
		size_t pl = strnlen((const char *)h + 345, 155), nl = strnlen((const char *)h, 100);

		if ((s = malloc(pl + nl + 2)))
			snprintf(s, pl + nl + 2, "%.*s/%.*s", (int)pl, h + 345, (int)nl, (const char *)h);
		return s;
	}
	return dup_n(h, strnlen((const char *)h, 100));
}

/* A file, directory, symlink or hard link entry. */
static int member(struct rd *r, const uint8_t *h, bool posix, uint64_t size, const uint8_t *data)
{
	uint32_t kind = kind_of((char)h[156]);
	char *raw = raw_name(r, h, posix), *path = NULL, *link = NULL;
	struct sv_tar_ent *e;
	uint64_t mode = 0;
	int st = 0;

	if (!raw)
		return refuse(r, "out of memory");
	if (!kind)
		st = refuse(r, "%.200s: entry type '%c' refused (devices, FIFOs and sparse files are not "
			    "taken; files, directories, symlinks and hard links are)", raw,
			    h[156] >= 0x20 && h[156] < 0x7f ? h[156] : '?');
	if (!st)
		st = norm_path(r, raw, &path);
	if (!st && (kind == AP_SYMLINK || kind == KIND_HARDLINK)) {
		link = r->llink ? r->llink : dup_n(h + 157, strnlen((const char *)h + 157, 100));
		r->llink = NULL;
		if (!link || !link[0] || strlen(link) >= AP_PATH_MAX)
			st = refuse(r, "%.200s: a link needs a target shorter than %d bytes", raw, AP_PATH_MAX);
	}
	if (!st && kind == KIND_HARDLINK) {
		char *t = NULL;

		st = norm_path(r, link, &t);
		free(link);
		link = t;
	}
	if (!st && !path[0] && kind != AP_DIR)
		st = refuse(r, "'.' in the archive must be a directory");
	if (!st && !number(h + 100, 8, &mode))
		mode = kind == AP_DIR ? 0755 : 0644;
	if (!st && !path[0]) {
		r->t->has_root = true;
		r->t->root_mode = (uint32_t)mode & 07777;
		free(path);
		free(raw);
		return 0;
	}
	if (!st && r->t->n >= SV_TAR_MAX_ENTRIES)
		st = refuse(r, "more than %d entries", SV_TAR_MAX_ENTRIES);
	if (!st && !(e = push(r)))
		st = refuse(r, "out of memory");
	if (st) {
		free(raw);
		free(path);
		free(link);
		return st;
	}
	*e = (struct sv_tar_ent){ .kind = kind, .mode = (uint32_t)mode & 07777, .path = path,
				  .plen = strlen(path), .target = link, .owned = true,
				  .size = kind == AP_FILE ? size : 0, .data = kind == AP_FILE ? data : NULL };
	free(raw);
	return 0;
}

static void pending_clear(struct rd *r)
{
	free(r->lpath);
	free(r->llink);
	r->lpath = r->llink = NULL;
	r->has_psize = false;
}

/* The header block at r->off. 1 at the end of the archive, 0 next, or 400. */
static int one_header(struct rd *r)
{
	const uint8_t *h = r->p + r->off, *data;
	bool posix = !memcmp(h + 257, "ustar\0" "00", 8), gnu = !memcmp(h + 257, "ustar  \0", 8);
	char type = (char)h[156];
	uint64_t size;
	int st;

	if (zero_block(h))
		return 1;
	if (!posix && !gnu)
		return refuse(r, "not a ustar, pax or GNU tar archive (byte %zu)", r->off);
	if (!sum_ok(h))
		return refuse(r, "header checksum wrong at byte %zu", r->off);
	if (!number(h + 124, 12, &size))
		return refuse(r, "bad size field at byte %zu", r->off);
	if (r->has_psize && !(type && strchr("xgLK", type)))
		size = r->psize;
	data = h + SV_TAR_BLOCK;
	if (size > r->n - r->off - SV_TAR_BLOCK)
		return refuse(r, "entry at byte %zu says %llu bytes, past the end of the archive", r->off,
			      (unsigned long long)size);
	if ((type == 'x' || type == 'g' || type == 'L' || type == 'K') && size > SV_TAR_META_MAX)
		return refuse(r, "a long-name or pax record of %llu bytes (at most %u)",
			      (unsigned long long)size, SV_TAR_META_MAX);
	if (type == 'x')
		st = pax_records(r, data, (size_t)size);
	else if (type == 'g')
		st = 0;			/* global pax records: nothing in them applies here */
	else if (type == 'L' || type == 'K')
		st = gnu_long(r, type == 'L' ? &r->lpath : &r->llink, data, (size_t)size);
	else {
		st = member(r, h, posix, size, data);
		pending_clear(r);
	}
	r->off += SV_TAR_BLOCK + (size_t)size + sv_tar_pad(size);
	return st;
}

/* Compare paths component by component: '/' sorts before any other byte. */
static int path_cmp(const char *a, size_t al, const char *b, size_t bl)
{
	size_t n = al < bl ? al : bl;

	for (size_t i = 0; i < n; i++) {
		unsigned ca = a[i] == '/' ? 0 : (unsigned char)a[i], cb = b[i] == '/' ? 0 : (unsigned char)b[i];

		if (ca != cb)
			return ca < cb ? -1 : 1;
	}
	return al < bl ? -1 : al > bl;
}

static int ent_cmp(const void *x, const void *y)
{
	const struct sv_tar_ent *a = x, *b = y;

	return path_cmp(a->path, a->plen, b->path, b->plen);
}

/* @a is a strict ancestor of @b. */
static bool ancestor(const struct sv_tar_ent *a, const struct sv_tar_ent *b)
{
	return a->plen < b->plen && b->path[a->plen] == '/' && !memcmp(a->path, b->path, a->plen);
}

/* Hard links become copies of the file they name. 0 or 400. */
static int resolve_links(struct rd *r)
{
	for (size_t i = 0; i < r->t->n; i++) {
		struct sv_tar_ent *e = &r->t->e[i], key = { 0 }, *f;

		if (e->kind != KIND_HARDLINK)
			continue;
		key.path = e->target;
		key.plen = strlen(e->target);
		f = bsearch(&key, r->t->e, r->t->n, sizeof(key), ent_cmp);
		if (!f || f->kind != AP_FILE)
			return refuse(r, "%.200s: a hard link to %.200s, which is not a file in the archive",
				      e->path, e->target);
		e->kind = AP_FILE;
		e->size = f->size;
		e->data = f->data;
		free(e->target);
		e->target = NULL;
	}
	return 0;
}

/* Sorted entries into @out in order, with the parent directories nobody named. 0 or 400. */
static int with_parents(struct rd *r, struct sv_tar_ent *out, size_t capo, size_t *no)
{
	size_t stack[AP_PATH_MAX / 2 + 1], depth = 0, n = 0;

	for (size_t i = 0; i < r->t->n; i++) {
		struct sv_tar_ent *e = &r->t->e[i];

		if (i && !path_cmp(e->path, e->plen, e[-1].path, e[-1].plen))
			return refuse(r, "%.*s appears twice in the archive", (int)(e->plen > 200 ? 200 : e->plen), e->path);
		if (i && e[-1].kind != AP_DIR && ancestor(&e[-1], e))
			return refuse(r, "%.*s is beneath %.*s, which is not a directory",
				      (int)(e->plen > 200 ? 200 : e->plen), e->path,
				      (int)(e[-1].plen > 200 ? 200 : e[-1].plen), e[-1].path);
		while (depth && !ancestor(&out[stack[depth - 1]], e))
			depth--;
		/* Every '/' in the path past the deepest known ancestor is a directory to add. */
		for (size_t k = depth ? out[stack[depth - 1]].plen + 1 : 0; k < e->plen; k++) {
			if (e->path[k] != '/')
				continue;
			if (n >= capo)
				return refuse(r, "more than %d entries with their parent directories", SV_TAR_MAX_ENTRIES);
			out[n] = (struct sv_tar_ent){ .kind = AP_DIR, .mode = 0755, .path = e->path, .plen = k,
						      .added = true };
			stack[depth++] = n++;
		}
		if (n >= capo)
			return refuse(r, "more than %d entries with their parent directories", SV_TAR_MAX_ENTRIES);
		out[n] = *e;
		if (e->kind == AP_DIR)
			stack[depth++] = n;
		n++;
	}
	*no = n;
	return 0;
}

/* Sort, check, add parents; ownership of the paths moves to the new array. 0 or 400. */
static int arrange(struct rd *r)
{
	struct sv_tar_ent *out;
	size_t no = 0, capo = r->t->n;
	int st;

	if (r->t->n)	/* qsort takes no NULL array, even empty */
		qsort(r->t->e, r->t->n, sizeof(r->t->e[0]), ent_cmp);
	if ((st = resolve_links(r)))
		return st;
	/* Room for each entry and every parent it could add, within the cap. */
	for (size_t i = 0; i < r->t->n && capo < SV_TAR_MAX_ENTRIES; i++)
		for (size_t k = 0; k < r->t->e[i].plen; k++)
			capo += r->t->e[i].path[k] == '/';
	if (capo > SV_TAR_MAX_ENTRIES)
		capo = SV_TAR_MAX_ENTRIES;
	if (!(out = calloc(capo ? capo : 1, sizeof(*out))))
		return refuse(r, "out of memory");
	if ((st = with_parents(r, out, capo, &no))) {
		free(out);
		return st;
	}
	free(r->t->e);
	r->t->e = out;
	r->t->n = no;
	for (size_t i = 0; i < no; i++)
		r->t->bytes += out[i].size;
	return 0;
}

int sv_tar_parse(const uint8_t *p, size_t n, struct sv_tar *t, char *err, size_t cap)
{
	struct rd r = { .p = p, .n = n, .t = t, .err = err, .cap = cap };
	int st = 0;

	memset(t, 0, sizeof(*t));
	if (n % SV_TAR_BLOCK)
		st = refuse(&r, "an archive is whole 512-byte blocks; this one has %zu bytes", n);
	while (!st && r.off + SV_TAR_BLOCK <= n) {
		st = one_header(&r);
		if (st == 1) {
			st = 0;
			break;
		}
	}
	if (!st && (r.lpath || r.llink || r.has_psize))
		st = refuse(&r, "the archive ends after a long-name or pax header");
	pending_clear(&r);
	if (!st)
		st = arrange(&r);
	if (st)
		sv_tar_free(t);
	return st;
}

void sv_tar_free(struct sv_tar *t)
{
	for (size_t i = 0; i < t->n; i++) {
		if (t->e[i].owned) {
			free((char *)t->e[i].path);
			free(t->e[i].target);
		}
	}
	free(t->e);
	memset(t, 0, sizeof(*t));
}

size_t sv_tar_group_end(const struct sv_tar *t, size_t i)
{
	for (i++; i < t->n; i++)
		if (!memchr(t->e[i].path, '/', t->e[i].plen))
			break;
	return i;
}
