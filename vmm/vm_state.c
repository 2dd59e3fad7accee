/* VM-wide KVM state (PIT, clock, irqchips) and the dirty log. */
#include <errno.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "vmm/kvm.h"
#include "vmm/vm_state.h"

struct vm_kvm_state {
	struct kvm_pit_state2 pit;
	struct kvm_clock_data clock;
	struct kvm_irqchip chip[3];
};

void vm_state_free(struct vm_kvm_state *s)
{
	free(s);
}

int vm_state_save(struct kvm *k, struct snap_w *w)
{
	struct vm_kvm_state s;

	memset(&s, 0, sizeof(s));
	if (ioctl(k->vm_fd, KVM_GET_PIT2, &s.pit) < 0 || ioctl(k->vm_fd, KVM_GET_CLOCK, &s.clock) < 0)
		return -errno;
	for (uint32_t i = 0; i < 3; i++) {
		s.chip[i].chip_id = i;
		if (ioctl(k->vm_fd, KVM_GET_IRQCHIP, &s.chip[i]) < 0)
			return -errno;
	}
	snap_w_blob(w, &s.pit, sizeof(s.pit));
	snap_w_blob(w, &s.clock, sizeof(s.clock));
	for (int i = 0; i < 3; i++)
		snap_w_blob(w, &s.chip[i], sizeof(s.chip[i]));
	return w->err;
}

int vm_state_decode(const uint8_t *p, size_t len, struct vm_kvm_state **out)
{
	struct vm_kvm_state *s = calloc(1, sizeof(*s));
	struct snap_r r;
	int ret;

	if (!s)
		return -ENOMEM;
	snap_r_init(&r, p, len);
	snap_r_blob_exact(&r, &s->pit, sizeof(s->pit));
	snap_r_blob_exact(&r, &s->clock, sizeof(s->clock));
	for (int i = 0; i < 3; i++)
		snap_r_blob_exact(&r, &s->chip[i], sizeof(s->chip[i]));
	ret = snap_r_done(&r);
	for (uint32_t i = 0; !ret && i < 3; i++)
		if (s->chip[i].chip_id != i)
			ret = -EBADMSG;
	if (ret) {
		free(s);
		return ret;
	}
	*out = s;
	return 0;
}

int vm_state_apply(struct kvm *k, const struct vm_kvm_state *s, char *err, size_t errlen)
{
	struct kvm_clock_data clock = { .clock = s->clock.clock };
	const char *step = "PIT";

	if (ioctl(k->vm_fd, KVM_SET_PIT2, &s->pit) < 0)
		goto fail;
	step = "clock";
	if (ioctl(k->vm_fd, KVM_SET_CLOCK, &clock) < 0)
		goto fail;
	step = "irqchip";
	for (int i = 0; i < 3; i++)
		if (ioctl(k->vm_fd, KVM_SET_IRQCHIP, &s->chip[i]) < 0)
			goto fail;
	return 0;
fail:
	snprintf(err, errlen, "restoring the VM's %s: %s", step, strerror(errno));
	return -errno;
}

