/*
 * `mvm promote`'s work: run the checks in the sandbox, diff the workspace
 * against its baseline, and write the review bundle (changes.patch,
 * report.json, checks/N.log) into a staging directory renamed to the
 * destination only when whole. Applying the patch stays the reviewer's act.
 */
#ifndef MVM_PROMOTE_BUNDLE_H
#define MVM_PROMOTE_BUNDLE_H

#include "tools/promote/promote_checks.h"
#include "tools/promote/workspace_diff.h"

#define PROMOTE_MAX_CHECKS 64

struct promote_job {
	/* in */
	const char *name, *out, *workdir;	/* workdir NULL: the --copy tree */
	const char *checks[PROMOTE_MAX_CHECKS];
	int nchecks;
	long timeout_s;
	struct wsdiff w;		/* w.gpath, w.max_output, w.max_total in; located by the caller */
	/* out */
	struct check_result res[PROMOTE_MAX_CHECKS];
};

/*
 * Write @j's bundle to j->out (which must not exist), after wsdiff_locate()
 * found the workspace. Progress, what was not compared and every error go to
 * stderr as "mvm promote: ..." while it runs (checks may take an hour).
 * 0 (whatever the checks' results: j->res), or -errno with nothing left behind.
 */
int promote_bundle(struct promote_job *j);
/* All checks passed (true for none). */
bool promote_checks_passed(const struct promote_job *j);

#endif
