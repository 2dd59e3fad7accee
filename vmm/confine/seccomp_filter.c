/*
 * The per-thread seccomp filters (confine/seccomp_filter.h).
 *
 * Why SECCOMP_RET_TRAP and not KILL_PROCESS: a killed process leaves no
 * trace where the user looks (only an audit record, if auditing is on); the
 * SIGSYS handler names the call in console.log, which `mvm logs` shows, and
 * then ends the process just the same. A compromised VMM that replaces the
 * handler gains nothing: the call still does not run.
 */
#include <errno.h>
#include <pthread.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/sigsafe.h"
#include "vmm/confine/seccomp_filter.h"

#define NR_NAMES 512

static const char *names[NR_NAMES];	/* resolved once, before any filter */
static int report_fd = 2;
static const char *report_who = "mvm vmm: seccomp: the VMM";
static bool report_stderr_too;
static __thread const char *thread_kind;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void on_sigsys(int sig, siginfo_t *si, void *uc)
{
	char msg[256];
	size_t n = 0;
	int nr = si->si_syscall;

	(void)sig;
	(void)uc;
	n = sigsafe_put(msg, n, sizeof(msg), report_who);
	n = sigsafe_put(msg, n, sizeof(msg), " made a forbidden system call ");
	n = sigsafe_put(msg, n, sizeof(msg), nr >= 0 && nr < NR_NAMES && names[nr] ? names[nr] : "?");
	n = sigsafe_put(msg, n, sizeof(msg), " (");
	n = sigsafe_put_num(msg, n, sizeof(msg), nr);
	n = sigsafe_put(msg, n, sizeof(msg), ") on its ");
	n = sigsafe_put(msg, n, sizeof(msg), thread_kind ? thread_kind : "?");
	n = sigsafe_put(msg, n, sizeof(msg), " thread; stopping it\n");
	(void)!write(report_fd, msg, n);
	if (report_stderr_too)
		(void)!write(2, msg, n);
	syscall(SYS_exit_group, CONFINE_SECCOMP_EXIT);
}

static void setup_once(void)
{
	struct sigaction sa = { .sa_sigaction = on_sigsys, .sa_flags = SA_SIGINFO };

	for (int i = 0; i < NR_NAMES; i++)
		names[i] = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, i);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSYS, &sa, NULL);
}

void confine_seccomp_report_to(int fd)
{
	struct stat a, b;

	report_fd = fd;
	report_stderr_too = fd != 2 && !(fstat(fd, &a) == 0 && fstat(2, &b) == 0 &&
					  a.st_dev == b.st_dev && a.st_ino == b.st_ino);
}

void confine_seccomp_report_as(const char *who)
{
	report_who = who;
}

bool confine_seccomp_log_mode(void)
{
	const char *e = getenv("MVM_SECCOMP");

	return e && !strcmp(e, "log");
}

int confine_seccomp_check(const struct sc_table *t, const char **bad)
{
	for (size_t i = 0; i < t->nr_rules; i++)
		if (seccomp_syscall_resolve_name(t->rules[i].name) == __NR_SCMP_ERROR) {
			*bad = t->rules[i].name;
			return -EINVAL;
		}
	return 0;
}

static int add_rule(scmp_filter_ctx ctx, const struct sc_table *t, const struct sc_rule *r)
{
	int nr = seccomp_syscall_resolve_name(r->name), ret = 0;

	if (nr == __NR_SCMP_ERROR)
		return -EINVAL;
	switch (r->arg) {
	case SC_ANY:
		return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0);
	case SC_IOCTL:
		for (size_t i = 0; i < t->nr_ioctls && !ret; i++)
			ret = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1,
					       SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffUL,
						       t->ioctls[i] & 0xffffffffUL));
		return ret;
	case SC_SOCKET:
		for (size_t i = 0; i < t->nr_families && !ret; i++)
			ret = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1,
					       SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)t->families[i]));
		return ret;
	case SC_NO_EXEC:
		return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1,
					SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
	case SC_SELF:
		return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1,
					SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)getpid()));
	case SC_ENOSYS:
		return seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), nr, 0);
	}
	return -EINVAL;
}

