/* Test builds only: make a running, confined VMM act like a compromised one. */
#ifndef MVM_TEST_ATTACK_H
#define MVM_TEST_ATTACK_H

#include "vmm/vm.h"

/*
 * Built with -DMVM_TEST_HOOKS (`make build/testhooks/mvm`, for
 * tests/integration/confine-attack.sh) and MVM_TEST_ATTACK set: half a
 * second into the event loop, so after every filter is in force, the VMM
 * tries each comma-separated step (read:PATH, write:PATH, connect:SOCKET,
 * exec:PATH, ptrace:PID, kill:PID: SIGKILL, chmod:PATH: fchmod 0644,
 * config-disk:HOSTFILE: config.json made to attach HOSTFILE) and writes "mvm test-attack: STEP: RESULT" to
 * @report_fd. In every other build this does nothing: production binaries
 * carry no such code, so it cannot be an attacker's tool.
 */
void sb_test_attack_arm(struct vm *vm, int report_fd);

#endif
