/* Assemble, run and tear down one VM. */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sys/wait.h>

#include "common/io_census.h"
#include "common/start_trace.h"
#include "common/mono_time.h"
#include "vmm/confine/heap.h"
#include "vmm/confine/seccomp_filter.h"
#include "vmm/arch/arch.h"
#include "common/log.h"
#include "vmm/vcpu.h"
#include "vmm/vm_internal.h"

void vm_request_stop(struct vm *vm, enum vm_outcome outcome, int code, const char *msg)
{
	int expected = 0;

	if (__atomic_compare_exchange_n(&vm->stop_requested, &expected, 1, false,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		vm->result.outcome = outcome;
		vm->result.code = code;
		snprintf(vm->result.message, sizeof(vm->result.message), "%s", msg ? msg : "");
	}
	ev_stop(&vm->loop);
}

void vm_guest_booted(struct vm *vm)
{
	if (!vm->result.t_init)
		vm->result.t_init = vm_elapsed(vm);
	if (vm->exit_at_init)
		vm_request_stop(vm, VM_EXITED, 0, NULL);
}

uint64_t vm_guest_resident_kib(const struct vm *vm)
{
	/* One page of the stack, not a 64 KiB block of heap: this count is
	 * taken when the guest has grown most, and must not add to the peak
	 * RSS it is compared with. */
	unsigned char vec[4096];
	size_t pages = vm->mem.map_size / GM_PAGE_SIZE;
	uint64_t resident = 0;

	for (size_t p = 0; vm->mem.map && p < pages; p += sizeof(vec)) {
		size_t n = pages - p < sizeof(vec) ? pages - p : sizeof(vec);

		if (mincore(vm->mem.map + p * GM_PAGE_SIZE, n * GM_PAGE_SIZE, vec))
			break;
		for (size_t i = 0; i < n; i++)
			resident += vec[i] & 1;
	}
	return resident * (GM_PAGE_SIZE / 1024);
}

void vm_guest_exited(struct vm *vm, uint32_t ws)
{
	int st = (int)ws;

	vm->result.t_exit = vm_elapsed(vm);
	if (WIFSIGNALED(st))
		vm_request_stop(vm, VM_SIGNALED, WTERMSIG(st), "command killed by a signal");
	else
		vm_request_stop(vm, VM_EXITED, WEXITSTATUS(st), NULL);
}

/* A snapshot's memory file: exactly the RAM size, mapped private. */
static int map_memory_file(struct vm *vm, const char *path, uint64_t size, char *err, size_t errlen)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC), ret;

	if (fd < 0 || fstat(fd, &st)) {
		snprintf(err, errlen, "memory file %s: %s", path, strerror(errno));
		ret = -errno;
	} else if (st.st_uid != geteuid() || (st.st_mode & 022)) {
		/* Another user's, or one others may write: they could change the
		 * guest's memory under it (the mapping is private, the file not). */
		snprintf(err, errlen, "memory file %s: not this user's, or writable by others "
			 "(mode %o): refusing to map it", path, (unsigned)(st.st_mode & 07777));
		ret = -EPERM;
	} else if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size != size) {
		snprintf(err, errlen, "memory file %s: %llu bytes, the snapshot's RAM is %llu",
			 path, (unsigned long long)st.st_size, (unsigned long long)size);
		ret = -EINVAL;
	} else {
		ret = gm_init_file(&vm->mem, size, fd);
		if (ret)
			snprintf(err, errlen, "memory file %s: %s", path, strerror(-ret));
	}
	if (fd >= 0)
		close(fd);	/* the mapping keeps the file */
	return ret;
}

static int setup_memory(struct vm *vm, uint64_t size, const char *file, char *err, size_t errlen)
{
	int ret = file ? map_memory_file(vm, file, size, err, errlen) : gm_init(&vm->mem, size);

	if (!ret)
		arch_mem_layout(&vm->mem);
	if (ret && file)
		return ret;
	if (ret) {
		snprintf(err, errlen, "guest memory of %llu MiB: %s (allowed: 64 MiB to 16 GiB, whole MiB)",
			 (unsigned long long)(size >> 20), strerror(-ret));
		return ret;
	}
	for (int i = 0; i < vm->mem.nr_regions; i++) {
		struct gm_region *r = &vm->mem.regions[i];

		ret = kvm_set_memory(&vm->kvm, (uint32_t)i, r->gpa, r->size, r->host, false);
		if (ret) {
			snprintf(err, errlen, "KVM_SET_USER_MEMORY_REGION: %s", strerror(-ret));
			return ret;
		}
	}
	return 0;
}

