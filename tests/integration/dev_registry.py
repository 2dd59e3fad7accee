#!/usr/bin/env python3
"""Builds the package registries tests/integration/image-dev.sh and
image-apt.sh serve.

Usage: dev_registry.py ROOT NPM_PACKAGE_DIR
       dev_registry.py --apt KEYRING ROOT

Writes under ROOT, for a plain static HTTP server (python3 -m http.server):
  simple/mvm-devtest/index.html   a PEP 503 simple index page
  packages/mvm_devtest-1.0-py3-none-any.whl   a wheel built here with zipfile
and in NPM_PACKAGE_DIR the source of an npm package (package.json, index.js,
probe.js), which the test publishes to its Verdaccio (verdaccio.lib): the
registry makes the package document and tarball itself, as for any package
published to it. Its postinstall script tries a host no rule allows and
records what happened in /tmp/mvm-devtest-postinstall.txt.

With --apt, instead (dev_apt.py): a signed flat apt repository in ROOT/apt,
and its signing key's public part in KEYRING (outside ROOT: the guest gets
the key from the operator, not from the server it is meant to check).

Nothing names any host but the test net's documentation-range address. Prints the content the packages carry.
"""
import base64
import hashlib
import json
import os
import sys
import zipfile

MAGIC = "mvm-devtest-ok"


def b64(digest):
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def wheel(root):
    name = "mvm_devtest-1.0-py3-none-any.whl"
    info = "mvm_devtest-1.0.dist-info"
    files = {
        "mvm_devtest/__init__.py": 'MAGIC = "%s"\n' % MAGIC,
        info + "/METADATA": "Metadata-Version: 2.1\nName: mvm-devtest\nVersion: 1.0\n"
        "Summary: a package mvm's tests serve\n",
        info + "/WHEEL": "Wheel-Version: 1.0\nGenerator: mvm-tests\n"
        "Root-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = ""
    for path, text in files.items():
        data = text.encode()
        record += "%s,sha256=%s,%d\n" % (path, b64(hashlib.sha256(data).digest()), len(data))
    record += info + "/RECORD,,\n"
    files[info + "/RECORD"] = record
    os.makedirs(os.path.join(root, "packages"), exist_ok=True)
    path = os.path.join(root, "packages", name)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for p, text in files.items():
            z.writestr(p, text)
    with open(path, "rb") as f:
        sha = hashlib.sha256(f.read()).hexdigest()
    page = os.path.join(root, "simple", "mvm-devtest")
    os.makedirs(page, exist_ok=True)
    with open(os.path.join(page, "index.html"), "w") as f:
        f.write('<!DOCTYPE html>\n<html><body>\n<a href="../../packages/%s#sha256=%s">%s</a>\n'
                "</body></html>\n" % (name, sha, name))
    with open(os.path.join(root, "simple", "index.html"), "w") as f:
        f.write('<!DOCTYPE html>\n<html><body>\n<a href="mvm-devtest/">mvm-devtest</a>\n'
                "</body></html>\n")


PROBE = """// postinstall: a package reaching for a host the sandbox does not allow.
const fs = require('fs');
const out = '/tmp/mvm-devtest-postinstall.txt';
const req = require('http').get({host: '203.0.113.20', port: 8090, path: '/', timeout: 20000}, () => {
  fs.writeFileSync(out, 'probe=reached\\n');
});
req.on('timeout', () => { fs.writeFileSync(out, 'probe=timeout\\n'); req.destroy(); });
req.on('error', (e) => { if (!fs.existsSync(out)) fs.writeFileSync(out, 'probe=refused ' + e.code + '\\n'); });
"""


def npm(pkgdir):
    pkg = {
        "name": "mvm-devtest",
        "version": "1.0.0",
        "description": "a package mvm's tests serve",
        "main": "index.js",
        "license": "MIT",
        "scripts": {"postinstall": "node probe.js"},
    }
    files = {
        "package.json": json.dumps(pkg, indent=2) + "\n",
        "index.js": "module.exports = '%s';\n" % MAGIC,
        "probe.js": PROBE,
    }
    os.makedirs(pkgdir, exist_ok=True)
    for p, text in files.items():
        with open(os.path.join(pkgdir, p), "w") as f:
            f.write(text)


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--apt":
        import dev_apt
        dev_apt.repository(os.path.join(sys.argv[3], "apt"), sys.argv[2], MAGIC)
        print(MAGIC)
        return
    if len(sys.argv) != 3:
        sys.exit("usage: dev_registry.py ROOT NPM_PACKAGE_DIR | dev_registry.py --apt KEYRING ROOT")
    wheel(sys.argv[1])
    npm(sys.argv[2])
    print(MAGIC)


if __name__ == "__main__":
    main()
