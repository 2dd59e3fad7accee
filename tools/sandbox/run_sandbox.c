/*
 * `mvm run` as create + exec + rm of an ephemeral sandbox: a state directory
 * run-PID with its config.json, the sandbox's VMM (the same one `mvm create`
 * starts, with the control API and the agent) as our child process rather
 * than a daemon, so it dies with us; the command through the guest agent,
 * exactly like `mvm exec`; then shutdown and removal of the state.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/mono_time.h"
#include "tools/sandbox/agent_client.h"
#include "tools/sandbox/api_client.h"
#include "common/cli_util.h"
#include "common/rotlog.h"
#include "common/start_trace.h"
#include "vmm/confine/hygiene.h"
#include "vmm/confine/pidns.h"
#include "tools/sandbox/run_sandbox.h"
#include "tools/sandbox/cp.h"
#include "tools/sandbox/sandbox.h"
#include "tools/sandbox/sandbox_cgroup.h"
#include "tools/sandbox/sandbox_disk.h"
#include "tools/sandbox/sandbox_policy.h"
#include "tools/sandbox/sandbox_vm_config.h"
#include "tools/sandbox/sandbox_vmm.h"
#include "tools/sandbox/template.h"

/* What the VMM child tells us when it ends (through a pipe, < PIPE_BUF). */
struct run_report {
	struct vm_result res;
	uint64_t guest_kib;
	long peak_rss_kib;
};

struct run_sb {
	char name[32], dir[PATH_MAX];
	pid_t vmm;
	bool reaped;
	double t0;
};

static void sleep_ms(int ms)
{
	struct timespec t = { 0, (long)ms * 1000000L };

	nanosleep(&t, NULL);
}

/* The VMM runs in the state directory: paths the user gave relative to our
 * cwd become absolute first (they live until we exit). */
static const char *absolute(const char *p)
{
	char cwd[PATH_MAX], *out;

	if (!p || p[0] == '/' || !getcwd(cwd, sizeof(cwd)) || asprintf(&out, "%s/%s", cwd, p) < 0)
		return p;
	return out;
}

static void make_paths_absolute(struct vm_config *c)
{
	c->kernel_path = absolute(c->kernel_path);
	c->initrd_path = absolute(c->initrd_path);
	for (int i = 0; i < c->nr_disks; i++)
		c->disks[i].path = absolute(c->disks[i].path);
	c->net.policy_path = absolute(c->net.policy_path);
	c->net.events_path = absolute(c->net.events_path);
}

/* Ctrl-C before the command runs ends the boot; once it runs, the exec
 * client turns these signals into a KILL of the command. */
static void block_signals(sigset_t *old)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, old);
}

static bool interrupted(void)
{
	sigset_t p;

	return !sigpending(&p) &&
	       (sigismember(&p, SIGINT) || sigismember(&p, SIGTERM) || sigismember(&p, SIGHUP));
}

/*
 * The child's VM, built from config.json like `mvm vmm`'s (make_state or
 * the template wrote it); only this run's output goes elsewhere: --console,
 * and --events (or, without it, a summary of denials on stderr), from a
 * template too: the run's state directory, events.jsonl included, goes when
 * it ends. A template's sandbox's disk checkpoints as a created sandbox's
 * does; a cold run's disks are the user's files, never checkpointed.
 */
static void serve(struct run_opts *o, struct run_sb *s, struct rotlog *log, struct run_report *rep)
{
	struct sb_vm_bufs *bufs = calloc(1, sizeof(*bufs));
	struct vm_config vc;
	struct vm_disk base;
	struct sb_config c;
	int ret = bufs ? sb_config_load(s->name, &c) : -ENOMEM;

	if (!ret) {
		ret = sb_vm_config(&c, bufs, &vc, rep->res.message, sizeof(rep->res.message));
		if (!ret) {
			vc.log = log;
			vc.console_fd = o->cfg.console_fd;
			base = (struct vm_disk){ .path = c.disk, .format = c.disk_format };
			vc.net.events_path = o->cfg.net.events_path;
			sb_vmm_serve(s->name, &vc, o->template_name ? &base : NULL, c.cpu_quota, &rep->res,
				     &rep->guest_kib);
		}
		sb_config_free(&c);
	}
	if (ret) {
		rep->res.outcome = VM_ERROR;
		if (!rep->res.message[0])
			snprintf(rep->res.message, sizeof(rep->res.message), "%s", strerror(-ret));
	}
	rep->peak_rss_kib = run_peak_rss_kib();
	free(bufs);
}