int vm_create_vcpus(struct vm *vm, char *err, size_t errlen)
{
	vm->vcpus = calloc((size_t)vm->ncpus, sizeof(*vm->vcpus));
	if (!vm->vcpus)
		return -ENOMEM;
	for (int i = 0; i < vm->ncpus; i++) {
		int ret = vcpu_init(&vm->vcpus[i], vm, i, vm->ncpus, &vm->kimg, err, errlen);

		if (ret)
			return ret;
	}
	return 0;
}

static int check_config(const struct vm_config *cfg, char *err, size_t errlen)
{
	if (cfg->cpus < 1 || cfg->cpus > VM_MAX_CPUS) {
		snprintf(err, errlen, "--cpus must be between 1 and %d", VM_MAX_CPUS);
		return -EINVAL;
	}
	if (cfg->nr_disks > VM_MAX_DISKS) {
		snprintf(err, errlen, "at most %d disks", VM_MAX_DISKS);
		return -EINVAL;
	}
	return 0;
}

static int create(struct vm *vm, const struct vm_config *cfg, char *err, size_t errlen)
{
	int ret = check_config(cfg, err, errlen);

	if (ret)
		return ret;
	ret = kvm_open(&vm->kvm, err, errlen);
	if (ret)
		return ret;
	if (cfg->cpus > vm->kvm.max_vcpus) {
		snprintf(err, errlen, "KVM allows at most %d vCPUs", vm->kvm.max_vcpus);
		return -EINVAL;
	}
	ret = arch_vm_create(vm, err, errlen);
	start_trace("vm: kvm vm created");
	log_info("setup: kvm ready at %.3fs", vm_elapsed(vm));
	if (ret)
		return ret;
	ret = setup_memory(vm, cfg->mem_size, cfg->restore_mem, err, errlen);
	start_trace("vm: memory");
	if (!ret && !cfg->restore_mem)
		ret = arch_kernel_parse(vm, cfg->kernel_path, err, errlen);
	if (ret)
		return ret;
	log_info("setup: memory and kernel headers at %.3fs", vm_elapsed(vm));
	/* A restored guest booted long ago: no command line is ever used. */
	cmdline_init(&vm->cmdline, cfg->restore_mem ? sizeof(vm->cmdline.buf) :
			 arch_cmdline_cap(vm));
	cmdline_add(&vm->cmdline, "%s", arch_base_cmdline);
	if (!cfg->add_devices) {
		snprintf(err, errlen, "no device assembly given (vm_config.add_devices)");
		return -EINVAL;
	}
	ret = arch_before_devices(vm, err, errlen);
	if (!ret)
		ret = cfg->add_devices(vm, cfg, err, errlen);
	if (ret && !err[0])
		snprintf(err, errlen, "creating devices: %s", strerror(-ret));
	if (ret)
		return ret;
	if (cfg->extra_cmdline && cfg->extra_cmdline[0])
		cmdline_add(&vm->cmdline, "%s", cfg->extra_cmdline);
	log_info("setup: devices at %.3fs", vm_elapsed(vm));
	start_trace("vm: devices");
	/* Kernel, initrd, boot data and the vCPUs (arch.h; a restore loads
	 * no kernel, its vCPUs get the snapshot's state). */
	ret = arch_boot(vm, cfg, err, errlen);
	start_trace("vm: vcpus");
	return ret;
}

/* The stop time of vm_config.stop_after_ms: the host ends the VM, not the guest. */
static void stop_time(void *opaque, uint32_t events)
{
	struct vm *vm = opaque;

	(void)events;
	vm_request_stop(vm, VM_EXITED, 0, VM_STOP_TIME_MSG);
}

