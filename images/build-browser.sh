#!/bin/sh
# `mvm image build browser`: the debian image plus Chromium, a virtual display
# (Xvfb + openbox), a live view (x11vnc + noVNC/websockify), desktop input
# and screenshots (xdotool, scrot), and an unprivileged user `browser`
# (uid 1000) that Chromium runs as, with its own sandbox on. The guest side
# of `mvm browser`: images/browser/mvm-browser-start and mvm-screenshot.
# Needs root and the network like the debian image; packages go through the
# same shared debootstrap cache.
here=$(cd "$(dirname "$0")" && pwd)
STEPS=6
. "$here/image-lib.sh"

debian_bootstrap build-browser
debian_configure
debian_install chromium fonts-liberation fonts-noto-core xvfb openbox x11vnc \
	novnc websockify xdotool scrot curl ca-certificates procps python3

step "the browser user, Chromium's policy and the start scripts"
chroot "$stage" useradd --create-home --uid 1000 --user-group --shell /bin/bash browser
# Managed policy: no traffic Chromium makes by itself (DoH, metrics, Safe
# Browsing lookups, sync, translation, suggestions, promotions), so the
# sandbox's network log shows only what pages asked for.
install -d -m 755 "$stage/etc/chromium/policies/managed"
install -m 644 "$here/browser/policy.json" "$stage/etc/chromium/policies/managed/mvm.json"
install -m 755 "$here/browser/mvm-browser-start" "$stage/usr/local/bin/mvm-browser-start"
install -m 755 "$here/browser/mvm-screenshot" "$stage/usr/local/bin/mvm-screenshot"
echo "  chromium $(chroot "$stage" dpkg-query -W -f '${Version}' chromium)"

debian_clean
echo "image: staged Debian $(cat "$stage/etc/debian_version") with Chromium"
image_finish "debootstrap --variant=minbase $suite $mirror + chromium, xvfb, openbox, x11vnc, novnc" 4096
