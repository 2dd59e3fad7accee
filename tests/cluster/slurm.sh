#!/bin/sh
# Issue 29, "Slurm, for real": a Slurm cluster from Debian's slurmctld,
# slurmd and munge (tests/cluster/slurm-cluster.lib: a controller and two
# nodes, each node in its own network, UTS, mount and PID namespace), and
# mvm under it, through the job scripts of examples/slurm/:
#  1. an `sbatch --array` of 8 tasks, each `mvm run --template T -- CMD`,
#     runs on both nodes; every result lands once in the shared directory;
#     the template reached each node (which had none) through
#     `mvm template import` in the prolog;
#  2. `scancel` of a running task ends its sandbox: no VMM, network helper
#     or other process of the job stays on the node, nor its state directory;
#  3. the job's memory limit counts the sandbox (cgroup v2 only: says why
#     not otherwise);
#  4. a node fails (its slurmd and its sandboxes killed at once): Slurm
#     requeues the tasks it ran, they finish on the other node, and every
#     result exists exactly once.
# Run by `make test-cluster` (inside the nested KVM box where /dev/kvm is
# not usable here). Exit 0 pass, 77 skip, else fail.
. tests/integration/lib.sh
. tests/cluster/slurm-cluster.lib

[ "$(id -u)" = 0 ] || skip "needs root (network namespaces, slurmd)"
for c in slurmctld slurmd munged sbatch nsenter unshare ip; do
	command -v "$c" >/dev/null || skip "$c missing (tools/deps.sh installs slurm-wlm and munge)"
done
MVM=$(cd "$(dirname "$MVM")" && pwd)/$(basename "$MVM")
BIN=$(dirname "$MVM")
C=$T/c
mkdir -p "$C"
trap 'sl_down; [ -n "${SL_KEEP:-}" ] || rm -rf "$T"' EXIT
# Every failure (a wait that gave up included) prints the cluster's queue,
# its job ends and requeues, and the logs of slurmctld, each slurmd and
# each prolog and epilog (tests/integration/lib.sh calls this).
fail_context() { sl_report; }
trap 'timed_out; exit 143' TERM

# Node-local paths are the same string on every node ($C/local is the
# node's own disk there); the jobs get them from the submitting shell.
export PATH="$BIN:$PATH" SHARED="$C/shared" MVM_TEMPLATE=tpl TMPDIR_JOB="$C/local/tmp"
# The emulated box is slow to open an agent stream (tests/nested/README.md).
[ "${MVM_IN_NESTED_BOX:-}" != 1 ] || export MVM_AGENT_TIMEOUT="${MVM_AGENT_TIMEOUT:-60}"
JOBENV="ALL,TMPDIR=$C/local/tmp,MVM_TEMPLATE_DIR=$C/local/templates,MVM_IMAGE_DIR=$C/local/images,MVM_HOST_KEY=$C/local/host.key"

step "the template, made by an admin and exported to the shared directory"
mkdir -p "$C/shared/bundles" "$C/shared/logs"
(
	export MVM_STATE_DIR="$C/admin/state" MVM_TEMPLATE_DIR="$C/admin/templates" MVM_HOST_KEY="$C/admin/host.key"
	"$MVM" create src --image minimal --memory 256M &&
		"$MVM" template create tpl --from src &&
		"$MVM" rm -f src >/dev/null &&
		"$MVM" template export tpl "$C/shared/bundles/tpl.tpl"
) >"$T/admin.out" 2>&1 || { cat "$T/admin.out" >&2; fail "making and exporting the template"; }
echo "slurm: template bundle $(stat -c %s "$C/shared/bundles/tpl.tpl") bytes" >&2

step "cluster up: slurmctld, slurmd n1 and n2"
sl_hooks "$BIN"
sl_up n1 n2 || fail "the cluster did not come up"
echo "slurm: cgroup mode $SL_MODE${SL_WHY:+ ($SL_WHY)}" >&2
for n in n1 n2; do
	[ ! -e "$C/nodes/$n/templates/tpl" ] || fail "$n has the template before any job"
done

# sb JOBSCRIPT SBATCH-ARGS...: submit, print the job id.
sb() {
	s=$1
	shift
	sl_client sbatch --parsable -D "$C/shared/logs" --export="$JOBENV" "$@" "$s" 2>"$T/sbatch.err" ||
		{ cat "$T/sbatch.err" >&2; fail "sbatch $*"; }
}
# queue_empty JOB: no task of JOB is pending, running or completing.
queue_empty() { [ -z "$(sl_client squeue -h -j "$1" 2>/dev/null)" ]; }
# why_requeued ARRAY TASK HEADER: what slurmctld, the slurmds and the
# prologs logged of a task that was requeued with no node failure.
why_requeued() {
	jid=$(echo "$3" | awk '{ print $6 }')
	echo "slurm: task $2 of job $1 was requeued with no node failure ($3); the logs say:" >&2
	grep -i -E "JobId=($1_$2\(|$jid([^0-9]|$))|job[ _]$jid([^0-9]|$)|\[$jid\." \
		"$C/ctl/slurmctld.log" "$C"/nodes/*/slurmd.log "$C"/nodes/*/prolog.log | sed 's/^/  /' >&2
}
# Tasks requeued with no node failure (Slurm's own reasons: see
# BatchStartTimeout in slurm-cluster.lib). Checked last, so the
# node-failure step still runs; why_requeued says why at once.
spurious=""
# wait_done JOB TRIES
wait_done() {
	sl_poll "$2" queue_empty "$1" || fail "job $1 did not end"
}

