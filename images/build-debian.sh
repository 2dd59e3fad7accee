#!/bin/sh
# `mvm image build debian`: Debian 12 (bookworm) minbase from debootstrap,
# apt configured for the machine's own Debian mirror, as a raw ext4 image,
# with Debian's PostgreSQL server: the worked example's test database is a
# live server that a checkpoint and rollback carry (examples/worked-example).
# Needs root (debootstrap chroots and makes device nodes) and the network;
# a few minutes. Downloaded packages are cached for the next --force build.
here=$(cd "$(dirname "$0")" && pwd)
STEPS=5
. "$here/image-lib.sh"

debian_bootstrap build-debian
debian_configure
debian_install postgresql
debian_clean
echo "image: staged Debian $(cat "$stage/etc/debian_version")"
image_finish "debootstrap --variant=minbase $suite $mirror" 2048
