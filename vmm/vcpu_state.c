/* vCPU state save/restore for snapshots (orders in vcpu_state.h). */
#include <errno.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "vmm/kvm.h"
#include "common/log.h"
#include "vmm/vcpu_state.h"

#define MSR_IA32_TSC          0x10
#define MSR_IA32_TSC_DEADLINE 0x6e0
#define XSAVE_LEGACY_SIZE     4096

struct vcpu_state {
	struct kvm_mp_state mp;
	struct kvm_regs regs;
	struct kvm_sregs sregs;
	uint32_t xsave_len;
	uint8_t *xsave;
	struct kvm_xcrs xcrs;
	struct kvm_debugregs dbg;
	struct kvm_lapic_state lapic;
	uint32_t tsc_khz;
	uint32_t cpuid_nent;
	struct kvm_cpuid_entry2 *cpuid;
	uint32_t nmsrs;
	struct kvm_msr_entry *msrs;
	struct kvm_vcpu_events events;
};

void vcpu_state_free(struct vcpu_state *s)
{
	if (!s)
		return;
	free(s->xsave);
	free(s->cpuid);
	free(s->msrs);
	free(s);
}

static int xsave_size(struct kvm *k)
{
	int n = ioctl(k->vm_fd, KVM_CHECK_EXTENSION, KVM_CAP_XSAVE2);

	return n > XSAVE_LEGACY_SIZE ? n : XSAVE_LEGACY_SIZE;
}

static int get_xsave(struct kvm *k, struct kvm_vcpu *v, struct vcpu_state *s)
{
	bool v2 = ioctl(k->vm_fd, KVM_CHECK_EXTENSION, KVM_CAP_XSAVE2) > 0;

	s->xsave_len = (uint32_t)xsave_size(k);
	if (s->xsave_len > VCPU_STATE_MAX_XSAVE)
		return -E2BIG;
	s->xsave = calloc(1, s->xsave_len);
	if (!s->xsave)
		return -ENOMEM;
	return ioctl(v->fd, v2 ? KVM_GET_XSAVE2 : KVM_GET_XSAVE, s->xsave) < 0 ? -errno : 0;
}

static int get_cpuid(struct kvm_vcpu *v, struct vcpu_state *s)
{
	struct kvm_cpuid2 *c = calloc(1, sizeof(*c) + VCPU_STATE_MAX_CPUID * sizeof(c->entries[0]));
	int ret = 0;

	if (!c)
		return -ENOMEM;
	c->nent = VCPU_STATE_MAX_CPUID;
	if (ioctl(v->fd, KVM_GET_CPUID2, c) < 0)
		ret = -errno;
	if (!ret) {
		s->cpuid_nent = c->nent;
		s->cpuid = malloc(c->nent * sizeof(c->entries[0]) + 1);
		if (s->cpuid)
			memcpy(s->cpuid, c->entries, c->nent * sizeof(c->entries[0]));
		else
			ret = -ENOMEM;
	}
	free(c);
	return ret;
}

static int cmp_msr(const void *a, const void *b)
{
	uint32_t x = ((const struct kvm_msr_entry *)a)->index;
	uint32_t y = ((const struct kvm_msr_entry *)b)->index;

	/* TSC_DEADLINE last: it must be set after the TSC it counts in. */
	if (x == MSR_IA32_TSC_DEADLINE || y == MSR_IA32_TSC_DEADLINE)
		return (x == MSR_IA32_TSC_DEADLINE) - (y == MSR_IA32_TSC_DEADLINE);
	return x < y ? -1 : x > y;
}

static int read_msr_list(struct kvm *k, uint32_t *idx, uint32_t *n)
{
	struct kvm_msr_list *l = calloc(1, sizeof(*l) + VCPU_STATE_MAX_MSRS * 4);
	int ret = 0;

	if (!l)
		return -ENOMEM;
	l->nmsrs = VCPU_STATE_MAX_MSRS;
	if (ioctl(k->sys_fd, KVM_GET_MSR_INDEX_LIST, l) < 0)
		ret = -errno;
	else {
		memcpy(idx, l->indices, l->nmsrs * 4);
		*n = l->nmsrs;
	}
	free(l);
	return ret;
}

