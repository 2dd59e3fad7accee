/*
 * libFuzzer target: a client's tar as `mvm serve` reads it before the
 * guest sees a byte (tools/serve/serve_tar.h). Beyond "no overrun": a
 * refusal says why and keeps nothing; an accepted plan has only safe
 * relative paths, each once, every directory before what is beneath it,
 * nothing beneath a file or symlink, and file data inside the input.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tools/serve/serve_tar.h"

static void check_plan(const struct sv_tar *t, const uint8_t *p, size_t n)
{
	char a[AP_PATH_MAX], b[AP_PATH_MAX];

	for (size_t i = 0; i < t->n; i++) {
		const struct sv_tar_ent *e = &t->e[i];

		if (!e->plen || e->plen >= AP_PATH_MAX)
			abort();
		memcpy(a, e->path, e->plen);
		a[e->plen] = 0;
		if (!ap_path_safe(a) || strlen(a) != e->plen)
			abort();
		if (e->kind == AP_FILE && e->size && (e->data < p || e->size > (uint64_t)(p + n - e->data)))
			abort();
		if (e->kind == AP_SYMLINK && (!e->target || !e->target[0]))
			abort();
		if (e->kind != AP_FILE && e->kind != AP_DIR && e->kind != AP_SYMLINK)
			abort();
		/* The parent, if any, is an earlier directory entry. */
		char *slash = strrchr(a, '/');
		if (slash) {
			bool found = false;

			*slash = 0;
			for (size_t j = 0; j < i && !found; j++) {
				memcpy(b, t->e[j].path, t->e[j].plen);
				b[t->e[j].plen] = 0;
				if (!strcmp(a, b)) {
					if (t->e[j].kind != AP_DIR)
						abort();
					found = true;
				}
			}
			if (!found)
				abort();
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sv_tar t;
	char err[256] = "";
	int st;

	if (size > (1u << 20))
		return 0;
	st = sv_tar_parse(data, size, &t, err, sizeof(err));
	if (st != 0 && st != 400)
		abort();
	if (st) {
		if (!err[0] || t.n || t.e)
			abort();
		return 0;
	}
	if (t.n <= 2000)	/* the quadratic parent check stays cheap */
		check_plan(&t, data, size);
	sv_tar_free(&t);
	return 0;
}
