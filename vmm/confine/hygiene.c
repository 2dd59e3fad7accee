/* Process hygiene (confine/hygiene.h). */
#include <errno.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "vmm/confine/hygiene.h"

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* Close 3.. except @keep (sorted here); close_range since Linux 5.9. */
static int close_inherited(const int *keep, int nkeep)
{
	int sorted[16], n = 0, from = 3, ret = 0;

	for (int i = 0; i < nkeep && n < (int)(sizeof(sorted) / sizeof(sorted[0])); i++)
		if (keep[i] > 2)
			sorted[n++] = keep[i];
	qsort(sorted, (size_t)n, sizeof(int), cmp_int);
	for (int i = 0; i < n; i++) {
		if (sorted[i] > from && close_range((unsigned)from, (unsigned)sorted[i] - 1, 0))
			ret = -errno;
		from = sorted[i] + 1;
	}
	if (close_range((unsigned)from, ~0U, 0))
		ret = -errno;
	return ret;
}

int confine_hygiene(const int *keep, int nkeep)
{
	struct rlimit core = { 0, 0 }, nofile;
	int ret = 0;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		ret = -errno;
	/* Also keeps a crash from writing guest RAM (secrets given with
	 * --env among it) to disk; guest RAM is MADV_DONTDUMP as well. */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) && !ret)
		ret = -errno;
	if (setrlimit(RLIMIT_CORE, &core) && !ret)
		ret = -errno;
	if (!getrlimit(RLIMIT_NOFILE, &nofile)) {
		if (nofile.rlim_max > CONFINE_NOFILE)
			nofile.rlim_max = CONFINE_NOFILE;
		nofile.rlim_cur = nofile.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &nofile) && !ret)
			ret = -errno;
	}
	if (close_inherited(keep, nkeep) && !ret)
		ret = -EBADF;
	return ret;
}