/* Every MSR KVM lists that it will also read back; unreadable ones are dropped. */
static int get_msrs(struct kvm *k, struct kvm_vcpu *v, struct vcpu_state *s)
{
	uint32_t idx[VCPU_STATE_MAX_MSRS], n = 0, done = 0, kept = 0;
	size_t esz = sizeof(struct kvm_msr_entry);
	struct kvm_msrs *m;
	int ret = read_msr_list(k, idx, &n);

	if (ret)
		return ret;
	m = calloc(1, sizeof(*m) + n * esz);
	s->msrs = calloc(n + 1, esz);
	if (!m || !s->msrs) {
		free(m);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < n; i++)
		s->msrs[i].index = idx[i];
	qsort(s->msrs, n, esz, cmp_msr);
	/* KVM_GET_MSRS stops at the first MSR it cannot read: drop that one, go on. */
	while (done < n) {
		int got;

		m->nmsrs = n - done;
		memcpy(m->entries, s->msrs + done, (n - done) * esz);
		got = ioctl(v->fd, KVM_GET_MSRS, m);
		if (got < 0) {
			free(m);
			return -errno;
		}
		memcpy(s->msrs + kept, m->entries, (size_t)got * esz);
		kept += (uint32_t)got;
		done += (uint32_t)got + ((uint32_t)got < n - done ? 1 : 0);
	}
	s->nmsrs = kept;
	free(m);
	return 0;
}

/* A zero deadline means "timer not armed" only with a stale TSC; saved as
 * the current TSC the guest's next timer interrupt cannot be lost. */
static void fix_tsc_deadline(struct vcpu_state *s)
{
	uint64_t tsc = 0;

	for (uint32_t i = 0; i < s->nmsrs; i++)
		if (s->msrs[i].index == MSR_IA32_TSC)
			tsc = s->msrs[i].data;
	for (uint32_t i = 0; i < s->nmsrs; i++)
		if (s->msrs[i].index == MSR_IA32_TSC_DEADLINE && !s->msrs[i].data)
			s->msrs[i].data = tsc;
}

static int capture(struct kvm *k, struct kvm_vcpu *v, struct vcpu_state *s)
{
	int ret, khz;

	if (ioctl(v->fd, KVM_GET_MP_STATE, &s->mp) < 0 ||
	    ioctl(v->fd, KVM_GET_REGS, &s->regs) < 0 ||
	    ioctl(v->fd, KVM_GET_SREGS, &s->sregs) < 0)
		return -errno;
	ret = get_xsave(k, v, s);
	if (ret)
		return ret;
	if (ioctl(v->fd, KVM_GET_XCRS, &s->xcrs) < 0 ||
	    ioctl(v->fd, KVM_GET_DEBUGREGS, &s->dbg) < 0 ||
	    ioctl(v->fd, KVM_GET_LAPIC, &s->lapic) < 0)
		return -errno;
	khz = ioctl(v->fd, KVM_GET_TSC_KHZ, 0);
	s->tsc_khz = khz > 0 ? (uint32_t)khz : 0;
	ret = get_cpuid(v, s);
	if (!ret)
		ret = get_msrs(k, v, s);
	if (ret)
		return ret;
	fix_tsc_deadline(s);
	return ioctl(v->fd, KVM_GET_VCPU_EVENTS, &s->events) < 0 ? -errno : 0;
}

void vcpu_state_encode(const struct vcpu_state *s, struct snap_w *w)
{
	snap_w_blob(w, &s->mp, sizeof(s->mp));
	snap_w_blob(w, &s->regs, sizeof(s->regs));
	snap_w_blob(w, &s->sregs, sizeof(s->sregs));
	snap_w_blob(w, s->xsave, s->xsave_len);
	snap_w_blob(w, &s->xcrs, sizeof(s->xcrs));
	snap_w_blob(w, &s->dbg, sizeof(s->dbg));
	snap_w_blob(w, &s->lapic, sizeof(s->lapic));
	snap_w_u32(w, s->tsc_khz);
	snap_w_blob(w, s->cpuid, s->cpuid_nent * (uint32_t)sizeof(s->cpuid[0]));
	snap_w_blob(w, s->msrs, s->nmsrs * (uint32_t)sizeof(s->msrs[0]));
	snap_w_blob(w, &s->events, sizeof(s->events));
}

