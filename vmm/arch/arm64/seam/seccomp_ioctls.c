/*
 * The main thread's arm64 KVM ioctls (sc_main_arch_ioctls,
 * seccomp_table.h): none yet. Snapshots, whose VM and vCPU state ioctls
 * these would be (KVM_GET/SET_ONE_REG, the vGIC's device attributes, MP
 * state), are not done on arm64; the event loop needs only the neutral ones.
 */
#include "vmm/confine/seccomp_table.h"

static const unsigned long none[1];

const struct sc_ioctls sc_main_arch_ioctls = { none, 0 };
