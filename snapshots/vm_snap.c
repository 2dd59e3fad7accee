/* Capture and load the state file of a whole VM (vCPUs, VM, devices). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snapshots/vm_snap.h"
#include "common/log.h"
#include "vmm/arch/arch.h"
#include "vmm/vcpu.h"
#include "vmm/vcpu_state.h"
#include "vmm/vm.h"
#include "vmm/vm_state.h"

struct vm_snap_loaded {
	uint8_t *buf;			/* a copy: sections point into it */
	struct snap_state st;
	struct vm_kvm_state *vms;
	struct vcpu_state *cpu[SNAP_MAX_CPUS];
	int ncpus;
	uint32_t gen;
};

void vm_snap_header(struct vm *vm, struct snap_header *h)
{
	memset(h, 0, sizeof(*h));
	h->format_version = SNAP_FORMAT_VERSION;
	snprintf(h->mvm_version, sizeof(h->mvm_version), "%s", MVM_VERSION_STRING);
	/* Which CPUs a snapshot may be restored on (arch.h). */
	arch_cpu_identity(&vm->kvm, h->cpu_vendor, &h->cpuid_fingerprint);
	h->ram_size = vm->mem.ram_size;
	h->nr_regions = (uint32_t)vm->mem.nr_regions;
	for (int i = 0; i < vm->mem.nr_regions && i < SNAP_MAX_REGIONS; i++) {
		h->regions[i].gpa = vm->mem.regions[i].gpa;
		h->regions[i].size = vm->mem.regions[i].size;
	}
	h->ncpus = (uint32_t)vm->ncpus;
}

/* The VM section: KVM's VM state, then the snapshot generation. */
static int capture_vm(struct vm *vm, struct snap_w *w)
{
	struct snap_w s = { 0 };
	int ret = vm_state_save(&vm->kvm, &s);

	snap_w_u32(&s, vm->snap_gen);
	if (!ret)
		ret = s.err;
	if (!ret)
		snap_state_section(w, SNAP_SEC_VM, 0, VM_STATE_VERSION, s.p, s.len);
	snap_w_free(&s);
	return ret;
}

static int capture_devices(struct vm *vm, struct snap_w *w)
{
	for (int i = 0; i < vm->nr_devices; i++) {
		const struct vm_device_ops *ops = vm->devices[i].ops;
		struct snap_w s = { 0 };
		int ret;

		if (!ops->save)
			continue;
		snap_w_blob(&s, ops->name, (uint32_t)strlen(ops->name));
		ret = ops->save(vm->devices[i].dev, &s);
		if (!ret)
			ret = s.err;
		if (!ret)
			snap_state_section(w, SNAP_SEC_DEV, (uint32_t)i, ops->snap_version, s.p, s.len);
		snap_w_free(&s);
		if (ret)
			return ret;
	}
	return 0;
}

int vm_snap_capture(struct vm *vm, struct snap_w *w, char *err, size_t errlen)
{
	struct snap_header h;
	const char *what = "VM";
	int ret;

	vm_snap_header(vm, &h);
	snap_state_begin(w, &h);
	ret = capture_vm(vm, w);
	for (int i = 0; !ret && i < vm->ncpus; i++) {
		struct snap_w s = { 0 };

		what = "vCPU";
		ret = vcpu_state_save(&vm->kvm, &vm->vcpus[i].kv, &s);
		if (!ret)
			snap_state_section(w, SNAP_SEC_VCPU, (uint32_t)i, VCPU_STATE_VERSION, s.p, s.len);
		snap_w_free(&s);
	}
	if (!ret) {
		what = "device";
		ret = capture_devices(vm, w);
	}
	if (!ret)
		ret = w->err;
	if (ret)
		snprintf(err, errlen, "saving %s state: %s", what, strerror(-ret));
	return ret;
}

void vm_snap_loaded_free(struct vm_snap_loaded *l)
{
	if (!l)
		return;
	vm_state_free(l->vms);
	for (int i = 0; i < l->ncpus; i++)
		vcpu_state_free(l->cpu[i]);
	free(l->buf);
	free(l);
}

