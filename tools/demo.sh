#!/bin/sh
# make demo: boot a fresh sandbox and run a command in it, printing its output.
set -eu
cd "$(dirname "$0")/.."
echo "demo: mvm run -- sh -c 'uname -a; echo hello from inside the microVM; nproc'"
build/mvm run --timing --cpus 2 -- sh -c 'uname -a; echo hello from inside the microVM; nproc'
