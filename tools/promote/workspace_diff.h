/*
 * `mvm diff` and `mvm promote`'s patch: fetch the workspace (tools/sandbox/fetch.h)
 * into a private directory under the sandbox's state directory, scan it,
 * and write the patch against the baseline (tools/promote/patch_build.h). Entries
 * the fetch left out count as unchanged and are listed as not compared.
 */
#ifndef MVM_WORKSPACE_DIFF_H
#define MVM_WORKSPACE_DIFF_H

#include <stdint.h>

#include "tools/sandbox/fetch.h"
#include "tools/promote/outbuf.h"
#include "tools/promote/patch_build.h"

#define WSDIFF_MAX_OUTPUT (64ull << 20)
#define WSDIFF_MAX_TOTAL  (4ull << 30)

struct wsdiff {
	/* in */
	const char *gpath;		/* NULL: the only --copy tree */
	uint64_t max_output;		/* patch bytes; 0: WSDIFF_MAX_OUTPUT */
	uint64_t max_total;		/* bytes fetched; 0: WSDIFF_MAX_TOTAL */
	/* out */
	char guest_root[4096];		/* the --copy tree compared */
	char host_src[4096];		/* where it came from on the host */
	struct outbuf patch;		/* patch.over: larger than max_output (nothing usable) */
	struct refusals refused;	/* left out of the comparison, and why */
	struct refusals notes;		/* in the patch in a form git apply refuses, or left out */
	struct patch_stats st;
	char err[1024];
};

/* Only find the --copy tree: fills guest_root and host_src. 0, or -errno with w->err set. */
int wsdiff_locate(const char *name, struct wsdiff *w);
/* 0, or -errno with w->err set. Free with wsdiff_free. */
int wsdiff_run(const char *name, struct wsdiff *w);
void wsdiff_free(struct wsdiff *w);

#endif
