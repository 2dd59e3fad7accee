#!/bin/sh
# Slurm Prolog (slurm.conf: Prolog=/etc/slurm/mvm-prolog.sh). Runs as root
# on the node before the job's first step. Imports the job's template when
# the node lacks it, as the job's user (templates live in the user's store),
# from a bundle on the shared directory (`mvm template export TPL FILE` made
# it). Importing a bundle already imported is a no-op; a truncated or
# edited bundle is refused and leaves nothing (the job then fails to start
# its sandbox with a clear error instead of running with the wrong one).
set -eu
SHARED=${MVM_SHARED:-/shared/mvm}
tpl=$(printf '%s\n' "${SLURM_JOB_COMMENT:-}" | sed -n 's/^mvm-template=\([A-Za-z0-9._-]*\)$/\1/p')
[ -n "$tpl" ] || exit 0	# the job asked for none: sbatch --comment=mvm-template=NAME
bundle="$SHARED/bundles/$tpl.tpl"
[ -r "$bundle" ] || { echo "mvm prolog: no bundle $bundle for template $tpl" >&2; exit 1; }
# Two tasks of an array often start on one node at once: one imports, the
# other waits for the lock and then finds the template there.
lock=${MVM_PROLOG_LOCK:-/run/lock/mvm-prolog.lock}
exec 9>>"$lock"
flock 9
runuser -u "$SLURM_JOB_USER" -- sh -c '
	mvm template ls 2>/dev/null | awk "NR > 1 { print \$1 }" | grep -qx "$1" ||
		mvm template import "$2" --name "$1"' sh "$tpl" "$bundle" 9>&-
