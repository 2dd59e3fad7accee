#!/usr/bin/env python3
"""Builds the package registries tests/integration/image-dev.sh and
image-apt.sh serve.

Usage: dev_registry.py ROOT BASE_URL
       dev_registry.py --apt KEYRING ROOT

Writes under ROOT, for a plain static HTTP server (python3 -m http.server):
  simple/mvm-devtest/index.html   a PEP 503 simple index page
  packages/mvm_devtest-1.0-py3-none-any.whl   a wheel built here with zipfile
  npm/mvm-devtest                 an npm registry document (packument)
  tarballs/mvm-devtest-1.0.0.tgz  the npm package it points at
The npm package's postinstall script tries a host no rule allows and records
what happened in /tmp/mvm-devtest-postinstall.txt.

With --apt, instead (dev_apt.py): a signed flat apt repository in ROOT/apt,
and its signing key's public part in KEYRING (outside ROOT: the guest gets
the key from the operator, not from the server it is meant to check).

Nothing names any host but BASE_URL's and the test net's
documentation-range address. Prints the content the packages carry.
"""
import base64
import hashlib
import io
import json
import os
import sys
import tarfile
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


def npm(root, base):
    pkg = {
        "name": "mvm-devtest",
        "version": "1.0.0",
        "description": "a package mvm's tests serve",
        "main": "index.js",
        "license": "MIT",
        "scripts": {"postinstall": "node probe.js"},
    }
    files = {
        "package/package.json": json.dumps(pkg, indent=2) + "\n",
        "package/index.js": "module.exports = '%s';\n" % MAGIC,
        "package/probe.js": PROBE,
    }
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as t:
        for p, text in files.items():
            data = text.encode()
            ti = tarfile.TarInfo(p)
            ti.size = len(data)
            ti.mode = 0o644
            ti.mtime = 0
            t.addfile(ti, io.BytesIO(data))
    tgz = buf.getvalue()
    os.makedirs(os.path.join(root, "tarballs"), exist_ok=True)
    with open(os.path.join(root, "tarballs", "mvm-devtest-1.0.0.tgz"), "wb") as f:
        f.write(tgz)
    version = dict(pkg)
    version["hasInstallScript"] = True
    version["dist"] = {
        "tarball": base + "/tarballs/mvm-devtest-1.0.0.tgz",
        "shasum": hashlib.sha1(tgz).hexdigest(),
        "integrity": "sha512-" + base64.b64encode(hashlib.sha512(tgz).digest()).decode(),
    }
    doc = {
        "name": "mvm-devtest",
        "dist-tags": {"latest": "1.0.0"},
        "versions": {"1.0.0": version},
    }
    os.makedirs(os.path.join(root, "npm"), exist_ok=True)
    with open(os.path.join(root, "npm", "mvm-devtest"), "w") as f:
        json.dump(doc, f, indent=2)


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--apt":
        import dev_apt
        dev_apt.repository(os.path.join(sys.argv[3], "apt"), sys.argv[2], MAGIC)
        print(MAGIC)
        return
    if len(sys.argv) != 3:
        sys.exit("usage: dev_registry.py ROOT BASE_URL | dev_registry.py --apt KEYRING ROOT")
    root, base = sys.argv[1], sys.argv[2].rstrip("/")
    wheel(root)
    npm(root, base)
    print(MAGIC)


if __name__ == "__main__":
    main()
