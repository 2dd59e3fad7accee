/* report.json of a promotion bundle: what a reviewer needs beside changes.patch. */
#ifndef MVM_PROMOTE_REPORT_H
#define MVM_PROMOTE_REPORT_H

#include <stddef.h>

#include "tools/promote/promote_checks.h"
#include "common/sha256.h"
#include "tools/promote/workspace_diff.h"

struct promote_report {
	const char *name;
	const struct check_result *checks;
	int nchecks;
	const struct wsdiff *diff;
	char patch_sha[SHA256_HEX];
};

/*
 * The report as JSON text (malloc'd): checks, patch hash and counts, what
 * was not compared, notes, the network policy (from the running VMM) and
 * every denied attempt (events.jsonl), the checkpoint history (events of
 * checkpoint/rollback/restore/snapshot types), the image and the kernel
 * (path and sha256). NULL on allocation failure.
 */
char *promote_report_json(const struct promote_report *r);

#endif