int vcpu_state_save(struct kvm *k, struct kvm_vcpu *v, struct snap_w *w)
{
	struct vcpu_state *s = calloc(1, sizeof(*s));
	int ret;

	if (!s)
		return -ENOMEM;
	ret = capture(k, v, s);
	if (!ret)
		vcpu_state_encode(s, w);
	vcpu_state_free(s);
	return ret ? ret : w->err;
}

/* A variable-size array blob: a whole number of @esz entries, at most @max. */
static void *dup_array(struct snap_r *r, size_t esz, uint32_t max, uint32_t *count)
{
	uint32_t len;
	const uint8_t *p = snap_r_blob(r, (uint32_t)(max * esz), &len);
	void *out;

	*count = 0;
	if (!p || len % esz) {
		r->err = -EBADMSG;
		return NULL;
	}
	out = malloc(len + 1);
	if (!out) {
		r->err = -ENOMEM;
		return NULL;
	}
	memcpy(out, p, len);
	*count = (uint32_t)(len / esz);
	return out;
}

int vcpu_state_decode(const uint8_t *p, size_t len, struct vcpu_state **out)
{
	struct vcpu_state *s = calloc(1, sizeof(*s));
	struct snap_r r;
	int ret;

	if (!s)
		return -ENOMEM;
	snap_r_init(&r, p, len);
	snap_r_blob_exact(&r, &s->mp, sizeof(s->mp));
	snap_r_blob_exact(&r, &s->regs, sizeof(s->regs));
	snap_r_blob_exact(&r, &s->sregs, sizeof(s->sregs));
	s->xsave = dup_array(&r, 1, VCPU_STATE_MAX_XSAVE, &s->xsave_len);
	snap_r_blob_exact(&r, &s->xcrs, sizeof(s->xcrs));
	snap_r_blob_exact(&r, &s->dbg, sizeof(s->dbg));
	snap_r_blob_exact(&r, &s->lapic, sizeof(s->lapic));
	s->tsc_khz = snap_r_u32(&r);
	s->cpuid = dup_array(&r, sizeof(s->cpuid[0]), VCPU_STATE_MAX_CPUID, &s->cpuid_nent);
	s->msrs = dup_array(&r, sizeof(s->msrs[0]), VCPU_STATE_MAX_MSRS, &s->nmsrs);
	snap_r_blob_exact(&r, &s->events, sizeof(s->events));
	ret = snap_r_done(&r);
	/* Legacy XSAVE is 4 KiB; smaller cannot be a real save area. */
	if (!ret && (s->xsave_len < XSAVE_LEGACY_SIZE || s->mp.mp_state > KVM_MP_STATE_AP_RESET_HOLD ||
		     s->xcrs.nr_xcrs > KVM_MAX_XCRS))
		ret = -EBADMSG;
	if (ret) {
		vcpu_state_free(s);
		return ret;
	}
	*out = s;
	return 0;
}

static int set_cpuid(struct kvm_vcpu *v, const struct vcpu_state *s)
{
	struct kvm_cpuid2 *c = calloc(1, sizeof(*c) + s->cpuid_nent * sizeof(c->entries[0]));
	int ret = 0;

	if (!c)
		return -ENOMEM;
	c->nent = s->cpuid_nent;
	memcpy(c->entries, s->cpuid, s->cpuid_nent * sizeof(c->entries[0]));
	if (ioctl(v->fd, KVM_SET_CPUID2, c) < 0)
		ret = -errno;
	free(c);
	return ret;
}