/* The child: the sandbox's VMM, with the agent as the guest's command. */
static void vmm_child(struct run_opts *o, struct run_sb *s, int report_fd, pid_t parent,
		      const sigset_t *mask)
{
	struct run_report rep = { 0 };
	struct rotlog log;
	bool in_state;
	int fd, ret;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(125);
	sigprocmask(SIG_SETMASK, mask, NULL);
	/* A fork of the CLI: of its descriptors only the report pipe stays
	 * (0-2 are the user's terminal or pipes, replaced below but stderr). */
	if ((fd = confine_hygiene(&report_fd, 1)))
		cli_err("run", "process hygiene: %s", strerror(-fd));
	/* Our stdout may be a pipe the user waits on: only the parent holds it. */
	fd = open("/dev/null", O_RDWR);
	if (fd >= 0) {
		dup2(fd, STDIN_FILENO);
		dup2(fd, STDOUT_FILENO);
	}
	/* The VMM proper runs in its own PID namespace; this process (the
	 * child our parent waits for and kills) waits for it and dies with it. */
	in_state = chdir(s->dir) == 0;
	ret = in_state ? confine_pidns_enter() : -errno;
	start_trace_hold();	/* its steps past confinement too, like `mvm vmm`'s */
	if (ret >= 0)
		ret = sb_console_log_open(&log);
	if (!ret)
		ret = sb_vmm_write_pid();
	if (ret) {
		rep.res.outcome = VM_ERROR;
		snprintf(rep.res.message, sizeof(rep.res.message), "state directory %s: %s", s->dir,
			 strerror(-ret));
		goto report;
	}
	serve(o, s, &log, &rep);
report:
	if (in_state)
		unlink("pid");	/* never a "pid" in the directory the user ran us from */
	(void)!write(report_fd, &rep, sizeof(rep));
	_exit(0);
}

/* The state directory of a sandbox from a template (tools/sandbox/template.h). */
static int make_state_from_template(struct run_opts *o, struct run_sb *s)
{
	struct sb_template_start t = { .name = s->name, .tpl = o->template_name, .net = &o->cfg.net };
	char err[1024] = "";

	if (sb_template_prepare(&t, s->dir, err, sizeof(err))) {
		cli_err("run", "%s", err);
		return -1;
	}
	sb_event(s->name, "created");
	return 0;
}

/* The options' disks (--rootfs first, then --disk in order; --image's overlay
 * is the sandbox's own disk), then --disk-size's empty /data disk. */
static int run_disks(struct run_opts *o, struct run_sb *s, struct sb_config *c)
{
	char err[PATH_MAX + 128], p[PATH_MAX + 16];

	for (int i = o->image ? 1 : 0; i < o->cfg.nr_disks; i++) {
		struct vm_disk *d = &o->cfg.disks[i];

		c->disks[c->ndisks++] = (struct sb_disk){ .path = (char *)d->path, .read_only = d->read_only };
		snprintf(c->disks[c->ndisks - 1].format, sizeof(c->disks[0].format), "%s",
			 d->format ? d->format : "");
	}
	if (!o->disk_size)
		return 0;
	if (o->cfg.nr_disks == VM_MAX_DISKS || o->cfg.nr_disks >= 26) {
		cli_err("run", "too many disks for --disk-size");
		return -1;
	}
	snprintf(p, sizeof(p), "%s/data.img", s->dir);
	if (sb_disk_create(p, o->disk_size, err, sizeof(err))) {
		cli_err("run", "%s", err);
		return -1;
	}
	c->disks[c->ndisks++] = (struct sb_disk){ .path = "data.img", .data = true };
	return 0;
}

/* The state directory as `mvm create` leaves it, and more: config.json holds
 * this run's whole machine (sb_vm_config() builds the VM from it), and
 * policy.json its network rules. */
