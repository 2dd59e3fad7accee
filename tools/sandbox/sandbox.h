/*
 * Long-lived sandboxes: one directory of state per sandbox under
 * ${MVM_STATE_DIR:-${XDG_STATE_HOME:-~/.local/state}/mvm}/NAME/ holding
 * config.json, the disk, api.sock, vsock.sock, console.log, events.jsonl
 * and pid (present while a VMM runs; left behind by a VMM that crashed).
 */
#ifndef MVM_SANDBOX_H
#define MVM_SANDBOX_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct cJSON;

#define SB_NAME_MAX 63
#define SB_MAX_ENV  256
#define SB_MAX_PUBLISH 16
#define SB_MAX_DISKS 8

/* A disk beyond the sandbox's own (`mvm run --disk/--rootfs/--disk-size`). */
struct sb_disk {
	char *path;			/* absolute, or a file name in the state dir */
	char format[8];			/* "raw" or "qcow2"; "" = raw */
	bool read_only;
	bool data;			/* the agent mounts it at /data */
};

struct sb_config {
	char name[SB_NAME_MAX + 1];
	char image[PATH_MAX];		/* the source image, for `ls`; "" = default initramfs */
	char kernel[PATH_MAX];		/* "" = make guest's */
	char template_name[64];		/* started from this template ("" = booted) */
	/* Who made it through a remote API: "mcp:ID" or "tenant:NAME"; "" = the
	 * CLI (no owner). Scopes what such a caller sees (operator_policy.h). */
	char owner[128];
	char disk[32];			/* file name in the state dir */
	char disk_format[8];		/* "raw", or "qcow2": a private overlay on @image */
	bool root_on_disk;		/* disk is the root (image) or a data disk (/data) */
	int cpus;
	uint64_t mem, disk_size;
	int cpu_quota;			/* --cpu-quota: percent of one CPU (cgroup cpu.max); 0 = none */
	uint64_t cid;
	double created;			/* seconds since the epoch */
	double expires;			/* --lifetime: when the host stops it (epoch seconds); 0 = never */
	int nenv;
	char *env[SB_MAX_ENV + 1];	/* K=V given at create, for every exec */
	/* Network: the mode and rules live in policy.json (tools/sandbox/sandbox_policy.c). */
	bool net_off;			/* --net none: no network device */
	uint8_t mac[6];			/* the NIC's address; all zero: the VMM's default */
	char dns_server[128];		/* "" = the host's resolver */
	int npublish;
	char *publish[SB_MAX_PUBLISH];	/* [HOST_IP:]HOST_PORT:GUEST_PORT */
	/* `mvm run`'s machine beyond create's (absent from create's config.json). */
	char initrd[PATH_MAX];		/* "" = make guest's */
	char *cmdline;			/* extra kernel arguments; NULL = none */
	int ndisks;
	struct sb_disk disks[SB_MAX_DISKS];	/* after @disk (if any), in vdX order */
};

/* The state root; 0 or -ENAMETOOLONG. */
int sb_root(char *out, size_t cap);
/* [A-Za-z0-9][A-Za-z0-9_.-]*, at most SB_NAME_MAX. */
bool sb_name_ok(const char *name);
/* NAME's directory (@file NULL) or a file in it. 0 or -errno. */
int sb_path(const char *name, const char *file, char *out, size_t cap);
bool sb_exists(const char *name);

/* The largest values a config.json may hold (`mvm create`'s own limits). */
#define SB_MAX_MEMORY    (1ull << 40)
#define SB_MAX_CPU_QUOTA 6400
#define SB_MAX_DISK_SIZE (1ull << 50)

int sb_config_save(const struct sb_config *c);
/* A fresh random MAC for @c (locally administered, unicast: 52:54:00 and
 * three random bytes), so no two sandboxes share one. 0 or -errno. */
int sb_config_new_mac(struct sb_config *c);
int sb_config_load(const char *name, struct sb_config *c);
/* The same from the file @path (a template's or a bundle's copy), @name
 * given to c->name. 0, -ENOENT or -EINVAL. */
int sb_config_load_file(const char *path, const char *name, struct sb_config *c);
void sb_config_free(struct sb_config *c);

/*
 * The VMM of NAME: its pid if it runs; 0 if none; -1 if a pid file names a
 * process that is gone (the VMM crashed: stale sockets are removed here).
 */
pid_t sb_vmm_pid(const char *name);
/* Whether @pid runs `mvm VERB NAME ...` (not a recycled pid, not a zombie). */
bool sb_pid_is(pid_t pid, const char *verb, const char *name);
/* "running", "paused", "stopped" or "crashed". */
const char *sb_status(const char *name, pid_t *pid);

/* Append an event of @type without fields (common/events.h) to NAME's
 * events.jsonl; best effort. */
void sb_event(const char *name, const char *type);
/* Append @ev (from event_new(), with its type's fields) and free it. */
void sb_event_put(const char *name, struct cJSON *ev);

/*
 * Make the state root if needed and check it can hold the VMM's unix
 * sockets, before anything of a sandbox is created there. 0, or -errno with
 * a message in @err naming the directory and what to do.
 */
int sb_prepare_root(char *err, size_t cap);
/* Make NAME's state directory (0700; the root too, if needed) and put its
 * path in @dir. 0, -EEXIST if NAME exists, or -errno. */
int sb_mkdir(const char *name, char *dir, size_t cap);
/* Delete NAME's state directory and everything in it. 0 or -errno. */
int sb_remove_state(const char *name);

/* Sorted sandbox names; free each and the array. Count, or -errno. */
int sb_list(char ***names);

/* Start NAME's VMM as a daemon and wait until its agent answers. 0 or -errno. */
int sb_start(const char *name, const char *self_exe, int timeout_s, char *err, size_t errlen);
/* Start it and wait only until the VMM serves (its readiness pipe, no
 * polling): for a restored guest whose agent already listens, where the
 * caller's next request through vsock is the first contact. 0 or -errno. */
int sb_start_serving(const char *name, const char *self_exe, int timeout_s, char *err,
		     size_t errlen);
/* The descriptor `mvm vmm NAME --ready-fd N` gets from sb_start: one byte
 * on it when the VMM serves; closed unwritten if it ends before. */
#define VMM_READY_FD 3
/* Stop it: the agent syncs and powers off; else the API; else SIGKILL. */
int sb_stop(const char *name, int timeout_s);

/* Boot timeout for create/start: MVM_START_TIMEOUT seconds (default 120). */
int sb_start_timeout(void);
/* The mvm binary, for re-executing as the daemon (`mvm vmm`) or a verb
 * (`mvm create`): this program, or after sb_self_exe_beside() the mvm
 * beside it. */
const char *sb_self_exe(void);
/*
 * For a program shipped beside mvm that starts sandboxes (mvm-serve): from
 * now on sb_self_exe() names the `mvm` in this program's directory
 * (common/self_exe.h), never one found through PATH. Call it before any
 * thread starts. 0, or -errno (-ENOENT: no mvm there; sb_self_exe()
 * unchanged).
 */
int sb_self_exe_beside(void);

#endif