/* KVM_SET_XSAVE copies as many bytes as this host's XSAVE2 size: pad to it. */
static int set_xsave(struct kvm *k, struct kvm_vcpu *v, const struct vcpu_state *s)
{
	size_t want = (size_t)xsave_size(k);
	uint8_t *buf = calloc(1, want > s->xsave_len ? want : s->xsave_len);
	int ret = 0;

	if (!buf)
		return -ENOMEM;
	memcpy(buf, s->xsave, s->xsave_len);
	if (ioctl(v->fd, KVM_SET_XSAVE, buf) < 0)
		ret = -errno;
	free(buf);
	return ret;
}

/* One MSR at a time past any KVM refuses, so one odd MSR cannot stop a restore. */
static int set_msrs(struct kvm_vcpu *v, const struct vcpu_state *s)
{
	size_t esz = sizeof(struct kvm_msr_entry);
	struct kvm_msrs *m = calloc(1, sizeof(*m) + s->nmsrs * esz);
	uint32_t done = 0;

	if (!m)
		return -ENOMEM;
	while (done < s->nmsrs) {
		int set;

		m->nmsrs = s->nmsrs - done;
		memcpy(m->entries, s->msrs + done, m->nmsrs * esz);
		set = ioctl(v->fd, KVM_SET_MSRS, m);
		if (set < 0) {
			free(m);
			return -errno;
		}
		if ((uint32_t)set < m->nmsrs)
			log_debug("vCPU %d: KVM refused MSR 0x%x on restore", v->id,
				  s->msrs[done + (uint32_t)set].index);
		done += (uint32_t)set + ((uint32_t)set < m->nmsrs ? 1 : 0);
	}
	free(m);
	return 0;
}

#define STEP(name, call) do { step = name; if ((call) < 0) { ret = -errno; goto fail; } } while (0)

int vcpu_state_apply(struct kvm *k, struct kvm_vcpu *v, const struct vcpu_state *s,
		     bool set_cpuid_too, char *err, size_t errlen)
{
	struct kvm_vcpu_events ev = s->events;
	const char *step = "CPUID";
	int ret = set_cpuid_too ? set_cpuid(v, s) : 0;

	if (ret)
		goto fail;
	STEP("MP state", ioctl(v->fd, KVM_SET_MP_STATE, &s->mp));
	STEP("regs", ioctl(v->fd, KVM_SET_REGS, &s->regs));
	STEP("sregs", ioctl(v->fd, KVM_SET_SREGS, &s->sregs));
	step = "xsave";
	ret = set_xsave(k, v, s);
	if (ret)
		goto fail;
	STEP("xcrs", ioctl(v->fd, KVM_SET_XCRS, &s->xcrs));
	STEP("debug regs", ioctl(v->fd, KVM_SET_DEBUGREGS, &s->dbg));
	STEP("LAPIC", ioctl(v->fd, KVM_SET_LAPIC, &s->lapic));
	if (s->tsc_khz && ioctl(v->fd, KVM_GET_TSC_KHZ, 0) != (int)s->tsc_khz &&
	    ioctl(v->fd, KVM_SET_TSC_KHZ, s->tsc_khz) < 0)
		log_warn("vCPU %d: cannot set the TSC to %u kHz; guest time may drift", v->id,
			 s->tsc_khz);
	step = "MSRs";
	ret = set_msrs(v, s);
	if (ret)
		goto fail;
	/* Pending NMI and SIPI are only restored when flagged valid. */
	ev.flags |= KVM_VCPUEVENT_VALID_NMI_PENDING | KVM_VCPUEVENT_VALID_SIPI_VECTOR;
	ev.flags &= KVM_VCPUEVENT_VALID_NMI_PENDING | KVM_VCPUEVENT_VALID_SIPI_VECTOR |
		    KVM_VCPUEVENT_VALID_SHADOW | KVM_VCPUEVENT_VALID_SMM;
	STEP("events", ioctl(v->fd, KVM_SET_VCPU_EVENTS, &ev));
	/* Tell a kvmclock guest it was stopped, so its watchdogs do not fire;
	 * EINVAL just means the guest has no kvmclock page yet. */
	ioctl(v->fd, KVM_KVMCLOCK_CTRL, 0);
	return 0;
fail:
	snprintf(err, errlen, "vCPU %d: restoring %s: %s", v->id, step, strerror(-ret));
	return ret;
}
