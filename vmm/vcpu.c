/* vCPU creation and the vCPU thread: KVM_RUN, decode, dispatch, repeat. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "vmm/arch/arch.h"
#include "vmm/confine/seccomp_filter.h"
#include "vmm/exit.h"
#include "common/io_census.h"
#include "common/log.h"
#include "vmm/vcpu.h"
#include "vmm/vm.h"

#define VCPU_KICK_SIGNAL SIGUSR1

static void kick_handler(int sig)
{
	(void)sig;
}

void vcpu_signal_setup(void)
{
	struct sigaction sa = { .sa_handler = kick_handler };

	sigemptyset(&sa.sa_mask);
	sigaction(VCPU_KICK_SIGNAL, &sa, NULL);
}

int vcpu_init(struct vcpu *v, struct vm *vm, int id, int ncpus,
	      const struct kernel_image *k, char *err, size_t errlen)
{
	int ret;

	v->vm = vm;
	ret = kvm_vcpu_create(&vm->kvm, id, &v->kv);
	if (ret) {
		snprintf(err, errlen, "vCPU %d: create: %s", id, strerror(-ret));
		return ret;
	}
	/* CPUID, MSRs, LAPIC and registers (x86); KVM_ARM_VCPU_INIT (arm64). */
	return arch_vcpu_setup(v, vm, id, ncpus, k, err, errlen);
}

static void report_exit(struct vcpu *v, enum exit_action act, const struct vm_exit *e)
{
	char msg[160];

	/* A triple fault is never how a sandbox ends (mvm stop resets through
	 * the i8042): say so, or a guest that crashed early looks stopped. */
	if (act == EXIT_ACT_SHUTDOWN && e->kind == EXIT_SHUTDOWN) {
		snprintf(msg, sizeof(msg), "vCPU %d triple-faulted (KVM_EXIT_SHUTDOWN)", v->kv.id);
		vm_request_stop(v->vm, VM_REBOOT, 0, msg);
		return;
	}
	if (act == EXIT_ACT_SHUTDOWN) {
		vm_request_stop(v->vm, VM_REBOOT, 0, "guest shut down");
		return;
	}
	snprintf(msg, sizeof(msg), "vCPU %d: unhandled %s exit (reason %u, detail 0x%llx, addr 0x%llx)",
		 v->kv.id, exit_kind_name(e->kind), e->raw_reason,
		 (unsigned long long)e->detail, (unsigned long long)e->addr);
	vm_request_stop(v->vm, VM_ERROR, 0, msg);
}

static void *vcpu_thread(void *arg)
{
	struct vcpu *v = arg;
	struct vm *vm = v->vm;
	sigset_t set;

	/* Set-up is done: from here on KVM_RUN and the exits' few calls only
	 * (confine/seccomp_vcpu.c). */
	if (confine_seccomp_thread(&sc_table_vcpu)) {
		vm_request_stop(vm, VM_ERROR, 0, "cannot install the vCPU's seccomp filter");
		return NULL;
	}
	io_census_thread(IO_KIND_VCPU);
	sigemptyset(&set);
	sigaddset(&set, VCPU_KICK_SIGNAL);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	while (!__atomic_load_n(&vm->stop_requested, __ATOMIC_ACQUIRE)) {
		struct vm_exit e;
		enum exit_action act;
		int ret = kvm_vcpu_run(&v->kv);

		if (ret == -EINTR || ret == -EAGAIN) {
			vm_vcpu_park(vm, &v->kv);
			continue;
		}
		if (ret) {
			char msg[96];

			snprintf(msg, sizeof(msg), "vCPU %d: KVM_RUN: %s", v->kv.id, strerror(-ret));
			vm_request_stop(vm, VM_ERROR, 0, msg);
			break;
		}
		exit_decode(v->kv.run, &e);
		act = exit_dispatch(&vm->pio, &vm->mmio, &e);
		if (act != EXIT_ACT_CONTINUE) {
			report_exit(v, act, &e);
			break;
		}
	}
	return NULL;
}

int vcpu_start(struct vcpu *v)
{
	sigset_t set, old;
	int ret;

	/* The thread starts with the kick signal blocked and unblocks it itself. */
	sigemptyset(&set);
	sigaddset(&set, VCPU_KICK_SIGNAL);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	/* A vCPU thread runs KVM_RUN and short MMIO/PIO handlers: small stack. */
	ret = small_thread_start(&v->thread, 0, vcpu_thread, v);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret)
		return ret;
	v->started = true;
	return 0;
}

void vcpu_stop(struct vcpu *v)
{
	if (!v->started)
		return;
	kvm_vcpu_set_immediate_exit(&v->kv, true);
	pthread_kill(v->thread.th, VCPU_KICK_SIGNAL);
	small_thread_join(&v->thread);
	v->started = false;
}

void vcpu_destroy(struct vcpu *v)
{
	if (v->vm)
		kvm_vcpu_destroy(&v->vm->kvm, &v->kv);
}
