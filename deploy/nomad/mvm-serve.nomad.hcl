# mvm serve on every client node with KVM (docs/cluster.md). Not run:
# nomad is not in Debian and this file has not been through
# `nomad job validate`.
#
# Client nodes with a working /dev/kvm set, in their client config:
#   client { meta { "mvm.kvm" = "true" } }
# The token file (`mvm serve token add`, hashes only) lives in Nomad
# Variables at nomad/jobs/mvm-serve (key "tokens").
job "mvm-serve" {
  type = "system"

  constraint {
    attribute = "${meta.mvm.kvm}"
    value     = "true"
  }

  group "serve" {
    network {
      port "api" {
        static = 7070
      }
    }

    service {
      name     = "mvm-serve"
      port     = "api"
      provider = "nomad"

      check {
        type     = "http"
        protocol = "https"
        path     = "/v1/health"
        interval = "10s"
        timeout  = "2s"
        tls_skip_verify = true
      }
    }

    task "serve" {
      # raw_exec: the VMM needs /dev/kvm and user namespaces; it drops
      # every capability itself. The task runs as an unprivileged user in
      # the kvm group; its sandboxes are charged to the task's cgroup.
      driver = "raw_exec"
      user   = "mvm"

      config {
        command = "/usr/local/bin/mvm"
        args = [
          "serve",
          "--listen", "0.0.0.0:7070",
          "--tls-cert", "/etc/mvm/tls/tls.crt",
          "--tls-key", "/etc/mvm/tls/tls.key",
          "--tokens", "${NOMAD_SECRETS_DIR}/tokens",
        ]
      }

      env {
        MVM_STATE_DIR = "/var/lib/mvm/state"
      }

      template {
        destination = "${NOMAD_SECRETS_DIR}/tokens"
        perms       = "0400"
        data        = <<-EOT
          {{ with nomadVar "nomad/jobs/mvm-serve" }}{{ .tokens }}{{ end }}
        EOT
      }

      resources {
        cpu    = 2000
        memory = 4096
        memory_max = 40960
      }
    }
  }
}