step "1. sbatch --array=0-7 of examples/slurm/mvm-array.sbatch"
export TASK_CMD='echo "result $1 $(($1 * $1)) from $(. /etc/os-release && echo $ID)"'
arr=$(sb examples/slurm/mvm-array.sbatch --array=0-7 --mem=600M --comment=mvm-template=tpl)
wait_done "$arr" 1200
for i in 0 1 2 3 4 5 6 7; do
	f=$C/shared/results/task-$i.out
	[ -f "$f" ] || { cat "$C/shared/logs/"*"_$i.log" >&2; fail "task $i left no result"; }
	hdr=$(head -n 1 "$f")
	expect_match "task $i's header" "^task $i node n[12] job [0-9]+ restart [0-9]+$" "$hdr"
	[ "${hdr##* }" = 0 ] || { spurious="$spurious array-$i"; why_requeued "$arr" "$i" "$hdr"; }
	expect_eq "task $i's result" "result $i $((i * i)) from mvm-minimal" "$(sed -n 2p "$f")"
	expect_eq "task $i's lines" 2 "$(wc -l <"$f")"
done
[ -z "$(ls "$C/shared/results" | grep -v '^task-[0-7]\.out$')" ] ||
	fail "stray files in results: $(ls "$C/shared/results")"
nodes=$(cat "$C"/shared/results/task-*.out | awk '/^task/ { print $4 }' | sort -u | tr '\n' ' ')
expect_eq "nodes the array ran on" "n1 n2 " "$nodes"
for n in n1 n2; do
	[ -d "$C/nodes/$n/templates/tpl" ] || fail "the prolog did not import tpl on $n: $(cat "$C/nodes/$n/prolog.log")"
	# Imported once: the first task's prolog; the others found it.
	expect_eq "imports on $n" 1 "$(grep -c '^imported template tpl ' "$C/nodes/$n/prolog.log")"
	[ -z "$(ls "$C/nodes/$n/tmp")" ] || fail "state left on $n after the array: $(ls "$C/nodes/$n/tmp")"
done
echo "slurm: array of 8: every result once: $(cat "$C"/shared/results/task-*.out | awk '/^task/ { print $4 }' | sort | uniq -c | tr '\n' ' ')" >&2
for n in n1 n2; do
	echo "slurm: $n's prologs took (s): $(sed -n 's/^job [0-9]* status [0-9]* after \([0-9]*\) s$/\1/p' "$C/nodes/$n/prolog.log" | tr '\n' ' ')" >&2
done

step "2. scancel of a running task ends its sandbox, nothing left"
job=$(sb tests/cluster/gated.sbatch --mem=600M --comment=mvm-template=tpl)
tmp=$C/shared/gated/task-0.out.tmp.$job
started() { grep -qsx started "$1"; }
sl_poll 1200 started "$tmp" || { cat "$tmp" "$C/shared/logs/slurm-$job.out" >&2; fail "the gated task's guest never started"; }
node=$(awk 'NR == 1 { print $4 }' "$tmp")
state=$C/nodes/$node/tmp/mvm-state-$job
[ -n "$(sl_node_jobprocs "$node" | grep -E ' mvm-net |mvm vmm ')" ] ||
	fail "no VMM or network helper of the task on $node: $(sl_node_jobprocs "$node")"
ls "$state"/run-*/pid >/dev/null 2>&1 || fail "no sandbox state under $state: $(ls -R "$state" 2>&1)"
sl_client scancel "$job"
epilogued() { grep -qs "^job $job status" "$C/nodes/$node/epilog.log"; }
sl_poll 600 epilogued || fail "no epilogue after scancel of $job on $node"
sl_poll 600 queue_empty "$job" || fail "job $job still queued after scancel"
left=$(sl_node_jobprocs "$node")
[ -z "$left" ] || fail "processes left on $node after scancel: $left"
[ ! -e "$state" ] || fail "state left on $node after scancel: $(ls -R "$state")"
[ ! -e "$C/shared/gated/task-0.out" ] || fail "a cancelled task wrote its result"
! grep -q '^done' "$tmp" || fail "the cancelled task's guest finished: $(cat "$tmp")"
rm -rf "$C/shared/gated"
echo "slurm: scancel ok on $node" >&2