/* Every device with state has exactly one section, under its own name. */
static int check_devices(struct vm *vm, const struct snap_state *st, bool apply,
			 char *err, size_t errlen)
{
	uint32_t want = 0, have = 0;

	for (uint32_t i = 0; i < st->nr_sections; i++)
		have += st->sec[i].type == SNAP_SEC_DEV;
	for (int i = 0; i < vm->nr_devices; i++) {
		const struct vm_device_ops *ops = vm->devices[i].ops;
		const struct snap_section *s;
		struct snap_r r;
		const uint8_t *name;
		uint32_t nlen;
		int ret;

		if (!ops->save)
			continue;
		want++;
		s = snap_state_find(st, SNAP_SEC_DEV, (uint32_t)i);
		if (!s) {
			snprintf(err, errlen, "snapshot state: no section for device %d (%s)", i, ops->name);
			return -EBADMSG;
		}
		snap_r_init(&r, s->data, s->len);
		name = snap_r_blob(&r, 64, &nlen);
		if (!name || nlen != strlen(ops->name) || memcmp(name, ops->name, nlen)) {
			snprintf(err, errlen, "snapshot state: device %d is not a %s", i, ops->name);
			return -EBADMSG;
		}
		ret = ops->load(vm->devices[i].dev, &r, s->version, apply);
		if (ret) {
			snprintf(err, errlen, "snapshot state: device %d (%s): %s", i, ops->name,
				 apply ? strerror(-ret) : "invalid section");
			return ret;
		}
	}
	if (want != have) {
		snprintf(err, errlen, "snapshot state: %u device sections for %u devices", have, want);
		return -EBADMSG;
	}
	return 0;
}

static int decode_cpus_vm(struct vm *vm, struct vm_snap_loaded *l, char *err, size_t errlen)
{
	const struct snap_section *s = snap_state_find(&l->st, SNAP_SEC_VM, 0);
	struct snap_r r;
	uint32_t ncpu_sec = 0;

	if (!s || s->version != VM_STATE_VERSION || s->len < 4 ||
	    vm_state_decode(s->data, s->len - 4, &l->vms)) {
		snprintf(err, errlen, "snapshot state: missing or invalid VM section");
		return -EBADMSG;
	}
	snap_r_init(&r, s->data + s->len - 4, 4);
	l->gen = snap_r_u32(&r);
	for (uint32_t i = 0; i < l->st.nr_sections; i++)
		ncpu_sec += l->st.sec[i].type == SNAP_SEC_VCPU;
	if (ncpu_sec != (uint32_t)vm->ncpus) {
		snprintf(err, errlen, "snapshot state: %u vCPU sections for %d vCPUs", ncpu_sec, vm->ncpus);
		return -EBADMSG;
	}
	for (int i = 0; i < vm->ncpus; i++) {
		s = snap_state_find(&l->st, SNAP_SEC_VCPU, (uint32_t)i);
		if (!s || s->version != VCPU_STATE_VERSION || vcpu_state_decode(s->data, s->len, &l->cpu[i])) {
			snprintf(err, errlen, "snapshot state: missing or invalid section of vCPU %d", i);
			return -EBADMSG;
		}
		l->ncpus = i + 1;
	}
	return 0;
}

int vm_snap_check(struct vm *vm, const uint8_t *buf, size_t len, struct vm_snap_loaded **out,
		  char *err, size_t errlen)
{
	struct vm_snap_loaded *l = calloc(1, sizeof(*l));
	struct snap_header host;
	int ret = -ENOMEM;

	if (!l || len > SNAP_STATE_MAX || !(l->buf = malloc(len + 1))) {
		snprintf(err, errlen, len > SNAP_STATE_MAX ? "snapshot state: larger than the cap" :
			 "out of memory");
		ret = len > SNAP_STATE_MAX ? -E2BIG : -ENOMEM;
		goto fail;
	}
	memcpy(l->buf, buf, len);
	ret = snap_state_parse(l->buf, len, &l->st, err, errlen);
	if (ret)
		goto fail;
	vm_snap_header(vm, &host);
	ret = snap_state_compatible(&l->st.h, &host, err, errlen);
	if (!ret)
		ret = decode_cpus_vm(vm, l, err, errlen);
	if (!ret)
		ret = check_devices(vm, &l->st, false, err, errlen);
	if (ret)
		goto fail;
	*out = l;
	return 0;
fail:
	vm_snap_loaded_free(l);
	return ret;
}

int vm_snap_apply(struct vm *vm, struct vm_snap_loaded *l, bool in_place, char *err, size_t errlen)
{
	int ret = vm_state_apply(&vm->kvm, l->vms, err, errlen);

	for (int i = 0; !ret && i < vm->ncpus; i++)
		ret = vcpu_state_apply(&vm->kvm, &vm->vcpus[i].kv, l->cpu[i], !in_place, err, errlen);
	/* One more load in this VM's history. */
	if (!ret) {
		uint32_t gen = l->gen > vm->snap_gen ? l->gen : vm->snap_gen;

		__atomic_store_n(&vm->snap_gen, gen + 1, __ATOMIC_SEQ_CST);
	}
	if (!ret)
		ret = check_devices(vm, &l->st, true, err, errlen);
	return ret;
}
