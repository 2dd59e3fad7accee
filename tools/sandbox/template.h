/*
 * Templates at run time (the store itself: snapshots/template.h): taking one
 * from a running sandbox, and starting new sandboxes from one without a
 * boot. A sandbox from a template shares the template's files: its memory
 * file is mapped MAP_PRIVATE (one page cache for every sandbox from it,
 * copy-on-write per sandbox) and its disk is a new qcow2 overlay on the
 * template's frozen layers. They are hard links in the sandbox's state
 * directory (copies when the store lies on another file system), so a
 * sandbox outlives its template and `mvm rm` never touches the store.
 */
#ifndef MVM_SB_TEMPLATE_H
#define MVM_SB_TEMPLATE_H

#include <stddef.h>

#include "vmm/vm.h"

/* Pause @from, snapshot it into the store as @tpl, resume it; verified once,
 * then sealed. Nothing is left behind on failure. 0 or -errno with @err. */
int sb_template_create(const char *tpl, const char *from, char *err, size_t errlen);

/* Sandboxes whose config.json says they started from @tpl: sorted names
 * (free each and the array). Count, or -errno. */
int sb_template_users(const char *tpl, char ***names);

/* Remove @tpl from the store (the caller checked its users). 0 or -errno. */
int sb_template_remove(const char *tpl, char *err, size_t errlen);

struct sb_template_start {
	const char *name;		/* the new sandbox */
	const char *tpl;
	const struct vm_net *net;	/* its own policy; never the template's */
	char **env;			/* K=V added to the template's, for every exec */
	int nenv;
	int cpu_quota;			/* its own --cpu-quota (0: none), never the template's */
	double expires;			/* its own --lifetime's end (0: none), never the template's */
	const char *owner;		/* its owner (NULL: none), never the template's */
};

/*
 * Create sandbox @o->name from template @o->tpl and start it: the cheap
 * identity check of the template first (nothing is created if it fails),
 * then the state directory, the VMM restoring the template's state, and
 * the new identity (clock, RNG reseed, hostname = name) before this
 * returns. 0; -errno when nothing was left behind; 1 when the sandbox
 * exists but did not start (the caller removes it: mvm create leaves
 * nothing behind). @err says why.
 */
int sb_template_start(const struct sb_template_start *o, char *err, size_t errlen);

/* The parts of it, for `mvm run --template` whose VMM is its own child:
 * check the template and fill the existing, empty state dir @sdir (the
 * caller removes it on failure); then, once the agent answers, the new
 * identity. 0 or -errno with @err. */
int sb_template_prepare(const struct sb_template_start *o, const char *sdir, char *err,
			size_t errlen);
int sb_template_identity(const char *name, char *err, size_t errlen);

/* Before NAME's state directory is removed: its links to its template's
 * disk layers go first, keeping the template's ledger true so that the
 * next start from it need not read them (snapshots/tpl_ledger.h). Best
 * effort; nothing when NAME is not from a template that still exists. */
void sb_template_unlink(const char *name);

#endif