static int make_state(struct run_opts *o, struct run_sb *s)
{
	struct sb_config c = { .cpus = o->cfg.cpus, .mem = o->cfg.mem_size, .cid = 3 };
	char err[PATH_MAX + 128];
	int ret;

	snprintf(s->name, sizeof(s->name), "run-%d", (int)getpid());
	if (sb_prepare_root(err, sizeof(err))) {
		cli_err("run", "%s", err);
		s->dir[0] = 0;
		return -1;
	}
	ret = sb_mkdir(s->name, s->dir, sizeof(s->dir));
	if (ret == -EEXIST && sb_vmm_pid(s->name) <= 0) {
		sb_remove_state(s->name);	/* left by a killed run with our pid */
		ret = sb_mkdir(s->name, s->dir, sizeof(s->dir));
	}
	if (ret) {
		cli_err("run", "cannot create the sandbox state %s: %s", s->dir, strerror(-ret));
		s->dir[0] = 0;	/* not ours: never removed */
		return -1;
	}
	make_paths_absolute(&o->cfg);
	if (o->template_name)
		return make_state_from_template(o, s);
	snprintf(c.name, sizeof(c.name), "%s", s->name);
	snprintf(c.kernel, sizeof(c.kernel), "%s", o->cfg.kernel_path);
	snprintf(c.initrd, sizeof(c.initrd), "%s", o->cfg.initrd_path ? o->cfg.initrd_path : "");
	c.cmdline = (char *)o->cfg.extra_cmdline;
	snprintf(c.disk_format, sizeof(c.disk_format), "raw");
	c.created = (double)time(NULL);
	c.net_off = !o->cfg.net.enabled;
	snprintf(c.dns_server, sizeof(c.dns_server), "%s", o->cfg.net.dns_server ? o->cfg.net.dns_server : "");
	for (int i = 0; i < o->cfg.net.nr_publish && i < SB_MAX_PUBLISH; i++)
		c.publish[c.npublish++] = (char *)o->cfg.net.publish[i];
	if (o->image) {
		if (run_attach_image(o, s->dir))
			return -1;
		snprintf(c.image, sizeof(c.image), "%s", o->base.path);
		snprintf(c.disk, sizeof(c.disk), "root.qcow2");
		snprintf(c.disk_format, sizeof(c.disk_format), "qcow2");
	}
	if (run_disks(o, s, &c))
		return -1;
	c.root_on_disk = o->cfg.root_on_disk;
	for (int i = 0; i < o->nenv; i++)
		c.env[c.nenv++] = o->env[i];
	ret = sb_config_new_mac(&c);
	if (!ret)
		ret = sb_config_save(&c);
	if (ret) {
		cli_err("run", "cannot write %s/config.json: %s", s->dir, strerror(-ret));
		return -1;
	}
	if (!c.net_off && sb_policy_create(s->name, &o->cfg.net, err, sizeof(err))) {
		cli_err("run", "%s", err);
		return -1;
	}
	sb_event(s->name, "created");
	return 0;
}

/* Booted: the agent answers. 0, -ECHILD if the VMM ended, -ETIMEDOUT, -EINTR. */
static int wait_agent(struct run_sb *s)
{
	double deadline = mono_now_s() + sb_start_timeout();

	while (mono_now_s() < deadline) {
		if (interrupted())
			return -EINTR;
		if (waitpid(s->vmm, NULL, WNOHANG) == s->vmm) {
			s->reaped = true;
			return -ECHILD;
		}
		if (agent_ping(s->name, 1000) == 0)
			return 0;
		sleep_ms(5);
	}
	return -ETIMEDOUT;
}

static int exec_command(struct run_opts *o, struct run_sb *s, char *err, size_t errlen)
{
	struct ap_exec e = { .uid = o->uid, .cwd = (char *)(o->cfg.workdir ? o->cfg.workdir : ""),
			     .argv = (char **)o->cfg.argv, .env = o->env, .envc = o->nenv };
	struct exec_io io = { .in_fd = -1, .out_fd = STDOUT_FILENO, .err_fd = STDERR_FILENO };
	struct ap_exit x = { 0 };
	int fd, ret;

	while (e.argv[e.argc])
		e.argc++;
	fd = agent_connect(s->name, agent_wait_ms());
	if (fd < 0) {
		snprintf(err, errlen, "cannot reach the agent: %s", strerror(-fd));
		return -1;
	}
	ret = agent_exec_run(fd, &e, &io, &x, err, errlen);
	close(fd);
	if (ret)
		return -1;
	return x.kind == AP_SIGNALED ? 128 + (int)x.code : (int)x.code;
}

/* Reap the VMM if it ends within @secs (checked at least once). */
static bool reaped_within(struct run_sb *s, double secs)
{
	double deadline = mono_now_s() + secs;

	for (;;) {
		if (waitpid(s->vmm, NULL, WNOHANG) == s->vmm)
			return s->reaped = true;
		if (mono_now_s() >= deadline)
			return false;
		sleep_ms(5);
	}
}

/* Stop the VMM as `mvm rm -f` would: the guest syncs its disks (the user's
 * --disk and --rootfs files outlive the sandbox) and resets; else the API;
 * else SIGKILL. Then reap it. */
static void stop_vmm(struct run_sb *s)
{
	char err[256];

	if (s->reaped)
		return;
	sb_event(s->name, "stopping");	/* the reset that follows is asked for */
	if (agent_shutdown(s->name, 30000) == 0 && reaped_within(s, 30)) /* after its sync */
		return;
	if (api_simple(s->name, "shutdown", err, sizeof(err)) == 0 && reaped_within(s, 10))
		return;
	kill(s->vmm, SIGKILL);
	waitpid(s->vmm, NULL, 0);
	s->reaped = true;
}

