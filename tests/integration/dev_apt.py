"""A signed flat apt repository for tests/integration/image-apt.sh, made
offline with Debian's own tools: `dpkg-deb --build` for the packages,
`dpkg-scanpackages` for the index, gpg for the signature (a key made for
this run, never kept). Called through dev_registry.py --apt.

The repository (`deb [signed-by=KEYRING] http://HOST:PORT/apt/ ./`):
  mvm-apttest-data_1.0_all.deb  /usr/share/mvm-apttest/magic, the magic line
  mvm-apttest_1.0_all.deb       /usr/bin/mvm-apttest (prints that file);
                                Depends: mvm-apttest-data (= 1.0), so apt
                                resolves a dependency from this repository;
                                its postinst connects to 203.0.113.20:8090
                                and records what happened in
                                /var/lib/mvm-apttest/probe
  Packages, Packages.gz         dpkg-scanpackages' index
  Release, InRelease            their SHA256 sums; InRelease clearsigned
Signed rather than `[trusted=yes]`: gpg is on every machine that runs the
tests (tools/deps.sh), and the guest's apt then checks the repository as it
would a production one (apt depends on gpgv, so the image has it).
"""
import email.utils
import gzip
import hashlib
import os
import shutil
import subprocess
import tempfile

PROBE = """#!/bin/sh
# A maintainer script reaching for a host no rule allows (bash's /dev/tcp:
# the debian image has no curl). Never fails the install: it only records.
mkdir -p /var/lib/mvm-apttest
st=0
timeout 20 bash -c ': > /dev/tcp/203.0.113.20/8090' 2>/var/lib/mvm-apttest/probe.err || st=$?
echo "probe status=$st: $(tr '\\n' ' ' < /var/lib/mvm-apttest/probe.err)" > /var/lib/mvm-apttest/probe
exit 0
"""

PACKAGES = {
    "mvm-apttest-data": {
        "control": {"Description": "data for mvm's apt repository test"},
        "files": {"usr/share/mvm-apttest/magic": ("{magic}\n", 0o644)},
    },
    "mvm-apttest": {
        "control": {
            "Depends": "mvm-apttest-data (= 1.0)",
            "Description": "a package mvm's apt repository test installs",
        },
        "files": {
            "usr/bin/mvm-apttest": ("#!/bin/sh\nexec cat /usr/share/mvm-apttest/magic\n", 0o755),
            "DEBIAN/postinst": (PROBE, 0o755),
        },
    },
}


def run(cmd, **kw):
    """Runs a tool; its output is shown only when it fails."""
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)
    if p.returncode != 0:
        raise SystemExit("%s: status %d: %s" % (cmd[0], p.returncode,
                                                (p.stdout + p.stderr).decode(errors="replace")))
    return p.stdout


def write(path, text, mode):
    os.makedirs(os.path.dirname(path), mode=0o755, exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, mode)


def build_deb(work, repo, name, spec, magic):
    """Stages one package (modes set here, whatever the umask) and builds it."""
    tree = os.path.join(work, name)
    control = {"Package": name, "Version": "1.0", "Architecture": "all",
               "Maintainer": "mvm tests <apt@test.invalid>"}
    control.update(spec["control"])
    write(os.path.join(tree, "DEBIAN", "control"),
          "".join("%s: %s\n" % kv for kv in control.items()), 0o644)
    for path, (text, mode) in spec["files"].items():
        write(os.path.join(tree, path), text.replace("{magic}", magic), mode)
    for d, _, _ in os.walk(tree):
        os.chmod(d, 0o755)
    run(["dpkg-deb", "--root-owner-group", "-Zgzip", "--build", tree,
         os.path.join(repo, "%s_1.0_all.deb" % name)])


def release(repo):
    """The Release file: what apt checks each index against."""
    lines = ["Origin: mvm-tests", "Label: mvm-apttest",
             "Date: " + email.utils.formatdate(usegmt=True), "SHA256:"]
    for index in ("Packages", "Packages.gz"):
        with open(os.path.join(repo, index), "rb") as f:
            data = f.read()
        lines.append(" %s %d %s" % (hashlib.sha256(data).hexdigest(), len(data), index))
    with open(os.path.join(repo, "Release"), "w") as f:
        f.write("\n".join(lines) + "\n")


def sign(repo, keyring):
    """A key made for this run signs InRelease; its public part goes to
    KEYRING (the binary form apt's signed-by reads); the secret part and
    the gpg-agent that held it are gone on return."""
    home = tempfile.mkdtemp(prefix="gnupg.", dir=os.path.dirname(os.path.abspath(keyring)))
    gpg = ["gpg", "--homedir", home, "--batch", "--pinentry-mode", "loopback", "--passphrase", ""]
    try:
        run(gpg + ["--quick-gen-key", "mvm test repository <apt@test.invalid>", "ed25519", "sign", "never"])
        run(gpg + ["--yes", "--clearsign", "--output", os.path.join(repo, "InRelease"),
                   os.path.join(repo, "Release")])
        run(gpg + ["--yes", "--output", keyring, "--export"])
    finally:
        subprocess.run(["gpgconf", "--homedir", home, "--kill", "gpg-agent"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        shutil.rmtree(home, ignore_errors=True)


def repository(repo, keyring, magic):
    os.makedirs(repo, exist_ok=True)
    work = tempfile.mkdtemp(prefix="debs.", dir=os.path.dirname(os.path.abspath(repo)))
    try:
        for name, spec in PACKAGES.items():
            build_deb(work, repo, name, spec, magic)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    index = run(["dpkg-scanpackages", "--multiversion", ".", "/dev/null"], cwd=repo)
    with open(os.path.join(repo, "Packages"), "wb") as f:
        f.write(index)
    with gzip.GzipFile(os.path.join(repo, "Packages.gz"), "wb", mtime=0) as f:
        f.write(index)
    release(repo)
    sign(repo, keyring)
