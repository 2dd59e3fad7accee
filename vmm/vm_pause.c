/*
 * Pausing a running VM: every vCPU leaves KVM_RUN and parks on a condition
 * variable until resumed; the event loop (devices, sockets) keeps running.
 * The pause fields of struct vm start zeroed by vm_create's memset, which is
 * the static initialiser of a glibc mutex and condition variable.
 */
#include <errno.h>
#include <signal.h>
#include <time.h>

#include "vmm/vcpu.h"
#include "vmm/vm.h"

#define VCPU_KICK_SIGNAL SIGUSR1	/* as vcpu.c */
#define PAUSE_WAIT_S 5

int vm_pause(struct vm *vm)
{
	struct timespec until;
	int ret = 0;

	pthread_mutex_lock(&vm->pause_lock);
	__atomic_store_n(&vm->paused, true, __ATOMIC_RELEASE);
	for (int i = 0; i < vm->ncpus; i++) {
		if (!vm->vcpus[i].started)
			continue;
		kvm_vcpu_set_immediate_exit(&vm->vcpus[i].kv, true);
		pthread_kill(vm->vcpus[i].thread.th, VCPU_KICK_SIGNAL);
	}
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += PAUSE_WAIT_S;
	while (!ret && vm->parked < vm->ncpus && !__atomic_load_n(&vm->stop_requested, __ATOMIC_ACQUIRE))
		ret = -pthread_cond_timedwait(&vm->pause_cond, &vm->pause_lock, &until);
	pthread_mutex_unlock(&vm->pause_lock);
	if (ret)
		vm_resume(vm);
	return ret;
}

void vm_resume(struct vm *vm)
{
	pthread_mutex_lock(&vm->pause_lock);
	__atomic_store_n(&vm->paused, false, __ATOMIC_RELEASE);
	pthread_cond_broadcast(&vm->pause_cond);
	pthread_mutex_unlock(&vm->pause_lock);
}

bool vm_is_paused(struct vm *vm)
{
	return __atomic_load_n(&vm->paused, __ATOMIC_ACQUIRE);
}

void vm_vcpu_park(struct vm *vm, struct kvm_vcpu *kv)
{
	if (!__atomic_load_n(&vm->paused, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&vm->pause_lock);
	kvm_vcpu_set_immediate_exit(kv, false);
	vm->parked++;
	pthread_cond_broadcast(&vm->pause_cond);
	while (vm->paused && !__atomic_load_n(&vm->stop_requested, __ATOMIC_ACQUIRE))
		pthread_cond_wait(&vm->pause_cond, &vm->pause_lock);
	vm->parked--;
	pthread_mutex_unlock(&vm->pause_lock);
}

void vm_quiesce(struct vm *vm)
{
	for (int i = 0; i < vm->nr_devices; i++)
		if (vm->devices[i].ops->quiesce)
			vm->devices[i].ops->quiesce(vm->devices[i].dev);
}
