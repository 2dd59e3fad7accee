#!/bin/bash
# Vendor the libraries named in deps.lock from the package registry (plain
# HTTP, bash's /dev/tcp: the image has no curl), checking each sha256.
set -euo pipefail
cd "$(dirname "$0")/.."
registry=$(awk '$1 == "registry" { print $2 }' deps.lock)
host=${registry%:*} port=${registry#*:}
grep -v -e '^#' -e '^registry ' deps.lock | while read -r name version sha; do
	tmp=$(mktemp)
	exec 3<>"/dev/tcp/$host/$port"
	printf 'GET /%s/%s/%s.sh HTTP/1.0\r\nHost: %s\r\n\r\n' "$name" "$version" "$name" "$host" >&3
	IFS= read -r status <&3
	case $status in *" 200 "*) ;; *) echo "fetch-deps: $name $version: $status" >&2; exit 1 ;; esac
	while IFS= read -r line <&3 && [ "$line" != $'\r' ]; do :; done
	cat <&3 > "$tmp"
	exec 3<&-
	echo "$sha  $tmp" | sha256sum -c --quiet || { echo "fetch-deps: $name $version: bad sha256" >&2; exit 1; }
	mkdir -p "vendor/$name" && mv "$tmp" "vendor/$name/$name.sh"
	echo "fetch-deps: $name $version"
done
