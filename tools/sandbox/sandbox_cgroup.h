/* cgroup v2 limits for a sandbox's VMM, where a delegated subtree is writable. */
#ifndef MVM_SANDBOX_CGROUP_H
#define MVM_SANDBOX_CGROUP_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* memory.max = guest RAM + this: the VMM's heap (qcow2 caches, device and
 * snapshot buffers) and its network helper's (libslirp, glib), with room to
 * spare; page cache of disk and checkpoint files is charged too but
 * reclaimed first. */
#define SB_CGROUP_OVERHEAD (256ULL << 20)
/* pids.max: the VMM's threads (one per vCPU, the event loop, the loader). */
/* Where cgroup v2 is mounted. */
#define SB_CGROUP_MOUNT "/sys/fs/cgroup"
#define SB_CGROUP_PIDS 96	/* up to 64 vCPUs and then some */

/* Whether @text (a cgroup.subtree_control: "cpu memory pids\n"; NULL: none)
 * has every controller of @ctl ("+memory +pids"), each as a whole word. */
bool sb_cgroup_has_controllers(const char *text, const char *ctl);

/* Where a sandbox's processes (VMM, network helper, relay) live: always
 * beneath the cgroup of whoever started it, so an engine's (Slurm step,
 * Kubernetes pod, Nomad task, systemd scope) limits, accounting and kill
 * reach them. SB_CG_OWN: a cgroup of its own, mvm/NAME below the caller's,
 * with mvm's caps. Otherwise it stays in the caller's cgroup, charged to
 * it: SB_CG_CALLER_BUSY (the caller's cgroup holds processes, so cgroup
 * v2's no-internal-process rule refuses controllers for a child: EBUSY;
 * every engine's job cgroup is like that), SB_CG_NOT_DELEGATED (not
 * writable: EACCES, EPERM, EROFS), SB_CG_NO_V2 (no v2 hierarchy: ENOENT),
 * SB_CG_FAILED (anything else). */
enum sb_cg_place { SB_CG_OWN, SB_CG_CALLER_BUSY, SB_CG_NOT_DELEGATED, SB_CG_NO_V2, SB_CG_FAILED };

/* The place for sb_cgroup_enter's result @err (0 or -errno). Pure. */
enum sb_cg_place sb_cgroup_place(int err);
/* The sentence users see (create's stderr, inspect, the confined event)
 * for @err, with the caller's cgroup @caller and whether a --cpu-quota was
 * asked for (@cpu_quota); "" for SB_CG_OWN. Pure. */
void sb_cgroup_note(int err, const char *caller, bool cpu_quota, char *buf, size_t cap);

/* The v2 path ("/a/b") in the text of a /proc/PID/cgroup into @out:
 * 0, or -ENOENT (no "0::/" line; a removed cgroup). Pure. */
int sb_cgroup_line(const char *text, char *out, size_t cap);

struct sb_cg_result {
	char caller[PATH_MAX];		/* the cgroup the VMM was started in ("" unknown) */
	char own[PATH_MAX];		/* its own, caller/mvm/NAME; "" if none */
	char note[768];			/* sb_cgroup_note's sentence; "" with its own */
};

/*
 * Move the calling process (NAME's VMM), and its network helper @helper if
 * > 0 (libslirp and glib: their memory counts), into its own cgroup, mvm/NAME below
 * the cgroup it is in, with memory.max = @guest_mem + SB_CGROUP_OVERHEAD
 * (none, "max", when the state directory or one of @rw_files, the disks
 * the guest may write, NULL-terminated or NULL, lies on tmpfs: its pages
 * would count and cannot be reclaimed) and pids.max = SB_CGROUP_PIDS, and
 * with @cpu_quota (percent of one CPU; 0: none) cpu.max. Works where that cgroup's subtree is delegated
 * to us (writable, and no processes of its own but ours in the way: the
 * cgroup v2 root, or a delegated systemd unit). 0 with @r->own set; else
 * -errno, nothing moved (the sandbox stays in the caller's cgroup, @r->caller,
 * charged to it) and @r->note saying so (sb_cgroup_note).
 */
int sb_cgroup_enter(const char *name, uint64_t guest_mem, const char *const *rw_files, int cpu_quota,
		    pid_t helper, struct sb_cg_result *r);

/* Move the calling process into the cgroup @pid is in (a relay joins its
 * VMM's, wherever `mvm browser` was run from). 0 (also: already there),
 * -ESRCH (no such process) or -errno (not allowed to move there). */
int sb_cgroup_join(pid_t pid);

/* Whether @path (from a state directory someone may have edited) can name
 * NAME's own cgroup: absolute, ends in /mvm/NAME, components of cgroup-name
 * characters, none empty, "." or "..". Pure. */
bool sb_cgroup_path_ok(const char *path, const char *name);
/* NAME's own cgroup as its VMM recorded it (confine.json "cgroup"), checked
 * with sb_cgroup_path_ok, into @out. 0, -ENOENT (none recorded), -EINVAL
 * (refused) or -errno. */
int sb_cgroup_recorded(const char *name, char *out, size_t cap);
/* The note NAME's VMM recorded (confine.json "cgroup_note", control
 * characters replaced) into @out: true if there is one (it has no cgroup of
 * its own and is charged to its caller's). */
bool sb_cgroup_recorded_note(const char *name, char *out, size_t cap);
/* For `mvm gc` once NAME's VMM is gone: end whatever is still in its own
 * recorded cgroup (everything there is NAME's), remove it and an empty mvm/
 * above it. @what: what was (@dry_run: would be) removed, "" for nothing.
 * 0 or -errno. */
int sb_cgroup_reap(const char *name, bool dry_run, char *what, size_t cap);

/* Whether the state directory (the cwd: checkpoint layers, the overlays
 * of `mvm run --image`) or one of @rw_files (NULL-terminated, or NULL)
 * lies on tmpfs or ramfs: then sb_cgroup_enter sets no memory.max. */
bool sb_cgroup_written_on_tmpfs(const char *const *rw_files);

/* The oom_kill count in the text of a memory.events file; 0 if none. */
long sb_cgroup_oom_kills(const char *memory_events);
/* Whether the kernel's OOM killer killed a process of NAME's cgroup (its
 * memory.max was reached): a VMM that died without a word may have. */
bool sb_cgroup_oom_killed(const char *name);
/* If it did: the sentence that says so ("the kernel's OOM killer ended the
 * VMM ...: its cgroup's memory.max (guest RAM + N MiB) was reached") into
 * @buf, with @when ("during boot", "while the command ran") after "VMM". */
bool sb_cgroup_oom_message(const char *name, const char *when, char *buf, size_t len);

/* Remove NAME's cgroup once its VMM has ended (an empty cgroup goes): the
 * one it recorded, else mvm/NAME below ours. */
void sb_cgroup_remove(const char *name);

#endif
