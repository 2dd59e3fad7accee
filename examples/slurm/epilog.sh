#!/bin/sh
# Slurm Epilog (slurm.conf: Epilog=/etc/slurm/mvm-epilog.sh). Runs as root
# on the node after the job, also when it was cancelled or killed at its
# time limit. Slurm's kill ended every process of the job's cgroup (VMM,
# network helper, relay); what is left is files: the per-job state
# directory and, where a sandbox had one, its empty cgroup. `mvm gc` reaps
# every sandbox whose VMM is gone and prints what it removed; it keeps
# stopped sandboxes.
set -u
state="${MVM_EPILOG_TMPDIR:-/tmp}/mvm-state-$SLURM_JOB_ID"
[ -d "$state" ] || exit 0
runuser -u "$SLURM_JOB_USER" -- env MVM_STATE_DIR="$state" mvm gc |
	logger -t mvm-epilog 2>/dev/null || true
# Nothing of this job may run any more: remove what gc kept (stopped ones).
rm -rf --one-file-system "$state"
exit 0