/* @t as a libseccomp context, or NULL. */
static scmp_filter_ctx build(const struct sc_table *t)
{
	scmp_filter_ctx ctx = seccomp_init(confine_seccomp_log_mode() ? SCMP_ACT_LOG : SCMP_ACT_TRAP);
	int ret = 0;

	for (size_t i = 0; ctx && i < t->nr_rules && !ret; i++)
		ret = add_rule(ctx, t, &t->rules[i]);
	if (ret) {
		seccomp_release(ctx);
		return NULL;
	}
	return ctx;
}

/*
 * Each table's BPF program, generated once per process: libseccomp takes
 * milliseconds to build one (tens of them under nested virtualization), the
 * disk's I/O threads all load the same one, and they start while the guest
 * waits. The program is exactly what seccomp_load would install.
 */
static struct {
	const struct sc_table *t;
	pid_t pid;		/* SC_SELF rules name it: a fork's child builds anew */
	struct sock_fprog prog;
} progs[8];
static int nprogs;
static pthread_mutex_t progs_lock = PTHREAD_MUTEX_INITIALIZER;

/* The program of @ctx, exported through a memfd. 0 or -errno. */
static int export_prog(scmp_filter_ctx ctx, struct sock_fprog *out)
{
	int fd = memfd_create("mvm-seccomp", MFD_CLOEXEC), ret;
	off_t len;
	void *buf = NULL;

	if (fd < 0)
		return -errno;
	ret = seccomp_export_bpf(ctx, fd);
	len = ret ? -1 : lseek(fd, 0, SEEK_END);
	if (!ret && (len <= 0 || len % sizeof(struct sock_filter) ||
		     len / sizeof(struct sock_filter) > BPF_MAXINSNS))
		ret = -EINVAL;
	/* Its own mapping, not the heap: a small block kept in this thread's
	 * malloc arena would keep libseccomp's freed megabytes from going back. */
	if (!ret && (buf = mmap(NULL, (size_t)len, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)) == MAP_FAILED) {
		buf = NULL;
		ret = -ENOMEM;
	}
	if (!ret && pread(fd, buf, (size_t)len, 0) != len)
		ret = -EIO;
	close(fd);
	if (ret) {
		if (buf)
			munmap(buf, (size_t)len);
		return ret;
	}
	out->filter = buf;
	out->len = (unsigned short)(len / sizeof(struct sock_filter));
	return 0;
}

/* @t's cached program, built now if it is the first; NULL if it cannot be. */
static const struct sock_fprog *cached_prog(const struct sc_table *t)
{
	const struct sock_fprog *p = NULL;
	scmp_filter_ctx ctx;

	pthread_mutex_lock(&progs_lock);
	for (int i = 0; i < nprogs && !p; i++)
		if (progs[i].t == t && progs[i].pid == getpid())
			p = &progs[i].prog;
	if (!p && nprogs < (int)(sizeof(progs) / sizeof(progs[0])) && (ctx = build(t))) {
		if (!export_prog(ctx, &progs[nprogs].prog)) {
			progs[nprogs].t = t;
			progs[nprogs].pid = getpid();
			p = &progs[nprogs++].prog;
		}
		seccomp_release(ctx);
	}
	pthread_mutex_unlock(&progs_lock);
	return p;
}

int confine_seccomp_thread(const struct sc_table *t)
{
	const struct sock_fprog *prog;
	scmp_filter_ctx ctx;
	int ret;

	pthread_once(&once, setup_once);
	thread_kind = t->thread;
	prog = cached_prog(t);
	if (prog) {
		/* As seccomp_load does by default: no_new_privs, then the filter. */
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
		    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, prog))
			return -errno;
		return 0;
	}
	ctx = build(t);	/* not cached (no memfd here): the slow way */
	if (!ctx)
		return -ENOMEM;
	ret = seccomp_load(ctx);
	seccomp_release(ctx);
	return ret;
}
