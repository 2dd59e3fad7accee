# One-shot tasks: each allocation runs `mvm run --template T -- CMD` on a
# KVM node and writes its output to a shared directory (docs/cluster.md).
# Not run: nomad is not in Debian; not checked by `nomad job validate`.
job "mvm-eval" {
  type = "batch"

  constraint {
    attribute = "${meta.mvm.kvm}"
    value     = "true"
  }

  group "task" {
    count = 8

    restart {
      attempts = 1
      mode     = "fail"
    }

    reschedule {
      attempts  = 2
      unlimited = false
    }

    task "run" {
      driver = "raw_exec"
      user   = "mvm"

      # The template reaches a node that lacks it from a bundle on the
      # shared directory (a no-op where it is present).
      template {
        destination = "local/run.sh"
        perms       = "0755"
        data        = <<-EOT
          #!/bin/sh
          set -eu
          export MVM_STATE_DIR="$NOMAD_TASK_DIR/state"
          mvm template ls | grep -qw eval-base ||
            mvm template import /shared/bundles/eval-base.tpl --name eval-base
          trap 'mvm gc >/dev/null' EXIT
          mvm run --template eval-base -- sh -c "run-task $NOMAD_ALLOC_INDEX" \
            > "/shared/results/task-$NOMAD_ALLOC_INDEX.out"
        EOT
      }

      config {
        command = "local/run.sh"
      }

      resources {
        cpu    = 1000
        memory = 1536   # guest RAM + 256 MiB + the CLI: the sandbox is charged here
      }
    }
  }
}
