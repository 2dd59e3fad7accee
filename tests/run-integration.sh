#!/bin/sh
# The integration suite: real boots on real KVM. Runs directly where /dev/kvm
# works, inside the nested-KVM box where it does not, and fails loudly where
# neither is possible (see tests/nested/README.md).
set -eu
cd "$(dirname "$0")/.."
exec tests/nested/maybe-nested.sh tests/integration/run-all.sh
