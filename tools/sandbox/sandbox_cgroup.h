/* cgroup v2 limits for a sandbox's VMM, where a delegated subtree is writable. */
#ifndef MVM_SANDBOX_CGROUP_H
#define MVM_SANDBOX_CGROUP_H

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
#define SB_CGROUP_PIDS 96	/* up to 64 vCPUs and then some */

/* Whether @text (a cgroup.subtree_control: "cpu memory pids\n"; NULL: none)
 * has every controller of @ctl ("+memory +pids"), each as a whole word. */
bool sb_cgroup_has_controllers(const char *text, const char *ctl);

/*
 * Move the calling process (NAME's VMM), and its network helper @helper if
 * > 0 (libslirp and glib: their memory counts), into its own cgroup, mvm/NAME below
 * the cgroup it is in, with memory.max = @guest_mem + SB_CGROUP_OVERHEAD
 * (none, "max", when the state directory or one of @rw_files, the disks
 * the guest may write, NULL-terminated or NULL, lies on tmpfs: its pages
 * would count and cannot be reclaimed) and pids.max = SB_CGROUP_PIDS, and
 * with @cpu_quota (percent of one CPU; 0: none) cpu.max. Works where that cgroup's subtree is delegated
 * to us (writable, and no processes of its own but ours in the way: the
 * cgroup v2 root, or a delegated systemd unit). 0 and the cgroup's path
 * relative to the cgroup mount in @path; else -errno and why in @path:
 * nothing changed, the sandbox runs without limits.
 */
int sb_cgroup_enter(const char *name, uint64_t guest_mem, const char *const *rw_files, int cpu_quota,
		    pid_t helper, char *path, size_t cap);

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

/* Remove NAME's cgroup once its VMM has ended (an empty cgroup goes). */
void sb_cgroup_remove(const char *name);

#endif