step "3. the job's memory limit counts the sandbox"
if [ "$SL_MODE" = cgroup ]; then
	job=$(sb tests/cluster/memory.sbatch --mem=600M --comment=mvm-template=tpl -o "$C/shared/logs/memory.log")
	wait_done "$job" 1200
	log=$C/shared/logs/memory.log
	grep -qx filled "$log" || fail "the guest did not fill its memory: $(cat "$log")"
	expect_match "the job's limit" "^job /.*/job_$job memory.max $((600 << 20))$" "$(grep '^job .*memory.max' "$log")"
	peak=$(sed -n 's/^task memory.peak //p' "$log")
	# 100 MiB written into the guest's tmpfs are guest RAM the VMM touched:
	# the task's cgroup (the sandbox's, under the job's limit) counted them.
	[ "${peak:-0}" -ge $((96 << 20)) ] || fail "the task's memory.peak is ${peak:-none}, not the guest's 100 MiB: $(cat "$log")"
	echo "slurm: memory ok: task peak $((peak >> 20)) MiB under the job's 600 MiB" >&2
else
	echo "slurm: memory bullet NOT RUN: $SL_WHY (Slurm's task/cgroup needs cgroup v2 here)" >&2
fi

step "4. node n2 fails under running tasks: requeued, finished on n1, once each"
job=$(sb tests/cluster/gated.sbatch --array=0-3 --mem=600M --comment=mvm-template=tpl)
started_any() { for f in "$C/shared/gated/task-$1.out.tmp."*; do started "$f" && return 0; done; return 1; }
all_started() { for i in 0 1 2 3; do started_any "$i" || return 1; done; }
sl_poll 1200 all_started || { ls -l "$C/shared/gated" >&2; sl_client squeue >&2; fail "not all four gated tasks started"; }
on_n2=$(grep -l '^task .* node n2 ' "$C/shared/gated/"*.tmp.* | sed 's/.*task-\([0-9]*\)\.out.*/\1/' | sort | tr '\n' ' ')
[ -n "$on_n2" ] || fail "no task runs on n2: $(head -qn 1 "$C/shared/gated/"*)"
grep -q '^task .* node n1 ' "$C/shared/gated/"*.tmp.* || fail "no task runs on n1"
# Each task's header as it runs now, before the node fails: restart 0
# (else a spurious requeue, reported last), and what n1's tasks must still
# say at the end.
for i in 0 1 2 3; do
	eval "hdr_$i=\$(head -qn 1 \"\$C/shared/gated/task-$i.out.tmp.\"* | tail -n 1)"
	eval "h=\$hdr_$i"
	[ "${h##* }" = 0 ] || { spurious="$spurious gated-$i"; why_requeued "$job" "$i" "$h"; }
done
# Clock readings here are printed for people (how long Slurm took to see
# the node dead and to run the requeued tasks), never compared.
t_kill=$(date +%s)
sl_node_kill n2
down() { case $(sl_state n2) in down*) ;; *) return 1 ;; esac; }
sl_poll 600 down || fail "n2 is not down for Slurm: $(sl_state n2)"
t_down=$(date +%s)
touch "$C/shared/gated/open"
for i in 0 1 2 3; do
	tid=$(sl_client squeue -h -r -j "$job" -o '%A %K' 2>/dev/null | awk -v i="$i" '$2 == i { print $1 }')
	[ -z "$tid" ] || wait_done "$tid" 1200
done
wait_done "$job" 1200
for i in 0 1 2 3; do
	f=$C/shared/gated/task-$i.out
	[ -f "$f" ] || fail "task $i's result is lost: $(ls "$C/shared/gated")"
	expect_eq "task $i's result" "done $i" "$(tail -n 1 "$f")"
	expect_eq "task $i's lines" 3 "$(wc -l <"$f")"
	eval "before=\$hdr_$i"
	after=$(head -n 1 "$f")
	case " $on_n2 " in
	*" $i "*)
		expect_match "task $i (was on n2)" "^task $i node n1 job [0-9]+ restart [1-9][0-9]*$" "$after"
		[ "${after##* }" -gt "${before##* }" ] || fail "task $i (was on n2: $before) was not requeued: $after" ;;
	*) [ "$after" = "$before" ] || fail "task $i ran on n1 ($before) and was restarted: $after" ;;
	esac
done
expect_eq "results, each once" 4 "$(cat "$C/shared/gated/"task-*.out | grep -c '^done')"
echo "slurm: node failure ok: tasks ${on_n2}requeued from n2 and finished on n1: $(head -qn 1 "$C/shared/gated/"task-*.out | tr '\n' ';') n2 down $((t_down - t_kill)) s after the kill, every result $(($(date +%s) - t_down)) s after that" >&2
[ -z "$spurious" ] || fail "tasks requeued with no node failure:$spurious (why: after their step above)"
echo "slurm: ok ($(($(date +%s) - T0)) s)"
