// kvm_smoke — proves /dev/kvm really runs guest code: one VM, one vCPU, a few
// bytes of real-mode code that adds two registers, writes the sum to an I/O
// port and halts. Raw ioctls only, so a failure points at KVM, not at mvm.
// Exit 0 on success; 1 with a message naming the failing step otherwise.
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#define GUEST_BASE 0x1000 // where the code sits in guest-physical memory
#define RESULT_PORT 0x10  // port the guest writes its sum to
#define A 1234
#define B 4321

// 16-bit real-mode code; AX and BX are preset through KVM_SET_REGS.
static const uint8_t guest_code[] = {
	0x01, 0xd8,       // add ax, bx
	0xba, RESULT_PORT, 0x00, // mov dx, RESULT_PORT
	0xef,             // out dx, ax
	0xf4,             // hlt
};

static int fail(const char *what)
{
	fprintf(stderr, "kvm_smoke: FAIL: %s: %s\n", what, errno ? strerror(errno) : "unexpected");
	return 1;
}

int main(void)
{
	int kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (kvm < 0)
		return fail("open /dev/kvm");
	int api = ioctl(kvm, KVM_GET_API_VERSION, 0);
	if (api != KVM_API_VERSION) {
		fprintf(stderr, "kvm_smoke: FAIL: KVM API version %d, want %d\n", api, KVM_API_VERSION);
		return 1;
	}
	int vm = ioctl(kvm, KVM_CREATE_VM, 0);
	if (vm < 0)
		return fail("KVM_CREATE_VM");

	uint8_t *mem = mmap(NULL, 0x1000, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return fail("mmap guest memory");
	memcpy(mem, guest_code, sizeof(guest_code));
	struct kvm_userspace_memory_region region = {
		.slot = 0,
		.guest_phys_addr = GUEST_BASE,
		.memory_size = 0x1000,
		.userspace_addr = (uint64_t)(uintptr_t)mem,
	};
	if (ioctl(vm, KVM_SET_USER_MEMORY_REGION, &region) < 0)
		return fail("KVM_SET_USER_MEMORY_REGION");

	int vcpu = ioctl(vm, KVM_CREATE_VCPU, 0);
	if (vcpu < 0)
		return fail("KVM_CREATE_VCPU");
	int run_size = ioctl(kvm, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (run_size < (int)sizeof(struct kvm_run))
		return fail("KVM_GET_VCPU_MMAP_SIZE");
	struct kvm_run *run = mmap(NULL, (size_t)run_size, PROT_READ | PROT_WRITE, MAP_SHARED, vcpu, 0);
	if (run == MAP_FAILED)
		return fail("mmap kvm_run");

	// Real mode with CS base 0, so RIP is the physical address of the code.
	struct kvm_sregs sregs;
	if (ioctl(vcpu, KVM_GET_SREGS, &sregs) < 0)
		return fail("KVM_GET_SREGS");
	sregs.cs.base = 0;
	sregs.cs.selector = 0;
	if (ioctl(vcpu, KVM_SET_SREGS, &sregs) < 0)
		return fail("KVM_SET_SREGS");
	struct kvm_regs regs = {
		.rip = GUEST_BASE,
		.rax = A,
		.rbx = B,
		.rflags = 0x2, // bit 1 is reserved and must be set
	};
	if (ioctl(vcpu, KVM_SET_REGS, &regs) < 0)
		return fail("KVM_SET_REGS");

	int got = -1;
	// The guest needs exactly two exits (OUT, HLT); bound the loop anyway.
	for (int i = 0; i < 16; i++) {
		if (ioctl(vcpu, KVM_RUN, 0) < 0) {
			if (errno == EINTR)
				continue;
			return fail("KVM_RUN");
		}
		switch (run->exit_reason) {
		case KVM_EXIT_IO:
			if (run->io.direction != KVM_EXIT_IO_OUT || run->io.port != RESULT_PORT ||
			    run->io.size != 2) {
				fprintf(stderr, "kvm_smoke: FAIL: unexpected I/O exit port 0x%x size %d dir %d\n",
					run->io.port, run->io.size, run->io.direction);
				return 1;
			}
			uint16_t v;
			memcpy(&v, (uint8_t *)run + run->io.data_offset, sizeof(v));
			got = v;
			break;
		case KVM_EXIT_HLT:
			if (got != A + B) {
				fprintf(stderr, "kvm_smoke: FAIL: guest computed %d, want %d\n", got, A + B);
				return 1;
			}
			printf("kvm_smoke: ok: guest computed %d + %d = %d and halted\n", A, B, got);
			return 0;
		case KVM_EXIT_FAIL_ENTRY:
			fprintf(stderr, "kvm_smoke: FAIL: entry failed, hw reason 0x%llx\n",
				(unsigned long long)run->fail_entry.hardware_entry_failure_reason);
			return 1;
		default:
			fprintf(stderr, "kvm_smoke: FAIL: unexpected exit reason %u\n", run->exit_reason);
			return 1;
		}
	}
	fprintf(stderr, "kvm_smoke: FAIL: guest did not halt\n");
	return 1;
}
