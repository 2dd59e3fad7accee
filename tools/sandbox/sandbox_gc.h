/*
 * `mvm gc`: remove the sandboxes whose VMM is gone (a job killed by its
 * engine, a crash), with whatever they left: processes (a relay, a network
 * helper), their own cgroup, their state directory. What it reads from a
 * state directory is treated as edited by an attacker: names are checked,
 * no link is followed, and a process is ended only when it is shown to be
 * that sandbox's leftover.
 */
#ifndef MVM_SANDBOX_GC_H
#define MVM_SANDBOX_GC_H

#include <stdbool.h>
#include <sys/types.h>

/* What is known of a process a state directory names (gathered from
 * /proc, whose exe link a non-dumpable process hides from its own user). */
struct sb_proc_facts {
	bool alive;		/* exists and is no zombie */
	bool same_uid;		/* its real uid is ours */
	bool exe_other;		/* /proc/PID/exe readable and not the expected program */
	bool args_match;	/* relay: argv "mvm relay NAME"; helper: comm "mvm-net" */
	bool parent_is_mvm;	/* its parent runs mvm: a live VMM's, not a leftover */
};

enum sb_gc_kind { SB_GC_RELAY, SB_GC_HELPER };

/* Whether a process with facts @f may be ended as a dead sandbox's leftover
 * of kind @k: alive, ours, the right program with the right arguments, and
 * orphaned (a live VMM's helper, or any process of a recycled pid, is not).
 * Pure. */
bool sb_gc_may_kill(enum sb_gc_kind k, const struct sb_proc_facts *f);

/* Whether NAME is the sandbox of a `mvm run` (run-PID) whose CLI still runs:
 * it removes its own sandbox when it ends. */
bool sb_gc_run_alive(const char *name);

/* One line of what gc did (or, with dry_run, would do). */
typedef void (*sb_gc_say)(void *ctx, const char *line);

/*
 * Reap every sandbox of the state root whose VMM is gone (status
 * "crashed"; a stopped sandbox is kept, it can start again): leftover relay
 * and helper (sb_gc_may_kill), its own cgroup (sb_cgroup_reap), its state
 * directory. @dry_run: change nothing, say what would go. Each sandbox
 * reaped, and each failure, is one line through @say. The number of
 * sandboxes reaped (or to reap), or -errno when the state root cannot be
 * read; *@failures counts the sandboxes not wholly removed.
 */
int sb_gc(bool dry_run, sb_gc_say say, void *ctx, int *failures);

#endif