static void print_timing(const struct run_sb *s, const struct run_report *r, double t_cmd,
			 double t_end)
{
	fprintf(stderr, "mvm: timing: vmm-start 0.000s guest-init %.3fs command-exit %.3fs "
		"vmm-exit %.3fs\n", r->res.t_init, t_cmd - s->t0, t_end - s->t0);
	fprintf(stderr, "mvm: memory: peak-rss %ld KiB, guest-resident %llu KiB, "
		"vmm-overhead %lld KiB\n", r->peak_rss_kib, (unsigned long long)r->guest_kib,
		(long long)r->peak_rss_kib - (long long)r->guest_kib);
}

/* The command ran (@status >= 0), or why not: how the VM ended if it ended
 * by itself (@vm_ended), else @err. */
static int outcome(int status, const struct run_report *r, bool vm_ended, const char *err)
{
	if (status >= 0)
		return status;
	if (vm_ended && r->res.outcome != VM_EXITED && r->res.message[0])
		return run_exit_status(&r->res);
	cli_err("run", "%s", err[0] ? err : "the sandbox's VMM ended before the command did");
	return MVM_EXIT_ERROR;
}

/* Where the sandbox lives when it has no cgroup of its own, once on stderr,
 * as create and start say it: under a cluster engine every task is a
 * `mvm run`, charged to the job's cgroup (docs/cluster.md). */
static void say_placement(const char *name)
{
	char note[1024];

	if (sb_cgroup_recorded_note(name, note, sizeof(note)))
		fprintf(stderr, "mvm run: %s: %s\n", name, note);
}

int run_in_sandbox(struct run_opts *o)
{
	struct run_sb *s = calloc(1, sizeof(*s));
	struct run_report rep = { 0 };
	char err[1024] = "";
	int pfd[2] = { -1, -1 }, status = -1, ret = MVM_EXIT_ERROR, booted;
	double t_cmd = 0;
	bool have_report, died;
	pid_t self = getpid();
	sigset_t mask;

	if (!s)
		return MVM_EXIT_ERROR;
	block_signals(&mask);
	if (make_state(o, s) || pipe2(pfd, O_CLOEXEC))
		goto out;
	fflush(NULL);
	s->t0 = mono_now_s();
	s->vmm = fork();
	if (s->vmm == 0)
		vmm_child(o, s, pfd[1], self, &mask);
	close(pfd[1]);
	pfd[1] = -1;
	if (s->vmm < 0) {
		snprintf(err, sizeof(err), "fork: %s", strerror(errno));
		s->reaped = true;
	} else if ((booted = wait_agent(s)) == -ETIMEDOUT) {
		snprintf(err, sizeof(err), "the guest agent did not answer within %d s",
			 sb_start_timeout());
	} else if (booted == -EINTR) {
		snprintf(err, sizeof(err), "interrupted while the sandbox booted");
	} else if (!s->reaped) {
		say_placement(s->name);
		if (o->template_name)
			sb_template_identity(s->name, err, sizeof(err));
		for (int i = 0; i < o->ncopies && !err[0]; i++) {
			char *colon = strrchr(o->copies[i], ':');

			*colon = 0;
			if (cp_put(s->name, o->copies[i], colon + 1))
				snprintf(err, sizeof(err), "--copy %s failed", o->copies[i]);
		}
		if (!err[0] && interrupted())
			snprintf(err, sizeof(err), "interrupted before the command ran");
		if (!err[0])
			status = exec_command(o, s, err, sizeof(err));
		t_cmd = mono_now_s();
	}
	/* Did the VM end by itself (a panic, a reset, an error)? Then that is
	 * why the command could not run or finish; a VMM that is going down
	 * gets a moment to finish. */
	died = s->vmm > 0 && status < 0 && (s->reaped || reaped_within(s, 1));
	/* Killed from outside leaves no report: the cgroup says if it was OOM. */
	if (died)
		sb_cgroup_oom_message(s->name, t_cmd ? "while the command ran" : "during boot",
				      err, sizeof(err));
	stop_vmm(s);
	have_report = s->vmm > 0 && read(pfd[0], &rep, sizeof(rep)) == sizeof(rep);
	if (o->timing && have_report)
		print_timing(s, &rep, t_cmd ? t_cmd : mono_now_s(), mono_now_s());
	ret = outcome(status, &rep, have_report && died, err);
out:
	if (pfd[0] >= 0)
		close(pfd[0]);
	if (pfd[1] >= 0)
		close(pfd[1]);
	if (s->dir[0])
		sb_remove_state(s->name);
	free(s);
	return ret;
}