int vm_create(struct vm *vm, const struct vm_config *cfg, struct vm_result *res)
{
	int ret;

	confine_heap_setup();
	memset(vm, 0, sizeof(*vm));
	vm->t0 = mono_now_s();
	vm->kvm.sys_fd = vm->kvm.vm_fd = -1;
	vm->kernel_fd = -1;
	vm->pio.name = "pio";
	vm->mmio.name = "mmio";
	vm->ncpus = cfg->cpus;
	vm->exit_at_init = cfg->exit_at_init;
	memset(res, 0, sizeof(*res));
	ret = ev_init(&vm->loop);
	if (ret) {
		snprintf(res->message, sizeof(res->message), "event loop: %s", strerror(-ret));
		return ret;
	}
	vcpu_signal_setup();
	ret = create(vm, cfg, res->message, sizeof(res->message));
	if (!ret && cfg->stop_after_ms) {
		ret = ev_timer(&vm->loop, cfg->stop_after_ms, 0, stop_time, vm);
		ret = ret < 0 ? ret : 0;	/* its fd lives as long as the VMM (one VM each) */
		if (ret)
			snprintf(res->message, sizeof(res->message), "lifetime timer: %s", strerror(-ret));
	}
	if (ret) {
		res->outcome = VM_ERROR;
		if (!res->message[0])
			snprintf(res->message, sizeof(res->message), "%s", strerror(-ret));
	}
	return ret;
}

/* A reboot with "Kernel panic" on the console is a panic: say which. */
static void classify_reboot(struct vm *vm, struct vm_result *res)
{
	char tail[4096] = "", *p, *nl;

	if (vm->console_tail)
		vm->console_tail(vm->console, tail, sizeof(tail));
	p = strstr(tail, "Kernel panic - not syncing");
	if (!p) {
		char how[sizeof(res->message)];

		/* Keep how it stopped: a reset asked for, or a triple fault. */
		snprintf(how, sizeof(how), "%s", res->message);
		snprintf(res->message, sizeof(res->message),
			 "guest stopped before the command reported an exit status (%s)", how);
		return;
	}
	nl = strchr(p, '\n');
	if (nl)
		*nl = 0;
	res->outcome = VM_PANIC;
	snprintf(res->message, sizeof(res->message), "guest kernel panic: %s", p);
}

void vm_run(struct vm *vm, struct vm_result *res)
{
	int ret = 0;

	for (int i = 0; i < vm->nr_devices && !ret; i++)
		if (vm->devices[i].ops->start)
			ret = vm->devices[i].ops->start(vm->devices[i].dev);
	if (ret)
		vm_request_stop(vm, VM_ERROR, 0, "cannot start a device's I/O threads");
	start_trace("run: devices started");
	/* Set-up is over: what it freed goes back before the guest grows. */
	malloc_trim(0);
	for (int i = 0; i < vm->ncpus && !ret; i++)
		ret = vcpu_start(&vm->vcpus[i]);
	start_trace("run: vcpus started");
	if (ret)
		vm_request_stop(vm, VM_ERROR, 0, "cannot start vCPU threads");
	/* The vCPU threads exist (each confined itself); this thread runs the
	 * event loop from here on (confine/seccomp_main.c). */
	else if (confine_seccomp_thread(&sc_table_main))
		vm_request_stop(vm, VM_ERROR, 0, "cannot install the event loop's seccomp filter");
	io_census_thread(IO_KIND_EVENT_LOOP);
	ret = ev_run(&vm->loop);
	if (ret)
		vm_request_stop(vm, VM_ERROR, 0, "event loop failed");
	__atomic_store_n(&vm->stop_requested, 1, __ATOMIC_RELEASE);
	vm_resume(vm);		/* parked vCPUs must wake to see the stop */
	for (int i = 0; i < vm->ncpus; i++)
		vcpu_stop(&vm->vcpus[i]);
	*res = vm->result;
	res->t_start = 0;
	if (res->outcome == VM_REBOOT)
		classify_reboot(vm, res);
}

void vm_destroy(struct vm *vm)
{
	for (int i = 0; vm->vcpus && i < vm->ncpus; i++)
		vcpu_destroy(&vm->vcpus[i]);
	free(vm->vcpus);
	for (int i = vm->nr_devices - 1; i >= 0; i--)
		vm->devices[i].ops->destroy(vm->devices[i].dev);
	if (vm->kernel_data)
		munmap((void *)vm->kernel_data, vm->kernel_len);
	if (vm->kernel_fd >= 0)
		close(vm->kernel_fd);
	arch_vm_destroy(vm);
	gm_free(&vm->mem);
	kvm_close(&vm->kvm);
	ev_fini(&vm->loop);
}
