#!/bin/sh
# `mvm image build dev`: the debian image plus what coding agents reach for:
# Python 3 with pip and venv, Node.js with npm, git, a C toolchain
# (build-essential), curl and the CA certificates. Package managers in the
# guest go through the sandbox's network policy like any other program:
# nothing here points them at any registry (pip and npm keep their defaults;
# tests and users name their own index with --index-url / --registry).
# Needs root and the network like the debian image; packages go through the
# same shared debootstrap cache.
here=$(cd "$(dirname "$0")" && pwd)
STEPS=5
. "$here/image-lib.sh"

debian_bootstrap build-dev
debian_configure
debian_install python3 python3-pip python3-venv nodejs npm git \
	build-essential curl ca-certificates
for t in python3 pip3 node npm git gcc make curl; do
	[ -x "$stage/usr/bin/$t" ] || { echo "build-dev: /usr/bin/$t missing after install" >&2; exit 1; }
done
echo "  python3 $(chroot "$stage" dpkg-query -W -f '${Version}' python3)," \
	"nodejs $(chroot "$stage" dpkg-query -W -f '${Version}' nodejs)," \
	"npm $(chroot "$stage" dpkg-query -W -f '${Version}' npm)," \
	"git $(chroot "$stage" dpkg-query -W -f '${Version}' git)"

debian_clean
echo "image: staged Debian $(cat "$stage/etc/debian_version") with python3, nodejs, git, build-essential"
image_finish "debootstrap --variant=minbase $suite $mirror + python3-pip, python3-venv, nodejs, npm, git, build-essential, curl" 2048
